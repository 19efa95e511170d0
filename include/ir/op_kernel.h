/*!
 * \file op_kernel.h
 * \brief Kernel attributes: how an op computes on a device.
 *
 * "FCompute" is every op's CPU reference kernel: any graph can run unfused, and fused
 * kernels are tested against it. On accelerators an op's kernel is its FDeviceKernel
 * (ir/device_kernel.h, written once for every target) or derived from FCodeGen; an op
 * library may still register a target-specific kernel under FComputeKey(device type)
 * ("FCompute<opencl>", "FCompute<cuda>"), which then takes precedence.
 */
#ifndef IR_OP_KERNEL_H_
#define IR_OP_KERNEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ndarray.h"
#include "ir/node.h"

namespace ir {

/*! \brief What a kernel may know about the run it is part of. */
struct OpContext {
  Device device = Device::CPU();
  /*! \brief Training (dropout active, batch norm uses batch statistics) or inference. */
  bool is_train = true;
  /*!
   * \brief Seed for stateful ops (random_*, dropout), different for every node and every run
   * but the same across processes for the same graph, seeds and run count.
   */
  uint64_t seed = 0;
  /*! \brief The backend's queue or stream (cl_command_queue, CUstream); null on the CPU. */
  void* queue = nullptr;
};

/*!
 * \brief A kernel: computes `outputs` from `inputs`. Outputs are allocated by the caller with
 * the inferred shapes and dtypes; an output may share memory with an input when the op's
 * FInplaceOption allows it, and a mutated input (FMutateInputs) is written in place.
 */
using FCompute = std::function<void(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                    const std::vector<NDArray>& outputs)>;

/*!
 * \brief Runs body `index` of a control-flow node (NodeAttrs::subgraphs) on `args`, one per param,
 * on the run's device, and returns its outputs (arrays the caller owns). `key` numbers the call
 * within the node's run (the iteration): random ops in the body draw from the run's number and
 * `key`, so running a body again with the same key (a gradient recomputing an iteration) draws
 * the same numbers. `donate[i]` (empty: none) says the caller gives up `args[i]`: it owns it,
 * keeps no other reference to it, and it overlaps no other argument; the body may then write an
 * output into it in place (a loop updating a TensorArray row by row does not copy the whole
 * array every iteration).
 */
using BodyRunner = std::function<std::vector<NDArray>(size_t index, const std::vector<NDArray>& args, uint64_t key,
                                                      const std::vector<bool>& donate)>;

/*!
 * \brief "FControlFlow": the kernel of an op with bodies (cond, while_loop). It decides which
 * bodies run and how often, through `run_body`; the executor binds each body (its own pass
 * pipeline, once per input signature) and returns the outputs, which must have the shapes and
 * dtypes inference gave them.
 */
using FControlFlow = std::function<std::vector<NDArray>(
    const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const BodyRunner& run_body)>;

/*!
 * \brief "FComputeShaped": the kernel of an op whose output shapes depend on its inputs' values
 * (fill_dims: a shape given as a tensor). It allocates and returns its outputs on ctx.device;
 * inference leaves those shapes unknown, so the executor plans the graph dynamically (shapes
 * found as nodes run, see ir/runtime.h).
 */
using FComputeShaped = std::function<std::vector<NDArray>(const OpContext& ctx, const NodeAttrs& attrs,
                                                          const std::vector<NDArray>& inputs)>;

/*! \brief Attribute key of the kernels for a device type: "FCompute" for the CPU. */
inline std::string FComputeKey(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return "FCompute";
    case DeviceType::kOpenCL:
      return "FCompute<opencl>";
    case DeviceType::kCUDA:
      return "FCompute<cuda>";
  }
  return "FCompute<?>";
}

}  // namespace ir

#endif  // IR_OP_KERNEL_H_
