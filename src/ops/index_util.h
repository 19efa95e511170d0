/*!
 * \file index_util.h
 * \brief What the ops driven by index tensors read their indices with (gather_nd, scatter_nd,
 * the segment ops, scatter_update): accepted dtypes and the indices as int64 on the host.
 */
#ifndef IR_OPS_INDEX_UTIL_H_
#define IR_OPS_INDEX_UTIL_H_

#include <algorithm>
#include <vector>

#include "ops/array/array_common.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {

/*! \brief int32, int64: the dtypes TensorFlow accepts for indices. */
inline const DTypeSet& IndexDTypes() {
  static const DTypeSet types = {DType::kInt32, DType::kInt64};
  return types;
}

/*! \brief The elements of an int32 or int64 array (on any device) as int64. */
inline std::vector<int64_t> ReadIndices(const NDArray& indices) {
  NDArray host = indices.device().type == DeviceType::kCPU ? indices : indices.CopyTo(Device::CPU());
  std::vector<int64_t> out(host.Size());
  if (host.dtype() == DType::kInt32) {
    std::copy_n(host.data<int32_t>(), out.size(), out.begin());
  } else {
    std::copy_n(host.data<int64_t>(), out.size(), out.begin());
  }
  return out;
}

/*! \brief Checks that input `what` has an index dtype (or is not known yet). */
inline void CheckIndexDType(const NodeAttrs& attrs, const char* what, DType dtype) {
  if (dtype != DType::kUnknown) CheckDType(attrs, what, dtype, IndexDTypes());
}

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_INDEX_UTIL_H_
