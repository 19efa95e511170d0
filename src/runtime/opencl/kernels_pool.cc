/*!
 * \file kernels_pool.cc
 * \brief OpenCL kernels of max_pool2d, avg_pool2d and their gradients, with the CPU ops'
 * semantics (nn_pool.cc): padded cells never count, average pooling divides by the real
 * cells of each window, and a max window's gradient goes to its first maximum in x.
 *
 * Gradients gather: each work-item computes one input cell from the windows covering it, in
 * the order the CPU kernel adds them.
 */
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

const char kPoolKernels[] = R"CL(
/* The window of output cell (oy, ox) clipped to the input: rows [*h0, *h1), columns [*w0, *w1). */
inline void ir_window_of(const ir_window g, const long oy, const long ox, long* h0, long* h1, long* w0, long* w1) {
  const long top = oy * g.sh - g.pad_top, left = ox * g.sw - g.pad_left;
  *h0 = top > 0 ? top : 0;
  *h1 = top + g.kh < g.h ? top + g.kh : g.h;
  *w0 = left > 0 ? left : 0;
  *w1 = left + g.kw < g.w ? left + g.kw : g.w;
}

/* Offset (within the plane) of the first maximum of a clipped window. */
inline long ir_window_argmax(const __global T* plane, const ir_window g, const long h0, const long h1,
                             const long w0, const long w1) {
  long best = h0 * g.xs[2] + w0 * g.xs[3];
  for (long h = h0; h < h1; ++h) {
    for (long w = w0; w < w1; ++w) {
      const long at = h * g.xs[2] + w * g.xs[3];
      if (plane[at] > plane[best]) best = at;
    }
  }
  return best;
}

/* Pooling of every output cell (n, c, oy, ox); avg != 0 averages, else takes the maximum. */
__kernel void pool2d(__global const T* x, const long x_offset, __global T* y, const long y_offset,
                     const ir_window g, const int avg) {
  x += x_offset;
  y += y_offset;
  const long total = g.n * g.c * g.oh * g.ow;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long ox = idx % g.ow, oy = idx / g.ow % g.oh, c = idx / (g.ow * g.oh) % g.c, n = idx / (g.ow * g.oh * g.c);
    const __global T* plane = x + n * g.xs[0] + c * g.xs[1];
    long h0, h1, w0, w1;
    ir_window_of(g, oy, ox, &h0, &h1, &w0, &w1);
    T value;
    if (avg) {
      T sum = (T)0;
      for (long h = h0; h < h1; ++h) {
        for (long w = w0; w < w1; ++w) sum += plane[h * g.xs[2] + w * g.xs[3]];
      }
      value = sum / (T)((h1 - h0) * (w1 - w0));
    } else {
      value = plane[ir_window_argmax(plane, g, h0, h1, w0, w1)];
    }
    y[n * g.ys[0] + c * g.ys[1] + oy * g.ys[2] + ox * g.ys[3]] = value;
  }
}

/*
 * dx[n, c, ih, iw]: the sum over output cells whose window covers (ih, iw) of dy shared evenly
 * (avg != 0), or of dy where (ih, iw) is the window's first maximum in x.
 */
__kernel void pool2d_grad(__global const T* x, const long x_offset, __global const T* dy, const long dy_offset,
                          __global T* dx, const long dx_offset, const ir_window g, const int avg) {
  x += x_offset;
  dy += dy_offset;
  dx += dx_offset;
  const long total = g.n * g.c * g.h * g.w;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long iw = idx % g.w, ih = idx / g.w % g.h, c = idx / (g.w * g.h) % g.c, n = idx / (g.w * g.h * g.c);
    const __global T* plane = x + n * g.xs[0] + c * g.xs[1];
    const long self = ih * g.xs[2] + iw * g.xs[3];
    /* Output rows oy with oy*sh - pad_top <= ih < oy*sh - pad_top + kh, and likewise columns. */
    const long lo_y = ih + g.pad_top - g.kh + 1, lo_x = iw + g.pad_left - g.kw + 1;
    const long oy0 = lo_y <= 0 ? 0 : (lo_y + g.sh - 1) / g.sh, ox0 = lo_x <= 0 ? 0 : (lo_x + g.sw - 1) / g.sw;
    const long oy1 = min((ih + g.pad_top) / g.sh + 1, g.oh), ox1 = min((iw + g.pad_left) / g.sw + 1, g.ow);
    T acc = (T)0;
    for (long oy = oy0; oy < oy1; ++oy) {
      for (long ox = ox0; ox < ox1; ++ox) {
        long h0, h1, w0, w1;
        ir_window_of(g, oy, ox, &h0, &h1, &w0, &w1);
        const T d = dy[n * g.ys[0] + c * g.ys[1] + oy * g.ys[2] + ox * g.ys[3]];
        if (avg) {
          acc += d / (T)((h1 - h0) * (w1 - w0));
        } else if (ir_window_argmax(plane, g, h0, h1, w0, w1) == self) {
          acc += d;
        }
      }
    }
    dx[n * g.xs[0] + c * g.xs[1] + self] = acc;
  }
}
)CL";

OpenCLLibrarySource pool_source("pool", LibraryTypes::kFloat, kPoolKernels);

op::nn::Geometry GeometryOf(const NodeAttrs& attrs, const Shape& x) {
  op::nn::Window w = PoolWindow(attrs);
  return op::nn::MakeGeometry(attrs, w, x, w.kernel[0], w.kernel[1], op::nn::ActivationDim(x, w.layout, 1));
}

template <bool kAvg>
void PoolCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  if (out[0].Size() == 0) return;
  KernelArgs args;
  args.Array(in[0]).Array(out[0]).Value(MakeWindowArg(GeometryOf(attrs, in[0].shape()))).Value(cl_int{kAvg});
  RunKernel(ctx, out[0].dtype(), "pool2d", args, out[0].Size());
}

/*! \brief max_pool2d_grad(x, y, dy) and avg_pool2d_grad(dy, like): dx shaped as x (or like). */
template <bool kAvg>
void PoolGradCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const NDArray& dx = out[0];
  const NDArray& dy = kAvg ? in[0] : in[2];
  // avg pooling never reads x: dx stands in for it (the kernel does not read it either).
  const NDArray& x = kAvg ? dx : in[0];
  CheckArrays({x, dy, dx}, attrs);
  if (dx.Size() == 0) return;
  if (dy.Size() == 0) return Fill(ctx, dx, 0);
  KernelArgs args;
  args.Array(x).Array(dy).Array(dx).Value(MakeWindowArg(GeometryOf(attrs, dx.shape()))).Value(cl_int{kAvg});
  RunKernel(ctx, dx.dtype(), "pool2d_grad", args, dx.Size());
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(max_pool2d).set_attr<FCompute>(kKey, PoolCompute<false>);
IR_REGISTER_OP(avg_pool2d).set_attr<FCompute>(kKey, PoolCompute<true>);
IR_REGISTER_OP(max_pool2d_grad).set_attr<FCompute>(kKey, PoolGradCompute<false>);
IR_REGISTER_OP(avg_pool2d_grad).set_attr<FCompute>(kKey, PoolGradCompute<true>);

}  // namespace opencl
}  // namespace ir
