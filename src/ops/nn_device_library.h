/*!
 * \file nn_device_library.h
 * \brief The device kernel library several nn op families share: depthwise convolution
 * (conv/depthwise_conv2d.cc), lrn and lrn_grad (nn_norm.cc), top_k, top_k_grad and in_top_k
 * (top_k.cc), mirror_pad and mirror_pad_grad (mirror_pad.cc), space_to_batch_nd and
 * batch_to_space_nd (space_batch.cc).
 *
 * Each op file holds the text of its kernels (the k*DeviceC arrays below); nn_device_library.cc
 * joins them, after nn::kDeviceWindowC and the nx_dims struct, in this order, into one library of
 * float kernels. Its name, "nn_extra", is the one the kernel cache and the golden corpus know it by
 * (tests/golden/corpus/lib_nn_extra.*).
 */
#ifndef IR_OPS_NN_DEVICE_LIBRARY_H_
#define IR_OPS_NN_DEVICE_LIBRARY_H_

#include <cstdint>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/nn_device.h"

namespace ir {
namespace op {
namespace nn {

/*! \brief The kernels' text, each in its op's file. */
extern const char kDepthwiseDeviceC[];
extern const char kLRNDeviceC[];
extern const char kTopKDeviceC[];
extern const char kMirrorPadDeviceC[];
extern const char kSpaceBatchDeviceC[];

/*! \brief The library of those kernels, for DeviceKernelContext::Launch. */
const DeviceKernelSource& DeviceLibrary();

/*! \brief The rank-generic geometry of the mirror_pad and space/batch kernels (nx_dims), kMaxRank at most. */
constexpr int kMaxRank = 8;
struct DeviceDims {
  int64_t nd = 0, offset = 0, rest = 1, nb = 0, m = 0;
  int64_t xs[kMaxRank] = {}, ys[kMaxRank] = {}, before[kMaxRank] = {}, after[kMaxRank] = {}, block[kMaxRank] = {};
};

/*!
 * \brief Whether the library's kernels take this node: float types (float64 where the device has
 * it) and at most kMaxRank dimensions. When not, the node has run on the host.
 */
bool DeviceOrHost(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out, DType dtype, int ndim);

}  // namespace nn
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_NN_DEVICE_LIBRARY_H_
