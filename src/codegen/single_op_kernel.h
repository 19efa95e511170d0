/*!
 * \file single_op_kernel.h
 * \brief Kernels of single nodes generated from their op's FCodeGen, for every target: an
 * elementwise op written once (FCodeGen) runs unfused on the CPU and on devices alike.
 * (codegen::CpuKernelOf, which ops use too, is declared in ir/codegen.h.)
 */
#ifndef IR_CODEGEN_SINGLE_OP_KERNEL_H_
#define IR_CODEGEN_SINGLE_OP_KERNEL_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "ir/op.h"
#include "ir/op_kernel.h"

namespace ir {
namespace codegen {

/*! \brief A compiled kernel of one node; `module` is null when FCodeGen has no code for its inputs. */
struct SingleOpKernel {
  std::shared_ptr<CompiledModule> module;
  std::string name;
};

/*! \brief True when `op` is elementwise or broadcast and has FCodeGen. */
bool IsGeneratable(const Op* op);

/*!
 * \brief The kernel of a node of `attrs` for these inputs on `target` ("cpu", "opencl"),
 * built as a one-member fused group, compiled through the KernelCache and kept per op,
 * attributes, input dtypes and shapes. Its params are the inputs, then the outputs.
 */
const SingleOpKernel& GetSingleOpKernel(const std::string& target, const NodeAttrs& attrs,
                                        const std::vector<NDArray>& inputs);

}  // namespace codegen
}  // namespace ir

#endif  // IR_CODEGEN_SINGLE_OP_KERNEL_H_
