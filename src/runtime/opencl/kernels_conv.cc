/*!
 * \file kernels_conv.cc
 * \brief OpenCL kernels of conv2d, conv2d_backprop_input and conv2d_backprop_filter: direct
 * convolutions, each work-item computing one element of its result by gathering (no
 * atomics, so results do not depend on scheduling).
 *
 * Same geometry as the CPU ops (nn_common.h): data [N, C, H, W] in its layout, weight HWIO
 * [KH, KW, C, O], output [N, O, OH, OW]; TensorFlow's SAME/VALID/explicit padding.
 */
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

const char kConvKernels[] = R"CL(
inline long ir_at(const long s[4], const long n, const long c, const long h, const long w) {
  return n * s[0] + c * s[1] + h * s[2] + w * s[3];
}

/* y[n, o, oy, ox] = sum over (i, j, c) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw] w[i, j, c, o]. */
__kernel void conv2d(__global const T* x, const long x_offset, __global const T* w, const long w_offset,
                     __global T* y, const long y_offset, const ir_window g) {
  x += x_offset;
  w += w_offset;
  y += y_offset;
  const long total = g.n * g.oc * g.oh * g.ow;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long ox = idx % g.ow, oy = idx / g.ow % g.oh, o = idx / (g.ow * g.oh) % g.oc, n = idx / (g.ow * g.oh * g.oc);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ih = oy * g.sh - g.pad_top + i * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long iw = ox * g.sw - g.pad_left + j * g.dw;
        if (iw < 0 || iw >= g.w) continue;
        const __global T* wp = w + (i * g.kw + j) * g.c * g.oc + o;
        const __global T* xp = x + ir_at(g.xs, n, 0, ih, iw);
        for (long c = 0; c < g.c; ++c) acc += xp[c * g.xs[1]] * wp[c * g.oc];
      }
    }
    y[ir_at(g.ys, n, o, oy, ox)] = acc;
  }
}

/* dx[n, c, ih, iw] = sum over the (i, j, o) whose window position lands on (ih, iw) of
   dy[n, o, oy, ox] w[i, j, c, o]. */
__kernel void conv2d_backprop_input(__global const T* dy, const long dy_offset, __global const T* w,
                                    const long w_offset, __global T* dx, const long dx_offset, const ir_window g) {
  dy += dy_offset;
  w += w_offset;
  dx += dx_offset;
  const long total = g.n * g.c * g.h * g.w;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long iw = idx % g.w, ih = idx / g.w % g.h, c = idx / (g.w * g.h) % g.c, n = idx / (g.w * g.h * g.c);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ty = ih + g.pad_top - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long tx = iw + g.pad_left - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const __global T* wp = w + ((i * g.kw + j) * g.c + c) * g.oc;
        const __global T* dyp = dy + ir_at(g.ys, n, 0, ty / g.sh, tx / g.sw);
        for (long o = 0; o < g.oc; ++o) acc += dyp[o * g.ys[1]] * wp[o];
      }
    }
    dx[ir_at(g.xs, n, c, ih, iw)] = acc;
  }
}

/* dw[i, j, c, o] = sum over (n, oy, ox) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw]
   dy[n, o, oy, ox]. */
__kernel void conv2d_backprop_filter(__global const T* x, const long x_offset, __global const T* dy,
                                     const long dy_offset, __global T* dw, const long dw_offset, const ir_window g) {
  x += x_offset;
  dy += dy_offset;
  dw += dw_offset;
  const long total = g.kh * g.kw * g.c * g.oc;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long o = idx % g.oc, c = idx / g.oc % g.c, j = idx / (g.oc * g.c) % g.kw, i = idx / (g.oc * g.c * g.kw);
    T acc = (T)0;
    for (long n = 0; n < g.n; ++n) {
      for (long oy = 0; oy < g.oh; ++oy) {
        const long ih = oy * g.sh - g.pad_top + i * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        for (long ox = 0; ox < g.ow; ++ox) {
          const long iw = ox * g.sw - g.pad_left + j * g.dw;
          if (iw < 0 || iw >= g.w) continue;
          acc += x[ir_at(g.xs, n, c, ih, iw)] * dy[ir_at(g.ys, n, o, oy, ox)];
        }
      }
    }
    dw[idx] = acc;
  }
}
)CL";

OpenCLLibrarySource conv_source("conv", LibraryTypes::kFloat, kConvKernels);

/*! \brief Which tensor an op computes from the other two. */
enum ConvPass { kForward, kBackwardData, kBackwardWeights };

/*! \brief conv2d(data, weight), conv2d_backprop_input(dy, weight, like), conv2d_backprop_filter(x, dy, like). */
template <ConvPass kPass>
void ConvCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  CheckArrays({in[0], in[1], out[0]}, attrs);
  const NDArray& data = kPass == kForward ? in[0] : kPass == kBackwardData ? out[0] : in[0];
  const NDArray& weight = kPass == kBackwardWeights ? out[0] : in[1];
  const NDArray& result = out[0];
  const Shape& ws = weight.shape();
  op::nn::Geometry g = op::nn::MakeGeometry(attrs, ConvWindow(attrs), data.shape(), ws[0], ws[1], ws[3]);
  if (result.Size() == 0) return;
  if (in[0].Size() == 0 || in[1].Size() == 0) return Fill(ctx, result, 0);
  static const char* const kNames[] = {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"};
  KernelArgs args;
  args.Array(in[0]).Array(in[1]).Array(result).Value(MakeWindowArg(g));
  RunKernel(ctx, result.dtype(), kNames[kPass], args, result.Size());
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(conv2d).set_attr<FCompute>(kKey, ConvCompute<kForward>);
IR_REGISTER_OP(conv2d_backprop_input).set_attr<FCompute>(kKey, ConvCompute<kBackwardData>);
IR_REGISTER_OP(conv2d_backprop_filter).set_attr<FCompute>(kKey, ConvCompute<kBackwardWeights>);

}  // namespace opencl
}  // namespace ir
