/*!
 * \file nn_device.h
 * \brief The nn ops on accelerators: the window geometry as the portable device kernels of
 * convolution and pooling take it, a group reduction they share with softmax, and the
 * launchers the op files call from FDeviceKernel.
 *
 * The op files read their parameter structs and build the Geometry (nn_common.h) exactly as
 * their CPU kernels do; conv/conv2d_device.cc and nn_pool_device.cc hold the kernels.
 */
#ifndef IR_OPS_NN_DEVICE_H_
#define IR_OPS_NN_DEVICE_H_

#include <cstdint>

#include "ir/device_kernel.h"
#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace nn {

/*! \brief Which of (data, weight, output) a convolution op computes from the other two. */
enum ConvPass { kForward = 0, kBackwardData = 1, kBackwardWeights = 2 };

/*! \brief A Geometry as window kernels take it by value (nn_window in kDeviceWindowC). */
struct DeviceWindow {
  int64_t n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  /*! \brief Element strides of (batch, channel, row, column) in the input, then in the output. */
  int64_t xs[4], ys[4];
  /*! \brief 1 for NHWC: work-items then walk the arrays in memory order. */
  int64_t nhwc;
};

/*! \brief The kernels' view of `g`. */
inline DeviceWindow ToDeviceWindow(const Geometry& g) {
  DeviceWindow d{g.n,  g.c,  g.h,  g.w,  g.oc,      g.oh,       g.ow, g.kh, g.kw,
                 g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_left, {},   {},   g.layout == Layout::kNHWC ? 1 : 0};
  std::array<int64_t, 4> in = g.InputStrides(), out = g.OutputStrides();
  for (int k = 0; k < 4; ++k) {
    d.xs[k] = in[k];
    d.ys[k] = out[k];
  }
  return d;
}

/*! \brief Portable kernel C of DeviceWindow and the index helpers conv and pool kernels share. */
inline constexpr char kDeviceWindowC[] = R"(
typedef struct {
  long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  long xs[4], ys[4];
  long nhwc;
} nn_window;

/* (batch, channel, row, column) of the memory-order index i of a [*, C, H, W] activation. */
IR_FUNC void nn_coords(long i, const long C, const long H, const long W, const long nhwc, long* n, long* c, long* y,
                       long* x) {
  if (nhwc) {
    *c = i % C; i /= C; *x = i % W; i /= W; *y = i % H; *n = i / H;
  } else {
    *x = i % W; i /= W; *y = i % H; i /= H; *c = i % C; *n = i / C;
  }
}

/* Offset of (n, c, y, x) in the input (in != 0) or the output of window g. */
IR_FUNC long nn_at(const nn_window g, const int in, const long n, const long c, const long y, const long x) {
  return in ? n * g.xs[0] + c * g.xs[1] + y * g.xs[2] + x * g.xs[3]
            : n * g.ys[0] + c * g.ys[1] + y * g.ys[2] + x * g.ys[3];
}
)";

/*!
 * \brief Portable kernel C of a group reduction through shared memory: NN_GROUP_REDUCE(s, v, OP)
 * combines every work-item's v with OP (NN_ADD or NN_MAX) in a fixed tree, so the result does
 * not depend on scheduling, and leaves it in every work-item's v. `s` is an
 * `IR_SHARED T s[IR_GROUP_SIZE]`; every work-item of the group must reach it.
 */
inline constexpr char kGroupReduceC[] = R"(
#define NN_ADD(a, b) ((a) + (b))
#define NN_MAX(a, b) ((a) > (b) ? (a) : (b))
#define NN_GROUP_REDUCE(s, v, OP)                                                       \
  s[IR_LOCAL_ID] = v;                                                                  \
  IR_BARRIER();                                                                        \
  for (long half_ = IR_GROUP_SIZE / 2; half_ > 0; half_ /= 2) {                        \
    if (IR_LOCAL_ID < half_) s[IR_LOCAL_ID] = OP(s[IR_LOCAL_ID], s[IR_LOCAL_ID + half_]); \
    IR_BARRIER();                                                                      \
  }                                                                                    \
  v = s[0];                                                                            \
  IR_BARRIER();
)";

/*!
 * \brief Runs convolution pass `pass` of geometry `g` on the device: (a, b) are the op's
 * inputs 0 and 1 ((x, w), (dy, w) or (x, dy)), `result` its output.
 */
void ConvOnDevice(DeviceKernelContext& dev, ConvPass pass, const Geometry& g, const NDArray& a, const NDArray& b,
                  const NDArray& result);

/*! \brief Max (avg false) or average pooling of x into y on the device. */
void PoolOnDevice(DeviceKernelContext& dev, bool avg, const Geometry& g, const NDArray& x, const NDArray& y);

/*! \brief The pooling gradient dx from dy (x: the pooled input, read by max pooling only). */
void PoolGradOnDevice(DeviceKernelContext& dev, bool avg, const Geometry& g, const NDArray& x, const NDArray& dy,
                      const NDArray& dx);

/*!
 * \brief extract_image_patches of the NHWC image `in` into `out` (grad false), or its gradient:
 * the patches `in` summed back into the image `out` (grad true); `g` is the image's window.
 */
void PatchesOnDevice(DeviceKernelContext& dev, bool grad, const Geometry& g, const NDArray& in, const NDArray& out);

}  // namespace nn
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_NN_DEVICE_H_
