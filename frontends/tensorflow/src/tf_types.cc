/*!
 * \file tf_types.cc
 * \brief TensorFlow DataType numbers and shapes in our terms.
 */
#include "tf_types.h"

namespace ir {
namespace tf {

std::string TFTypeName(int tf_dtype) {
  if (tensorflow::DataType_IsValid(tf_dtype))
    return tensorflow::DataType_Name(static_cast<tensorflow::DataType>(tf_dtype));
  return StrCat("DataType(", tf_dtype, ")");
}

int BaseType(int tf_dtype) { return tf_dtype > 100 ? tf_dtype - 100 : tf_dtype; }

size_t TFTypeSize(int tf_dtype) {
  switch (BaseType(tf_dtype)) {
    case tensorflow::DT_FLOAT:
    case tensorflow::DT_INT32:
    case tensorflow::DT_UINT32:
      return 4;
    case tensorflow::DT_DOUBLE:
    case tensorflow::DT_INT64:
    case tensorflow::DT_UINT64:
      return 8;
    case tensorflow::DT_HALF:
    case tensorflow::DT_BFLOAT16:
    case tensorflow::DT_INT16:
    case tensorflow::DT_UINT16:
      return 2;
    case tensorflow::DT_INT8:
    case tensorflow::DT_UINT8:
    case tensorflow::DT_BOOL:
      return 1;
    default:
      return 0;
  }
}

int TFTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return tensorflow::DT_FLOAT;
    case DType::kFloat64:
      return tensorflow::DT_DOUBLE;
    case DType::kInt32:
      return tensorflow::DT_INT32;
    case DType::kInt64:
      return tensorflow::DT_INT64;
    case DType::kBool:
      return tensorflow::DT_BOOL;
    default:
      throw Error(StrCat("unsupported dtype ", DTypeName(dtype)));
  }
}

DType ToDType(int tf_dtype) {
  switch (BaseType(tf_dtype)) {
    case tensorflow::DT_FLOAT:
    case tensorflow::DT_HALF:
    case tensorflow::DT_BFLOAT16:
      return DType::kFloat32;
    case tensorflow::DT_DOUBLE:
      return DType::kFloat64;
    case tensorflow::DT_INT32:
    case tensorflow::DT_INT16:
    case tensorflow::DT_INT8:
    case tensorflow::DT_UINT16:
    case tensorflow::DT_UINT8:
      return DType::kInt32;
    case tensorflow::DT_INT64:
    case tensorflow::DT_UINT32:
      return DType::kInt64;
    case tensorflow::DT_BOOL:
      return DType::kBool;
    case tensorflow::DT_STRING:
      throw Error("unsupported dtype DT_STRING: string tensors are not supported (feed and fetch numeric tensors)");
    default:
      throw Error(StrCat("unsupported dtype ", TFTypeName(tf_dtype),
                         " (supported: float, double, half, bfloat16, int8/16/32/64, uint8/16/32, bool)"));
  }
}

Shape ToShape(const tensorflow::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return Shape();
  std::vector<int64_t> dims;
  for (const auto& dim : proto.dim()) dims.push_back(dim.size() < 0 ? kUnknownDim : dim.size());
  return Shape(dims);
}

}  // namespace tf
}  // namespace ir
