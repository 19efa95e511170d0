/*!
 * \file device_walk.h
 * \brief Strided walks in device kernels: the element offsets of a row-major index over up to
 * eight dimensions, and the strided gather built on them (transpose and the broadcast back of a
 * reduction's gradient), written once in portable kernel C.
 */
#ifndef IR_OPS_DEVICE_WALK_H_
#define IR_OPS_DEVICE_WALK_H_

#include <cstdint>
#include <vector>

#include "ir/device_kernel.h"

namespace ir {
namespace op {

/*! \brief The most dimensions a walk has (a kernel argument of fixed size). */
constexpr int kMaxWalkDims = 8;

/*!
 * \brief Host side of `walk_t`: offset(i) = sum_d (i's row-major index along extent[d]) * stride[d]
 * over the first ndim dimensions. Only int64 members, so its layout is the same in every dialect.
 */
struct DeviceWalk {
  int64_t ndim = 0;
  int64_t extent[kMaxWalkDims] = {0};
  int64_t stride[kMaxWalkDims] = {0};
};

/*! \brief Portable kernel C of walk_t and walk_offset, prepended to the sources that use them. */
constexpr char kDeviceWalkC[] = R"(
typedef struct {
  long ndim;
  long extent[8];
  long stride[8];
} walk_t;

/* Element offset of row-major index i over the walk's extents. */
IR_FUNC long walk_offset(const walk_t w, long i) {
  long offset = 0;
  for (long d = w.ndim - 1; d >= 0; --d) {
    offset += i % w.extent[d] * w.stride[d];
    i /= w.extent[d];
  }
  return offset;
}
)";

/*! \brief The walk of `extents` with `strides`; false when it has more than kMaxWalkDims dimensions. */
bool MakeDeviceWalk(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides, DeviceWalk* walk);

/*!
 * \brief dst[i] = src[offset of i] / divisor for every row-major index i over `extents` (dst is
 * contiguous of that shape; src is read at `src_strides`; divisor 1 copies, any dtype). Dimensions
 * of extent 1, and neighbours that src walks as one, are merged first. Returns false, launching
 * nothing, when more than kMaxWalkDims dimensions remain.
 */
bool DeviceGather(DeviceKernelContext& dev, const NDArray& src, const NDArray& dst, const std::vector<int64_t>& extents,
                  const std::vector<int64_t>& src_strides, int64_t divisor);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_DEVICE_WALK_H_
