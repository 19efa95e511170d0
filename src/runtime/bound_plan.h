/*!
 * \file bound_plan.h
 * \brief A graph bound for given input shapes: the pass pipeline's result, each node's
 * kernel and seed, and the memory pool of the plan.
 */
#ifndef IR_RUNTIME_BOUND_PLAN_H_
#define IR_RUNTIME_BOUND_PLAN_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/runtime.h"
#include "runtime/graph_inputs.h"

namespace ir {
namespace runtime {

/*! \brief Everything a run needs that depends only on the input shapes. */
struct BoundPlan {
  /*! \brief The graph after the pipeline (shape, dtype, storage_id... attached). */
  Graph graph;
  /*! \brief Per entry, copied out of `graph`: shape, dtype, storage_id, storage_inplace_index. */
  ShapeVector shapes;
  DTypeVector dtypes;
  std::vector<int> storage_id;
  std::vector<int> inplace_index;
  /*! \brief Per input node of `graph` (input_nodes() order): its index among the executor's inputs. */
  std::vector<size_t> input_index;
  /*! \brief Per node: its kernel (empty for variables) and whether it runs on host copies. */
  std::vector<FCompute> kernels;
  std::vector<bool> on_host;
  /*! \brief Per node: inputs the op mutates, and those it overwrites without reading. */
  std::vector<std::vector<uint32_t>> mutated;
  std::vector<std::vector<uint32_t>> overwritten;
  /*! \brief Per node: the part of OpContext::seed that does not change run to run. */
  std::vector<uint64_t> seed_base;
  /*! \brief Pool slots, allocated by the first run, and per entry its view of its slot. */
  std::vector<std::shared_ptr<Storage>> pool;
  std::vector<NDArray> pool_views;
  size_t pool_bytes = 0;
  size_t no_reuse_bytes = 0;
  double bind_ms = 0;
};

/*!
 * \brief The default pass pipeline: InferShape, InferType, then Fusion, CodeGen and RTCGen
 * (when options.fusion and each is registered), then PlanMemory.
 */
std::vector<std::string> DefaultPipeline(const SessionOptions& options);

/*!
 * \brief Binds `graph` for this run's input `values` (aligned with `inputs`): sets the pass
 * options and the input shapes and dtypes as graph attributes, runs the pipeline, and picks
 * each node's kernel. Throws ir::Error naming the inputs when a pass fails, and naming the
 * node and op when no kernel can run it.
 */
std::shared_ptr<BoundPlan> Bind(const Graph& graph, const std::vector<GraphInput>& inputs,
                                const std::vector<NDArray>& values, const SessionOptions& options,
                                Device device);

/*! \brief Allocates the plan's pool slots on `device` (once) and each pooled entry's view. */
void AllocatePool(BoundPlan* plan, Device device);

/*! \brief SplitMix64's finalizer: a well-mixed 64-bit hash of `x`. */
uint64_t SplitMix64(uint64_t x);

}  // namespace runtime
}  // namespace ir

#endif  // IR_RUNTIME_BOUND_PLAN_H_
