/*!
 * \file patches.cc
 * \brief extract_image_patches (TensorFlow's ExtractImagePatches, im2col) and its gradient
 * extract_image_patches_grad (col2im), each the other's gradient.
 *
 * x is NHWC [B, H, W, C]; the patches are [B, OH, OW, KH * KW * C], each window's cells in
 * (kh, kw, c) order, zeros in the padding. Windows follow conv2d's arithmetic (SAME, VALID or
 * explicit pads; strides; rates are conv2d's dilations). The vectorized convolutions of
 * per-iteration filters are batched matrix products of these patches (conv/conv2d_vectorize.cc).
 */
#include <algorithm>
#include <string>
#include <vector>

#include "ops/im2col.h"
#include "ops/merge_into_batch.h"
#include "ops/nn_common.h"
#include "ops/nn_device.h"

namespace ir {
namespace op {
namespace {

using nn::Geometry;
using nn::Slot;
using nn::Window;

struct PatchesParam : public dmlc::Parameter<PatchesParam> {
  IntList ksizes;
  IntList strides;
  IntList rates;
  std::string padding;
  IntList pads;
  DMLC_DECLARE_PARAMETER(PatchesParam) {
    DMLC_DECLARE_FIELD(ksizes).describe("Window size (h, w); one value for both, or 4 in NHWC order (TensorFlow).");
    DMLC_DECLARE_FIELD(strides).set_default(IntList{1, 1}).describe("Strides (h, w), given like ksizes.");
    DMLC_DECLARE_FIELD(rates).set_default(IntList{1, 1}).describe("Dilations (h, w), given like ksizes.");
    DMLC_DECLARE_FIELD(padding).set_default("VALID").describe(
        "SAME, VALID or EXPLICIT (as conv2d); giving pads implies EXPLICIT.");
    DMLC_DECLARE_FIELD(pads).set_default(IntList()).describe("Explicit padding (top, bottom, left, right).");
  }
  Window ToWindow(const NodeAttrs& attrs) const {
    Window w = nn::MakeWindow(attrs, "NHWC", padding, pads, strides);
    IR_CHECK(!ksizes.empty()) << NodeDesc(attrs) << ": ksizes must not be empty";
    w.kernel = nn::SpatialPair(attrs, "ksizes", ksizes, w.layout, {1, 1});
    w.dilation = nn::SpatialPair(attrs, "rates", rates, w.layout, {1, 1});
    return w;
  }
};
DMLC_REGISTER_PARAMETER(PatchesParam);

Window WindowOf(const NodeAttrs& attrs) { return dmlc::get<PatchesParam>(attrs.parsed).ToWindow(attrs); }

/*! \brief Refines the image x and its patches from each other. */
bool PatchesShapes(const NodeAttrs& attrs, Slot x, Slot patches) {
  Window w = WindowOf(attrs);
  nn::RequireRank4(attrs, x.what, x.shape);
  nn::RequireRank4(attrs, patches.what, patches.shape);
  Shape& xs = *x.shape;
  int64_t window = w.kernel[0] * w.kernel[1];
  int64_t oh = nn::ComputeExtent(attrs, w, 0, xs[1], w.kernel[0]).out;
  int64_t ow = nn::ComputeExtent(attrs, w, 1, xs[2], w.kernel[1]).out;
  int64_t depth = (*patches.shape)[3];
  if (xs[3] < 0 && depth >= 0) {
    IR_CHECK(depth % window == 0) << NodeDesc(attrs) << ": " << patches.what << " " << *patches.shape
                                  << " has a depth that is no multiple of the window's " << window << " cells";
    xs[3] = depth / window;
  }
  AssignShape(attrs, patches.what, patches.shape, Shape{xs[0], oh, ow, xs[3] < 0 ? kUnknownDim : window * xs[3]});
  xs[0] = (*patches.shape)[0];
  return xs.is_known() && patches.shape->is_known();
}

bool PatchesShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  PatchesShapes(attrs, {"input 0 (x)", &(*in)[0]}, {"output 0", &(*out)[0]});
  return AllKnown(*in, *out);
}

/*! \brief extract_image_patches_grad(dy, like): dy has the patches' shape, the result `like`'s. */
bool PatchesGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 1 (like)", &(*in)[1], (*out)[0]);
  PatchesShapes(attrs, {"input 1 (like)", &(*in)[1]}, {"input 0 (dy)", &(*in)[0]});
  (*out)[0] = (*in)[1];
  return AllKnown(*in, *out);
}

Geometry GeometryOf(const NodeAttrs& attrs, const Shape& x) {
  Window w = WindowOf(attrs);
  return nn::MakeGeometry(attrs, w, x, w.kernel[0], w.kernel[1], w.kernel[0] * w.kernel[1] * x[3]);
}

/*! \brief The patches of in[0] (kGrad false), or in[0] summed back into an image (kGrad true). */
template <bool kGrad>
void PatchesCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  const NDArray& image = kGrad ? out[0] : in[0];
  if (out[0].Size() == 0) return;
  Geometry g = GeometryOf(attrs, image.shape());
  IR_FLOAT_SWITCH(out[0].dtype(), T, {
    T* x = image.data<T>();
    if (kGrad) std::fill_n(x, image.Size(), T(0));
    if (kGrad && in[0].Size() > 0) nn::Col2Im<T>(g, in[0].data<T>(), x, g.n);
    if (!kGrad) nn::Im2Col<T>(g, x, out[0].data<T>(), g.n);
  });
}

template <bool kGrad>
void PatchesDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  nn::PatchesOnDevice(dev, kGrad, GeometryOf(attrs, (kGrad ? out[0] : in[0]).shape()), in[0], out[0]);
}

NodeEntry PatchesNode(const std::string& op, const NodePtr& n, const std::string& suffix,
                      std::vector<NodeEntry> inputs) {
  return GradNode(op, n, suffix, std::move(inputs), n->attrs.dict);
}

void PatchesOp(Op& op) {
  op.set_param<PatchesParam>()
      .set_attr_parser(nn::ParseWindowParam<PatchesParam>)
      .set_attr<FInferType>("FInferType", nn::WindowType<1>)
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(extract_image_patches)
    .describe(
        "The windows of an NHWC image as TensorFlow ExtractImagePatches: [B, OH, OW, KH * KW * C], each "
        "window's cells in (kh, kw, c) order, zeros in the padding; windows as conv2d's (rates: dilations).")
    .set_num_inputs(1)
    .set_input_names({"x"})
    .apply(PatchesOp)
    .set_attr<FInferShape>("FInferShape", PatchesShape)
    .set_attr<FCompute>("FCompute", PatchesCompute<false>)
    .set_attr<FDeviceKernel>("FDeviceKernel", PatchesDeviceKernel<false>)
    .set_attr<FGradient>(
        "FGradient",
        [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          return std::vector<NodeEntry>{PatchesNode("extract_image_patches_grad", n, "x", {og[0], In(n, 0)})};
        })
    .set_attr<FVectorize>("FVectorize", MergeAllIntoBatch);

IR_REGISTER_OP(extract_image_patches_grad)
    .describe(
        "Gradient of extract_image_patches (col2im): each patch entry of dy added back to the image cell it "
        "came from; `like` (the image) gives the result's shape only. Takes extract_image_patches' attributes.")
    .set_num_inputs(2)
    .set_input_names({"dy", "like"})
    .apply(PatchesOp)
    .set_attr<FInferShape>("FInferShape", PatchesGradShape)
    .set_attr<FCompute>("FCompute", PatchesCompute<true>)
    .set_attr<FDeviceKernel>("FDeviceKernel", PatchesDeviceKernel<true>)
    .set_attr<FGradient>(
        "FGradient",
        [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          return std::vector<NodeEntry>{PatchesNode("extract_image_patches", n, "dy", {og[0]}), NodeEntry()};
        })
    .set_attr<FVectorize>("FVectorize", MergeAllIntoBatch);

}  // namespace op
}  // namespace ir
