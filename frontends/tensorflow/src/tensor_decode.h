/*!
 * \file tensor_decode.h
 * \brief TensorProto (the value of a Const, or of a default) to NDArray.
 */
#ifndef IR_TF_TENSOR_DECODE_H_
#define IR_TF_TENSOR_DECODE_H_

#include <cstdint>

#include "ir/ndarray.h"
#include "tensor.pb.h"

namespace ir {
namespace tf {

/*!
 * \brief Decodes every encoding TensorFlow writes: raw `tensor_content` bytes, or typed repeated
 * values, where fewer values than the shape holds repeat the last one (one value fills the
 * shape; none means zeros). Narrow types widen as ToDType says.
 * \throws ir::Error for unsupported dtypes, shapes that are not fully known, byte counts that
 * do not match, too many values, or tensors larger than `max_bytes`.
 */
NDArray DecodeTensor(const tensorflow::TensorProto& proto, int64_t max_bytes);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_TENSOR_DECODE_H_
