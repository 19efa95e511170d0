/*!
 * \file graph_importer.h
 * \brief The body of the TFImport pass: converts the TF nodes some outputs need, in
 * topological order, through the converter table.
 */
#ifndef IR_TF_GRAPH_IMPORTER_H_
#define IR_TF_GRAPH_IMPORTER_H_

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir_tf_node_def.pb.h"

namespace ir {
namespace tf {

struct FunctionScope;

/*! \brief What to import (the TFImport pass reads it from graph attributes). */
struct ImportSpec {
  /*! \brief "name", "name:i", "^name"; empty = the outputs of every node nothing else reads. */
  std::vector<std::string> outputs;
  std::map<std::string, Shape> feed_shapes;
  int64_t max_const_bytes = int64_t{1} << 30;
  /*! \brief GraphDef producer version (0 for graphs without one): some semantics changed with it. */
  int producer = 0;
  /*! \brief The library If/While/Case bodies come from, shared by nested body imports. */
  std::shared_ptr<FunctionScope> functions;
};

/*! \brief A reference to a TF tensor or node: "name", "name:3", "^name". */
struct TensorRef {
  std::string node;
  int index = 0;
  bool control = false;
  /*! \brief Parses a reference; throws ir::Error for a malformed one. */
  static TensorRef Parse(const std::string& text);
};

/*! \brief Converts a flat list of TF nodes (functions already inlined) into a Graph. */
class GraphImporter {
 public:
  GraphImporter(std::vector<tfproto::NodeDef> nodes, ImportSpec spec);

  /*! \brief The imported graph; its outputs follow spec.outputs, named in `output_names`. */
  Graph Import(std::vector<std::string>* output_names);

  /*! \brief The value of `entry` when constants and known shapes determine it, else undefined. */
  NDArray Fold(const NodeEntry& entry);
  /*! \brief Inferred shape and dtype of `entry` (partial when not fully known). */
  Shape ShapeOf(const NodeEntry& entry);
  DType TypeOf(const NodeEntry& entry);
  /*! \brief Names of the placeholders `entry` depends on that this import does not feed. */
  std::vector<std::string> UnfedPlaceholders(const NodeEntry& entry) const;
  const ImportSpec& spec() const { return spec_; }

 private:
  using EntryKey = std::pair<const Node*, uint32_t>;

  void IndexNodes();
  std::vector<TensorRef> Roots() const;
  std::vector<size_t> TopologicalOrder(const std::vector<TensorRef>& roots) const;
  [[noreturn]] void ThrowCycle(const std::vector<std::pair<size_t, int>>& stack, size_t start) const;
  void Convert(const tfproto::NodeDef& def);
  NodeEntry Resolve(const tfproto::NodeDef& def, int slot, const TensorRef& ref) const;
  std::vector<NodeEntry> Outputs(const std::vector<TensorRef>& roots, std::vector<std::string>* names) const;
  std::string Describe(size_t k) const;

  std::vector<tfproto::NodeDef> nodes_;
  ImportSpec spec_;
  std::unordered_map<std::string, size_t> by_name_;
  /*! \brief Our entries for each converted TF node's outputs. */
  std::unordered_map<std::string, std::vector<NodeEntry>> tensors_;
  std::map<EntryKey, NodeEntry> folded_;
  std::map<EntryKey, Shape> shapes_;
};

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_GRAPH_IMPORTER_H_
