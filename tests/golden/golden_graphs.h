/*!
 * \file golden_graphs.h
 * \brief The graphs of the golden kernel corpus (tests/golden/README.md): every elementwise op
 * with FCodeGen, broadcasts, reductions, softmax and cross-entropy, a conv net and LeNet
 * training steps, built with the C++ API.
 */
#ifndef IR_TESTS_GOLDEN_GOLDEN_GRAPHS_H_
#define IR_TESTS_GOLDEN_GOLDEN_GRAPHS_H_

#include <map>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/graph.h"
#include "ir/node.h"

namespace ir {
namespace golden {

/*! \brief Shape and element type of a graph input (a variable). */
struct InputSpec {
  Shape shape;
  DType dtype = DType::kFloat32;
};

/*! \brief One graph of the corpus: its outputs and the shapes of its variables (by name). */
struct GoldenGraph {
  /*! \brief File stem in the corpus: [a-z0-9_]+, unique. */
  std::string name;
  std::vector<NodeEntry> outputs;
  std::map<std::string, InputSpec> inputs;
  /*!
   * \brief Found by enumerating the op registry: a failure to infer or fuse it drops the graph
   * (reported) instead of failing the tool.
   */
  bool enumerated = false;
};

/*! \brief The graph of `golden` with its inputs' shapes and dtypes set ("shape_inputs", "dtype_inputs"). */
Graph WithInputs(const GoldenGraph& golden);

/*!
 * \brief Every graph of the corpus, freshly built (passes may rewrite nodes, so each target
 * gets its own copy). Ops the enumeration cannot build with default parameters are appended
 * to `skipped` as "op: reason".
 */
std::vector<GoldenGraph> GoldenGraphs(std::vector<std::string>* skipped);

}  // namespace golden
}  // namespace ir

#endif  // IR_TESTS_GOLDEN_GOLDEN_GRAPHS_H_
