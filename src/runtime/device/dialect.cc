/*!
 * \file dialect.cc
 * \brief Element type names of a dialect.
 */
#include "runtime/device/dialect.h"

namespace ir {
namespace device {

std::string Dialect::TypeName(DType dtype) const {
  switch (dtype) {
    case DType::kFloat32:
      return float32_type;
    case DType::kFloat64:
      return float64_type;
    case DType::kInt32:
      return int32_type;
    case DType::kInt64:
      return int64_type;
    case DType::kBool:
      return bool_type;
    default:
      throw Error(StrCat(target, " kernels: no element type for dtype ", DTypeName(dtype)));
  }
}

}  // namespace device
}  // namespace ir
