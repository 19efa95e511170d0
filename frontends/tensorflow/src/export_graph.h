/*!
 * \file export_graph.h
 * \brief What the GraphDef exporter's parts share (ir_tf/export.h is its interface): the
 * Exporter a writer sees (the node being written, its inputs' TensorFlow names, shapes and
 * dtypes; how to add nodes and Consts), the attribute helpers and the writers' table
 * (export_writers.cc).
 */
#ifndef IR_TF_EXPORT_GRAPH_H_
#define IR_TF_EXPORT_GRAPH_H_

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ir/constant.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir_tf_graph.pb.h"
#include "tf_types.h"

namespace ir {
namespace tf {

/*! \brief The integers of an attribute written as "(1,2)", "[1,2]", "3" or "()". */
inline std::vector<int64_t> Ints(const std::string& text) {
  std::string digits = text;
  for (char& c : digits) {
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') c = ' ';
  }
  std::istringstream in(digits);
  std::vector<int64_t> values;
  for (int64_t v; in >> v;) values.push_back(v);
  return values;
}

inline bool Truthy(const std::string& text) { return text == "1" || text == "true" || text == "True"; }

inline void SetType(tfproto::NodeDef* def, const std::string& key, DType dtype) {
  (*def->mutable_attr())[key].set_type(static_cast<tfproto::DataType>(TFTypeOf(dtype)));
}
inline void SetInt(tfproto::NodeDef* def, const std::string& key, int64_t value) {
  (*def->mutable_attr())[key].set_i(value);
}
inline void SetBool(tfproto::NodeDef* def, const std::string& key, bool value) {
  (*def->mutable_attr())[key].set_b(value);
}
inline void SetString(tfproto::NodeDef* def, const std::string& key, const std::string& value) {
  (*def->mutable_attr())[key].set_s(value);
}
inline void SetInts(tfproto::NodeDef* def, const std::string& key, const std::vector<int64_t>& values) {
  auto* list = (*def->mutable_attr())[key].mutable_list();
  for (int64_t v : values) list->add_i(v);
}
inline void SetShape(tfproto::NodeDef* def, const std::string& key, const Shape& shape) {
  tfproto::TensorShapeProto* proto = (*def->mutable_attr())[key].mutable_shape();
  if (!shape.rank_known()) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape.dims()) proto->add_dim()->set_size(d == kUnknownDim ? -1 : d);
}

class Exporter;
/*! \brief Writes the TensorFlow node(s) of the node being exported; the last one is the node's result. */
using Writer = std::function<void(Exporter&)>;

/*! \brief What a writer sees of the node being exported, and how it adds TensorFlow nodes. */
class Exporter {
 public:
  /*! \brief Infers the graph's shapes and dtypes (the attributes TensorFlow's nodes need). */
  explicit Exporter(const Graph& graph);
  /*! \brief The GraphDef of every node, in topological order, through `writers`. */
  tfproto::GraphDef Run(const std::map<std::string, Writer>& writers);

  const Node& node() const { return *idx_[nid_].source; }
  /*! \brief The TensorFlow node written last. */
  tfproto::NodeDef* Last() { return def_.mutable_node(def_.node_size() - 1); }
  /*! \brief The node's attribute `key` (an error naming the node when it is not set). */
  const std::string& Attr(const std::string& key) const;
  std::string AttrOr(const std::string& key, const std::string& fallback) const;
  size_t num_inputs() const { return idx_[nid_].inputs.size(); }
  /*! \brief The TensorFlow reference of input i: "name" or "name:k". */
  std::string In(size_t i) const;
  /*! \brief Dtypes (an error when not inferred) and shapes of the node's inputs and outputs. */
  DType InType(size_t i) const { return Known(dtypes_[InEntry(i)], "input", i); }
  Shape InShape(size_t i) const { return shapes_[InEntry(i)]; }
  DType OutType(uint32_t j = 0) const { return Known(dtypes_[idx_.entry_id(nid_, j)], "output", j); }
  Shape OutShape(uint32_t j = 0) const { return shapes_[idx_.entry_id(nid_, j)]; }

  /*! \brief A node of TensorFlow op `op` named as ours (role empty: the node's result) or "<node>/<role>". */
  tfproto::NodeDef* Emit(const std::string& op, const std::vector<std::string>& inputs, const std::string& role = "");
  /*! \brief A Const node "<node>/<role>" holding `value`; returns its name. */
  std::string Const(const std::string& role, const NDArray& value);
  /*! \brief An int32 vector (or scalar) Const. */
  std::string IntsConst(const std::string& role, const std::vector<int64_t>& values, bool scalar = false);
  /*! \brief A scalar Const of `dtype`. */
  std::string ScalarConst(const std::string& role, double value, DType dtype);
  /*! \brief The node's reduction axes: its `axis` attribute, or every axis of input `input` when empty. */
  std::vector<int64_t> Axes(size_t input = 0) const;

 private:
  uint32_t InEntry(size_t i) const { return idx_.entry_id(idx_[nid_].inputs.at(i)); }
  DType Known(DType dtype, const char* what, size_t i) const;
  std::string Fresh(const std::string& base);
  void WriteVariable();

  Graph graph_;
  const IndexedGraph& idx_;
  ShapeVector shapes_;
  DTypeVector dtypes_;
  uint32_t nid_ = 0;
  tfproto::GraphDef def_;
  std::set<std::string> names_;
};

/*! \brief The writer of each op that has a TensorFlow form (export_writers.cc). */
const std::map<std::string, Writer>& Writers();

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_EXPORT_GRAPH_H_
