/*!
 * \file graph_inputs.h
 * \brief The inputs of a graph the executor runs: which are placeholders (fed every run) and
 * which are variables (persistent state), and where each run's value of each comes from.
 */
#ifndef IR_RUNTIME_EXECUTOR_GRAPH_INPUTS_H_
#define IR_RUNTIME_EXECUTOR_GRAPH_INPUTS_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir/runtime.h"

namespace ir {
namespace runtime {

/*! \brief One variable node of the graph (an entry of IndexedGraph::input_nodes()). */
struct GraphInput {
  uint32_t node_id = 0;
  std::string name;
  /*!
   * \brief Hidden attribute "__kind__": "variable" or "placeholder". Without it, an input is a
   * variable when some op mutates it, else a placeholder that may still read a stored value.
   */
  bool is_variable = false;
  bool explicit_kind = false;
  /*! \brief Some op writes it (FMutateInputs): a fed value is copied so the caller's array stays as it was. */
  bool mutated = false;
  /*! \brief An op that overwrites it without reading (assign) may initialize it during the run. */
  bool initialized_by_graph = false;
  /*! \brief "__shape__" and "__dtype__" hints (unknown when absent). */
  Shape hint_shape;
  DType hint_dtype = DType::kUnknown;
};

/*!
 * \brief The inputs `node` writes without reading them (FOverwrittenInputs when the op has it,
 * else every mutated input of an op with TOverwritesMutatedInputs): running it may initialize
 * the variables there.
 */
std::vector<uint32_t> OverwrittenInputsOf(const Node& node);

/*! \brief Describes every input of the graph. Throws on malformed hints or an unknown __kind__. */
std::vector<GraphInput> ClassifyInputs(const Graph& graph);

/*!
 * \brief This run's value of every input, in input order: the feed, else the stored value,
 * else undefined for a variable the graph initializes. Arrays end up on `device`.
 * \throws ir::Error for a feed naming no input (listing the placeholders), a feed that
 * contradicts its placeholder's hints, an unfed placeholder, or an uninitialized variable.
 */
std::vector<NDArray> ResolveInputs(const std::vector<GraphInput>& inputs,
                                   const std::unordered_map<std::string, NDArray>& feeds, VariableStore* store,
                                   Device device);

/*! \brief Shapes and dtypes of resolved inputs: the key of a cached bound plan. */
using InputSignature = std::vector<int64_t>;

/*! \brief The signature of `values`: per value its dtype, rank and dims (-1 when undefined); no strings. */
InputSignature SignatureOf(const std::vector<NDArray>& values);

}  // namespace runtime
}  // namespace ir

#endif  // IR_RUNTIME_EXECUTOR_GRAPH_INPUTS_H_
