/*!
 * \file strided_slice_spec.h
 * \brief TensorFlow's StridedSlice semantics in one function: from begin/end/strides and the
 * five masks, and an input shape, to what is read along every input dimension.
 *
 * strided_slice, its gradient strided_slice_grad, slice (begin/size) and pad's gradient all
 * go through CanonicalizeStridedSlice, so they agree on every corner (negative indices and
 * strides, clamping, ellipsis, new axes, shrinking).
 */
#ifndef IR_OPS_STRIDED_SLICE_SPEC_H_
#define IR_OPS_STRIDED_SLICE_SPEC_H_

#include <vector>

#include "ops/op_common.h"

namespace ir {
namespace op {

/*! \brief Attributes of strided_slice (bit i of a mask refers to entry i of begin/end/strides). */
struct StridedSliceParam : public dmlc::Parameter<StridedSliceParam> {
  IntList begin;
  IntList end;
  IntList strides;
  int begin_mask;
  int end_mask;
  int ellipsis_mask;
  int new_axis_mask;
  int shrink_axis_mask;
  DMLC_DECLARE_PARAMETER(StridedSliceParam) {
    DMLC_DECLARE_FIELD(begin).set_default(IntList()).describe(
        "First index per sliced dimension (negative counts from the end).");
    DMLC_DECLARE_FIELD(end).set_default(IntList()).describe(
        "Index past the last one per sliced dimension (negative counts from the end).");
    DMLC_DECLARE_FIELD(strides).set_default(IntList()).describe(
        "Step per sliced dimension, nonzero; empty means all 1.");
    DMLC_DECLARE_FIELD(begin_mask)
        .set_default(0)
        .describe("Bit i set: ignore begin[i], start at the first (last for negative strides) element.");
    DMLC_DECLARE_FIELD(end_mask).set_default(0).describe(
        "Bit i set: ignore end[i], run to the end (the start for negative strides).");
    DMLC_DECLARE_FIELD(ellipsis_mask)
        .set_default(0)
        .describe("Bit i set: entry i stands for all dimensions not otherwise named (at most one bit).");
    DMLC_DECLARE_FIELD(new_axis_mask).set_default(0).describe("Bit i set: entry i inserts a new dimension of size 1.");
    DMLC_DECLARE_FIELD(shrink_axis_mask)
        .set_default(0)
        .describe("Bit i set: take the single index begin[i] and drop the dimension.");
  }
};

/*! \brief What a strided slice reads: per input dimension, and the resulting shape. */
struct StridedSliceSpec {
  /*! \brief First index read per input dimension (meaningful where the dimension is known). */
  std::vector<int64_t> begin;
  /*! \brief Step per input dimension. */
  std::vector<int64_t> stride;
  /*! \brief Number of indices read per input dimension; kUnknownDim where unknown. */
  std::vector<int64_t> size;
  /*! \brief The result: `size` without shrunk dimensions, with new axes inserted. */
  Shape out_shape;
};

/*!
 * \brief Canonicalizes a strided slice of `in` as TensorFlow does. With an unknown rank the
 * result has unknown rank; unknown dimensions give unknown sizes (1 when shrunk).
 * \throws ir::Error naming the node, the input shape and the offending entry.
 */
StridedSliceSpec CanonicalizeStridedSlice(const NodeAttrs& attrs, const StridedSliceParam& param, const Shape& in);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_STRIDED_SLICE_SPEC_H_
