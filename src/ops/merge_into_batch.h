/*!
 * \file merge_into_batch.h
 * \brief The FVectorize converter of ops with a batch axis whose images are independent
 * (convolution with a loop-invariant filter, pooling, image patches): the iterations merged into
 * the batch axis, the op run once, the result split again.
 */
#ifndef IR_OPS_MERGE_INTO_BATCH_H_
#define IR_OPS_MERGE_INTO_BATCH_H_

#include <vector>

#include "ir/vectorize.h"

namespace ir {
namespace op {

/*!
 * \brief The node run once over the iterations merged into the batch axis: the inputs with
 * merge[i] merged (broadcast first when unstacked), the others as they are; the result split.
 */
inline std::vector<PforValue> MergedIntoBatch(PforContext& ctx, const std::vector<bool>& merge) {
  std::vector<NodeEntry> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    in.push_back(merge.at(i) ? ctx.MergeLeading(ctx.Stacked(i), ctx.in_shape(i)) : ctx.input(i).entry);
  }
  return {PforValue{ctx.SplitLeading(ctx.CopyNode(in, ctx.attrs().dict), ctx.out_shape(0)), true}};
}

/*! \brief Every input merged into the batch: pooling, its gradients and the patch ops. */
inline std::vector<PforValue> MergeAllIntoBatch(PforContext& ctx) {
  return MergedIntoBatch(ctx, std::vector<bool>(ctx.num_inputs(), true));
}

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_MERGE_INTO_BATCH_H_
