/*!
 * \file tf_types.h
 * \brief TensorFlow DataType numbers and shapes in our terms.
 */
#ifndef IR_TF_TF_TYPES_H_
#define IR_TF_TF_TYPES_H_

#include <string>

#include "ir/base.h"
#include "ir_tf_tensor_shape.pb.h"
#include "ir_tf_types.pb.h"

namespace ir {
namespace tf {

/*! \brief TensorFlow's name of a DataType number ("DT_FLOAT", "DT_STRING", or "DataType(77)"). */
std::string TFTypeName(int tf_dtype);
/*! \brief The reference type's value type (DT_FLOAT_REF -> DT_FLOAT); others unchanged. */
int BaseType(int tf_dtype);
/*! \brief Bytes per element of a type TF stores as fixed-size little-endian bytes; 0 for others. */
size_t TFTypeSize(int tf_dtype);
/*!
 * \brief The DType holding a TF type's values: float32/64, int32/64 and bool as they are;
 * float16/bfloat16 widen to float32; int8/16 and uint8/16 to int32; uint32 to int64.
 * \throws ir::Error "unsupported dtype DT_STRING" for anything else (strings, complex,
 * quantized, resources, variants, uint64).
 */
DType ToDType(int tf_dtype);
/*! \brief The TF DataType of our `dtype` (DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL); throws for kUnknown. */
int TFTypeOf(DType dtype);
/*! \brief TF's partial shape: unknown rank, or dims with -1 for unknown ones. */
Shape ToShape(const tfproto::TensorShapeProto& proto);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_TF_TYPES_H_
