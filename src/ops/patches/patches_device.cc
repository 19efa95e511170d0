/*!
 * \file patches_device.cc
 * \brief The device kernels of extract_image_patches and extract_image_patches_grad, in
 * portable kernel C (ir/device_kernel.h), registered by nn_patches.cc as FDeviceKernel.
 *
 * Both gather, one work-item per element written: a patch entry reads its image cell, an image
 * cell sums the patch entries that read it (as conv2d_backprop_input does), so no atomics are
 * needed and results do not depend on scheduling.
 */
#include <string>

#include "ops/nn_device.h"

namespace ir {
namespace op {
namespace nn {
namespace {

const char kPatchesC[] = R"(
/* col[n, oy, ox, (i, j, c)] = x[n, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw, c], 0 in the padding. */
IR_KERNEL void extract_image_patches(IR_CONST_ARRAY(T, x), IR_ARRAY(T, col), const nn_window g) {
  IR_OFFSET(x);
  IR_OFFSET(col);
  const long k = g.kh * g.kw * g.c;
  IR_THREAD_LOOP(e, g.n * g.oh * g.ow * k) {
    const long c = e % g.c, j = e / g.c % g.kw, i = e / (g.c * g.kw) % g.kh, p = e / k;
    const long ox = p % g.ow, oy = p / g.ow % g.oh, n = p / (g.ow * g.oh);
    const long ih = oy * g.sh - g.pad_top + i * g.dh, iw = ox * g.sw - g.pad_left + j * g.dw;
    col[e] = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w ? x[nn_at(g, 1, n, c, ih, iw)] : (T)0;
  }
}

/* dx[n, ih, iw, c] = the sum of the col entries that extract_image_patches read from x[n, ih, iw, c]. */
IR_KERNEL void extract_image_patches_grad(IR_CONST_ARRAY(T, col), IR_ARRAY(T, dx), const nn_window g) {
  IR_OFFSET(col);
  IR_OFFSET(dx);
  const long k = g.kh * g.kw * g.c;
  IR_THREAD_LOOP(e, g.n * g.h * g.w * g.c) {
    long n, c, ih, iw;
    nn_coords(e, g.c, g.h, g.w, 1, &n, &c, &ih, &iw);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ty = ih + g.pad_top - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long tx = iw + g.pad_left - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        acc += col[((n * g.oh + ty / g.sh) * g.ow + tx / g.sw) * k + (i * g.kw + j) * g.c + c];
      }
    }
    dx[e] = acc;
  }
}
)";

const DeviceKernelSource& kPatchesSource = RegisterDeviceKernelSource(
    {"extract_image_patches", std::string(kDeviceWindowC) + kPatchesC, {DType::kFloat32, DType::kFloat64}});

}  // namespace

void PatchesOnDevice(DeviceKernelContext& dev, bool grad, const Geometry& g, const NDArray& in, const NDArray& out) {
  if (out.Size() == 0) return;
  if (in.Size() == 0) return dev.Fill(out, 0);
  DeviceArgs args;
  args.Array(in).Array(out).Value(ToDeviceWindow(g));
  dev.Launch(kPatchesSource, out.dtype(), grad ? "extract_image_patches_grad" : "extract_image_patches", args,
             DeviceLaunch::Threads(out.Size()));
}

}  // namespace nn
}  // namespace op
}  // namespace ir
