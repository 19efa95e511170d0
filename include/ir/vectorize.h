/*!
 * \file vectorize.h
 * \brief Vectorization of parallel-for loops (pfor): the op attribute FVectorize, the context
 * its converters get, and the APIs built on the Vectorize pass (Pfor, Jacobian, BatchJacobian,
 * per-example gradients).
 *
 * A `pfor` node holds a body (a closed Subgraph) whose params are the iteration index (an int32
 * scalar) and the captured loop-invariant values; its outputs are the body's outputs stacked
 * over the `n` iterations (a new leading axis). The Vectorize pass replaces each pfor node by an
 * ordinary graph: it walks the body in topological order, tracking each value as loop-invariant
 * ("unstacked", the per-iteration shape) or per-iteration ("stacked", [n] + the per-iteration
 * shape), and asks each node's op for its converter. A node none of whose inputs is stacked is
 * copied as it is (a stateful op excepted: every iteration draws its own numbers). Ops of pattern
 * kElemWise / kBroadcast without a converter use the generic one (VectorizeElementwise). A node
 * whose op has no converter, or whose converter declines the combination of stacked inputs,
 * becomes a small pfor loop over the iterations: never silently, it is listed in the graph
 * attribute "vectorize.fallbacks" (printed in IR dumps, copied into RunStats::pfor_fallbacks).
 */
#ifndef IR_VECTORIZE_H_
#define IR_VECTORIZE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/node.h"

namespace ir {

/*! \brief A value of the vectorized graph: stacked values have a leading axis of n iterations. */
struct PforValue {
  NodeEntry entry;
  bool stacked = false;
};

/*!
 * \brief What a converter knows of the body node it converts, and the builder of its
 * replacement. Shapes and dtypes are per iteration (without the leading n).
 *
 * The contract between ops and the Vectorize pass: ops' converters (FVectorize) call it, the
 * pass (src/passes/vectorize.cc) implements the pure virtual methods; the helpers built on
 * them are core's (src/core/pfor_context.cc), so an op needs nothing of the passes layer.
 */
class PforContext {
 public:
  virtual ~PforContext() = default;

  /*! \brief The body node being converted. */
  virtual const NodePtr& node() const = 0;
  const NodeAttrs& attrs() const { return node()->attrs; }
  /*! \brief The converted inputs, in the node's input order. */
  virtual const std::vector<PforValue>& inputs() const = 0;
  const PforValue& input(size_t i) const { return inputs().at(i); }
  bool stacked(size_t i) const { return inputs().at(i).stacked; }
  /*! \brief Per-iteration shape / dtype of input i and output i. */
  virtual const Shape& in_shape(size_t i) const = 0;
  virtual DType in_dtype(size_t i) const = 0;
  virtual const Shape& out_shape(size_t i) const = 0;
  virtual DType out_dtype(size_t i) const = 0;
  size_t num_inputs() const { return inputs().size(); }
  virtual size_t num_outputs() const = 0;
  /*! \brief The number of iterations. */
  virtual int64_t n() const = 0;
  bool AnyStacked() const;
  /*! \brief The name new nodes start with (the pfor node's). */
  virtual const std::string& prefix() const = 0;

  /*! \brief Entry 0 (or `index`) of a new node of `op_name`, named after the converted node. */
  NodeEntry Make(const std::string& op_name, std::vector<NodeEntry> inputs,
                 const std::map<std::string, std::string>& dict = {}, uint32_t index = 0);
  /*! \brief A new node of `op_name` (all its outputs), named after the converted node. */
  virtual NodePtr MakeNode(const std::string& op_name, std::vector<NodeEntry> inputs,
                           const std::map<std::string, std::string>& dict = {}) = 0;
  /*! \brief Input i with the leading n axis: broadcast when unstacked, as it is when stacked. */
  NodeEntry Stacked(size_t i);
  /*! \brief `entry` (per-iteration shape `shape`) broadcast to [n] + shape. */
  virtual NodeEntry Stack(const NodeEntry& entry, const Shape& shape) = 0;
  /*! \brief A stacked entry of per-iteration shape `shape` reshaped to [n * shape[0]] + shape[1:] (rank >= 1). */
  virtual NodeEntry MergeLeading(const NodeEntry& entry, const Shape& shape) = 0;
  /*! \brief The inverse: [n * shape[0]] + shape[1:] back to [n] + shape. */
  virtual NodeEntry SplitLeading(const NodeEntry& entry, const Shape& shape) = 0;
  /*! \brief A node copied with `inputs` replacing its inputs and `dict` its attributes. */
  virtual NodeEntry CopyNode(std::vector<NodeEntry> inputs, const std::map<std::string, std::string>& dict,
                             uint32_t index = 0) = 0;
  /*! \brief The node's attributes (dict) with `key` set to `value`. */
  std::map<std::string, std::string> DictWith(const std::string& key, const std::string& value) const;
};

/*!
 * \brief "FVectorize": converts a body node given its converted inputs (at least one stacked).
 * Returns one PforValue per output, or an empty vector to decline (the node then runs as a loop
 * and is reported as a fallback). Registered like FGradient, by ops and by op libraries.
 */
using FVectorize = std::function<std::vector<PforValue>(PforContext& ctx)>;

/*!
 * \brief The generic converter of elementwise and broadcasting ops (the default for those
 * patterns), built on PforContext alone (src/core/pfor_context.cc).
 */
std::vector<PforValue> VectorizeElementwise(PforContext& ctx);

// The APIs below build graphs only (src/core/pfor_api.cc): pfor nodes, and gradients through
// Gradients (ir/autodiff.h), which runs the registered Gradient pass; the Vectorize pass then
// replaces the pfor nodes when a session binds the graph.

/*!
 * \brief The loop `for i in [0, n): outputs[i] = body(i)` as a pfor node, outputs stacked. `body`
 * gets the index (an int32 scalar) and builds its outputs from it and from any outer entries:
 * every node it reads that does not depend on the index stays outside (captured), so a random
 * op meant to draw per iteration must depend on the index (tinyflow's pfor tracks what the loop
 * function built instead).
 */
std::vector<NodeEntry> Pfor(int64_t n, const std::function<std::vector<NodeEntry>(const NodeEntry& index)>& body,
                            const std::string& name = "pfor");

/*!
 * \brief The pfor node whose body `outputs` close over the variable `index`: nodes reading the
 * index (or listed in `inside`, e.g. random ops the loop function built) are copied into the body,
 * other values become captured inputs; `n_from` (when given) is captured first and sets the
 * attribute n_from = 0. `attrs`: n, vectorize, parallel_iterations.
 */
std::vector<NodeEntry> ClosePfor(const NodePtr& index, const std::vector<NodeEntry>& outputs,
                                 const std::vector<NodePtr>& inside, const NodeEntry* n_from,
                                 std::map<std::string, std::string> attrs, const std::string& name);

/*!
 * \brief Jacobian of `y` (with `y_size` elements) with respect to each x: shape [y_size] + x.shape
 * (row k: the gradient of element k of the flattened y), one pfor over y's elements.
 */
std::vector<NodeEntry> Jacobian(const NodeEntry& y, const std::vector<NodeEntry>& xs, int64_t y_size,
                                const std::string& name = "jacobian");

/*!
 * \brief Batch jacobian of y [b, ...] with respect to x [b, ...] of rank `x_rank` (row i of y
 * depends only on row i of x): shape [b, y_row_size] + x.shape[1:], `y_row_size` being the element
 * count of y[0]; one pfor over y's columns.
 */
NodeEntry BatchJacobian(const NodeEntry& y, const NodeEntry& x, int64_t y_row_size, int x_rank,
                        const std::string& name = "batch_jacobian");

/*!
 * \brief Per-example gradients: for each row i of the batches in `examples` (leading axis n),
 * the gradients of `loss_fn(rows i, with a leading axis of 1)` with respect to `params`;
 * result j has shape [n] + params[j].shape.
 */
std::vector<NodeEntry> PerExampleGradients(
    const std::function<NodeEntry(const std::vector<NodeEntry>& examples)>& loss_fn,
    const std::vector<NodeEntry>& examples, const std::vector<NodeEntry>& params, int64_t n,
    const std::string& name = "per_example");

}  // namespace ir

#endif  // IR_VECTORIZE_H_
