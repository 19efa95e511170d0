/*!
 * \file depthwise_conv2d.cc
 * \brief TensorFlow's depthwise convolution (DepthwiseConv2dNative) and its backward ops,
 * depthwise_conv2d_backprop_input and depthwise_conv2d_backprop_filter: CPU kernels and device
 * kernels (in the library of nn_device_library.h).
 *
 * depthwise_conv2d: data [N, C, H, W] (NHWC or NCHW), weight [KH, KW, C, M], output channel
 * c * M + m = sum over the window of data channel c times weight[:, :, c, m].
 */
#include <algorithm>
#include <string>
#include <vector>

#include "ops/conv/conv_shapes.h"
#include "ops/nn_common.h"
#include "ops/nn_device_library.h"

namespace ir {
namespace op {
namespace {

using nn::Geometry;
using nn::Slot;
using nn::Window;

NodeEntry Apply(const NodePtr& n, const std::string& op, std::vector<NodeEntry> in,
                const std::map<std::string, std::string>& attrs = {}) {
  return GradNode(op, n, op, std::move(in), attrs);
}

// ---------------------------------------------------------------- depthwise_conv2d

struct DepthwiseParam : public dmlc::Parameter<DepthwiseParam> {
  IntList strides;
  std::string padding;
  IntList dilations;
  std::string data_format;
  DMLC_DECLARE_PARAMETER(DepthwiseParam) {
    DMLC_DECLARE_FIELD(strides).set_default(IntList{1, 1}).describe("Strides (h, w), or 4 in data_format order.");
    DMLC_DECLARE_FIELD(padding).set_default("VALID").describe("SAME or VALID (as TensorFlow).");
    DMLC_DECLARE_FIELD(dilations).set_default(IntList{1, 1}).describe("Dilations (h, w), given like strides.");
    DMLC_DECLARE_FIELD(data_format).set_default("NHWC").describe("NHWC or NCHW; weights are [KH, KW, C, M].");
  }
  Window ToWindow(const NodeAttrs& attrs) const {
    IR_CHECK(padding != "EXPLICIT") << NodeDesc(attrs) << ": padding must be \"SAME\" or \"VALID\"";
    Window w = nn::MakeWindow(attrs, data_format, padding, IntList(), strides);
    w.dilation = nn::SpatialPair(attrs, "dilations", dilations, w.layout, {1, 1});
    IR_CHECK((w.stride[0] == 1 && w.stride[1] == 1) || (w.dilation[0] == 1 && w.dilation[1] == 1))
        << NodeDesc(attrs) << ": strides " << strides << " and dilations " << dilations
        << " cannot both exceed 1 (as TensorFlow)";
    return w;
  }
};
DMLC_REGISTER_PARAMETER(DepthwiseParam);

/*! \brief Refines data, [KH, KW, C, M] weight and output shapes from one another. */
void DepthwiseShapes(const NodeAttrs& attrs, Slot data, Slot weight, Slot out) {
  Window w = dmlc::get<DepthwiseParam>(attrs.parsed).ToWindow(attrs);
  for (Slot s : {data, weight, out}) nn::RequireRank4(attrs, s.what, s.shape);
  std::array<int, 4> ax = nn::ActivationAxes(w.layout);
  Shape& x = *data.shape;
  Shape& k = *weight.shape;
  int64_t channels = x[ax[1]];
  IR_CHECK(channels < 0 || k[2] < 0 || channels == k[2])
      << NodeDesc(attrs) << ": data has " << channels << " channels but the weight has " << k[2] << " input channels ("
      << data.what << " " << x << ", " << weight.what << " " << k << " [KH, KW, C, M])";
  x[ax[1]] = k[2] = std::max(channels, k[2]);
  Shape& y = *out.shape;
  if (k[3] < 0 && k[2] > 0 && y[ax[1]] >= 0) k[3] = y[ax[1]] / k[2];
  int64_t oc = k[2] >= 0 && k[3] >= 0 ? k[2] * k[3] : kUnknownDim;
  int64_t oh = nn::ComputeExtent(attrs, w, 0, x[ax[2]], k[0]).out;
  int64_t ow = nn::ComputeExtent(attrs, w, 1, x[ax[3]], k[1]).out;
  AssignShape(attrs, out.what, out.shape, nn::ActivationShape(w.layout, x[ax[0]], oc, oh, ow));
  x[ax[0]] = y[ax[0]];
}

enum DepthwisePass { kForward, kBackwardData, kBackwardWeights };

/*!
 * \brief One kernel for the three passes over (data x, weight w, output y): forward writes y,
 * backward data writes x from y, backward weights writes w. Each pass parallelizes over what it
 * writes without overlap: output planes, input planes (n, c), weight channels c.
 */
template <typename T, DepthwisePass kPass>
void DepthwiseKernel(const Geometry& g, int64_t m, T* x, T* w, T* y) {
  std::array<int64_t, 4> xs = g.InputStrides(), ys = g.OutputStrides();
  // Planes (n, c) per thread: about 32k multiply-adds at least.
  int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, g.oh * g.ow * g.kh * g.kw * m));
  auto visit = [&](int64_t n, int64_t c, auto&& fn) {  // fn(x offset, weight offset, y offset) per tap
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          int64_t iy = oy * g.sh - g.pad_top + ky * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            int64_t ix = ox * g.sw - g.pad_left + kx * g.dw;
            if (ix < 0 || ix >= g.w) continue;
            int64_t xo = n * xs[0] + c * xs[1] + iy * xs[2] + ix * xs[3];
            int64_t wo = ((ky * g.kw + kx) * g.c + c) * m;
            int64_t yo = n * ys[0] + c * m * ys[1] + oy * ys[2] + ox * ys[3];
            for (int64_t j = 0; j < m; ++j) fn(xo, wo + j, yo + j * ys[1]);
          }
        }
      }
    }
  };
  if (kPass == kForward) {
    for (int64_t i = 0; i < g.n * g.oc * g.oh * g.ow; ++i) y[i] = T(0);
    ParallelFor(
        g.n * g.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p)
            visit(p / g.c, p % g.c, [&](int64_t xo, int64_t wo, int64_t yo) { y[yo] += x[xo] * w[wo]; });
        },
        grain);
  } else if (kPass == kBackwardData) {
    for (int64_t i = 0; i < g.n * g.c * g.h * g.w; ++i) x[i] = T(0);
    ParallelFor(
        g.n * g.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p)
            visit(p / g.c, p % g.c, [&](int64_t xo, int64_t wo, int64_t yo) { x[xo] += y[yo] * w[wo]; });
        },
        grain);
  } else {
    for (int64_t i = 0; i < g.kh * g.kw * g.c * m; ++i) w[i] = T(0);
    ParallelFor(
        g.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            for (int64_t n = 0; n < g.n; ++n)
              visit(n, c, [&](int64_t xo, int64_t wo, int64_t yo) { w[wo] += x[xo] * y[yo]; });
          }
        },
        std::max<int64_t>(1, grain / std::max<int64_t>(g.n, 1)));
  }
}

/*! \brief FCompute of pass kPass; inputs in the ops' order (data/dy/x first), `like` last. */
template <DepthwisePass kPass>
void DepthwiseCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const DepthwiseParam& p = dmlc::get<DepthwiseParam>(attrs.parsed);
  Window win = p.ToWindow(attrs);
  // (data, weight, output) arrays of this pass.
  NDArray data = kPass == kForward ? in[0] : kPass == kBackwardData ? out[0] : in[0];
  NDArray weight = kPass == kBackwardWeights ? out[0] : in[1];
  NDArray output = kPass == kForward ? out[0] : kPass == kBackwardData ? in[0] : in[1];
  const Shape& k = weight.shape();
  Geometry g = nn::MakeGeometry(attrs, win, data.shape(), k[0], k[1], k[2] * k[3]);
  IR_FLOAT_SWITCH(out[0].dtype(), T,
                  DepthwiseKernel<T, kPass>(g, k[3], const_cast<T*>(data.data<T>()), const_cast<T*>(weight.data<T>()),
                                            const_cast<T*>(output.data<T>())));
}

std::vector<NodeEntry> DepthwiseGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& a = n->attrs.dict;
  return {Apply(n, "depthwise_conv2d_backprop_input", {og[0], In(n, 1), In(n, 0)}, a),
          Apply(n, "depthwise_conv2d_backprop_filter", {In(n, 0), og[0], In(n, 1)}, a)};
}

// The backward ops are bilinear: their gradients are the other passes.
std::vector<NodeEntry> DepthwiseBackpropInputGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& a = n->attrs.dict;  // inputs (dy, weight, like)
  return {Apply(n, "depthwise_conv2d", {og[0], In(n, 1)}, a),
          Apply(n, "depthwise_conv2d_backprop_filter", {og[0], In(n, 0), In(n, 1)}, a), NodeEntry()};
}

std::vector<NodeEntry> DepthwiseBackpropFilterGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& a = n->attrs.dict;  // inputs (x, dy, like)
  return {Apply(n, "depthwise_conv2d_backprop_input", {In(n, 1), og[0], In(n, 0)}, a),
          Apply(n, "depthwise_conv2d", {In(n, 0), og[0]}, a), NodeEntry()};
}

}  // namespace

const char nn::kDepthwiseDeviceC[] = R"(
/* depthwise_conv2d: y[n, c*m+j, oy, ox] = sum over taps of x[n, c, iy, ix] * w[ky, kx, c, j]. */
IR_KERNEL void depthwise_forward(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, w), IR_ARRAY(T, y), const nn_window g,
                                 const long m) {
  IR_OFFSET(x);
  IR_OFFSET(w);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, g.n * g.oc * g.oh * g.ow) {
    long n, oc, oy, ox;
    nn_coords(e, g.oc, g.oh, g.ow, g.nhwc, &n, &oc, &oy, &ox);
    const long c = oc / m, j = oc % m;
    T acc = (T)0;
    for (long ky = 0; ky < g.kh; ++ky) {
      const long iy = oy * g.sh - g.pad_top + ky * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (long kx = 0; kx < g.kw; ++kx) {
        const long ix = ox * g.sw - g.pad_left + kx * g.dw;
        if (ix >= 0 && ix < g.w) acc += x[nn_at(g, 1, n, c, iy, ix)] * w[((ky * g.kw + kx) * g.c + c) * m + j];
      }
    }
    y[nn_at(g, 0, n, oc, oy, ox)] = acc;
  }
}

/* dx[n, c, iy, ix]: the taps of every output cell whose window covers (iy, ix). */
IR_KERNEL void depthwise_backward_data(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(T, w), IR_ARRAY(T, dx), const nn_window g,
                                       const long m) {
  IR_OFFSET(dy);
  IR_OFFSET(w);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, g.n * g.c * g.h * g.w) {
    long n, c, iy, ix;
    nn_coords(e, g.c, g.h, g.w, g.nhwc, &n, &c, &iy, &ix);
    T acc = (T)0;
    for (long ky = 0; ky < g.kh; ++ky) {
      const long ty = iy + g.pad_top - ky * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long kx = 0; kx < g.kw; ++kx) {
        const long tx = ix + g.pad_left - kx * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        for (long j = 0; j < m; ++j) {
          acc += dy[nn_at(g, 0, n, c * m + j, ty / g.sh, tx / g.sw)] * w[((ky * g.kw + kx) * g.c + c) * m + j];
        }
      }
    }
    dx[nn_at(g, 1, n, c, iy, ix)] = acc;
  }
}

/* dw[ky, kx, c, j] = sum over batch and output cells of x at the tap times dy. */
IR_KERNEL void depthwise_backward_filter(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dw),
                                         const nn_window g, const long m) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dw);
  IR_THREAD_LOOP(e, g.kh * g.kw * g.c * m) {
    const long j = e % m, c = e / m % g.c, kx = e / (m * g.c) % g.kw, ky = e / (m * g.c * g.kw);
    T acc = (T)0;
    for (long n = 0; n < g.n; ++n) {
      for (long oy = 0; oy < g.oh; ++oy) {
        const long iy = oy * g.sh - g.pad_top + ky * g.dh;
        if (iy < 0 || iy >= g.h) continue;
        for (long ox = 0; ox < g.ow; ++ox) {
          const long ix = ox * g.sw - g.pad_left + kx * g.dw;
          if (ix >= 0 && ix < g.w) acc += x[nn_at(g, 1, n, c, iy, ix)] * dy[nn_at(g, 0, n, c * m + j, oy, ox)];
        }
      }
    }
    dw[e] = acc;
  }
}
)";

namespace {

template <DepthwisePass kPass>
void DepthwiseDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  if (!nn::DeviceOrHost(dev, attrs, in, out, out[0].dtype(), 4)) return;
  const NDArray& data = kPass == kForward || kPass == kBackwardWeights ? in[0] : out[0];
  const NDArray& weight = kPass == kBackwardWeights ? out[0] : in[1];
  const Shape& k = weight.shape();
  Geometry g = nn::MakeGeometry(attrs, dmlc::get<DepthwiseParam>(attrs.parsed).ToWindow(attrs), data.shape(), k[0],
                                k[1], k[2] * k[3]);
  static const char* kNames[] = {"depthwise_forward", "depthwise_backward_data", "depthwise_backward_filter"};
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]);  // (x or dy, weight or dy, result)
  args.Value(nn::ToDeviceWindow(g)).Value(int64_t{k[3]});
  dev.Launch(nn::DeviceLibrary(), out[0].dtype(), kNames[kPass], args, DeviceLaunch::Threads(out[0].Size()));
}

}  // namespace

IR_REGISTER_OP(depthwise_conv2d)
    .describe("Depthwise 2-D convolution (TensorFlow DepthwiseConv2dNative): weight [KH, KW, C, M], C * M outputs.")
    .set_num_inputs(2)
    .set_input_names({"data", "weight"})
    .set_param<DepthwiseParam>()
    .set_attr_parser(nn::ParseWindowParam<DepthwiseParam>)
    .set_attr<FInferShape>("FInferShape", nn::ConvForwardShape<DepthwiseShapes>)
    .set_attr<FInferType>("FInferType", nn::WindowType<2>)
    .set_attr<FCompute>("FCompute", DepthwiseCompute<kForward>)
    .set_attr<FGradient>("FGradient", DepthwiseGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", DepthwiseDevice<kForward>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(depthwise_conv2d_backprop_input)
    .describe("Gradient of depthwise_conv2d for its data, shaped like `like` (DepthwiseConv2dNativeBackpropInput).")
    .set_num_inputs(3)
    .set_input_names({"dy", "weight", "like"})
    .set_param<DepthwiseParam>()
    .set_attr_parser(nn::ParseWindowParam<DepthwiseParam>)
    .set_attr<FInferShape>("FInferShape", nn::ConvBackpropShape<DepthwiseShapes, false>)
    .set_attr<FInferType>("FInferType", nn::WindowType<2>)
    .set_attr<FCompute>("FCompute", DepthwiseCompute<kBackwardData>)
    .set_attr<FGradient>("FGradient", DepthwiseBackpropInputGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", DepthwiseDevice<kBackwardData>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(depthwise_conv2d_backprop_filter)
    .describe("Gradient of depthwise_conv2d for its weight, shaped like `like` (DepthwiseConv2dNativeBackpropFilter).")
    .set_num_inputs(3)
    .set_input_names({"x", "dy", "like"})
    .set_param<DepthwiseParam>()
    .set_attr_parser(nn::ParseWindowParam<DepthwiseParam>)
    .set_attr<FInferShape>("FInferShape", nn::ConvBackpropShape<DepthwiseShapes, true>)
    .set_attr<FInferType>("FInferType", nn::WindowType<2>)
    .set_attr<FCompute>("FCompute", DepthwiseCompute<kBackwardWeights>)
    .set_attr<FGradient>("FGradient", DepthwiseBackpropFilterGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", DepthwiseDevice<kBackwardWeights>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
