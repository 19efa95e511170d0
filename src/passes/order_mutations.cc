/*!
 * \file order_mutations.cc
 * \brief OrderMutations: reads of a variable happen before the ops that write it.
 *
 * Node ids are the execution order, and a post-order walk may place a reader of variable v
 * after an op M that mutates v (a gradient that reads a weight the optimizer update also
 * writes). For every such M and every other reader R of v that does not depend on M, the
 * pass adds the control dependency M <- R, so R reads the value from before the write.
 * Readers that depend on M read the written value, as their data flow says.
 *
 * The pass copies the graph's nodes before adding dependencies: the caller's nodes may be
 * shared with other graphs (a session runs many subgraphs of one set of nodes).
 */
#include <algorithm>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"

namespace ir {
namespace {

/*! \brief Edges between node ids, both ways, that can grow as dependencies are added. */
struct Dependencies {
  std::vector<std::vector<uint32_t>> preds, succs;

  explicit Dependencies(const IndexedGraph& idx) : preds(idx.num_nodes()), succs(idx.num_nodes()) {
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      for (const IndexedGraph::Entry& in : idx[nid].inputs) Add(in.node_id, nid);
      for (uint32_t dep : idx[nid].control_deps) Add(dep, nid);
    }
  }
  void Add(uint32_t from, uint32_t to) {
    preds[to].push_back(from);
    succs[from].push_back(to);
  }
  /*! \brief Nodes reachable from `start` along `edges` (start included). */
  static std::vector<bool> Reach(const std::vector<std::vector<uint32_t>>& edges, uint32_t start) {
    std::vector<bool> seen(edges.size(), false);
    std::vector<uint32_t> stack{start};
    seen[start] = true;
    while (!stack.empty()) {
      uint32_t nid = stack.back();
      stack.pop_back();
      for (uint32_t next : edges[nid]) {
        if (!seen[next]) {
          seen[next] = true;
          stack.push_back(next);
        }
      }
    }
    return seen;
  }
};

/*! \brief For each variable node: the op nodes reading it, in node-id order, each once. */
std::vector<std::vector<uint32_t>> VariableReaders(const IndexedGraph& idx) {
  std::vector<std::vector<uint32_t>> readers(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (const IndexedGraph::Entry& in : idx[nid].inputs) {
      std::vector<uint32_t>& list = readers[in.node_id];
      bool variable = idx[in.node_id].source->is_variable();
      if (variable && (list.empty() || list.back() != nid)) list.push_back(nid);
    }
  }
  return readers;
}

/*! \brief The control dependencies to add, per node id (mutator <- earlier readers). */
std::vector<std::vector<uint32_t>> ExtraDependencies(const IndexedGraph& idx) {
  std::vector<std::vector<uint32_t>> extra(idx.num_nodes());
  const auto* mutate_map = Op::FindAttr<FMutateInputs>("FMutateInputs");
  if (mutate_map == nullptr || idx.mutable_input_nodes().empty()) return extra;
  std::vector<std::vector<uint32_t>> readers = VariableReaders(idx);
  Dependencies deps(idx);
  for (uint32_t m = 0; m < idx.num_nodes(); ++m) {
    const Node* node = idx[m].source;
    if (node->is_variable() || !mutate_map->count(node->op())) continue;
    std::vector<bool> after_m = Dependencies::Reach(deps.succs, m);
    std::vector<bool> before_m = Dependencies::Reach(deps.preds, m);
    for (uint32_t input : (*mutate_map)[node->op()](node->attrs)) {
      uint32_t var = idx[m].inputs.at(input).node_id;
      if (!idx[var].source->is_variable()) continue;
      for (uint32_t reader : readers[var]) {
        if (after_m[reader] || before_m[reader]) continue;
        extra[m].push_back(reader);
        deps.Add(reader, m);
        before_m[reader] = true;
      }
    }
  }
  return extra;
}

/*! \brief A copy of the graph's nodes with `extra` control dependencies appended. */
Graph CopyWithDependencies(const Graph& graph, const std::vector<std::vector<uint32_t>>& extra) {
  std::vector<NodePtr> copies;
  Graph result = CopyGraph(graph, &copies);
  for (uint32_t nid = 0; nid < copies.size(); ++nid) {
    for (uint32_t dep : extra[nid]) copies[nid]->control_deps.push_back(copies[dep]);
  }
  return result;
}

Graph OrderMutations(Graph graph) {
  std::vector<std::vector<uint32_t>> extra = ExtraDependencies(graph.indexed_graph());
  bool any = std::any_of(extra.begin(), extra.end(), [](const std::vector<uint32_t>& deps) { return !deps.empty(); });
  return any ? CopyWithDependencies(graph, extra) : graph;
}

}  // namespace

IR_REGISTER_PASS(OrderMutations)
    .describe(
        "Adds control dependencies so every read of a variable that does not depend on a "
        "write of it runs before that write.")
    .set_change_graph(true)
    .set_body(OrderMutations);

}  // namespace ir
