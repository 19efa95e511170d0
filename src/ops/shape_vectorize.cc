/*!
 * \file shape_vectorize.cc
 * \brief FVectorize converters of the shape ops on every gradient's path: reshape, reshape_like,
 * expand_dims, squeeze, transpose, broadcast_to, broadcast_like, collapse_sum_like, gather_grad.
 *
 * Per-iteration shapes are known when converters run, so most of these become the same op
 * with the leading n prepended to its target shape or its axes shifted by one.
 */
#include <sstream>
#include <string>
#include <vector>

#include "ir/vectorize.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

std::string ShapeAttr(const std::vector<int64_t>& dims) { return StrCat(IntList(dims)); }

/*! \brief Attribute `key` of the node parsed as T, or `def` when absent. */
template <typename T>
T AttrOr(const NodeAttrs& attrs, const char* key, T def) {
  auto it = attrs.dict.find(key);
  if (it == attrs.dict.end()) return def;
  std::istringstream is(it->second);
  is >> def;
  return def;
}

std::vector<int64_t> Leading(int64_t n, const Shape& shape) {
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return dims;
}

/*! \brief `entry` (stacked, per-iteration shape `shape`) reshaped to [n] + `to`. */
PforValue ReshapeStacked(PforContext& ctx, const NodeEntry& entry, const Shape& to) {
  return PforValue{ctx.Make("reshape", {entry}, {{"shape", ShapeAttr(Leading(ctx.n(), to))}}), true};
}

/*! \brief Output 0 of the node, per iteration, from input 0 when it is stacked; unstacked otherwise. */
std::vector<PforValue> ReshapeVectorize(PforContext& ctx) {
  if (!ctx.stacked(0)) {
    return {
        PforValue{ctx.Make("reshape", {ctx.input(0).entry}, {{"shape", ShapeAttr(ctx.out_shape(0).dims())}}), false}};
  }
  return {ReshapeStacked(ctx, ctx.input(0).entry, ctx.out_shape(0))};
}

int NormalizedAxis(const PforContext& ctx, int axis, int rank) {
  int a = axis < 0 ? axis + rank : axis;
  IR_CHECK(a >= 0 && a < rank) << NodeDesc(ctx.attrs()) << ": axis " << axis << " is out of range for rank " << rank;
  return a;
}

std::vector<PforValue> ExpandDimsVectorize(PforContext& ctx) {
  int axis = NormalizedAxis(ctx, std::stoi(ctx.attrs().dict.at("axis")), ctx.in_shape(0).ndim() + 1);
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", std::to_string(axis + 1))), true}};
}

/*! \brief Squeeze, transpose: the stacked input reshaped or permuted with n kept first. */
std::vector<PforValue> SqueezeVectorize(PforContext& ctx) {
  return {ReshapeStacked(ctx, ctx.input(0).entry, ctx.out_shape(0))};
}

std::vector<PforValue> TransposeVectorize(PforContext& ctx) {
  const int rank = ctx.in_shape(0).ndim();
  std::vector<int64_t> axes = AttrOr<IntList>(ctx.attrs(), "axes", IntList()).values;
  std::vector<int64_t> stacked{0};
  for (int i = 0; i < rank; ++i) {
    int64_t a = axes.empty() ? rank - 1 - i : axes.at(i);
    stacked.push_back(NormalizedAxis(ctx, static_cast<int>(a), rank) + 1);
  }
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axes", ShapeAttr(stacked))), true}};
}

/*! \brief Input `i` as [n] + ones + shape, of per-iteration rank `rank` (so it broadcasts with n first). */
NodeEntry AlignedStacked(PforContext& ctx, size_t i, int rank) {
  const Shape& shape = ctx.in_shape(i);
  if (shape.ndim() == rank) return ctx.input(i).entry;
  std::vector<int64_t> dims(1 + rank - shape.ndim(), 1);
  dims[0] = ctx.n();
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return ctx.Make("reshape", {ctx.input(i).entry}, {{"shape", ShapeAttr(dims)}});
}

/*! \brief broadcast_to / broadcast_like: to [n] + the per-iteration result shape. */
std::vector<PforValue> BroadcastVectorize(PforContext& ctx) {
  const Shape& out = ctx.out_shape(0);
  if (!ctx.stacked(0)) {
    return {PforValue{ctx.Make("broadcast_to", {ctx.input(0).entry}, {{"shape", ShapeAttr(out.dims())}}), false}};
  }
  NodeEntry x = AlignedStacked(ctx, 0, out.ndim());
  return {PforValue{ctx.Make("broadcast_to", {x}, {{"shape", ShapeAttr(Leading(ctx.n(), out))}}), true}};
}

/*!
 * \brief collapse_sum_like: the sum over the axes `like` was broadcast along, per iteration
 * (a sum keeping dims, then a reshape to like's shape); a copy-free pass-through when none was.
 */
std::vector<PforValue> CollapseSumVectorize(PforContext& ctx) {
  const Shape& data = ctx.in_shape(0);
  const Shape& like = ctx.out_shape(0);
  const bool stacked = ctx.stacked(0);
  if (data == like) return {ctx.input(0)};
  const int offset = stacked ? 1 : 0, lead = data.ndim() - like.ndim();
  std::vector<int64_t> axes;
  for (int a = 0; a < data.ndim(); ++a) {
    if (a < lead || (like[a - lead] == 1 && data[a] != 1)) axes.push_back(a + offset);
  }
  NodeEntry sum = ctx.Make("sum", {ctx.input(0).entry}, {{"axis", ShapeAttr(axes)}, {"keepdims", "1"}});
  std::vector<int64_t> dims = stacked ? Leading(ctx.n(), like) : like.dims();
  return {PforValue{ctx.Make("reshape", {sum}, {{"shape", ShapeAttr(dims)}}), stacked}};
}

/*!
 * \brief gather_grad: every iteration scatters into its own rows: the gathered axis moved to the
 * front, the iterations folded into it with offset indices, one gather_grad, then moved back.
 */
std::vector<PforValue> GatherGradVectorize(PforContext& ctx) {
  const Shape& like = ctx.out_shape(0);
  if (!ctx.stacked(0) && !ctx.stacked(1)) {  // only `like` is stacked: it gives only its shape
    NodeEntry zeros =
        ctx.Make("zeros", {}, {{"shape", ShapeAttr(like.dims())}, {"dtype", DTypeName(ctx.out_dtype(0))}});
    return {PforValue{ctx.CopyNode({ctx.input(0).entry, ctx.input(1).entry, zeros}, ctx.attrs().dict), false}};
  }
  const int axis = NormalizedAxis(ctx, AttrOr<int>(ctx.attrs(), "axis", 0), like.ndim());
  const int k = ctx.in_shape(1).ndim();
  NodeEntry dy = ctx.Stacked(0), indices = ctx.Stacked(1);
  if (axis != 0) {  // dy: [n, like[:axis], I, like[axis+1:]] -> [n, I, like[:axis], like[axis+1:]]
    std::vector<int64_t> perm{0};
    for (int a = 0; a < k; ++a) perm.push_back(1 + axis + a);
    for (int a = 0; a < axis; ++a) perm.push_back(1 + a);
    for (int a = 1 + axis + k; a <= ctx.in_shape(0).ndim(); ++a) perm.push_back(a);
    dy = ctx.Make("transpose", {dy}, {{"axes", ShapeAttr(perm)}});
  }
  std::vector<int64_t> moved{ctx.n() * like[axis]};  // [n * like[axis], like[:axis], like[axis+1:]]
  for (int a = 0; a < like.ndim(); ++a) {
    if (a != axis) moved.push_back(like[a]);
  }
  NodeEntry base = ctx.Make("range", {},
                            {{"start", "0"},
                             {"limit", std::to_string(ctx.n() * like[axis])},
                             {"delta", std::to_string(like[axis])},
                             {"dtype", DTypeName(ctx.in_dtype(1))}});
  std::vector<int64_t> base_shape(k + 1, 1);
  base_shape[0] = ctx.n();
  NodeEntry offset = ctx.Make("add", {indices, ctx.Make("reshape", {base}, {{"shape", ShapeAttr(base_shape)}})});
  NodeEntry shape_donor = ctx.Make("zeros", {}, {{"shape", ShapeAttr(moved)}, {"dtype", DTypeName(ctx.out_dtype(0))}});
  NodeEntry flat_dy = dy;
  NodeEntry out = ctx.CopyNode({flat_dy, offset, shape_donor}, ctx.DictWith("axis", "0"));
  std::vector<int64_t> split{ctx.n(), like[axis]};
  split.insert(split.end(), moved.begin() + 1, moved.end());
  out = ctx.Make("reshape", {out}, {{"shape", ShapeAttr(split)}});
  if (axis != 0) {  // [n, like[axis], like[:axis], rest] -> [n, like[:axis], like[axis], rest]
    std::vector<int64_t> perm{0};
    for (int a = 0; a < axis; ++a) perm.push_back(2 + a);
    perm.push_back(1);
    for (int a = axis + 2; a <= like.ndim(); ++a) perm.push_back(a);
    out = ctx.Make("transpose", {out}, {{"axes", ShapeAttr(perm)}});
  }
  return {PforValue{out, true}};
}

}  // namespace

IR_REGISTER_OP(reshape).set_attr<FVectorize>("FVectorize", ReshapeVectorize);
IR_REGISTER_OP(reshape_like).set_attr<FVectorize>("FVectorize", ReshapeVectorize);
IR_REGISTER_OP(expand_dims).set_attr<FVectorize>("FVectorize", ExpandDimsVectorize);
IR_REGISTER_OP(squeeze).set_attr<FVectorize>("FVectorize", SqueezeVectorize);
IR_REGISTER_OP(transpose).set_attr<FVectorize>("FVectorize", TransposeVectorize);
IR_REGISTER_OP(broadcast_to).set_attr<FVectorize>("FVectorize", BroadcastVectorize);
IR_REGISTER_OP(broadcast_like).set_attr<FVectorize>("FVectorize", BroadcastVectorize);
IR_REGISTER_OP(collapse_sum_like).set_attr<FVectorize>("FVectorize", CollapseSumVectorize);
IR_REGISTER_OP(gather_grad).set_attr<FVectorize>("FVectorize", GatherGradVectorize);

}  // namespace op
}  // namespace ir
