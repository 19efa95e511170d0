/*!
 * \file conv2d_vectorize.cc
 * \brief FVectorize converters of conv2d and its backward ops (pooling's and the image
 * patches' are in nn_pool.cc and nn_patches.cc).
 *
 * A loop-invariant filter: the iterations are independent images, so n merges into the batch
 * axis and the op runs once. Per-iteration filters (where TensorFlow's pfor falls back to a
 * loop) become batched matrix products of image patches (im2col): with the patches P of x
 * as rows [n, B*OH*OW, KH*KW*C] and dy as rows [n, B*OH*OW, O], conv2d is P @ w, the filter
 * gradient P^T @ dy, and the input gradient col2im(dy @ w^T). NCHW runs transposed to NHWC.
 */
#include <map>
#include <string>
#include <vector>

#include "ir/vectorize.h"
#include "ops/merge_into_batch.h"
#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace {

using nn::Layout;
using nn::Window;

NodeEntry Reshape(PforContext& ctx, const NodeEntry& e, std::vector<int64_t> dims) {
  return ctx.Make("reshape", {e}, {{"shape", StrCat(IntList(std::move(dims)))}});
}

NodeEntry Transpose(PforContext& ctx, const NodeEntry& e, std::vector<int64_t> axes) {
  return ctx.Make("transpose", {e}, {{"axes", StrCat(IntList(std::move(axes)))}});
}

NodeEntry Zeros(PforContext& ctx, const Shape& shape, DType dtype) {
  return ctx.Make("zeros", {}, {{"shape", StrCat(shape)}, {"dtype", DTypeName(dtype)}});
}

/*!
 * \brief The node as it is when only its `like` input (read for its shape) is stacked: the
 * result is loop-invariant, computed with zeros of like's per-iteration shape.
 */
std::vector<PforValue> OnlyLikeStacked(PforContext& ctx, size_t like) {
  std::vector<NodeEntry> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    in.push_back(i == like ? Zeros(ctx, ctx.in_shape(i), ctx.in_dtype(i)) : ctx.input(i).entry);
  }
  return {PforValue{ctx.CopyNode(in, ctx.attrs().dict), false}};
}

/*! \brief A per-iteration activation shape in NHWC. */
Shape NhwcShape(const Shape& shape, Layout layout) {
  return nn::ActivationShape(Layout::kNHWC, nn::ActivationDim(shape, layout, 0), nn::ActivationDim(shape, layout, 1),
                             nn::ActivationDim(shape, layout, 2), nn::ActivationDim(shape, layout, 3));
}

/*! \brief An activation as NHWC images, a stacked one with the iterations merged into its batch. */
NodeEntry NhwcImages(PforContext& ctx, const PforValue& v, const Shape& shape, Layout layout) {
  NodeEntry e = v.stacked ? ctx.MergeLeading(v.entry, shape) : v.entry;
  return layout == Layout::kNHWC ? e : Transpose(ctx, e, {0, 2, 3, 1});
}

/*! \brief Rows [rows, depth] of `e` (any layout of its elements), with a leading n when stacked. */
NodeEntry Rows(PforContext& ctx, const NodeEntry& e, bool stacked, int64_t rows, int64_t depth) {
  return stacked ? Reshape(ctx, e, {ctx.n(), rows, depth}) : Reshape(ctx, e, {rows, depth});
}

/*! \brief An activation as pixel rows [(n,) B*H*W, C]. */
NodeEntry PixelRows(PforContext& ctx, const PforValue& v, const Shape& shape, Layout layout) {
  int64_t channels = nn::ActivationDim(shape, layout, 1);
  return Rows(ctx, NhwcImages(ctx, v, shape, layout), v.stacked, shape.Size() / channels, channels);
}

/*! \brief The stacked activation of per-iteration `shape` in `layout` from n * |shape| elements in NHWC order. */
NodeEntry FromNhwc(PforContext& ctx, const NodeEntry& e, const Shape& shape, Layout layout) {
  std::vector<int64_t> dims{ctx.n()};
  Shape nhwc = NhwcShape(shape, layout);
  dims.insert(dims.end(), nhwc.dims().begin(), nhwc.dims().end());
  NodeEntry out = Reshape(ctx, e, dims);
  return layout == Layout::kNHWC ? out : Transpose(ctx, out, {0, 1, 4, 2, 3});
}

/*! \brief extract_image_patches' attributes for window `w` with a kh x kw kernel. */
std::map<std::string, std::string> PatchAttrs(const Window& w, int64_t kh, int64_t kw) {
  std::map<std::string, std::string> attrs = {{"ksizes", StrCat(IntList{kh, kw})},
                                              {"strides", StrCat(IntList{w.stride[0], w.stride[1]})},
                                              {"rates", StrCat(IntList{w.dilation[0], w.dilation[1]})}};
  if (w.padding == nn::Padding::kExplicit) {
    attrs["pads"] = StrCat(IntList{w.pads[0], w.pads[1], w.pads[2], w.pads[3]});
  } else {
    attrs["padding"] = w.padding == nn::Padding::kSame ? "SAME" : "VALID";
  }
  return attrs;
}

/*!
 * \brief The patches of activation x (per-iteration `shape`) under the HWIO `filter`'s window
 * as rows [(n,) B*OH*OW, KH*KW*C]; `y` is the convolution's per-iteration output shape.
 */
NodeEntry PatchRows(PforContext& ctx, const PforValue& x, const Shape& shape, const Shape& filter, const Shape& y) {
  Window w = nn::ConvWindowOf(ctx.attrs());
  NodeEntry p =
      ctx.Make("extract_image_patches", {NhwcImages(ctx, x, shape, w.layout)}, PatchAttrs(w, filter[0], filter[1]));
  int64_t depth = filter[0] * filter[1] * filter[2];
  return Rows(ctx, p, x.stacked, y.Size() / filter[3], depth);
}

/*! \brief A stacked HWIO filter as [n, KH*KW*C, O]. */
NodeEntry FilterMatrix(PforContext& ctx, const NodeEntry& w, const Shape& filter) {
  return Reshape(ctx, w, {ctx.n(), filter[0] * filter[1] * filter[2], filter[3]});
}

/*! \brief conv2d(x, w): per-iteration filters as patches(x) @ w. */
std::vector<PforValue> Conv2DVectorize(PforContext& ctx) {
  if (!ctx.stacked(1)) return MergedIntoBatch(ctx, {true, false});
  const Shape& filter = ctx.in_shape(1);
  NodeEntry p = PatchRows(ctx, ctx.input(0), ctx.in_shape(0), filter, ctx.out_shape(0));
  NodeEntry y = ctx.Make("matmul", {p, FilterMatrix(ctx, ctx.input(1).entry, filter)});
  return {PforValue{FromNhwc(ctx, y, ctx.out_shape(0), nn::ConvWindowOf(ctx.attrs()).layout), true}};
}

/*! \brief conv2d_backprop_filter(x, dy, like): per-iteration filter gradients as patches(x)^T @ dy. */
std::vector<PforValue> BackpropFilterVectorize(PforContext& ctx) {
  if (!ctx.stacked(0) && !ctx.stacked(1)) return OnlyLikeStacked(ctx, 2);
  const Shape& filter = ctx.out_shape(0);
  Layout layout = nn::ConvWindowOf(ctx.attrs()).layout;
  NodeEntry p = PatchRows(ctx, ctx.input(0), ctx.in_shape(0), filter, ctx.in_shape(1));
  NodeEntry dy = PixelRows(ctx, ctx.input(1), ctx.in_shape(1), layout);
  NodeEntry dw = ctx.Make("matmul", {p, dy}, {{"transpose_a", "true"}});
  std::vector<int64_t> dims{ctx.n()};
  dims.insert(dims.end(), filter.dims().begin(), filter.dims().end());
  return {PforValue{Reshape(ctx, dw, dims), true}};
}

/*! \brief conv2d_backprop_input(dy, w, like): per-iteration filters as col2im(dy @ w^T). */
std::vector<PforValue> BackpropInputVectorize(PforContext& ctx) {
  if (!ctx.stacked(0) && !ctx.stacked(1)) return OnlyLikeStacked(ctx, 2);
  if (!ctx.stacked(1)) return MergedIntoBatch(ctx, {true, false, true});
  const Shape& filter = ctx.in_shape(1);
  const Shape& x = ctx.out_shape(0);
  Window w = nn::ConvWindowOf(ctx.attrs());
  NodeEntry dy = PixelRows(ctx, ctx.input(0), ctx.in_shape(0), w.layout);
  NodeEntry col = ctx.Make("matmul", {dy, FilterMatrix(ctx, ctx.input(1).entry, filter)}, {{"transpose_b", "true"}});
  Shape images = NhwcShape(x, w.layout), patches = NhwcShape(ctx.in_shape(0), w.layout);
  images[0] *= ctx.n();
  col = Reshape(ctx, col, {images[0], patches[1], patches[2], filter[0] * filter[1] * filter[2]});
  NodeEntry dx = ctx.Make("extract_image_patches_grad", {col, Zeros(ctx, images, ctx.out_dtype(0))},
                          PatchAttrs(w, filter[0], filter[1]));
  return {PforValue{FromNhwc(ctx, dx, x, w.layout), true}};
}

}  // namespace

IR_REGISTER_OP(conv2d).set_attr<FVectorize>("FVectorize", Conv2DVectorize);
IR_REGISTER_OP(conv2d_backprop_filter).set_attr<FVectorize>("FVectorize", BackpropFilterVectorize);
IR_REGISTER_OP(conv2d_backprop_input).set_attr<FVectorize>("FVectorize", BackpropInputVectorize);

}  // namespace op
}  // namespace ir
