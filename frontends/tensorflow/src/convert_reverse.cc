/*!
 * \file convert_reverse.cc
 * \brief ReverseV2 (bidirectional RNNs reverse the time axis): a strided_slice that walks the
 * reversed axes with stride -1 over their full range.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

std::vector<NodeEntry> ConvertReverseV2(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  Shape shape = ctx.InputShape(0);
  IR_CHECK(shape.rank_known()) << "the rank of the reversed tensor must be known";
  int64_t rank = shape.ndim();
  std::vector<int64_t> zeros(static_cast<size_t>(rank), 0), strides(static_cast<size_t>(rank), 1);
  for (int64_t axis : ctx.ConstInts(1)) strides[static_cast<size_t>(ctx.NormalizeAxis(axis, rank, "axis"))] = -1;
  std::string all = std::to_string((int64_t{1} << rank) - 1);  // every axis over its full range
  return {ctx.Op("strided_slice", {ctx.input(0)},
                 {{"begin", IntsAttr(zeros)},
                  {"end", IntsAttr(zeros)},
                  {"strides", IntsAttr(strides)},
                  {"begin_mask", all},
                  {"end_mask", all}})};
}

}  // namespace

IR_TF_CONVERTER({"ReverseV2"}, ConvertReverseV2);

}  // namespace tf
}  // namespace ir
