/*!
 * \file bound_plan.h
 * \brief A graph bound for given input shapes: the pass pipeline's result, each node's
 * kernel and seed; and the per-run memory (Workspace) a run of the plan needs.
 *
 * A BoundPlan is immutable once bound, so runs on several threads share it; each concurrent
 * run uses its own Workspace (see PlanCache).
 */
#ifndef IR_RUNTIME_EXECUTOR_BOUND_PLAN_H_
#define IR_RUNTIME_EXECUTOR_BOUND_PLAN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/runtime.h"
#include "runtime/executor/graph_inputs.h"

namespace ir {
namespace runtime {

/*! \brief Everything a run needs that depends only on the input shapes. */
struct BoundPlan {
  /*! \brief The graph after the pipeline (shape, dtype, storage_id... attached). */
  Graph graph;
  /*! \brief Per entry, copied out of `graph`: shape, dtype, storage_id, storage_inplace_index, storage_offset. */
  ShapeVector shapes;
  DTypeVector dtypes;
  std::vector<int> storage_id;
  std::vector<int> inplace_index;
  std::vector<int64_t> storage_offset;
  /*! \brief Per input node of `graph` (input_nodes() order): its index among the executor's inputs. */
  std::vector<size_t> input_index;
  /*! \brief Per node: its kernel (empty for variables) and whether it runs on host copies. */
  std::vector<FCompute> kernels;
  std::vector<bool> on_host;
  /*! \brief Per node: its op's FControlFlow when it has bodies the executor runs (else null). */
  std::vector<const FControlFlow*> control_flow;
  /*! \brief Per node: its op's FComputeShaped when it allocates its outputs itself (else null). */
  std::vector<const FComputeShaped*> shaped;
  /*!
   * \brief Per node: the input FForwardInput names (-1: none), and whether the node is the last
   * to read that input's record (it then gets the only reference).
   */
  std::vector<int> forward_input;
  std::vector<bool> takes_record;
  /*! \brief Per node: the first gradient node reading its output 0 as FForwardInput (else null). */
  std::vector<const NodeAttrs*> gradient;
  /*! \brief Whether some node reads a record (a run then tracks records per entry). */
  bool records = false;
  /*! \brief Per node: inputs the op mutates, and those it overwrites without reading. */
  std::vector<std::vector<uint32_t>> mutated;
  std::vector<std::vector<uint32_t>> overwritten;
  /*! \brief Per node: the part of OpContext::seed that does not change run to run. */
  std::vector<uint64_t> seed_base;
  /*! \brief Per node, when profiling: its op as NodeProfile::op describes it (else empty). */
  std::vector<std::string> op_desc;
  /*!
   * \brief Some shapes are known only at run time (a loop variable whose shape changes, a value
   * whose shape is a tensor's value): those entries get fresh storage and their shapes are
   * inferred from the arrays as nodes run; the nodes of known shapes are planned and fused as usual.
   */
  bool dynamic = false;
  /*! \brief Bytes of the memory pool (one arena) of one Workspace of the plan. */
  size_t pool_bytes = 0;
  size_t no_reuse_bytes = 0;
  size_t lower_bound_bytes = 0;
  double bind_ms = 0;
};

/*!
 * \brief The default pass pipeline: the registered pipeline "session" (src/passes/pipelines.cc)
 * under options.simplify and options.fusion.
 */
std::vector<std::string> DefaultPipeline(const SessionOptions& options);

/*!
 * \brief Binds `graph` for this run's input `values` (aligned with `inputs`): sets the pass
 * options and the input shapes and dtypes as graph attributes, runs the pipeline, and picks
 * each node's kernel. Throws ir::Error naming the inputs when a pass fails, and naming the
 * node and op when no kernel can run it.
 */
std::shared_ptr<BoundPlan> Bind(const Graph& graph, const std::vector<GraphInput>& inputs,
                                const std::vector<NDArray>& values, const SessionOptions& options, Device device);

/*! \brief The intermediate storage of one run of a plan: never shared by two runs at once. */
struct Workspace {
  /*! \brief The plan's pool: one allocation holding every pooled entry at its storage_offset. */
  std::shared_ptr<Storage> arena;
  /*! \brief Per entry of the plan's graph: its view of the arena (undefined when not pooled). */
  std::vector<NDArray> views;
};

/*! \brief A node's kernel on a device, and whether it runs on host copies of its arrays. */
struct NodeKernel {
  FCompute kernel;
  bool on_host = false;
};

/*! \brief Picks the kernel of nodes of an op on one device type (the device layer registers one per target). */
using KernelSelector = std::function<NodeKernel(const Op* op)>;

/*!
 * \brief Makes `selector` pick the kernels of nodes on devices of `type` (replacing an earlier
 * one). Devices without a selector run their target's "FCompute<type>", else the CPU kernel on
 * host copies.
 */
void RegisterKernelSelector(DeviceType type, KernelSelector selector);

/*! \brief Allocates the pool slots of `plan` on `device` and each pooled entry's view. */
std::unique_ptr<Workspace> AllocateWorkspace(const BoundPlan& plan, Device device);

/*! \brief SplitMix64's finalizer: a well-mixed 64-bit hash of `x`. */
uint64_t SplitMix64(uint64_t x);

}  // namespace runtime
}  // namespace ir

#endif  // IR_RUNTIME_EXECUTOR_BOUND_PLAN_H_
