/*!
 * \file graph.h
 * \brief Graph (output entries + typed attributes) and IndexedGraph (its numbering).
 */
#ifndef IR_GRAPH_H_
#define IR_GRAPH_H_

#include <dmlc/any.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/base.h"
#include "ir/node.h"

namespace ir {

class IndexedGraph;

/*!
 * \brief A computation graph: the entries it computes and attributes passes attached.
 *
 * Attributes are typed values (dmlc::any). Vectors indexed by node id or entry id of the
 * IndexedGraph are declared as such in the graph attribute registry (graph_attr.h); the
 * pass manager drops them when a pass changes the graph without providing them again.
 */
class Graph {
 public:
  std::vector<NodeEntry> outputs;
  std::map<std::string, std::shared_ptr<dmlc::any>> attrs;

  Graph() = default;
  explicit Graph(std::vector<NodeEntry> outs) : outputs(std::move(outs)) {}
  Graph(const Graph& other) : outputs(other.outputs), attrs(other.attrs) {}
  Graph& operator=(const Graph& other);

  /*! \brief Attribute `key`; throws naming the key when missing or of another type. */
  template <typename T>
  const T& GetAttr(const std::string& key) const;
  /*! \brief Attribute `key`, or `def` when it is missing. */
  template <typename T>
  T GetAttrOr(const std::string& key, const T& def) const;
  bool HasAttr(const std::string& key) const { return attrs.count(key) != 0; }
  template <typename T>
  void SetAttr(const std::string& key, T value) {
    attrs[key] = std::make_shared<dmlc::any>(std::move(value));
  }
  /*! \brief Takes attribute `key` out (moved when no one else shares it, else copied). */
  template <typename T>
  T MoveCopyAttr(const std::string& key);

  /*! \brief The numbering of this graph's nodes, built on first use and cached. */
  const IndexedGraph& indexed_graph() const;

 private:
  mutable std::shared_ptr<const IndexedGraph> indexed_graph_;
  mutable std::mutex index_mutex_;
};

/*!
 * \brief A read-only numbering of a graph's nodes in deterministic topological order.
 *
 * Node ids follow a post-order depth-first walk from the outputs (inputs before control
 * dependencies, in order). Entry ids number every output of every node consecutively.
 */
class IndexedGraph {
 public:
  struct Entry {
    uint32_t node_id;
    uint32_t index;
    bool operator==(const Entry& o) const { return node_id == o.node_id && index == o.index; }
  };
  struct NodeInfo {
    const Node* source;
    /*! \brief Holds the node alive. */
    std::weak_ptr<Node> weak_ref;
    std::vector<Entry> inputs;
    std::vector<uint32_t> control_deps;
  };

  /*! \brief Builds the numbering; throws ir::Error on a cycle or an invalid entry index. */
  explicit IndexedGraph(const Graph& graph);

  size_t num_nodes() const { return nodes_.size(); }
  size_t num_node_entries() const { return entry_rptr_.back(); }
  const NodeInfo& operator[](uint32_t node_id) const { return nodes_[node_id]; }
  const NodeInfo& operator[](const Node* node) const { return nodes_[node_id(node)]; }
  /*! \brief Id of `node`; throws if it is not part of this graph. */
  uint32_t node_id(const Node* node) const;
  bool has_node(const Node* node) const { return node2id_.count(node) != 0; }
  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return entry_rptr_[node_id] + index; }
  uint32_t entry_id(const Entry& e) const { return entry_id(e.node_id, e.index); }
  uint32_t entry_id(const NodeEntry& e) const { return entry_id(node_id(e.node.get()), e.index); }
  /*! \brief Number of outputs of node `nid`. */
  uint32_t num_outputs(uint32_t nid) const { return entry_rptr_[nid + 1] - entry_rptr_[nid]; }
  /*! \brief Ids of the variable nodes, in node-id order. */
  const std::vector<uint32_t>& input_nodes() const { return input_nodes_; }
  /*! \brief Ids of the variable nodes that some op mutates (FMutateInputs). */
  const std::vector<uint32_t>& mutable_input_nodes() const { return mutable_input_nodes_; }
  const std::vector<Entry>& outputs() const { return outputs_; }
  /*! \brief For each entry: how many node inputs read it, plus one per graph output it is. */
  const std::vector<uint32_t>& entry_ref_counts() const { return entry_ref_counts_; }

 private:
  std::vector<NodeInfo> nodes_;
  std::vector<uint32_t> input_nodes_;
  std::vector<uint32_t> mutable_input_nodes_;
  std::vector<Entry> outputs_;
  std::vector<uint32_t> entry_rptr_;
  std::vector<uint32_t> entry_ref_counts_;
  std::unordered_map<const Node*, uint32_t> node2id_;
};

/*!
 * \brief A body of a control-flow node: a graph closed over its parameters.
 *
 * `params` are variable nodes in argument order (the node passes its arguments to them);
 * `graph.outputs` are the body's results. Everything a body reads from outside comes in through
 * a param, with one exception: a variable node that is not a param may be the mutated input of an
 * op (assign's target), and is then the session's persistent variable of that name.
 */
struct Subgraph {
  std::vector<NodePtr> params;
  Graph graph;
};

/*!
 * \brief Copies of `body`'s nodes named "<prefix>/<name>", its params replaced by `args`; returns
 * the copies of its outputs. A variable that is not a param (one the body mutates) stays itself.
 */
std::vector<NodeEntry> InlineSubgraph(const Subgraph& body, const std::vector<NodeEntry>& args,
                                      const std::string& prefix);

/*!
 * \brief `graph` on fresh copies of its nodes (inputs and control dependencies rewired to the copies,
 * same outputs and graph attributes), for a pass that edits nodes the caller may share with other
 * graphs; `copies` (optional) receives the copy of each node id of graph.indexed_graph().
 */
Graph CopyGraph(const Graph& graph, std::vector<NodePtr>* copies = nullptr);

/*! \brief Calls fvisit(node) for every node reachable from heads, inputs first (iterative). */
void PostOrderDFSVisit(const std::vector<NodeEntry>& heads, const std::function<void(const NodePtr&)>& fvisit);

namespace detail {
[[noreturn]] void ThrowAttrError(const std::string& key, bool missing, const std::type_info& want,
                                 const std::type_info& have);
}  // namespace detail

template <typename T>
const T& Graph::GetAttr(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) detail::ThrowAttrError(key, true, typeid(T), typeid(void));
  const dmlc::any& value = *it->second;
  if (value.type() != typeid(T)) detail::ThrowAttrError(key, false, typeid(T), value.type());
  return dmlc::get<T>(value);
}

template <typename T>
T Graph::GetAttrOr(const std::string& key, const T& def) const {
  return HasAttr(key) ? GetAttr<T>(key) : def;
}

template <typename T>
T Graph::MoveCopyAttr(const std::string& key) {
  const T& value = GetAttr<T>(key);
  auto it = attrs.find(key);
  std::shared_ptr<dmlc::any> holder = it->second;
  attrs.erase(it);
  if (holder.use_count() == 1) return std::move(dmlc::get<T>(*holder));
  return value;
}

}  // namespace ir

#endif  // IR_GRAPH_H_
