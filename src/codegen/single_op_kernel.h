/*!
 * \file single_op_kernel.h
 * \brief Kernels of single nodes generated from their op's FCodeGen (or, for a reduction over
 * one block of axes, its TReduceKind), for every target: an op written once runs unfused on
 * the CPU and on devices alike. (The CPU fallback is registered into core: ir/cpu_kernel.h's CpuKernelOf.)
 */
#ifndef IR_CODEGEN_SINGLE_OP_KERNEL_H_
#define IR_CODEGEN_SINGLE_OP_KERNEL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/codegen.h"
#include "ir/cpu_kernel.h"
#include "ir/op.h"

namespace ir {
namespace codegen {

/*!
 * \brief A compiled kernel of one node; `module` is null when FCodeGen has no code for its
 * inputs. Outputs in `aliases` (input, output) are the mutated input itself: not kernel params.
 */
struct SingleOpKernel : GeneratedKernel {
  std::shared_ptr<CompiledModule> module;
  std::string name;
  std::vector<std::pair<int, int>> aliases;
  /*! \brief The kernel's entry, resolved once when it was generated (no lookup per launch). */
  CompiledModule::Launcher launch;

  /*! \brief LaunchGeneratedKernel (ir/codegen.h) of this kernel. */
  void Launch(const OpContext& ctx, const std::vector<NDArray>& inputs,
              const std::vector<NDArray>& outputs) const override;
};

/*! \brief True when `op` is elementwise or broadcast and has FCodeGen. */
bool IsGeneratable(const Op* op);

/*! \brief True when `op` is a reduction the kernel builder can generate (kCommReduce, TReduceKind, FReduceAxes). */
bool IsGeneratableReduction(const Op* op);

/*!
 * \brief The kernel of a node of `attrs` for these inputs on `target` ("cpu", "opencl"),
 * built as a one-member fused group (mutated inputs and their FInplaceOption aliases
 * included), compiled through the KernelCache and kept per target, op, attributes, input
 * dtypes and shapes. Its params are the inputs, then the outputs that alias no input.
 * A reduction whose axes are not one contiguous block gets no kernel.
 */
const SingleOpKernel& GetSingleOpKernel(const std::string& target, const NodeAttrs& attrs,
                                        const std::vector<NDArray>& inputs);

/*!
 * \brief Runs the node's generated kernel on `target` (outputs aliasing a mutated input get its
 * value); false, running nothing, when there is none for these inputs.
 */
bool RunSingleOpKernel(const std::string& target, const OpContext& ctx, const NodeAttrs& attrs,
                       const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs);

}  // namespace codegen
}  // namespace ir

#endif  // IR_CODEGEN_SINGLE_OP_KERNEL_H_
