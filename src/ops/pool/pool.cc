/*!
 * \file pool.cc
 * \brief max_pool2d, avg_pool2d and their backward ops, max_pool2d_grad and avg_pool2d_grad.
 *
 * Padded cells never count: max ignores them and avg divides by the number of real cells
 * in each window (TensorFlow's SAME average pooling; oneDNN's pooling_avg_exclude_padding).
 * max_pool2d_grad routes each gradient to the first maximum of its window, as TensorFlow's
 * MaxPoolGrad does, recomputed from x. NHWC runs the vectorized loops of pool_kernels.h (oneDNN's
 * max_pool2d_grad ran the forward pass again into a new workspace on every call); NCHW float32
 * runs through oneDNN (primitives cached by geometry), NCHW float64 direct loops, one (batch,
 * channel) plane per task.
 */
#include <algorithm>
#include <array>
#include <vector>

#include "ops/merge_into_batch.h"
#include "ops/nn_common.h"
#include "ops/nn_device.h"
#include "ops/nn_dnnl.h"
#include "ops/pool/pool_kernels.h"

namespace ir {
namespace op {
namespace {

using nn::Geometry;
using nn::Slot;
using nn::Window;

struct Pool2DParam : public dmlc::Parameter<Pool2DParam> {
  IntList ksize;
  IntList strides;
  std::string padding;
  IntList pads;
  std::string data_format;
  DMLC_DECLARE_PARAMETER(Pool2DParam) {
    DMLC_DECLARE_FIELD(ksize).describe("Window size (h, w); one value for both, or 4 in data_format order.");
    DMLC_DECLARE_FIELD(strides).set_default(IntList{1, 1}).describe("Strides (h, w), given like ksize.");
    DMLC_DECLARE_FIELD(padding).set_default("VALID").describe(
        "SAME, VALID or EXPLICIT (as TensorFlow); giving pads implies EXPLICIT.");
    DMLC_DECLARE_FIELD(pads).set_default(IntList()).describe(
        "Explicit padding (top, bottom, left, right), each smaller than the window.");
    DMLC_DECLARE_FIELD(data_format).set_default("NHWC").describe("NHWC or NCHW.");
  }
  Window ToWindow(const NodeAttrs& attrs) const {
    Window w = nn::MakeWindow(attrs, data_format, padding, pads, strides);
    IR_CHECK(!ksize.empty()) << NodeDesc(attrs) << ": ksize must not be empty";
    w.kernel = nn::SpatialPair(attrs, "ksize", ksize, w.layout, {1, 1});
    // A window made only of padding would have no value.
    IR_CHECK(w.pads[0] < w.kernel[0] && w.pads[1] < w.kernel[0] && w.pads[2] < w.kernel[1] && w.pads[3] < w.kernel[1])
        << NodeDesc(attrs) << ": pads " << pads << " must be smaller than the window " << ksize;
    return w;
  }
};
DMLC_REGISTER_PARAMETER(Pool2DParam);

Window WindowOf(const NodeAttrs& attrs) { return dmlc::get<Pool2DParam>(attrs.parsed).ToWindow(attrs); }

/*! \brief Max or average pooling. */
enum class PoolKind { kMax, kAvg };

// ---------------------------------------------------------------- inference

/*! \brief Refines the input x and the pooled y from each other. */
bool PoolShapes(const NodeAttrs& attrs, Slot x, Slot y) {
  Window w = WindowOf(attrs);
  nn::RequireRank4(attrs, x.what, x.shape);
  nn::RequireRank4(attrs, y.what, y.shape);
  std::array<int, 4> ax = nn::ActivationAxes(w.layout);
  Shape& xs = *x.shape;
  int64_t oh = nn::ComputeExtent(attrs, w, 0, xs[ax[2]], w.kernel[0]).out;
  int64_t ow = nn::ComputeExtent(attrs, w, 1, xs[ax[3]], w.kernel[1]).out;
  AssignShape(attrs, y.what, y.shape, nn::ActivationShape(w.layout, xs[ax[0]], xs[ax[1]], oh, ow));
  xs[ax[0]] = (*y.shape)[ax[0]];
  xs[ax[1]] = (*y.shape)[ax[1]];
  return xs.is_known() && y.shape->is_known();
}

bool PoolShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return PoolShapes(attrs, {"input 0 (x)", &(*in)[0]}, {"output 0", &(*out)[0]});
}

/*! \brief max_pool2d_grad(x, y, dy): y and dy are x pooled, the result is shaped as x. */
bool MaxPoolGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 0 (x)", &(*in)[0], (*out)[0]);
  AssignShape(attrs, "input 2 (dy)", &(*in)[2], (*in)[1]);
  PoolShapes(attrs, {"input 0 (x)", &(*in)[0]}, {"input 2 (dy)", &(*in)[2]});
  (*in)[1] = (*in)[2];
  (*out)[0] = (*in)[0];
  return AllKnown(*in, *out);
}

/*! \brief avg_pool2d_grad(dy, like): dy is `like` pooled, the result is shaped as `like`. */
bool AvgPoolGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 1 (like)", &(*in)[1], (*out)[0]);
  PoolShapes(attrs, {"input 1 (like)", &(*in)[1]}, {"input 0 (dy)", &(*in)[0]});
  (*out)[0] = (*in)[1];
  return AllKnown(*in, *out);
}

// ---------------------------------------------------------------- oneDNN (float32)

using nn::ActivationDesc;

dnnl::algorithm AlgorithmOf(PoolKind kind) {
  return kind == PoolKind::kMax ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
}

dnnl::pooling_forward::desc ForwardDesc(const Geometry& g, PoolKind kind, dnnl::prop_kind prop) {
  return dnnl::pooling_forward::desc(prop, AlgorithmOf(kind), ActivationDesc(g, false), ActivationDesc(g, true),
                                     {g.sh, g.sw}, {g.kh, g.kw}, {g.pad_top, g.pad_left}, {g.pad_bottom, g.pad_right});
}

/*! \brief Forward for inference, forward for training (max: keeps the argmax workspace), or backward. */
enum PoolPass { kInference = 0, kTraining = 1, kBackward = 2 };

dnnl_utils::CachedPrimitive CreatePoolPrimitive(PoolKind kind, PoolPass pass, const Geometry& g) {
  using dnnl_utils::DefaultAttr;
  using dnnl_utils::Engine;
  if (pass != kBackward) {
    auto prop = pass == kInference ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
    dnnl::pooling_forward::primitive_desc pd(ForwardDesc(g, kind, prop), DefaultAttr(), Engine());
    return dnnl_utils::MakeCached<dnnl::pooling_forward>(pd);
  }
  dnnl::pooling_forward::primitive_desc hint(ForwardDesc(g, kind, dnnl::prop_kind::forward_training), Engine());
  dnnl::pooling_backward::desc desc(AlgorithmOf(kind), ActivationDesc(g, false), ActivationDesc(g, true), {g.sh, g.sw},
                                    {g.kh, g.kw}, {g.pad_top, g.pad_left}, {g.pad_bottom, g.pad_right});
  dnnl::pooling_backward::primitive_desc pd(desc, DefaultAttr(), Engine(), hint);
  return dnnl_utils::MakeCached<dnnl::pooling_backward>(pd);
}

dnnl_utils::CachedPrimitive PoolPrimitive(const std::string& what, PoolKind kind, PoolPass pass, const Geometry& g) {
  static const char* const kNames[] = {"pool2d_inference", "pool2d_training", "pool2d_backward"};
  dnnl_utils::PrimitiveKey key(kNames[pass]);
  key.Add(static_cast<int64_t>(kind)).Add(g.Numbers());
  return dnnl_utils::PrimitiveCache::Global().GetOrCreate(
      key, [&] { return dnnl_utils::Guard(what, [&] { return CreatePoolPrimitive(kind, pass, g); }); });
}

void DnnlPool(const std::string& what, PoolKind kind, const Geometry& g, const NDArray& x, const NDArray& y) {
  dnnl_utils::Execute(what, PoolPrimitive(what, kind, kInference, g),
                      {{DNNL_ARG_SRC, dnnl_utils::Memory(ActivationDesc(g, false), x.data())},
                       {DNNL_ARG_DST, dnnl_utils::Memory(ActivationDesc(g, true), y.data())}});
}

/*! \brief dx from dy; max pooling first runs forward again on x for the argmax workspace. */
void DnnlPoolGrad(const std::string& what, PoolKind kind, const Geometry& g, const NDArray& x, const NDArray& dy,
                  const NDArray& dx) {
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_DIFF_DST, dnnl_utils::Memory(ActivationDesc(g, true), dy.data())},
      {DNNL_ARG_DIFF_SRC, dnnl_utils::Memory(ActivationDesc(g, false), dx.data())}};
  if (kind == PoolKind::kMax) {
    dnnl_utils::CachedPrimitive forward = PoolPrimitive(what, kind, kTraining, g);
    dnnl::memory workspace = dnnl_utils::Guard(what, [&] {
      return dnnl::memory(nn::QueryDesc(forward.primitive, dnnl_query_workspace_md), dnnl_utils::Engine());
    });
    NDArray y(g.OutputShape(), DType::kFloat32);
    dnnl_utils::Execute(what, forward,
                        {{DNNL_ARG_SRC, dnnl_utils::Memory(ActivationDesc(g, false), x.data())},
                         {DNNL_ARG_DST, dnnl_utils::Memory(ActivationDesc(g, true), y.data())},
                         {DNNL_ARG_WORKSPACE, workspace}});
    args[DNNL_ARG_WORKSPACE] = workspace;
  }
  dnnl_utils::Execute(what, PoolPrimitive(what, kind, kBackward, g), std::move(args));
}

// ---------------------------------------------------------------- direct (float64)

/*! \brief Calls f(plane offset in, plane offset out) for every (batch, channel) plane, in parallel. */
template <typename F>
void ForEachPlane(const Geometry& g, const F& f) {
  std::array<int64_t, 4> si = g.InputStrides(), so = g.OutputStrides();
  ParallelFor(
      g.n * g.c,
      [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          int64_t n = p / g.c, c = p % g.c;
          f(n * si[0] + c * si[1], n * so[0] + c * so[1]);
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(g.oh * g.ow * g.kh * g.kw, 1)));
}

/*! \brief Calls f(output offset, row/column ranges of the window clipped to the input) per output cell. */
template <typename F>
void ForEachWindow(const Geometry& g, const F& f) {
  std::array<int64_t, 4> so = g.OutputStrides();
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    int64_t h0 = oh * g.sh - g.pad_top, h1 = std::min(h0 + g.kh, g.h);
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      int64_t w0 = ow * g.sw - g.pad_left, w1 = std::min(w0 + g.kw, g.w);
      f(oh * so[2] + ow * so[3], std::max<int64_t>(h0, 0), h1, std::max<int64_t>(w0, 0), w1);
    }
  }
}

/*! \brief Offset (within its plane) of the first maximum of a window. */
template <typename T>
int64_t ArgMax(const T* plane, const std::array<int64_t, 4>& si, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  int64_t best = h0 * si[2] + w0 * si[3];
  for (int64_t h = h0; h < h1; ++h) {
    for (int64_t w = w0; w < w1; ++w) {
      int64_t at = h * si[2] + w * si[3];
      if (plane[at] > plane[best]) best = at;
    }
  }
  return best;
}

template <typename T>
void DirectPool(PoolKind kind, const Geometry& g, const T* x, T* y) {
  std::array<int64_t, 4> si = g.InputStrides();
  ForEachPlane(g, [&](int64_t in, int64_t out) {
    ForEachWindow(g, [&](int64_t at, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      if (kind == PoolKind::kMax) {
        y[out + at] = x[in + ArgMax(x + in, si, h0, h1, w0, w1)];
        return;
      }
      T sum = 0;
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) sum += x[in + h * si[2] + w * si[3]];
      }
      y[out + at] = sum / static_cast<T>((h1 - h0) * (w1 - w0));
    });
  });
}

template <typename T>
void DirectPoolGrad(PoolKind kind, const Geometry& g, const T* x, const T* dy, T* dx) {
  std::array<int64_t, 4> si = g.InputStrides();
  std::fill(dx, dx + g.n * g.c * g.h * g.w, T(0));
  ForEachPlane(g, [&](int64_t in, int64_t out) {
    ForEachWindow(g, [&](int64_t at, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      if (kind == PoolKind::kMax) {
        dx[in + ArgMax(x + in, si, h0, h1, w0, w1)] += dy[out + at];
        return;
      }
      T share = dy[out + at] / static_cast<T>((h1 - h0) * (w1 - w0));
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) dx[in + h * si[2] + w * si[3]] += share;
      }
    });
  });
}

// ---------------------------------------------------------------- kernels and gradients

Geometry GeometryOf(const NodeAttrs& attrs, const Shape& x) {
  Window w = WindowOf(attrs);
  return nn::MakeGeometry(attrs, w, x, w.kernel[0], w.kernel[1], nn::ActivationDim(x, w.layout, 1));
}

template <PoolKind kKind>
void PoolCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  if (out[0].Size() == 0) return;
  Geometry g = GeometryOf(attrs, in[0].shape());
  if (g.layout == nn::Layout::kNHWC) {
    IR_FLOAT_SWITCH(in[0].dtype(), T, pool::PoolNHWC<kKind == PoolKind::kMax>(g, in[0].data<T>(), out[0].data<T>()));
  } else if (dnnl_utils::Supports(in[0].dtype())) {
    DnnlPool(NodeDesc(attrs), kKind, g, in[0], out[0]);
  } else {
    IR_FLOAT_SWITCH(in[0].dtype(), T, DirectPool<T>(kKind, g, in[0].data<T>(), out[0].data<T>()));
  }
}

/*! \brief max_pool2d_grad(x, y, dy) and avg_pool2d_grad(dy, like): dx shaped as x (or like). */
template <PoolKind kKind>
void PoolGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const NDArray& dx = out[0];
  const NDArray& dy = kKind == PoolKind::kMax ? in[2] : in[0];
  const NDArray& x = kKind == PoolKind::kMax ? in[0] : dx;
  if (dx.Size() == 0) return;
  Geometry g = GeometryOf(attrs, dx.shape());
  if (dy.Size() == 0) {
    IR_FLOAT_SWITCH(dx.dtype(), T, std::fill_n(dx.data<T>(), dx.Size(), T(0)));
  } else if (g.layout == nn::Layout::kNHWC) {
    IR_FLOAT_SWITCH(dx.dtype(), T,
                    pool::PoolGradNHWC<kKind == PoolKind::kMax>(g, x.data<T>(), dy.data<T>(), dx.data<T>()));
  } else if (dnnl_utils::Supports(dx.dtype())) {
    DnnlPoolGrad(NodeDesc(attrs), kKind, g, x, dy, dx);
  } else {
    IR_FLOAT_SWITCH(dx.dtype(), T, DirectPoolGrad<T>(kKind, g, x.data<T>(), dy.data<T>(), dx.data<T>()));
  }
}

template <PoolKind kKind>
void PoolDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  nn::PoolOnDevice(dev, kKind == PoolKind::kAvg, GeometryOf(attrs, in[0].shape()), in[0], out[0]);
}

/*! \brief max_pool2d_grad(x, y, dy) and avg_pool2d_grad(dy, like), as PoolGradCompute. */
template <PoolKind kKind>
void PoolGradDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out) {
  bool avg = kKind == PoolKind::kAvg;
  nn::PoolGradOnDevice(dev, avg, GeometryOf(attrs, out[0].shape()), avg ? out[0] : in[0], avg ? in[0] : in[2], out[0]);
}

NodeEntry PoolNode(const std::string& op, const NodePtr& n, const std::string& suffix, std::vector<NodeEntry> inputs) {
  return GradNode(op, n, suffix, std::move(inputs), n->attrs.dict);
}

void PoolOp(Op& op) {
  op.set_param<Pool2DParam>()
      .set_attr_parser(nn::ParseWindowParam<Pool2DParam>)
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(max_pool2d)
    .describe("2-D max pooling as TensorFlow MaxPool (padded cells are ignored); NHWC or NCHW.")
    .set_num_inputs(1)
    .set_input_names({"x"})
    .apply(PoolOp)
    .set_attr<FInferShape>("FInferShape", PoolShape)
    .set_attr<FInferType>("FInferType", nn::WindowType<1>)
    .set_attr<FCompute>("FCompute", PoolCompute<PoolKind::kMax>)
    .set_attr<FDeviceKernel>("FDeviceKernel", PoolDeviceKernel<PoolKind::kMax>)
    .set_attr<FGradient>(
        "FGradient",
        [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          return std::vector<NodeEntry>{PoolNode("max_pool2d_grad", n, "x", {In(n, 0), Out(n), og[0]})};
        })
    .set_attr<FVectorize>("FVectorize", MergeAllIntoBatch);

IR_REGISTER_OP(avg_pool2d)
    .describe(
        "2-D average pooling as TensorFlow AvgPool: each window averages its cells inside the input "
        "(padded cells are not counted); NHWC or NCHW.")
    .set_num_inputs(1)
    .set_input_names({"x"})
    .apply(PoolOp)
    .set_attr<FInferShape>("FInferShape", PoolShape)
    .set_attr<FInferType>("FInferType", nn::WindowType<1>)
    .set_attr<FCompute>("FCompute", PoolCompute<PoolKind::kAvg>)
    .set_attr<FDeviceKernel>("FDeviceKernel", PoolDeviceKernel<PoolKind::kAvg>)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{PoolNode("avg_pool2d_grad", n, "x", {og[0], In(n, 0)})};
                         })
    .set_attr<FVectorize>("FVectorize", MergeAllIntoBatch);

IR_REGISTER_OP(max_pool2d_grad)
    .describe(
        "Gradient of max_pool2d (TensorFlow MaxPoolGrad): each dy goes to the first maximum of its window "
        "in x. Takes max_pool2d's attributes. Not differentiable itself.")
    .set_num_inputs(3)
    .set_input_names({"x", "y", "dy"})
    .apply(PoolOp)
    .set_attr<FInferShape>("FInferShape", MaxPoolGradShape)
    .set_attr<FInferType>("FInferType", nn::WindowType<3>)
    .set_attr<FCompute>("FCompute", PoolGradCompute<PoolKind::kMax>)
    .set_attr<FDeviceKernel>("FDeviceKernel", PoolGradDeviceKernel<PoolKind::kMax>)
    .set_attr<FVectorize>("FVectorize", MergeAllIntoBatch);

IR_REGISTER_OP(avg_pool2d_grad)
    .describe(
        "Gradient of avg_pool2d: each dy spread evenly over the real cells of its window; `like` (the "
        "pooled input) gives the result's shape only. Takes avg_pool2d's attributes.")
    .set_num_inputs(2)
    .set_input_names({"dy", "like"})
    .apply(PoolOp)
    .set_attr<FInferShape>("FInferShape", AvgPoolGradShape)
    .set_attr<FInferType>("FInferType", nn::WindowType<1>)
    .set_attr<FCompute>("FCompute", PoolGradCompute<PoolKind::kAvg>)
    .set_attr<FDeviceKernel>("FDeviceKernel", PoolGradDeviceKernel<PoolKind::kAvg>)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{PoolNode("avg_pool2d", n, "dy", {og[0]}), NodeEntry()};
                         })
    .set_attr<FVectorize>("FVectorize", MergeAllIntoBatch);

}  // namespace op
}  // namespace ir
