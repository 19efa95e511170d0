/*!
 * \file device_walk.cc
 * \brief The strided gather of device kernels and the walks it reads along.
 */
#include "ops/device_walk.h"

#include <string>

#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

const DeviceKernelSource& kGatherSource = RegisterDeviceKernelSource({"strided_gather", std::string(kDeviceWalkC) + R"(
/* dst[i] = src[offset of i in walk] (divided by divisor when it exceeds 1), dst contiguous. */
IR_KERNEL void strided_gather(IR_CONST_ARRAY(T, src), IR_ARRAY(T, dst), const walk_t walk, const long n,
                              const long divisor) {
  IR_OFFSET(src);
  IR_OFFSET(dst);
  IR_THREAD_LOOP(i, n) {
    const T v = src[walk_offset(walk, i)];
    dst[i] = divisor > 1 ? (T)(v / (T)divisor) : v;
  }
}
)",
                                                                      AllTypes()});

}  // namespace

bool MakeDeviceWalk(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides, DeviceWalk* walk) {
  if (extents.size() > static_cast<size_t>(kMaxWalkDims)) return false;
  *walk = DeviceWalk();
  walk->ndim = static_cast<int64_t>(extents.size());
  for (size_t d = 0; d < extents.size(); ++d) {
    walk->extent[d] = extents[d];
    walk->stride[d] = strides[d];
  }
  return true;
}

bool DeviceGather(DeviceKernelContext& dev, const NDArray& src, const NDArray& dst, const std::vector<int64_t>& extents,
                  const std::vector<int64_t>& src_strides, int64_t divisor) {
  std::vector<int64_t> merged_extents, merged_strides;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] == 1) continue;
    if (!merged_extents.empty() && merged_strides.back() == src_strides[d] * extents[d]) {
      merged_extents.back() *= extents[d];
      merged_strides.back() = src_strides[d];
    } else {
      merged_extents.push_back(extents[d]);
      merged_strides.push_back(src_strides[d]);
    }
  }
  DeviceWalk walk;
  if (!MakeDeviceWalk(merged_extents, merged_strides, &walk)) return false;
  int64_t n = dst.Size();
  DeviceArgs args;
  args.Array(src).Array(dst).Value(walk).Value(n).Value(divisor);
  dev.Launch(kGatherSource, dst.dtype(), "strided_gather", args, DeviceLaunch::Threads(n));
  return true;
}

}  // namespace op
}  // namespace ir
