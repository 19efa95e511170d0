/*!
 * \file shape_vectorize.cc
 * \brief FVectorize converters of the shape ops on every gradient's path: reshape, reshape_like,
 * expand_dims, squeeze, transpose, broadcast_to, broadcast_like, collapse_sum_like, gather_grad; and
 * the other array ops: concat(_grad), split, slice, pad, tile(_grad), strided_slice(_grad),
 * one_hot, shape, size, rank.
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

/*! \brief `text` (an IntList attribute) with `value` put first. */
std::string Prepended(const std::string& text, int64_t value) {
  IntList list;
  std::istringstream is(text);
  is >> list;
  list.values.insert(list.values.begin(), value);
  return StrCat(list);
}

/*! \brief The node's axis attribute (default 0) normalized for per-iteration rank `rank`, plus 1. */
std::string ShiftedAxis(PforContext& ctx, int rank) {
  return std::to_string(NormalizedAxis(ctx, AttrOr<int>(ctx.attrs(), "axis", 0), rank) + 1);
}

/*! \brief The inputs from `first` on stacked (shape donors included), the rest as they are. */
std::vector<NodeEntry> StackedFrom(PforContext& ctx, size_t first) {
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(i < first ? ctx.input(i).entry : ctx.Stacked(i));
  return inputs;
}

/*! \brief All outputs of `node`, stacked. */
std::vector<PforValue> AllStacked(const NodeEntry& first, size_t count) {
  std::vector<PforValue> outs;
  for (uint32_t i = 0; i < count; ++i) outs.push_back(PforValue{NodeEntry{first.node, i}, true});
  return outs;
}

/*!
 * \brief Ops whose inputs after the first only give shapes (concat_grad, tile_grad,
 * strided_slice_grad): with only those stacked, one unstacked node over zeros of their shapes.
 */
bool OnlyShapeDonorsStacked(PforContext& ctx, std::vector<PforValue>* outs) {
  if (ctx.stacked(0)) return false;
  std::vector<NodeEntry> inputs{ctx.input(0).entry};
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    inputs.push_back(
        ctx.Make("zeros", {}, {{"shape", ShapeAttr(ctx.in_shape(i).dims())}, {"dtype", DTypeName(ctx.in_dtype(i))}}));
  }
  NodeEntry first = ctx.CopyNode(std::move(inputs), ctx.attrs().dict);
  for (uint32_t i = 0; i < ctx.num_outputs(); ++i) outs->push_back(PforValue{NodeEntry{first.node, i}, false});
  return true;
}

/*! \brief concat, split, concat_grad: along the shifted axis, every piece stacked. */
std::vector<PforValue> AxisVectorize(PforContext& ctx) {
  std::vector<PforValue> outs;
  if (ctx.attrs().op->name == "concat_grad" && OnlyShapeDonorsStacked(ctx, &outs)) return outs;
  NodeEntry first = ctx.CopyNode(StackedFrom(ctx, 0), ctx.DictWith("axis", ShiftedAxis(ctx, ctx.in_shape(0).ndim())));
  return AllStacked(first, ctx.num_outputs());
}

/*! \brief slice, pad, tile, tile_grad: the leading n kept whole (begin 0 / size -1, no padding, 1 rep). */
std::vector<PforValue> LeadingEntryVectorize(PforContext& ctx) {
  std::vector<PforValue> outs;
  if (ctx.attrs().op->name == "tile_grad" && OnlyShapeDonorsStacked(ctx, &outs)) return outs;
  std::map<std::string, std::string> dict = ctx.attrs().dict;
  const std::string& op = ctx.attrs().op->name;
  if (op == "slice") {
    dict["begin"] = Prepended(dict.at("begin"), 0);
    dict["size"] = Prepended(dict.at("size"), -1);
  } else if (op == "pad") {
    dict["paddings"] = Prepended(Prepended(dict.at("paddings"), 0), 0);
  } else {
    dict["reps"] = Prepended(dict.at("reps"), 1);
  }
  return AllStacked(ctx.CopyNode(StackedFrom(ctx, 0), dict), ctx.num_outputs());
}

/*! \brief strided_slice(_grad): a full first entry prepended, every mask shifted past it. */
std::vector<PforValue> StridedSliceVectorize(PforContext& ctx) {
  std::vector<PforValue> outs;
  if (ctx.num_inputs() > 1 && OnlyShapeDonorsStacked(ctx, &outs)) return outs;
  std::map<std::string, std::string> dict = ctx.attrs().dict;
  for (const char* key : {"begin", "end"}) dict[key] = Prepended(AttrOr<std::string>(ctx.attrs(), key, "()"), 0);
  IntList strides = AttrOr<IntList>(ctx.attrs(), "strides", IntList());
  if (strides.values.empty()) strides.values.assign(AttrOr<IntList>(ctx.attrs(), "begin", IntList()).values.size(), 1);
  dict["strides"] = Prepended(StrCat(strides), 1);
  for (const char* key : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    int64_t mask = AttrOr<int64_t>(ctx.attrs(), key, 0) << 1;
    if (std::string(key) == "begin_mask" || std::string(key) == "end_mask") mask |= 1;
    dict[key] = std::to_string(mask);
  }
  return AllStacked(ctx.CopyNode(StackedFrom(ctx, 0), dict), ctx.num_outputs());
}

/*! \brief one_hot of stacked indices: the new axis shifts by one unless it is last (-1). */
std::vector<PforValue> OneHotVectorize(PforContext& ctx) {
  int axis = AttrOr<int>(ctx.attrs(), "axis", -1);
  std::string shifted = axis < 0 ? std::to_string(axis) : std::to_string(axis + 1);
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", shifted)), true}};
}

/*! \brief shape, size, rank of a stacked value: the per-iteration answer, loop-invariant. */
std::vector<PforValue> ShapeOfVectorize(PforContext& ctx) {
  const std::string& op = ctx.attrs().op->name;
  if (op == "shape") {
    NodeEntry all = ctx.CopyNode({ctx.input(0).entry}, ctx.attrs().dict);
    return {PforValue{ctx.Make("slice", {all}, {{"begin", "(1)"}, {"size", "(-1)"}}), false}};
  }
  const Shape& x = ctx.in_shape(0);
  const int64_t value = op == "rank" ? x.ndim() : x.Size();
  return {PforValue{
      ctx.Make("fill", {}, {{"shape", "()"}, {"value", std::to_string(value)}, {"dtype", DTypeName(ctx.out_dtype(0))}}),
      false}};
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
IR_REGISTER_OP(concat).set_attr<FVectorize>("FVectorize", AxisVectorize);
IR_REGISTER_OP(concat_grad).set_attr<FVectorize>("FVectorize", AxisVectorize);
IR_REGISTER_OP(split).set_attr<FVectorize>("FVectorize", AxisVectorize);
IR_REGISTER_OP(slice).set_attr<FVectorize>("FVectorize", LeadingEntryVectorize);
IR_REGISTER_OP(pad).set_attr<FVectorize>("FVectorize", LeadingEntryVectorize);
IR_REGISTER_OP(tile).set_attr<FVectorize>("FVectorize", LeadingEntryVectorize);
IR_REGISTER_OP(tile_grad).set_attr<FVectorize>("FVectorize", LeadingEntryVectorize);
IR_REGISTER_OP(strided_slice).set_attr<FVectorize>("FVectorize", StridedSliceVectorize);
IR_REGISTER_OP(strided_slice_grad).set_attr<FVectorize>("FVectorize", StridedSliceVectorize);
IR_REGISTER_OP(one_hot).set_attr<FVectorize>("FVectorize", OneHotVectorize);
IR_REGISTER_OP(shape).set_attr<FVectorize>("FVectorize", ShapeOfVectorize);
IR_REGISTER_OP(size).set_attr<FVectorize>("FVectorize", ShapeOfVectorize);
IR_REGISTER_OP(rank).set_attr<FVectorize>("FVectorize", ShapeOfVectorize);

}  // namespace op
}  // namespace ir
