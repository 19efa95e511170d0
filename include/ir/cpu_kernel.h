/*!
 * \file cpu_kernel.h
 * \brief An op's CPU kernel wherever it comes from: its "FCompute", else a kernel generated from
 * its FCodeGen. Core owns the lookup; the codegen layer registers the generator into it at
 * static initialization, so ops (the "_fused" runner) and the runtime never call codegen.
 */
#ifndef IR_CPU_KERNEL_H_
#define IR_CPU_KERNEL_H_

#include <functional>
#include <vector>

#include "ir/ndarray.h"
#include "ir/node.h"
#include "ir/op_kernel.h"

namespace ir {

/*! \brief A node's kernel generated for one input signature (dtypes and shapes), kept for the process. */
class GeneratedKernel {
 public:
  virtual ~GeneratedKernel() = default;
  /*! \brief Runs it on inputs of its signature (outputs aliasing a mutated input get that input's value). */
  virtual void Launch(const OpContext& ctx, const std::vector<NDArray>& inputs,
                      const std::vector<NDArray>& outputs) const = 0;
};

/*! \brief What the codegen layer registers: CPU kernels generated from FCodeGen. */
struct CpuKernelGenerator {
  /*! \brief A kernel for an op that registers no "FCompute" (elementwise or broadcast with FCodeGen), else empty. */
  std::function<FCompute(const Op* op)> for_op;
  /*! \brief A node's kernel (a "_fused" node: its group's) for these inputs, compiled on first use; null when none. */
  std::function<const GeneratedKernel*(const NodeAttrs& attrs, const std::vector<NDArray>& inputs)> for_node;
};

/*! \brief Registers the generator (both functions set); a second registration is an error. */
void RegisterCpuKernelGenerator(CpuKernelGenerator generator);

/*!
 * \brief The CPU kernel of `op`: its "FCompute", else the generator's kernel, else an empty
 * function. Throws, naming the op, when it needs the generator and none is registered.
 */
FCompute CpuKernelOf(const Op* op);

/*! \brief The generator's CPU kernel of a node for these inputs, or null (also when none is registered). */
const GeneratedKernel* FindGeneratedCpuKernel(const NodeAttrs& attrs, const std::vector<NDArray>& inputs);

}  // namespace ir

#endif  // IR_CPU_KERNEL_H_
