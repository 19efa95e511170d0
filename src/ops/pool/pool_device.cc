/*!
 * \file pool_device.cc
 * \brief The device kernels of max_pool2d, avg_pool2d and their gradients, in portable kernel
 * C (ir/device_kernel.h), registered by nn_pool.cc as FDeviceKernel.
 *
 * The CPU ops' semantics: padded cells never count, average pooling divides by the real cells
 * of each window, and a max window's gradient goes to its first maximum in x. Gradients
 * gather (one work-item per input cell, from the windows covering it), so no atomics are
 * needed and results do not depend on scheduling.
 */
#include <string>

#include "ops/nn_device.h"

namespace ir {
namespace op {
namespace nn {
namespace {

const char kPoolC[] = R"(
/* The window of output cell (oy, ox) clipped to the input: rows [*h0, *h1), columns [*w0, *w1). */
IR_FUNC void nn_window_cells(const nn_window g, const long oy, const long ox, long* h0, long* h1, long* w0, long* w1) {
  const long top = oy * g.sh - g.pad_top, left = ox * g.sw - g.pad_left;
  *h0 = top > 0 ? top : 0;
  *h1 = top + g.kh < g.h ? top + g.kh : g.h;
  *w0 = left > 0 ? left : 0;
  *w1 = left + g.kw < g.w ? left + g.kw : g.w;
}

/* Offset (within the plane) of the first maximum of window (oy, ox), in row-major order as the CPU. */
IR_FUNC long nn_window_argmax(IR_GLOBAL const T* plane, const nn_window g, const long oy, const long ox) {
  long h0, h1, w0, w1;
  nn_window_cells(g, oy, ox, &h0, &h1, &w0, &w1);
  long best = h0 * g.xs[2] + w0 * g.xs[3];
  for (long h = h0; h < h1; ++h) {
    for (long w = w0; w < w1; ++w) {
      const long at = h * g.xs[2] + w * g.xs[3];
      if (plane[at] > plane[best]) best = at;
    }
  }
  return best;
}

/* Number of real cells of window (oy, ox), as T. */
IR_FUNC T nn_window_count(const nn_window g, const long oy, const long ox) {
  long h0, h1, w0, w1;
  nn_window_cells(g, oy, ox, &h0, &h1, &w0, &w1);
  return (T)((h1 - h0) * (w1 - w0));
}

/* Pooling of every output cell: the average (avg != 0) or the maximum of its window. */
IR_KERNEL void pool2d_forward(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const nn_window g, const long avg) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, g.n * g.c * g.oh * g.ow) {
    long n, c, oy, ox;
    nn_coords(e, g.c, g.oh, g.ow, g.nhwc, &n, &c, &oy, &ox);
    IR_GLOBAL const T* plane = x + nn_at(g, 1, n, c, 0, 0);
    T value;
    if (avg) {
      long h0, h1, w0, w1;
      nn_window_cells(g, oy, ox, &h0, &h1, &w0, &w1);
      T sum = (T)0;
      for (long h = h0; h < h1; ++h) {
        for (long w = w0; w < w1; ++w) sum += plane[h * g.xs[2] + w * g.xs[3]];
      }
      value = sum / nn_window_count(g, oy, ox);
    } else {
      value = plane[nn_window_argmax(plane, g, oy, ox)];
    }
    y[nn_at(g, 0, n, c, oy, ox)] = value;
  }
}

/* dx[n, c, ih, iw]: the sum over the output cells whose window covers (ih, iw) of dy shared evenly
   (avg != 0), or of dy where (ih, iw) is the window's first maximum in x (x is not read for avg). */
IR_KERNEL void pool2d_backward(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dx), const nn_window g,
                               const long avg) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, g.n * g.c * g.h * g.w) {
    long n, c, ih, iw;
    nn_coords(e, g.c, g.h, g.w, g.nhwc, &n, &c, &ih, &iw);
    const long self = ih * g.xs[2] + iw * g.xs[3];
    /* The output rows oy with oy*sh - pad_top <= ih < oy*sh - pad_top + kh, and likewise the columns. */
    const long lo_y = ih + g.pad_top - g.kh + 1, lo_x = iw + g.pad_left - g.kw + 1;
    const long oy0 = lo_y <= 0 ? 0 : (lo_y + g.sh - 1) / g.sh, ox0 = lo_x <= 0 ? 0 : (lo_x + g.sw - 1) / g.sw;
    const long last_y = (ih + g.pad_top) / g.sh, last_x = (iw + g.pad_left) / g.sw;
    const long oy1 = last_y < g.oh ? last_y + 1 : g.oh, ox1 = last_x < g.ow ? last_x + 1 : g.ow;
    T acc = (T)0;
    for (long oy = oy0; oy < oy1; ++oy) {
      for (long ox = ox0; ox < ox1; ++ox) {
        const T d = dy[nn_at(g, 0, n, c, oy, ox)];
        if (avg) {
          acc += d / nn_window_count(g, oy, ox);
        } else if (nn_window_argmax(x + nn_at(g, 1, n, c, 0, 0), g, oy, ox) == self) {
          acc += d;
        }
      }
    }
    dx[nn_at(g, 1, n, c, ih, iw)] = acc;
  }
}
)";

const DeviceKernelSource& kPoolSource =
    RegisterDeviceKernelSource({"pool2d", std::string(kDeviceWindowC) + kPoolC, {DType::kFloat32, DType::kFloat64}});

}  // namespace

void PoolOnDevice(DeviceKernelContext& dev, bool avg, const Geometry& g, const NDArray& x, const NDArray& y) {
  DeviceArgs args;
  args.Array(x).Array(y).Value(ToDeviceWindow(g)).Value(int64_t{avg});
  dev.Launch(kPoolSource, y.dtype(), "pool2d_forward", args, DeviceLaunch::Threads(y.Size()));
}

void PoolGradOnDevice(DeviceKernelContext& dev, bool avg, const Geometry& g, const NDArray& x, const NDArray& dy,
                      const NDArray& dx) {
  if (dx.Size() == 0) return;
  if (dy.Size() == 0) return dev.Fill(dx, 0);
  DeviceArgs args;
  if (avg) {
    args.NullArray();
  } else {
    args.Array(x);
  }
  args.Array(dy).Array(dx).Value(ToDeviceWindow(g)).Value(int64_t{avg});
  dev.Launch(kPoolSource, dx.dtype(), "pool2d_backward", args, DeviceLaunch::Threads(dx.Size()));
}

}  // namespace nn
}  // namespace op
}  // namespace ir
