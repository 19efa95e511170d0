/*!
 * \file kernel_selection.h
 * \brief Which kernel runs a node on an accelerator target, decided per op (no op names):
 * an explicit "FCompute<target>" (external op libraries) > "FDeviceKernel" > a kernel derived
 * from FCodeGen or a reduction > TShapeOnly (CPU kernel on shapes, outputs uploaded) > the
 * CPU kernel on host copies.
 */
#ifndef IR_RUNTIME_DEVICE_KERNEL_SELECTION_H_
#define IR_RUNTIME_DEVICE_KERNEL_SELECTION_H_

#include <cstdint>
#include <vector>

#include "ir/op.h"
#include "runtime/device/device_target.h"
#include "runtime/executor/bound_plan.h"

namespace ir {
namespace device {

/*! \brief The kernel of nodes of `op` on `target`; an empty kernel when nothing can run it. */
runtime::NodeKernel SelectKernel(const DeviceTarget& target, const Op* op);

/*! \brief True when `op` has a kernel derived from FCodeGen or a reduction (RunDerived). */
bool HasDerivedKernel(const Op* op);

/*!
 * \brief Runs the kernel derived for the node on `target`: generated from FCodeGen, or a
 * reduction over one block of axes; else the CPU kernel on host copies (counted below).
 */
void RunDerivedKernel(const DeviceTarget& target, const OpContext& ctx, const NodeAttrs& attrs,
                      const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs);

/*!
 * \brief Nodes whose derived kernel ran on host copies because FCodeGen gave no code for their
 * dtypes or attributes (integer power): counted for tests, the executor cannot see them.
 */
int64_t DerivedHostFallbacks();

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_KERNEL_SELECTION_H_
