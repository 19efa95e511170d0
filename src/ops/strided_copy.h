/*!
 * \file strided_copy.h
 * \brief The one data-movement kernel of the layout ops: a copy between two strided views.
 *
 * Transpose, slice, strided_slice, broadcast_to, tile, pad, concat and split (and their
 * gradients) all move elements from one strided view of a buffer to another. Each describes
 * its move as a StridedCopySpec; StridedCopy simplifies it (drops unit dimensions, merges
 * dimensions contiguous in both views) and picks a fast loop: memcpy of contiguous runs, a
 * fill for broadcast runs, cache-blocked tiles for transposes, a plain loop otherwise.
 */
#ifndef IR_OPS_STRIDED_COPY_H_
#define IR_OPS_STRIDED_COPY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/device_kernel.h"
#include "ir/ndarray.h"

namespace ir {
namespace op {

/*!
 * \brief dst[dst_offset + sum_d i_d * dst_strides[d]] = src[src_offset + sum_d i_d * src_strides[d]]
 * for every index i within `extents`. Offsets and strides count elements; strides may be
 * zero (broadcast) or negative (reversed slices).
 */
struct StridedCopySpec {
  std::vector<int64_t> extents;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
};

/*! \brief Row-major element strides of a fully known shape. */
std::vector<int64_t> ContiguousStrides(const Shape& shape);

/*! \brief Runs `spec` on raw buffers of elements of `elem_size` bytes (1, 2, 4 or 8). */
void StridedCopy(const StridedCopySpec& spec, const void* src, void* dst, size_t elem_size);
/*! \brief Runs `spec` from `src` into `dst` (CPU arrays of one dtype). */
void StridedCopy(const StridedCopySpec& spec, const NDArray& src, const NDArray& dst);

/*! \brief Copies all of `src` into `dst` (same byte size) unless they already share storage. */
void CopyUnlessAliased(const NDArray& src, const NDArray& dst);
/*! \brief Sets every element of `dst` to `value` converted to its dtype. */
void Fill(const NDArray& dst, double value);

/*!
 * \brief FDeviceKernel of the ops whose output holds input 0's elements in order (reshape,
 * identity...): a device copy, nothing when the planner let the output alias the input.
 */
void CopyDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_STRIDED_COPY_H_
