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
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/ndarray.h"
#include "ir/node.h"

namespace ir {

/*!
 * \brief What a control-flow node's run keeps for its gradient node in the same run (a loop's
 * history, the values of stateful nodes the gradient reads, which must not run again). Its
 * kernel makes it; the executor only hands it over (see FForwardInput).
 */
struct ForwardRecord {
  virtual ~ForwardRecord() = default;
};
using ForwardRecordPtr = std::shared_ptr<ForwardRecord>;

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
  /*!
   * \brief For a control-flow node whose output 0 a gradient node of this run reads as its
   * FForwardInput: that gradient node (its bodies say what to keep), and where the kernel puts
   * its record. Both null otherwise.
   */
  const NodeAttrs* gradient = nullptr;
  ForwardRecordPtr* record = nullptr;
  /*!
   * \brief For a node with FForwardInput: the record on that input (null when none reached it).
   * The node holds the only reference when it is the record's last reader.
   */
  ForwardRecordPtr forward;
};

/*!
 * \brief A kernel: computes `outputs` from `inputs`. Outputs are allocated by the caller with
 * the inferred shapes and dtypes; an output may share memory with an input when the op's
 * FInplaceOption allows it, and a mutated input (FMutateInputs) is written in place.
 */
using FCompute = std::function<void(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                    const std::vector<NDArray>& outputs)>;

/*!
 * \brief One run of a body of a control-flow node. `key` numbers the call within the node's run
 * (the iteration): random ops in the body draw from the run's number and `key`, so running a
 * body again with the same key (a gradient recomputing an iteration) draws the same numbers.
 * `donate[i]` (empty: none) says the caller gives up `args[i]`: it owns it, keeps no other
 * reference to it, and it overlaps no other argument; the body may then write an output into it
 * in place (a loop updating a TensorArray row by row does not copy the whole array every
 * iteration).
 */
struct BodyCall {
  /*! \brief Which of the node's bodies (NodeAttrs::subgraphs) runs; errors name it. */
  size_t index = 0;
  /*! \brief When set, the body that runs instead (a gradient node's extended forward body). */
  const Subgraph* body = nullptr;
  std::vector<NDArray> args;
  uint64_t key = 0;
  std::vector<bool> donate;
  /*! \brief Per arg (empty: none): a record travelling with the value to a gradient node in the body. */
  std::vector<ForwardRecordPtr> records;
  /*!
   * \brief Per output (empty: none): the gradient node, outside the body, that will read the record
   * of that output's producer (a forward node in the body): it keeps one for it (OpContext::gradient).
   */
  std::vector<const NodeAttrs*> output_gradients;
};

/*! \brief A body's outputs (arrays the caller owns) and the record travelling with each (or null). */
struct BodyResult {
  std::vector<NDArray> outputs;
  std::vector<ForwardRecordPtr> records;
};

/*!
 * \brief Runs bodies of a control-flow node on the run's device (see BodyCall); the call form
 * `run_body(index, args, key, donate)` returns just the outputs.
 */
class BodyRunner {
 public:
  using Function = std::function<BodyResult(const BodyCall& call)>;
  explicit BodyRunner(Function run) : run_(std::move(run)) {}
  BodyResult Run(const BodyCall& call) const { return run_(call); }
  std::vector<NDArray> operator()(size_t index, std::vector<NDArray> args, uint64_t key,
                                  std::vector<bool> donate) const {
    BodyCall call;
    call.index = index;
    call.args = std::move(args);
    call.key = key;
    call.donate = std::move(donate);
    return run_(call).outputs;
  }

 private:
  Function run_;
};

/*!
 * \brief "FControlFlow": the kernel of an op with bodies (cond, while_loop). It decides which
 * bodies run and how often, through `run_body`; the executor binds each body (its own pass
 * pipeline, once per input signature) and returns the outputs, which must have the shapes and
 * dtypes inference gave them.
 */
using FControlFlow = std::function<std::vector<NDArray>(
    const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const BodyRunner& run_body)>;

/*!
 * \brief "FForwardInput": for the gradient node of a control-flow node (_while_loop_grad), the
 * input (of `num_inputs`) reading output 0 of its forward node, or -1. When that input's producer is a
 * control-flow node of the same plan, the executor runs it with OpContext::gradient set to this
 * node, and gives this node the record it made (OpContext::forward); a record put on a body's
 * output travels with the value (BodyResult, BodyCall::records). So the forward node keeps what
 * the gradient needs, and nothing it computed runs twice.
 */
using FForwardInput = std::function<int(const NodeAttrs& attrs, uint32_t num_inputs)>;

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
