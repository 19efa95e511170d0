/*!
 * \file tensor_decode.h
 * \brief TensorProto (the value of a Const, or of a default) to NDArray.
 */
#ifndef IR_TF_TENSOR_DECODE_H_
#define IR_TF_TENSOR_DECODE_H_

#include <cstdint>

#include "ir/ndarray.h"
#include "ir_tf_tensor.pb.h"

namespace ir {
namespace tf {

/*!
 * \brief Decodes every encoding TensorFlow writes: raw `tensor_content` bytes, or typed repeated
 * values, where fewer values than the shape holds repeat the last one (one value fills the
 * shape; none means zeros). Narrow types widen as ToDType says.
 * \throws ir::Error for unsupported dtypes, shapes that are not fully known, byte counts that
 * do not match, too many values, or tensors larger than `max_bytes`, all checked before the
 * result is allocated.
 */
NDArray DecodeTensor(const tfproto::TensorProto& proto, int64_t max_bytes);

/*! \brief A tensor whose elements are all one value: the value, kept once, and the shape. */
struct Splat {
  Shape shape;
  DType dtype = DType::kUnknown;
  double value = 0;
};

/*!
 * \brief Splats at most this large are decoded as arrays: small constants stay `constant` nodes,
 * which constant folding reads (the same bound as FoldConstants' default max_bytes).
 */
constexpr int64_t kMinSplatBytes = int64_t{1} << 20;

/*!
 * \brief True, with `splat` set, when the proto holds one value (or none: zeros) that fills a
 * shape of more than kMinSplatBytes, and the value is finite and exact as a double. Nothing of
 * the tensor's size is allocated. \throws ir::Error as DecodeTensor does for bad shapes and sizes.
 */
bool DecodeSplat(const tfproto::TensorProto& proto, int64_t max_bytes, Splat* splat);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_TENSOR_DECODE_H_
