/*!
 * \file conv2d_device.cc
 * \brief The device kernels of conv2d, conv2d_backprop_input and conv2d_backprop_filter, in
 * portable kernel C (ir/device_kernel.h), registered by conv2d.cc as FDeviceKernel.
 *
 * Same geometry as the CPU kernels: data [N, C, H, W] in its layout (NHWC or NCHW), weight
 * HWIO [KH, KW, C, O], output [N, O, OH, OW]; TensorFlow's SAME/VALID/explicit padding,
 * strides and dilations. Every kernel gathers: one work-item per element it writes (the
 * filter gradient of a small filter: one group per weight element, reduced in shared memory),
 * so no atomics are needed and results do not depend on scheduling.
 */
#include <string>

#include "ops/nn_device.h"

namespace ir {
namespace op {
namespace nn {
namespace {

const char kConvC[] = R"(
/* y[n, o, oy, ox] = sum over (i, j, c) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw]
   w[i, j, c, o]. */
IR_KERNEL void conv2d_forward(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, w), IR_ARRAY(T, y), const nn_window g) {
  IR_OFFSET(x);
  IR_OFFSET(w);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, g.n * g.oc * g.oh * g.ow) {
    long n, o, oy, ox;
    nn_coords(e, g.oc, g.oh, g.ow, g.nhwc, &n, &o, &oy, &ox);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ih = oy * g.sh - g.pad_top + i * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long iw = ox * g.sw - g.pad_left + j * g.dw;
        if (iw < 0 || iw >= g.w) continue;
        const long xp = nn_at(g, 1, n, 0, ih, iw), wp = (i * g.kw + j) * g.c * g.oc + o;
        for (long c = 0; c < g.c; ++c) acc += x[xp + c * g.xs[1]] * w[wp + c * g.oc];
      }
    }
    y[nn_at(g, 0, n, o, oy, ox)] = acc;
  }
}

/* dx[n, c, ih, iw] = sum over the (i, j, o) whose window position lands on (ih, iw) of
   dy[n, o, oy, ox] w[i, j, c, o]. */
IR_KERNEL void conv2d_backprop_input(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(T, w), IR_ARRAY(T, dx), const nn_window g) {
  IR_OFFSET(dy);
  IR_OFFSET(w);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, g.n * g.c * g.h * g.w) {
    long n, c, ih, iw;
    nn_coords(e, g.c, g.h, g.w, g.nhwc, &n, &c, &ih, &iw);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ty = ih + g.pad_top - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long tx = iw + g.pad_left - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const long dyp = nn_at(g, 0, n, 0, ty / g.sh, tx / g.sw), wp = ((i * g.kw + j) * g.c + c) * g.oc;
        for (long o = 0; o < g.oc; ++o) acc += dy[dyp + o * g.ys[1]] * w[wp + o];
      }
    }
    dx[nn_at(g, 1, n, c, ih, iw)] = acc;
  }
}

/* dw[i, j, c, o] = sum over (n, oy, ox) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw]
   dy[n, o, oy, ox]: one group per weight element, each work-item summing a strided part, then a tree in shared memory. */
IR_KERNEL void conv2d_backprop_filter(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dw),
                                      const nn_window g) {
  IR_SHARED T partial[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dw);
  IR_GROUP_LOOP(e, g.kh * g.kw * g.c * g.oc) {
    const long o = e % g.oc, c = e / g.oc % g.c, j = e / (g.oc * g.c) % g.kw, i = e / (g.oc * g.c * g.kw);
    T acc = (T)0;
    IR_LOCAL_LOOP(t, g.n * g.oh * g.ow) {
      const long n = t / (g.oh * g.ow), oy = t / g.ow % g.oh, ox = t % g.ow;
      const long ih = oy * g.sh - g.pad_top + i * g.dh, iw = ox * g.sw - g.pad_left + j * g.dw;
      if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) {
        acc += x[nn_at(g, 1, n, c, ih, iw)] * dy[nn_at(g, 0, n, o, oy, ox)];
      }
    }
    NN_GROUP_REDUCE(partial, acc, NN_ADD);
    if (IR_LOCAL_ID == 0) dw[e] = acc;
  }
}

/* The same sum with one work-item per weight element, serially over (n, oy, ox): for filters with
   enough elements to keep the device busy (neighbouring work-items read the same x, neighbouring dy). */
IR_KERNEL void conv2d_backprop_filter_serial(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dw),
                                             const nn_window g) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dw);
  IR_THREAD_LOOP(e, g.kh * g.kw * g.c * g.oc) {
    const long o = e % g.oc, c = e / g.oc % g.c, j = e / (g.oc * g.c) % g.kw, i = e / (g.oc * g.c * g.kw);
    T acc = (T)0;
    for (long n = 0; n < g.n; ++n) {
      for (long oy = 0; oy < g.oh; ++oy) {
        const long ih = oy * g.sh - g.pad_top + i * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        for (long ox = 0; ox < g.ow; ++ox) {
          const long iw = ox * g.sw - g.pad_left + j * g.dw;
          if (iw >= 0 && iw < g.w) acc += x[nn_at(g, 1, n, c, ih, iw)] * dy[nn_at(g, 0, n, o, oy, ox)];
        }
      }
    }
    dw[e] = acc;
  }
}
)";

const DeviceKernelSource& kConvSource = RegisterDeviceKernelSource(
    {"conv2d", std::string(kDeviceWindowC) + kGroupReduceC + kConvC, {DType::kFloat32, DType::kFloat64}});

}  // namespace

void ConvOnDevice(DeviceKernelContext& dev, ConvPass pass, const Geometry& g, const NDArray& a, const NDArray& b,
                  const NDArray& result) {
  if (result.Size() == 0) return;
  if (a.Size() == 0 || b.Size() == 0) return dev.Fill(result, 0);
  DeviceArgs args;
  args.Array(a).Array(b).Array(result).Value(ToDeviceWindow(g));
  if (pass == kForward)
    return dev.Launch(kConvSource, result.dtype(), "conv2d_forward", args, DeviceLaunch::Threads(result.Size()));
  if (pass == kBackwardData) {
    return dev.Launch(kConvSource, result.dtype(), "conv2d_backprop_input", args, DeviceLaunch::Threads(result.Size()));
  }
  // Enough weight elements to fill the device: one work-item each (3.6x faster on a CPU device
  // for LeNet's 5x5x16x32); fewer: a group each, so long sums are still spread.
  if (result.Size() >= dev.ConcurrentWorkItems()) {
    dev.Launch(kConvSource, result.dtype(), "conv2d_backprop_filter_serial", args,
               DeviceLaunch::Threads(result.Size()));
  } else {
    dev.Launch(kConvSource, result.dtype(), "conv2d_backprop_filter", args, DeviceLaunch::Groups(result.Size()));
  }
}

}  // namespace nn
}  // namespace op
}  // namespace ir
