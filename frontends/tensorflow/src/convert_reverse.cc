/*!
 * \file convert_reverse.cc
 * \brief ReverseV2 (bidirectional RNNs reverse the time axis): a strided_slice that walks the
 * reversed axes with stride -1 over their full range. ReverseSequence (bidirectional_dynamic_rnn
 * with sequence_length reverses each row's first length steps): a gather of rows.
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

/*! \brief An int32 constant of `shape` holding `values`. */
NodeEntry IntConstant(ImportContext& ctx, const Shape& shape, const std::vector<int32_t>& values, const char* suffix) {
  return ctx.Constant(NDArray::FromVector<int32_t>(shape, values), suffix);
}

/*!
 * \brief ReverseSequence(input, seq_lengths): with the input seen as [B, T, rest] (batch_dim and
 * seq_dim first), row (b, t) takes row (b, len[b] - 1 - t) for t < len[b], else itself; a gather of
 * the B*T rows at those indices (so the gradient is gather's).
 */
std::vector<NodeEntry> ConvertReverseSequence(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  Shape shape = ctx.InputShape(0);
  IR_CHECK(shape.is_known()) << "ReverseSequence needs the input's shape, got " << shape;
  int64_t rank = shape.ndim();
  int64_t seq = ctx.NormalizeAxis(ctx.Int("seq_dim"), rank, "seq_dim");
  int64_t batch = ctx.NormalizeAxis(ctx.Int("batch_dim", 0), rank, "batch_dim");
  IR_CHECK(seq != batch) << "seq_dim and batch_dim are both " << seq;
  std::vector<int64_t> perm{batch, seq}, inverse(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (d != seq && d != batch) perm.push_back(d);
  }
  for (int64_t d = 0; d < rank; ++d) inverse[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
  int64_t b_size = shape[batch], t_size = shape[seq];
  std::vector<int32_t> steps(static_cast<size_t>(t_size)), starts(static_cast<size_t>(b_size));
  for (int64_t t = 0; t < t_size; ++t) steps[static_cast<size_t>(t)] = static_cast<int32_t>(t);
  for (int64_t b = 0; b < b_size; ++b) starts[static_cast<size_t>(b)] = static_cast<int32_t>(b * t_size);
  NodeEntry t_row = IntConstant(ctx, Shape{1, t_size}, steps, "steps");
  NodeEntry lengths = ctx.Op("reshape", {ctx.Op("cast", {ctx.input(1)}, {{"dtype", "int32"}}, "lengths32")},
                             {{"shape", IntsAttr({b_size, 1})}}, "lengths");
  NodeEntry reversed =
      ctx.Op("subtract", {ctx.Op("add_scalar", {lengths}, {{"scalar", "-1"}}, "last"), t_row}, {}, "reversed");
  NodeEntry inside = ctx.Op("less", {t_row, lengths}, {}, "inside");
  NodeEntry within_row = ctx.Op("where", {inside, reversed, t_row}, {}, "source_step");
  NodeEntry rows = ctx.Op("add", {within_row, IntConstant(ctx, Shape{b_size, 1}, starts, "row_starts")}, {}, "rows");
  NodeEntry flat_rows = ctx.Op("reshape", {rows}, {{"shape", IntsAttr({b_size * t_size})}}, "flat_rows");
  bool moved = perm != std::vector<int64_t>{0, 1} || rank < 2;
  NodeEntry x =
      moved ? ctx.Op("transpose", {ctx.input(0)}, {{"axes", IntsAttr(perm)}}, "batch_seq_first") : ctx.input(0);
  std::vector<int64_t> permuted_dims;
  for (int64_t d : perm) permuted_dims.push_back(shape[d]);
  NodeEntry flat = ctx.Op("reshape", {x}, {{"shape", IntsAttr({b_size * t_size, -1})}}, "flat");
  NodeEntry gathered = ctx.Op("gather", {flat, flat_rows}, {{"axis", "0"}}, "gathered");
  NodeEntry out = ctx.Op("reshape", {gathered}, {{"shape", IntsAttr(permuted_dims)}}, moved ? "unflat" : "");
  return {moved ? ctx.Op("transpose", {out}, {{"axes", IntsAttr(inverse)}}) : out};
}

}  // namespace

IR_TF_CONVERTER({"ReverseV2"}, ConvertReverseV2);
IR_TF_CONVERTER({"ReverseSequence"}, ConvertReverseSequence);

}  // namespace tf
}  // namespace ir
