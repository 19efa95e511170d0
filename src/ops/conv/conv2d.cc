/*!
 * \file conv2d.cc
 * \brief conv2d and its backward ops, conv2d_backprop_input and conv2d_backprop_filter.
 *
 * Weights are HWIO (TensorFlow's layout) for both data formats. The three ops share one
 * geometry: data [N, C, H, W] (in its layout), weight [KH, KW, C, O], output [N, O, OH, OW];
 * each op writes one of the three from the other two. float32 runs through oneDNN with
 * primitives cached by geometry, which pick their own weight layout (HWIO is reordered to it
 * and back, cached too); float64 (which oneDNN lacks, and gradient checks use) runs
 * im2col and row-parallel matrix products.
 */
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ops/conv/conv_shapes.h"
#include "ops/dnnl_post_ops.h"
#include "ops/im2col.h"
#include "ops/nn_common.h"
#include "ops/nn_device.h"
#include "ops/nn_dnnl.h"

namespace ir {
namespace op {
namespace {

using nn::Geometry;
using nn::Slot;
using nn::Window;

struct Conv2DParam : public dmlc::Parameter<Conv2DParam> {
  IntList strides;
  std::string padding;
  IntList pads;
  IntList dilations;
  std::string data_format;
  DMLC_DECLARE_PARAMETER(Conv2DParam) {
    DMLC_DECLARE_FIELD(strides)
        .set_default(IntList{1, 1})
        .describe("Strides (h, w); one value for both, or 4 in data_format order (TensorFlow).");
    DMLC_DECLARE_FIELD(padding).set_default("VALID").describe(
        "SAME, VALID or EXPLICIT (as TensorFlow); giving pads implies EXPLICIT.");
    DMLC_DECLARE_FIELD(pads).set_default(IntList()).describe("Explicit padding (top, bottom, left, right).");
    DMLC_DECLARE_FIELD(dilations).set_default(IntList{1, 1}).describe("Dilations (h, w), given like strides.");
    DMLC_DECLARE_FIELD(data_format).set_default("NHWC").describe("NHWC or NCHW; weights are HWIO for both.");
  }
  Window ToWindow(const NodeAttrs& attrs) const {
    Window w = nn::MakeWindow(attrs, data_format, padding, pads, strides);
    w.dilation = nn::SpatialPair(attrs, "dilations", dilations, w.layout, {1, 1});
    return w;
  }
};
DMLC_REGISTER_PARAMETER(Conv2DParam);

const Conv2DParam& ParamOf(const NodeAttrs& attrs) { return dmlc::get<Conv2DParam>(attrs.parsed); }

// ---------------------------------------------------------------- inference

/*! \brief Refines data, HWIO weight and output shapes from one another. */
bool ConvShapes(const NodeAttrs& attrs, Slot data, Slot weight, Slot out) {
  Window w = ParamOf(attrs).ToWindow(attrs);
  for (Slot s : {data, weight, out}) nn::RequireRank4(attrs, s.what, s.shape);
  std::array<int, 4> ax = nn::ActivationAxes(w.layout);
  Shape& x = *data.shape;
  Shape& k = *weight.shape;
  int64_t channels = x[ax[1]], in_channels = k[2];
  IR_CHECK(channels < 0 || in_channels < 0 || channels == in_channels)
      << NodeDesc(attrs) << ": data has " << channels << " channels but the weight has " << in_channels
      << " input channels (" << data.what << " " << x << " " << ParamOf(attrs).data_format << ", " << weight.what << " "
      << k << " HWIO)";
  x[ax[1]] = k[2] = std::max(channels, in_channels);
  int64_t oh = nn::ComputeExtent(attrs, w, 0, x[ax[2]], k[0]).out;
  int64_t ow = nn::ComputeExtent(attrs, w, 1, x[ax[3]], k[1]).out;
  AssignShape(attrs, out.what, out.shape, nn::ActivationShape(w.layout, x[ax[0]], k[3], oh, ow));
  x[ax[0]] = (*out.shape)[ax[0]];
  k[3] = (*out.shape)[ax[1]];
  return x.is_known() && k.is_known() && out.shape->is_known();
}

/*! \brief Inputs 0 and 1 and the output share a float dtype; `like` may have any. */
bool ConvType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = (*out)[0];
  AssignType(attrs, "input 0", &dtype, (*in)[0]);
  AssignType(attrs, "input 1", &dtype, (*in)[1]);
  CheckDType(attrs, "input", dtype, FloatTypes());
  (*in)[0] = (*in)[1] = (*out)[0] = dtype;
  return AllKnown(*in, *out);
}

// ---------------------------------------------------------------- oneDNN (float32)

using nn::ConvPass;
using nn::kBackwardData;
using nn::kBackwardWeights;
using nn::kForward;

/*! \brief The three tensors of a convolution, whichever one is being computed. */
struct ConvTensors {
  NDArray data, weight, output;
};

using nn::ActivationDesc;

/*! \brief HWIO weights as oneDNN's logical (O, I, KH, KW): O fastest, then I, KW, KH. */
dnnl::memory::desc WeightDesc(const Geometry& g) {
  return dnnl_utils::Desc({g.oc, g.c, g.kh, g.kw}, DType::kFloat32, {1, g.oc, g.kw * g.c * g.oc, g.c * g.oc});
}

/*!
 * \brief Weights in the layout oneDNN picks. With HWIO fixed it falls back to slow kernels
 * (a reference loop for NCHW), so primitives choose their layout and we reorder.
 */
dnnl::memory::desc AnyWeightDesc(const Geometry& g) {
  return dnnl::memory::desc({g.oc, g.c, g.kh, g.kw}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

/*! \brief Spatial attributes in oneDNN's terms (dilation 0 means none). */
struct DnnlWindow {
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  explicit DnnlWindow(const Geometry& g)
      : strides{g.sh, g.sw},
        dilates{g.dh - 1, g.dw - 1},
        pad_l{g.pad_top, g.pad_left},
        pad_r{g.pad_bottom, g.pad_right} {}
};

dnnl::convolution_forward::desc ForwardDesc(const Geometry& g, dnnl::prop_kind kind) {
  DnnlWindow d(g);
  return dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, ActivationDesc(g, false),
                                         AnyWeightDesc(g), ActivationDesc(g, true), d.strides, d.dilates, d.pad_l,
                                         d.pad_r);
}

/*! \brief The pass's primitive; the forward one folds `post`'s epilogue in when given. */
dnnl_utils::CachedPrimitive CreateConvPrimitive(ConvPass pass, const Geometry& g, const dnnl_utils::PostOps* post) {
  using dnnl_utils::DefaultAttr;
  using dnnl_utils::Engine;
  if (pass == kForward) {
    dnnl::convolution_forward::primitive_desc pd(ForwardDesc(g, dnnl::prop_kind::forward_inference),
                                                 post ? post->Attr() : DefaultAttr(), Engine());
    return dnnl_utils::MakeCached<dnnl::convolution_forward>(pd);
  }
  DnnlWindow d(g);
  dnnl::convolution_forward::primitive_desc hint(ForwardDesc(g, dnnl::prop_kind::forward_training), Engine());
  if (pass == kBackwardData) {
    dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, ActivationDesc(g, false),
                                               AnyWeightDesc(g), ActivationDesc(g, true), d.strides, d.dilates, d.pad_l,
                                               d.pad_r);
    dnnl::convolution_backward_data::primitive_desc pd(desc, DefaultAttr(), Engine(), hint);
    return dnnl_utils::MakeCached<dnnl::convolution_backward_data>(pd);
  }
  dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, ActivationDesc(g, false),
                                                AnyWeightDesc(g), ActivationDesc(g, true), d.strides, d.dilates,
                                                d.pad_l, d.pad_r);
  dnnl::convolution_backward_weights::primitive_desc pd(desc, DefaultAttr(), Engine(), hint);
  return dnnl_utils::MakeCached<dnnl::convolution_backward_weights>(pd);
}

const char* const kPassNames[] = {"conv2d_forward", "conv2d_backward_data", "conv2d_backward_weights"};

/*! \brief Cache key of a pass's primitive (or, with `suffix`, of its weight reorders), with its post-ops. */
dnnl_utils::PrimitiveKey ConvKey(ConvPass pass, const Geometry& g, const std::string& suffix = "",
                                 const dnnl_utils::PostOps* post = nullptr) {
  dnnl_utils::PrimitiveKey key(kPassNames[pass] + suffix + (post ? "_post" : ""));
  key.Add(g.Numbers());
  if (post) post->AddTo(&key);
  return key;
}

void DnnlConv(const NodeAttrs& attrs, ConvPass pass, const Geometry& g, const ConvTensors& t,
              const dnnl_utils::PostOps* post = nullptr) {
  std::string what = NodeDesc(attrs);
  dnnl_utils::CachedPrimitive prim = dnnl_utils::PrimitiveCache::Global().GetOrCreate(ConvKey(pass, g, "", post), [&] {
    return dnnl_utils::Guard(what, [&] { return CreateConvPrimitive(pass, g, post); });
  });
  dnnl::memory data = dnnl_utils::Memory(ActivationDesc(g, false), t.data.data());
  dnnl::memory output = dnnl_utils::Memory(ActivationDesc(g, true), t.output.data());
  dnnl::memory hwio = dnnl_utils::Memory(WeightDesc(g), t.weight.data());
  dnnl::memory::desc chosen =
      nn::QueryDesc(prim.primitive, pass == kBackwardWeights ? dnnl_query_diff_weights_md : dnnl_query_weights_md);
  bool reorder = chosen != hwio.get_desc();
  dnnl::memory weight =
      reorder ? dnnl_utils::Guard(what, [&] { return dnnl::memory(chosen, dnnl_utils::Engine()); }) : hwio;
  if (reorder && pass != kBackwardWeights) nn::Reorder(what, ConvKey(pass, g, "_weights_in", post), hwio, weight);
  if (pass == kForward) {
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, data}, {DNNL_ARG_WEIGHTS, weight}, {DNNL_ARG_DST, output}};
    if (post) post->AddArgs(&args);
    dnnl_utils::Execute(what, prim, std::move(args));
  } else if (pass == kBackwardData) {
    dnnl_utils::Execute(what, prim,
                        {{DNNL_ARG_DIFF_SRC, data}, {DNNL_ARG_WEIGHTS, weight}, {DNNL_ARG_DIFF_DST, output}});
  } else {
    dnnl_utils::Execute(what, prim,
                        {{DNNL_ARG_SRC, data}, {DNNL_ARG_DIFF_WEIGHTS, weight}, {DNNL_ARG_DIFF_DST, output}});
    if (reorder) nn::Reorder(what, ConvKey(pass, g, "_weights_out"), weight, hwio);
  }
}

// ---------------------------------------------------------------- direct (float64)

/*! \brief c[m, n] = a[m, k] b[k, n], rows in parallel, the inner loop contiguous. */
template <typename T>
void MatMul(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  ParallelFor(
      m,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          T* ci = c + i * n;
          std::fill(ci, ci + n, T(0));
          for (int64_t p = 0; p < k; ++p) {
            T av = a[i * k + p];
            const T* bp = b + p * n;
            for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
          }
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(n * k, 1)));
}

/*! \brief c[m, n] = a[m, k] b[n, k]^T: dot products of contiguous rows. */
template <typename T>
void MatMulTransB(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  ParallelFor(
      m,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            T sum = 0;
            for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[j * k + p];
            c[i * n + j] = sum;
          }
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(n * k, 1)));
}

/*! \brief c[m, n] += a[k, m]^T b[k, n]; each thread owns rows of c. */
template <typename T>
void AddMatMulTransA(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  ParallelFor(
      m,
      [&](int64_t begin, int64_t end) {
        for (int64_t p = 0; p < k; ++p) {
          const T* bp = b + p * n;
          for (int64_t i = begin; i < end; ++i) {
            T av = a[p * m + i];
            T* ci = c + i * n;
            for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
          }
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(n * k, 1)));
}

/*!
 * \brief One output image as a [OH * OW, O] matrix: the image itself in NHWC, else `buffer`,
 * holding the image transposed when `load`.
 */
template <typename T>
T* PixelMajor(const Geometry& g, T* image, bool load, std::vector<T>* buffer) {
  if (g.layout == nn::Layout::kNHWC) return image;
  int64_t pixels = g.oh * g.ow;
  buffer->resize(pixels * g.oc);
  for (int64_t o = 0; load && o < g.oc; ++o) {
    for (int64_t p = 0; p < pixels; ++p) (*buffer)[p * g.oc + o] = image[o * pixels + p];
  }
  return buffer->data();
}

/*! \brief Writes a PixelMajor matrix back into its image (nothing to do when it is the image). */
template <typename T>
void StorePixelMajor(const Geometry& g, const T* matrix, T* image) {
  if (matrix == image) return;
  int64_t pixels = g.oh * g.ow;
  for (int64_t o = 0; o < g.oc; ++o) {
    for (int64_t p = 0; p < pixels; ++p) image[o * pixels + p] = matrix[p * g.oc + o];
  }
}

template <typename T>
void DirectConv(ConvPass pass, const Geometry& g, const ConvTensors& t) {
  T* x = t.data.data<T>();
  T* w = t.weight.data<T>();
  T* y = t.output.data<T>();
  int64_t pixels = g.oh * g.ow, k = g.kh * g.kw * g.c;
  int64_t x_image = g.c * g.h * g.w, y_image = g.oc * pixels;
  std::vector<T> col(pixels * k), buffer;
  if (pass == kBackwardData) std::fill(x, x + g.n * x_image, T(0));
  if (pass == kBackwardWeights) std::fill(w, w + k * g.oc, T(0));
  for (int64_t n = 0; n < g.n; ++n) {
    T* x_n = x + n * x_image;
    T* y_n = y + n * y_image;
    if (pass == kForward) {
      nn::Im2Col(g, x_n, col.data(), 1);
      T* out = PixelMajor(g, y_n, false, &buffer);
      MatMul(pixels, g.oc, k, col.data(), w, out);
      StorePixelMajor(g, out, y_n);
    } else if (pass == kBackwardData) {
      MatMulTransB(pixels, k, g.oc, PixelMajor(g, y_n, true, &buffer), w, col.data());
      nn::Col2Im(g, col.data(), x_n, 1);
    } else {
      nn::Im2Col(g, x_n, col.data(), 1);
      AddMatMulTransA(k, g.oc, pixels, col.data(), PixelMajor(g, y_n, true, &buffer), w);
    }
  }
}

// ---------------------------------------------------------------- kernels and gradients

/*! \brief (data, weight, output) among an op's inputs and output. */
template <ConvPass kPass>
ConvTensors TensorsOf(const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  return kPass == kForward        ? ConvTensors{in[0], in[1], out[0]}
         : kPass == kBackwardData ? ConvTensors{out[0], in[1], in[0]}
                                  : ConvTensors{in[0], out[0], in[1]};
}

Geometry GeometryOf(const NodeAttrs& attrs, const ConvTensors& t) {
  const Shape& ws = t.weight.shape();
  return nn::MakeGeometry(attrs, ParamOf(attrs).ToWindow(attrs), t.data.shape(), ws[0], ws[1], ws[3]);
}

template <ConvPass kPass>
void ConvCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  ConvTensors t = TensorsOf<kPass>(in, out);
  Geometry g = GeometryOf(attrs, t);
  if (t.data.Size() == 0 || t.weight.Size() == 0 || t.output.Size() == 0) {
    const NDArray& result = out[0];
    IR_FLOAT_SWITCH(result.dtype(), T, std::fill_n(result.data<T>(), result.Size(), T(0)));
    return;
  }
  if (dnnl_utils::Supports(out[0].dtype())) {
    DnnlConv(attrs, kPass, g, t);
  } else {
    IR_FLOAT_SWITCH(out[0].dtype(), T, DirectConv<T>(kPass, g, t));
  }
}

/*! \brief conv2d with an epilogue as oneDNN post-ops (float32); false when the epilogue is no post-op chain. */
bool ConvEpilogue(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const ast::Expr& epilogue,
                  const std::vector<NDArray>& extra, const NDArray& out) {
  ConvTensors t = TensorsOf<kForward>(in, {out});
  if (!dnnl_utils::Supports(out.dtype()) || t.data.Size() == 0 || t.weight.Size() == 0 || out.Size() == 0) return false;
  Geometry g = GeometryOf(attrs, t);
  // oneDNN's logical destination is (N, C, H, W) whatever the layout.
  std::vector<int> order = g.layout == nn::Layout::kNHWC ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{0, 1, 2, 3};
  dnnl_utils::PostOps post;
  if (!post.Translate(epilogue, extra, out.shape(), order)) return false;
  DnnlConv(attrs, kForward, g, t, &post);
  return true;
}

template <ConvPass kPass>
void ConvDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  nn::ConvOnDevice(dev, kPass, GeometryOf(attrs, TensorsOf<kPass>(in, out)), in[0], in[1], out[0]);
}

NodeEntry ConvNode(const std::string& op, const NodePtr& n, const std::string& suffix, std::vector<NodeEntry> inputs) {
  return GradNode(op, n, suffix, std::move(inputs), n->attrs.dict);
}

/*! \brief d/dx = conv2d_backprop_input(og, w, like x); d/dw = conv2d_backprop_filter(x, og, like w). */
std::vector<NodeEntry> Conv2DGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {ConvNode("conv2d_backprop_input", n, "data", {og[0], In(n, 1), In(n, 0)}),
          ConvNode("conv2d_backprop_filter", n, "weight", {In(n, 0), og[0], In(n, 1)})};
}

/*! \brief The op is bilinear in (dy, weight): <og, op(dy, w)> = <conv2d(og, w), dy>. */
std::vector<NodeEntry> BackpropInputGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {ConvNode("conv2d", n, "dy", {og[0], In(n, 1)}),
          ConvNode("conv2d_backprop_filter", n, "weight", {og[0], In(n, 0), In(n, 1)}), NodeEntry()};
}

/*! \brief The op is bilinear in (x, dy): <og, op(x, dy)> = <conv2d(x, og), dy>. */
std::vector<NodeEntry> BackpropFilterGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {ConvNode("conv2d_backprop_input", n, "x", {In(n, 1), og[0], In(n, 0)}),
          ConvNode("conv2d", n, "dy", {In(n, 0), og[0]}), NodeEntry()};
}

void ConvOp(Op& op) {
  op.set_param<Conv2DParam>()
      .set_attr_parser(nn::ParseWindowParam<Conv2DParam>)
      .set_attr<FInferType>("FInferType", ConvType);
}

}  // namespace

nn::Window nn::ConvWindowOf(const NodeAttrs& attrs) { return ParamOf(attrs).ToWindow(attrs); }

IR_REGISTER_OP(conv2d)
    .describe(
        "2-D convolution (cross-correlation) as TensorFlow Conv2D: data NHWC or NCHW, weight HWIO "
        "[KH, KW, C, O]; SAME/VALID/explicit padding, strides and dilations.")
    .set_num_inputs(2)
    .set_input_names({"data", "weight"})
    .apply(ConvOp)
    .set_attr<FInferShape>("FInferShape", nn::ConvForwardShape<ConvShapes>)
    .set_attr<FCompute>("FCompute", ConvCompute<kForward>)
    .set_attr<FComputeEpilogue>("FComputeEpilogue", ConvEpilogue)
    .set_attr<FDeviceKernel>("FDeviceKernel", ConvDeviceKernel<kForward>)
    .set_attr<FGradient>("FGradient", Conv2DGradient)
    .set_attr<TOpPattern>("TOpPattern", kOutEWiseFusable);

IR_REGISTER_OP(conv2d_backprop_input)
    .describe(
        "Gradient of conv2d with respect to its data: from dy and the HWIO weight; `like` (the data) gives "
        "the result's shape only. Takes conv2d's attributes.")
    .set_num_inputs(3)
    .set_input_names({"dy", "weight", "like"})
    .apply(ConvOp)
    .set_attr<FInferShape>("FInferShape", nn::ConvBackpropShape<ConvShapes, false>)
    .set_attr<FCompute>("FCompute", ConvCompute<kBackwardData>)
    .set_attr<FDeviceKernel>("FDeviceKernel", ConvDeviceKernel<kBackwardData>)
    .set_attr<FGradient>("FGradient", BackpropInputGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(conv2d_backprop_filter)
    .describe(
        "Gradient of conv2d with respect to its HWIO weight: from the data x and dy; `like` (the weight) "
        "gives the result's shape only. Takes conv2d's attributes.")
    .set_num_inputs(3)
    .set_input_names({"x", "dy", "like"})
    .apply(ConvOp)
    .set_attr<FInferShape>("FInferShape", nn::ConvBackpropShape<ConvShapes, true>)
    .set_attr<FCompute>("FCompute", ConvCompute<kBackwardWeights>)
    .set_attr<FDeviceKernel>("FDeviceKernel", ConvDeviceKernel<kBackwardWeights>)
    .set_attr<FGradient>("FGradient", BackpropFilterGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
