/*!
 * \file cuda_nn_ops.cc
 * \brief Direct convolution (forward and both backprops) and pooling (forward and gradients)
 * on CUDA, for NHWC and NCHW activations and HWIO weights, with TensorFlow's padding.
 *
 * Each kernel gathers: one thread per element it writes (the filter gradient: one block per
 * weight, reduced in shared memory), so no atomics are needed and results do not depend on
 * scheduling. Max pooling's gradient goes to the first maximum of each window, as on the CPU.
 */
#include "ops/nn_common.h"
#include "runtime/cuda/cuda_ops.h"

namespace ir {
namespace cuda {
namespace {

const char* kNNBody = R"(
struct ir_window {
  long long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
  long long in_s[4];  /* element strides of (batch, channel, row, column) in the input */
  long long out_s[4]; /* and in the output */
  long long nhwc;
};

/* (batch, channel, row, column) of the memory-order index g of a [*, C, H, W] activation. */
__device__ inline void ir_coords(long long g, long long C, long long H, long long W, long long nhwc, long long* n,
                                 long long* c, long long* y, long long* x) {
  if (nhwc) {
    *c = g % C; g /= C; *x = g % W; g /= W; *y = g % H; *n = g / H;
  } else {
    *x = g % W; g /= W; *y = g % H; g /= H; *c = g % C; *n = g / C;
  }
}

__device__ inline long long ir_at(const long long* s, long long n, long long c, long long y, long long x) {
  return n * s[0] + c * s[1] + y * s[2] + x * s[3];
}

extern "C" __global__ void __launch_bounds__(256) conv2d_forward(const T* x, const T* w, T* y, ir_window g) {
  IR_THREAD_LOOP(i, g.n * g.oc * g.oh * g.ow) {
    long long n, o, oy, ox;
    ir_coords(i, g.oc, g.oh, g.ow, g.nhwc, &n, &o, &oy, &ox);
    T acc = 0;
    for (long long ky = 0; ky < g.kh; ++ky) {
      const long long iy = oy * g.sh - g.pt + ky * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (long long kx = 0; kx < g.kw; ++kx) {
        const long long ix = ox * g.sw - g.pl + kx * g.dw;
        if (ix < 0 || ix >= g.w) continue;
        const T* wk = w + (ky * g.kw + kx) * g.c * g.oc + o;
        for (long long c = 0; c < g.c; ++c) acc += x[ir_at(g.in_s, n, c, iy, ix)] * wk[c * g.oc];
      }
    }
    y[ir_at(g.out_s, n, o, oy, ox)] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(256) conv2d_backprop_input(const T* dy, const T* w, T* dx, ir_window g) {
  IR_THREAD_LOOP(i, g.n * g.c * g.h * g.w) {
    long long n, c, iy, ix;
    ir_coords(i, g.c, g.h, g.w, g.nhwc, &n, &c, &iy, &ix);
    T acc = 0;
    for (long long ky = 0; ky < g.kh; ++ky) {
      const long long ty = iy + g.pt - ky * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long long kx = 0; kx < g.kw; ++kx) {
        const long long tx = ix + g.pl - kx * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const T* wk = w + ((ky * g.kw + kx) * g.c + c) * g.oc;
        for (long long o = 0; o < g.oc; ++o) acc += dy[ir_at(g.out_s, n, o, ty / g.sh, tx / g.sw)] * wk[o];
      }
    }
    dx[ir_at(g.in_s, n, c, iy, ix)] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(256) conv2d_backprop_filter(const T* x, const T* dy, T* dw, ir_window g) {
  __shared__ T scratch[256];
  IR_BLOCK_LOOP(e, g.kh * g.kw * g.c * g.oc) {
    const long long o = e % g.oc, c = (e / g.oc) % g.c, kx = (e / (g.oc * g.c)) % g.kw, ky = e / (g.oc * g.c * g.kw);
    T acc = 0;
    for (long long t = threadIdx.x; t < g.n * g.oh * g.ow; t += blockDim.x) {
      const long long n = t / (g.oh * g.ow), oy = (t / g.ow) % g.oh, ox = t % g.ow;
      const long long iy = oy * g.sh - g.pt + ky * g.dh, ix = ox * g.sw - g.pl + kx * g.dw;
      if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) {
        acc += x[ir_at(g.in_s, n, c, iy, ix)] * dy[ir_at(g.out_s, n, o, oy, ox)];
      }
    }
    acc = ir_block_sum(acc, scratch);
    if (threadIdx.x == 0) dw[e] = acc;
  }
}

/* The input rows [*y0, *y1) and columns [*x0, *x1) of pooling window (oy, ox), clipped. */
__device__ inline void ir_window_cells(const ir_window& g, long long oy, long long ox, long long* y0, long long* y1,
                                       long long* x0, long long* x1) {
  const long long top = oy * g.sh - g.pt, left = ox * g.sw - g.pl;
  *y0 = top < 0 ? 0 : top;
  *y1 = top + g.kh < g.h ? top + g.kh : g.h;
  *x0 = left < 0 ? 0 : left;
  *x1 = left + g.kw < g.w ? left + g.kw : g.w;
}

/* Offset (within the plane at `plane`) of the first maximum of window (oy, ox). */
__device__ inline long long ir_window_argmax(const T* plane, const ir_window& g, long long oy, long long ox) {
  long long y0, y1, x0, x1;
  ir_window_cells(g, oy, ox, &y0, &y1, &x0, &x1);
  long long best = y0 * g.in_s[2] + x0 * g.in_s[3];
  for (long long y = y0; y < y1; ++y) {
    for (long long x = x0; x < x1; ++x) {
      const long long at = y * g.in_s[2] + x * g.in_s[3];
      if (plane[at] > plane[best]) best = at;
    }
  }
  return best;
}

extern "C" __global__ void __launch_bounds__(256) pool2d_forward(const T* x, T* y, ir_window g, int is_max) {
  IR_THREAD_LOOP(i, g.n * g.c * g.oh * g.ow) {
    long long n, c, oy, ox;
    ir_coords(i, g.c, g.oh, g.ow, g.nhwc, &n, &c, &oy, &ox);
    const T* plane = x + ir_at(g.in_s, n, c, 0, 0);
    T result;
    if (is_max) {
      result = plane[ir_window_argmax(plane, g, oy, ox)];
    } else {
      long long y0, y1, x0, x1;
      ir_window_cells(g, oy, ox, &y0, &y1, &x0, &x1);
      T sum = 0;
      for (long long yy = y0; yy < y1; ++yy) {
        for (long long xx = x0; xx < x1; ++xx) sum += plane[yy * g.in_s[2] + xx * g.in_s[3]];
      }
      result = sum / (T)((y1 - y0) * (x1 - x0));
    }
    y[ir_at(g.out_s, n, c, oy, ox)] = result;
  }
}

/* dx of pooling: each input cell gathers from the windows containing it (x is null for avg). */
extern "C" __global__ void __launch_bounds__(256) pool2d_backward(const T* x, const T* dy, T* dx, ir_window g,
                                                                  int is_max) {
  IR_THREAD_LOOP(i, g.n * g.c * g.h * g.w) {
    long long n, c, iy, ix;
    ir_coords(i, g.c, g.h, g.w, g.nhwc, &n, &c, &iy, &ix);
    const long long here = iy * g.in_s[2] + ix * g.in_s[3];
    const long long ly = iy + g.pt - g.kh + 1, lx = ix + g.pl - g.kw + 1;
    const long long oy0 = ly <= 0 ? 0 : (ly + g.sh - 1) / g.sh, ox0 = lx <= 0 ? 0 : (lx + g.sw - 1) / g.sw;
    const long long oy1 = (iy + g.pt) / g.sh < g.oh - 1 ? (iy + g.pt) / g.sh : g.oh - 1;
    const long long ox1 = (ix + g.pl) / g.sw < g.ow - 1 ? (ix + g.pl) / g.sw : g.ow - 1;
    T acc = 0;
    for (long long oy = oy0; oy <= oy1; ++oy) {
      for (long long ox = ox0; ox <= ox1; ++ox) {
        const T grad = dy[ir_at(g.out_s, n, c, oy, ox)];
        if (is_max) {
          if (ir_window_argmax(x + ir_at(g.in_s, n, c, 0, 0), g, oy, ox) == here) acc += grad;
        } else {
          long long y0, y1, x0, x1;
          ir_window_cells(g, oy, ox, &y0, &y1, &x0, &x1);
          acc += grad / (T)((y1 - y0) * (x1 - x0));
        }
      }
    }
    dx[ir_at(g.in_s, n, c, iy, ix)] = acc;
  }
}
)";

const KernelFamily kNNFamily{"nn", kNNBody, {DType::kFloat32, DType::kFloat64}};
const bool registered = RegisterFamily(&kNNFamily);

/*! \brief The kernels' ir_window (same member order and types). */
struct WindowArgs {
  long long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
  long long in_s[4];
  long long out_s[4];
  long long nhwc;
};

WindowArgs ToArgs(const op::nn::Geometry& g) {
  WindowArgs a{g.n,  g.c,  g.h,  g.w,  g.oc,      g.oh,       g.ow, g.kh, g.kw,
               g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_left, {},   {},   g.layout == op::nn::Layout::kNHWC ? 1 : 0};
  std::array<int64_t, 4> in = g.InputStrides(), out = g.OutputStrides();
  for (int k = 0; k < 4; ++k) {
    a.in_s[k] = in[k];
    a.out_s[k] = out[k];
  }
  return a;
}

/*! \brief The window of a convolution (strides, padding, dilations) or a pooling (ksize too). */
op::nn::Window WindowOf(const NodeAttrs& attrs, bool pool) {
  std::string format = ParamText(attrs, "data_format");
  op::nn::Window w = op::nn::MakeWindow(attrs, format, ParamText(attrs, "padding"), ParamList(attrs, "pads"),
                                        ParamList(attrs, "strides"));
  if (pool) {
    w.kernel = op::nn::SpatialPair(attrs, "ksize", ParamList(attrs, "ksize"), w.layout, {1, 1});
  } else {
    w.dilation = op::nn::SpatialPair(attrs, "dilations", ParamList(attrs, "dilations"), w.layout, {1, 1});
  }
  return w;
}

/*! \brief Geometry of a convolution over `data` with HWIO weights of shape `weight`. */
op::nn::Geometry ConvGeometry(const NodeAttrs& attrs, const Shape& data, const Shape& weight) {
  return op::nn::MakeGeometry(attrs, WindowOf(attrs, false), data, weight[0], weight[1], weight[3]);
}

op::nn::Geometry PoolGeometry(const NodeAttrs& attrs, const Shape& data) {
  op::nn::Window w = WindowOf(attrs, true);
  return op::nn::MakeGeometry(attrs, w, data, w.kernel[0], w.kernel[1], op::nn::ActivationDim(data, w.layout, 1));
}

void Launch(const char* kernel, DType dtype, KernelArgs* args, int64_t blocks, const OpContext& ctx) {
  LaunchFamily(kNNFamily, dtype, kernel, args, blocks, ctx);
}

void Conv2DCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  WindowArgs g = ToArgs(ConvGeometry(attrs, in[0].shape(), in[1].shape()));
  KernelArgs args;
  args.AddArray(in[0]).AddArray(in[1]).AddArray(out[0]).Add(g);
  Launch("conv2d_forward", out[0].dtype(), &args, BlocksFor(out[0].Size()), ctx);
}

void Conv2DBackpropInputCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                const std::vector<NDArray>& out) {
  WindowArgs g = ToArgs(ConvGeometry(attrs, out[0].shape(), in[1].shape()));
  KernelArgs args;
  args.AddArray(in[0]).AddArray(in[1]).AddArray(out[0]).Add(g);
  Launch("conv2d_backprop_input", out[0].dtype(), &args, BlocksFor(out[0].Size()), ctx);
}

void Conv2DBackpropFilterCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                 const std::vector<NDArray>& out) {
  WindowArgs g = ToArgs(ConvGeometry(attrs, in[0].shape(), out[0].shape()));
  KernelArgs args;
  args.AddArray(in[0]).AddArray(in[1]).AddArray(out[0]).Add(g);
  Launch("conv2d_backprop_filter", out[0].dtype(), &args, std::min(out[0].Size(), kMaxBlocks), ctx);
}

template <bool kMax>
void PoolCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  WindowArgs g = ToArgs(PoolGeometry(attrs, in[0].shape()));
  KernelArgs args;
  args.AddArray(in[0]).AddArray(out[0]).Add(g).Add(kMax ? 1 : 0);
  Launch("pool2d_forward", out[0].dtype(), &args, BlocksFor(out[0].Size()), ctx);
}

/*! \brief max_pool2d_grad(x, y, dy) and avg_pool2d_grad(dy, like). */
template <bool kMax>
void PoolGradCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  WindowArgs g = ToArgs(PoolGeometry(attrs, out[0].shape()));
  KernelArgs args;
  if (kMax) {
    args.AddArray(in[0]);
  } else {
    args.Add(CUdeviceptr{0});
  }
  args.AddArray(kMax ? in[2] : in[0]).AddArray(out[0]).Add(g).Add(kMax ? 1 : 0);
  Launch("pool2d_backward", out[0].dtype(), &args, BlocksFor(out[0].Size()), ctx);
}

}  // namespace

IR_REGISTER_OP(conv2d).set_attr<FCompute>("FCompute<cuda>", Conv2DCompute);
IR_REGISTER_OP(conv2d_backprop_input).set_attr<FCompute>("FCompute<cuda>", Conv2DBackpropInputCompute);
IR_REGISTER_OP(conv2d_backprop_filter).set_attr<FCompute>("FCompute<cuda>", Conv2DBackpropFilterCompute);
IR_REGISTER_OP(max_pool2d).set_attr<FCompute>("FCompute<cuda>", PoolCompute<true>);
IR_REGISTER_OP(avg_pool2d).set_attr<FCompute>("FCompute<cuda>", PoolCompute<false>);
IR_REGISTER_OP(max_pool2d_grad).set_attr<FCompute>("FCompute<cuda>", PoolGradCompute<true>);
IR_REGISTER_OP(avg_pool2d_grad).set_attr<FCompute>("FCompute<cuda>", PoolGradCompute<false>);

}  // namespace cuda
}  // namespace ir
