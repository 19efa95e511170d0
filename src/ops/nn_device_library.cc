/*!
 * \file nn_device_library.cc
 * \brief The device kernel library of depthwise convolution, lrn, top_k, mirror_pad and
 * space/batch (see nn_device_library.h): their kernels' text joined and registered once.
 */
#include "ops/nn_device_library.h"

#include <string>

namespace ir {
namespace op {
namespace nn {
namespace {

const char kDimsC[] = R"(
typedef struct {
  long nd, offset, rest, nb, m;
  long xs[8], ys[8], before[8], after[8], block[8];
} nx_dims;
)";

const DeviceKernelSource& kLibrary =
    RegisterDeviceKernelSource({"nn_extra",
                                std::string(kDeviceWindowC) + kDimsC + kDepthwiseDeviceC + kLRNDeviceC + kTopKDeviceC +
                                    kMirrorPadDeviceC + kSpaceBatchDeviceC,
                                {DType::kFloat32, DType::kFloat64}});

}  // namespace

const DeviceKernelSource& DeviceLibrary() { return kLibrary; }

bool DeviceOrHost(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out, DType dtype, int ndim) {
  bool ok = (dtype == DType::kFloat32 || (dtype == DType::kFloat64 && dev.SupportsFloat64())) && ndim <= kMaxRank;
  if (!ok) dev.RunOnHost(attrs, in, out);
  return ok;
}

}  // namespace nn
}  // namespace op
}  // namespace ir
