/*!
 * \file host_fallback.h
 * \brief Running an op's CPU kernel for a node whose op has no kernel for the target device.
 */
#ifndef IR_RUNTIME_EXECUTOR_HOST_FALLBACK_H_
#define IR_RUNTIME_EXECUTOR_HOST_FALLBACK_H_

#include <vector>

#include "ir/op_kernel.h"

namespace ir {
namespace runtime {

/*!
 * \brief Copies `inputs` to the host, runs the CPU `kernel` there and copies `outputs` and the
 * `mutated` inputs back. An output that is the same view as an input (a mutated-input alias)
 * is the same host array as that input, as the kernel expects.
 */
void RunOnHost(const FCompute& kernel, const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
               const std::vector<NDArray>& outputs, const std::vector<uint32_t>& mutated);

}  // namespace runtime
}  // namespace ir

#endif  // IR_RUNTIME_EXECUTOR_HOST_FALLBACK_H_
