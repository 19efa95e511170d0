/*!
 * \file array_vectorize.h
 * \brief What the array and shape ops' FVectorize converters share (see ir/vectorize.h): shape
 * and axis attributes with the leading n, stacked inputs and outputs, shape-donor inputs.
 *
 * Per-iteration shapes are known when converters run, so most array ops become the same op
 * with the leading n prepended to its target shape or its axes shifted by one.
 */
#ifndef IR_OPS_ARRAY_ARRAY_VECTORIZE_H_
#define IR_OPS_ARRAY_ARRAY_VECTORIZE_H_

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "ir/vectorize.h"
#include "ops/op_common.h"

namespace ir {
namespace op {

/*! \brief `dims` as a shape attribute. */
inline std::string ShapeAttr(const std::vector<int64_t>& dims) { return StrCat(IntList(dims)); }

/*! \brief Attribute `key` of the node parsed as T, or `def` when absent. */
template <typename T>
inline T AttrOr(const NodeAttrs& attrs, const char* key, T def) {
  auto it = attrs.dict.find(key);
  if (it == attrs.dict.end()) return def;
  std::istringstream is(it->second);
  is >> def;
  return def;
}

/*! \brief [n] + `shape`. */
inline std::vector<int64_t> Leading(int64_t n, const Shape& shape) {
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return dims;
}

/*! \brief `entry` (stacked, per-iteration shape `shape`) reshaped to [n] + `to`. */
inline PforValue ReshapeStacked(PforContext& ctx, const NodeEntry& entry, const Shape& to) {
  return PforValue{ctx.Make("reshape", {entry}, {{"shape", ShapeAttr(Leading(ctx.n(), to))}}), true};
}

/*! \brief `axis` in [0, rank), negative counting from the end; fails naming the node. */
inline int NormalizedAxis(const PforContext& ctx, int axis, int rank) {
  int a = axis < 0 ? axis + rank : axis;
  IR_CHECK(a >= 0 && a < rank) << NodeDesc(ctx.attrs()) << ": axis " << axis << " is out of range for rank " << rank;
  return a;
}

/*! \brief `text` (an IntList attribute) with `value` put first. */
inline std::string Prepended(const std::string& text, int64_t value) {
  IntList list;
  std::istringstream is(text);
  is >> list;
  list.values.insert(list.values.begin(), value);
  return StrCat(list);
}

/*! \brief The node's axis attribute (default 0) normalized for per-iteration rank `rank`, plus 1. */
inline std::string ShiftedAxis(PforContext& ctx, int rank) {
  return std::to_string(NormalizedAxis(ctx, AttrOr<int>(ctx.attrs(), "axis", 0), rank) + 1);
}

/*! \brief The inputs from `first` on stacked (shape donors included), the rest as they are. */
inline std::vector<NodeEntry> StackedFrom(PforContext& ctx, size_t first) {
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(i < first ? ctx.input(i).entry : ctx.Stacked(i));
  return inputs;
}

/*! \brief All outputs of `node`, stacked. */
inline std::vector<PforValue> AllStacked(const NodeEntry& first, size_t count) {
  std::vector<PforValue> outs;
  for (uint32_t i = 0; i < count; ++i) outs.push_back(PforValue{NodeEntry{first.node, i}, true});
  return outs;
}

/*!
 * \brief Ops whose inputs after the first only give shapes (concat_grad, tile_grad,
 * strided_slice_grad): with only those stacked, one unstacked node over zeros of their shapes.
 */
inline bool OnlyShapeDonorsStacked(PforContext& ctx, std::vector<PforValue>* outs) {
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

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_ARRAY_ARRAY_VECTORIZE_H_
