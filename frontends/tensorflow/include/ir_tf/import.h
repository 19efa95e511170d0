/*!
 * \file import.h
 * \brief Importing a TensorFlow GraphDef into a Graph with the TFImport pass.
 *
 * The import is a pass, so it is checked, timed and dumped like every other one. A pass needs
 * a graph to start from: the import starts from an empty Graph (no outputs) whose attributes
 * carry its input, and returns the imported graph:
 *
 * | attribute | type | meaning |
 * |---|---|---|
 * | `tf.graph_def` (required) | `std::string` | the binary GraphDef |
 * | `tf.outputs` | `std::vector<std::string>` | tensors to compute ("n", "n:1") and nodes to run ("^n"); empty: every
 * node no other node reads | | `tf.feed_names`, `tf.feed_shapes` | `std::vector<std::string>`, `ShapeVector` | tensors
 * that will be fed and their shapes: placeholders take these shapes; any other fed tensor becomes a placeholder | |
 * `tf.max_const_bytes` | `int` | largest Const tensor accepted (default 1 GiB) |
 *
 * The result's outputs are aligned with `tf.outputs`, and `tf.output_names` names them. Only
 * the nodes those outputs need are converted, so a graph may hold ops without a converter
 * (savers, summaries) as long as nothing requested needs them. Values TensorFlow computes from
 * shapes at run time (reshape targets, reduction axes) are folded to constants during import
 * (passes InferShape, InferType, FoldConstants on the subgraph that computes them), which needs
 * the shapes of the feeds they depend on.
 */
#ifndef IR_TF_IMPORT_H_
#define IR_TF_IMPORT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace ir {
namespace tf {

/*! \brief What to import and what will be fed. */
struct ImportOptions {
  /*! \brief "name", "name:i" (tensors) or "^name" (nodes run for effect); empty = everything. */
  std::vector<std::string> outputs;
  /*! \brief Shapes of the tensors that will be fed, by name. */
  std::map<std::string, Shape> feed_shapes;
  /*! \brief Largest Const tensor accepted, in bytes (hostile files may declare huge ones). */
  int max_const_bytes = 1 << 30;
  /*! \brief When set, the imported graph is dumped there (like every pass's result). */
  std::string dump_dir;
};

/*! \brief Runs the TFImport pass on `graph_def` (binary). Errors name the TF node and op. */
Graph ImportGraphDef(const std::string& graph_def, const ImportOptions& options = ImportOptions());

/*! \brief Every node whose op has no converter, as (node name, op), in graph order (functions inlined). */
std::vector<std::pair<std::string, std::string>> ListUnsupported(const std::string& graph_def);

/*! \brief Names of the TensorFlow ops the importer converts, sorted. */
std::vector<std::string> SupportedOps();

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_IMPORT_H_
