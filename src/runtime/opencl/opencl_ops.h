/*!
 * \file opencl_ops.h
 * \brief How ops get their "FCompute<opencl>" kernels: derived from their FCodeGen or
 * TShapeOnly attributes (generic_kernels.cc), or hand-written (kernels_*.cc).
 */
#ifndef IR_RUNTIME_OPENCL_OPENCL_OPS_H_
#define IR_RUNTIME_OPENCL_OPENCL_OPS_H_

#include <cstdint>

namespace ir {
namespace opencl {

/*!
 * \brief Gives every registered op without an "FCompute<opencl>" of its own a derived one:
 * a kernel generated from FCodeGen for elementwise and broadcast ops, an upload of the CPU
 * kernel's result for shape-only ops (TShapeOnly). Runs when libir loads and when an OpenCL
 * device is first used (for op libraries loaded since); calling it again only handles ops
 * registered since.
 */
void RegisterDerivedKernels();

/*!
 * \brief Nodes the generated-kernel path ran on host copies because the op's FCodeGen gives no
 * code for their dtypes or attributes (integer power): counted here, since the executor
 * cannot see them.
 */
int64_t GenericHostFallbacks();

}  // namespace opencl
}  // namespace ir

#endif  // IR_RUNTIME_OPENCL_OPENCL_OPS_H_
