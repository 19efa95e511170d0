/*!
 * \file reduce_device.h
 * \brief Device kernels of the reductions (sum, mean, max, min, prod over any axes), shared by
 * the reduction ops, bias_add_grad and collapse_sum_like.
 *
 * Axes forming one block run the kernel the device layer derives (the generated reduction);
 * any other set runs a strided reduction written once in portable kernel C: the kept and the
 * reduced dimensions of the input are two strided walks. Many outputs: one work-item per output,
 * summing the innermost reduced run in blocks of 256 (each block's total is added to the result,
 * which keeps float32 rounding error near the CPU's pairwise sums). Few outputs over many
 * elements: one group per output and a tree in shared memory. No atomics: results do not depend
 * on scheduling.
 */
#ifndef IR_OPS_REDUCE_REDUCE_DEVICE_H_
#define IR_OPS_REDUCE_REDUCE_DEVICE_H_

#include <string>
#include <vector>

#include "ir/device_kernel.h"

namespace ir {
namespace op {

/*!
 * \brief out[0] = reduction `kind` ("sum", "mean", "max", "min", "prod") of in[0] over the dims
 * flagged in `reduced`, by the strided kernel (on the host when the walks need more than eight
 * dimensions).
 */
void DeviceStridedReduce(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out, const std::string& kind, const std::vector<bool>& reduced);

/*!
 * \brief The device kernel of a reduction `kind` of in[0] over `axes` (ascending): the derived
 * kernel when they form one block, else the strided one.
 */
void DeviceReduce(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out, const std::string& kind, const std::vector<int>& axes);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_REDUCE_REDUCE_DEVICE_H_
