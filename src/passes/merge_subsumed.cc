/*!
 * \file merge_subsumed.cc
 * \brief Simplify's last step: FSubsumedBy (ir/subsume.h). A node N whose op declares it, and a
 * sibling S (another op's node reading N's first input) that computes N's value once widened: N's
 * uses read that output of S widened instead, so one kernel computes both.
 *
 * Safe when S does not depend on N (else N's users would come before S: a cycle), N waits on
 * nothing (a control dependency would be lost) and neither OpActs (stateful, mutating, raising). The
 * graph's op nodes are copied (the caller's nodes may be shared with other graphs); variables are
 * kept, so the graph's inputs stay the same nodes.
 */
#include "passes/merge_subsumed.h"

#include <map>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/subsume.h"

namespace ir {
namespace rewrite {
namespace {

/*! \brief An op node that only computes its outputs (OpActs: the nodes Simplify may touch). */
bool Pure(const Node& node) { return !node.is_variable() && !OpActs(node); }

/*! \brief Whether node `to` is reachable from `from` along inputs and control dependencies (from == to counts). */
bool DependsOn(const IndexedGraph& idx, uint32_t from, uint32_t to) {
  std::vector<bool> seen(idx.num_nodes(), false);
  std::vector<uint32_t> stack{from};
  seen[from] = true;
  while (!stack.empty()) {
    uint32_t nid = stack.back();
    stack.pop_back();
    if (nid == to) return true;
    auto visit = [&](uint32_t next) {
      if (!seen[next]) {
        seen[next] = true;
        stack.push_back(next);
      }
    };
    for (const IndexedGraph::Entry& in : idx[nid].inputs) visit(in.node_id);
    for (uint32_t dep : idx[nid].control_deps) visit(dep);
  }
  return false;
}

/*! \brief A subsumed node's replacement: output `output` of the node `sibling` (widened). */
struct Merge {
  uint32_t sibling;
  uint32_t output;
};

}  // namespace

std::vector<NodeEntry> MergeSubsumed(const std::vector<NodeEntry>& outputs, std::vector<std::string>* merged) {
  static const auto* subsumed_by = Op::FindAttr<FSubsumedBy>("FSubsumedBy");
  if (subsumed_by == nullptr) return outputs;
  Graph graph(outputs);
  const IndexedGraph& idx = graph.indexed_graph();
  // Simplify runs this on every graph: most have no node to merge, and need no readers map.
  bool any = false;
  for (uint32_t nid = 0; nid < idx.num_nodes() && !any; ++nid) {
    any = !idx[nid].source->is_variable() && subsumed_by->count(idx[nid].source->op());
  }
  if (!any) return outputs;
  // Readers of each entry, to find siblings: the op nodes reading a node's first input.
  std::unordered_map<uint64_t, std::vector<uint32_t>> readers;
  auto key = [](const IndexedGraph::Entry& e) { return (uint64_t{e.node_id} << 32) | e.index; };
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (const IndexedGraph::Entry& in : idx[nid].inputs) readers[key(in)].push_back(nid);
  }
  std::map<uint32_t, Merge> merges;       // subsumed node -> its replacement
  std::map<uint32_t, NodeAttrs> widened;  // sibling -> its new attributes
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable() || node.inputs.empty() || !subsumed_by->count(node.op())) continue;
    if (!node.control_deps.empty() || node.num_outputs() != 1 || !Pure(node) || widened.count(nid)) continue;
    for (uint32_t sid : readers[key(idx[nid].inputs[0])]) {
      const Node& sibling = *idx[sid].source;
      if (sid == nid || merges.count(sid) || sibling.op() == node.op() || !Pure(sibling)) continue;
      // A sibling already widened for another node is asked as it will be (its new attributes).
      NodePtr probe;
      if (widened.count(sid)) {
        probe = Node::Create();
        probe->attrs = widened[sid];
        probe->inputs = sibling.inputs;
      }
      NodeAttrs attrs;
      uint32_t output = 0;
      if (!(*subsumed_by)[node.op()](node, probe ? *probe : sibling, &attrs, &output)) continue;
      if (output >= sibling.num_outputs() || DependsOn(idx, sid, nid)) continue;
      merges[nid] = Merge{sid, output};
      widened[sid] = attrs;
      break;
    }
  }
  if (merges.empty()) return outputs;

  std::vector<NodePtr> copies(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* source = idx[nid].source;
    if (source->is_variable()) {
      copies[nid] = idx[nid].weak_ref.lock();
      continue;
    }
    copies[nid] = Node::Create();
    copies[nid]->attrs = widened.count(nid) ? widened[nid] : source->attrs;
  }
  auto entry = [&](uint32_t node_id, uint32_t index) {
    auto it = merges.find(node_id);
    return it == merges.end() ? NodeEntry{copies[node_id], index}
                              : NodeEntry{copies[it->second.sibling], it->second.output};
  };
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (idx[nid].source->is_variable()) continue;
    Node* copy = copies[nid].get();
    for (const IndexedGraph::Entry& in : idx[nid].inputs) copy->inputs.push_back(entry(in.node_id, in.index));
    for (uint32_t dep : idx[nid].control_deps) {
      // A wait on a subsumed node waits on its sibling, which now computes its value.
      auto it = merges.find(dep);
      copy->control_deps.push_back(copies[it == merges.end() ? dep : it->second.sibling]);
    }
  }
  for (const auto& [nid, merge] : merges) {
    copies[merge.sibling]->ReparseAttrs();
    merged->push_back(idx[nid].source->attrs.name + " into " + idx[merge.sibling].source->attrs.name);
  }
  std::vector<NodeEntry> result;
  for (const IndexedGraph::Entry& out : idx.outputs()) result.push_back(entry(out.node_id, out.index));
  return result;
}

}  // namespace rewrite
}  // namespace ir
