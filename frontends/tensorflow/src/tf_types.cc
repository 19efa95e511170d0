/*!
 * \file tf_types.cc
 * \brief TensorFlow DataType numbers and shapes in our terms.
 */
#include "tf_types.h"

namespace ir {
namespace tf {

std::string TFTypeName(int tf_dtype) {
  if (tfproto::DataType_IsValid(tf_dtype)) return tfproto::DataType_Name(static_cast<tfproto::DataType>(tf_dtype));
  return StrCat("DataType(", tf_dtype, ")");
}

int BaseType(int tf_dtype) { return tf_dtype > 100 ? tf_dtype - 100 : tf_dtype; }

size_t TFTypeSize(int tf_dtype) {
  switch (BaseType(tf_dtype)) {
    case tfproto::DT_FLOAT:
    case tfproto::DT_INT32:
    case tfproto::DT_UINT32:
      return 4;
    case tfproto::DT_DOUBLE:
    case tfproto::DT_INT64:
    case tfproto::DT_UINT64:
      return 8;
    case tfproto::DT_HALF:
    case tfproto::DT_BFLOAT16:
    case tfproto::DT_INT16:
    case tfproto::DT_UINT16:
      return 2;
    case tfproto::DT_INT8:
    case tfproto::DT_UINT8:
    case tfproto::DT_BOOL:
      return 1;
    default:
      return 0;
  }
}

int TFTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return tfproto::DT_FLOAT;
    case DType::kFloat64:
      return tfproto::DT_DOUBLE;
    case DType::kInt32:
      return tfproto::DT_INT32;
    case DType::kInt64:
      return tfproto::DT_INT64;
    case DType::kBool:
      return tfproto::DT_BOOL;
    default:
      throw Error(StrCat("unsupported dtype ", DTypeName(dtype)));
  }
}

DType ToDType(int tf_dtype) {
  switch (BaseType(tf_dtype)) {
    case tfproto::DT_FLOAT:
    case tfproto::DT_HALF:
    case tfproto::DT_BFLOAT16:
      return DType::kFloat32;
    case tfproto::DT_DOUBLE:
      return DType::kFloat64;
    case tfproto::DT_INT32:
    case tfproto::DT_INT16:
    case tfproto::DT_INT8:
    case tfproto::DT_UINT16:
    case tfproto::DT_UINT8:
      return DType::kInt32;
    case tfproto::DT_INT64:
    case tfproto::DT_UINT32:
      return DType::kInt64;
    case tfproto::DT_BOOL:
      return DType::kBool;
    case tfproto::DT_STRING:
      throw Error("unsupported dtype DT_STRING: string tensors are not supported (feed and fetch numeric tensors)");
    default:
      throw Error(StrCat("unsupported dtype ", TFTypeName(tf_dtype),
                         " (supported: float, double, half, bfloat16, int8/16/32/64, uint8/16/32, bool)"));
  }
}

Shape ToShape(const tfproto::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return Shape();
  std::vector<int64_t> dims;
  for (const auto& dim : proto.dim()) dims.push_back(dim.size() < 0 ? kUnknownDim : dim.size());
  return Shape(dims);
}

}  // namespace tf
}  // namespace ir
