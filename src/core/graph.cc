/*!
 * \file graph.cc
 * \brief Graph attribute access and the IndexedGraph numbering.
 */
#include "ir/graph.h"

#include <algorithm>
#include <unordered_set>

#include "core/json_util.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {

namespace detail {

void ThrowAttrError(const std::string& key, bool missing, const std::type_info& want, const std::type_info& have) {
  if (missing) throw Error(StrCat("graph has no attribute '", key, "'"));
  throw Error(StrCat("graph attribute '", key, "' has type ", TypeName(have), ", requested as ", TypeName(want)));
}
}  // namespace detail

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) {
    outputs = other.outputs;
    attrs = other.attrs;
    std::lock_guard<std::mutex> lock(index_mutex_);
    indexed_graph_.reset();
  }
  return *this;
}

const IndexedGraph& Graph::indexed_graph() const {
  std::lock_guard<std::mutex> lock(index_mutex_);
  if (!indexed_graph_) indexed_graph_ = std::make_shared<const IndexedGraph>(*this);
  return *indexed_graph_;
}

namespace {

std::string NodeLabel(const Node* node) {
  return StrCat("'", node->attrs.name, "' (", node->is_variable() ? "variable" : node->op()->name, ")");
}

}  // namespace

Graph CopyGraph(const Graph& graph, std::vector<NodePtr>* copies_out) {
  const IndexedGraph& idx = graph.indexed_graph();
  // Create every copy first: a control dependency may point to a node numbered later.
  std::vector<NodePtr> copies(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    copies[nid] = Node::Create();
    copies[nid]->attrs = idx[nid].source->attrs;
  }
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    Node* copy = copies[nid].get();
    for (const IndexedGraph::Entry& in : idx[nid].inputs) {
      copy->inputs.push_back(NodeEntry{copies[in.node_id], in.index});
    }
    for (uint32_t dep : idx[nid].control_deps) copy->control_deps.push_back(copies[dep]);
  }
  Graph result;
  for (const IndexedGraph::Entry& out : idx.outputs()) {
    result.outputs.push_back(NodeEntry{copies[out.node_id], out.index});
  }
  result.attrs = graph.attrs;
  if (copies_out != nullptr) *copies_out = std::move(copies);
  return result;
}

void PostOrderDFSVisit(const std::vector<NodeEntry>& heads, const std::function<void(const NodePtr&)>& fvisit) {
  enum State : char { kOnStack = 1, kDone = 2 };
  std::unordered_map<const Node*, char> state;
  struct Frame {
    NodePtr node;
    size_t next;
  };
  std::vector<Frame> stack;
  for (const NodeEntry& head : heads) {
    IR_CHECK(head.node != nullptr) << "graph output is a null entry";
    if (state.count(head.node.get())) continue;
    stack.push_back(Frame{head.node, 0});
    state[head.node.get()] = kOnStack;
    while (!stack.empty()) {
      Frame& top = stack.back();
      const Node* node = top.node.get();
      size_t num_deps = node->inputs.size() + node->control_deps.size();
      if (top.next == num_deps) {
        NodePtr done = top.node;
        stack.pop_back();
        state[done.get()] = kDone;
        fvisit(done);
        continue;
      }
      size_t i = top.next++;
      NodePtr child = i < node->inputs.size() ? node->inputs[i].node : node->control_deps[i - node->inputs.size()];
      IR_CHECK(child != nullptr) << "node " << NodeLabel(node) << " has a null input " << i;
      auto it = state.find(child.get());
      if (it == state.end()) {
        state[child.get()] = kOnStack;
        stack.push_back(Frame{child, 0});
      } else if (it->second == kOnStack) {
        std::vector<std::string> cycle;
        size_t start = 0;
        while (stack[start].node != child) ++start;
        for (size_t k = start; k < stack.size(); ++k) cycle.push_back(NodeLabel(stack[k].node.get()));
        cycle.push_back(NodeLabel(child.get()));
        throw Error(StrCat("graph has a cycle: ", Join(cycle, " -> ")));
      }
    }
  }
}

IndexedGraph::IndexedGraph(const Graph& graph) {
  entry_rptr_.push_back(0);
  const auto* mutate_map = Op::FindAttr<FMutateInputs>("FMutateInputs");
  std::unordered_set<uint32_t> mutable_inputs;
  PostOrderDFSVisit(graph.outputs, [&](const NodePtr& node) {
    uint32_t nid = static_cast<uint32_t>(nodes_.size());
    node2id_[node.get()] = nid;
    NodeInfo info{node.get(), node, {}, {}};
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const NodeEntry& in = node->inputs[i];
      uint32_t in_id = node2id_.at(in.node.get());
      IR_CHECK(in.index < num_outputs(in_id))
          << "node " << NodeLabel(node.get()) << " input " << i << " reads output " << in.index << " of node "
          << NodeLabel(in.node.get()) << ", which has " << num_outputs(in_id) << " output(s)";
      info.inputs.push_back(Entry{in_id, in.index});
    }
    for (const NodePtr& dep : node->control_deps) info.control_deps.push_back(node2id_.at(dep.get()));
    if (node->is_variable()) input_nodes_.push_back(nid);
    if (mutate_map != nullptr && mutate_map->count(node->op())) {
      for (uint32_t i : (*mutate_map)[node->op()](node->attrs)) {
        IR_CHECK(i < info.inputs.size()) << "node " << NodeLabel(node.get()) << " declares it mutates missing input "
                                         << i;
        mutable_inputs.insert(info.inputs[i].node_id);
      }
    }
    entry_rptr_.push_back(entry_rptr_.back() + node->num_outputs());
    nodes_.push_back(std::move(info));
  });
  for (uint32_t nid : input_nodes_) {
    if (mutable_inputs.count(nid)) mutable_input_nodes_.push_back(nid);
  }
  entry_ref_counts_.assign(num_node_entries(), 0);
  for (const NodeInfo& info : nodes_) {
    for (const Entry& e : info.inputs) ++entry_ref_counts_[entry_id(e)];
  }
  for (const NodeEntry& out : graph.outputs) {
    uint32_t nid = node_id(out.node.get());
    IR_CHECK(out.index < num_outputs(nid))
        << "graph output reads output " << out.index << " of node " << NodeLabel(out.node.get()) << ", which has "
        << num_outputs(nid) << " output(s)";
    outputs_.push_back(Entry{nid, out.index});
    ++entry_ref_counts_[entry_id(nid, out.index)];
  }
}

uint32_t IndexedGraph::node_id(const Node* node) const {
  auto it = node2id_.find(node);
  IR_CHECK(it != node2id_.end()) << "node '" << (node ? node->attrs.name : "<null>") << "' is not part of this graph";
  return it->second;
}

}  // namespace ir
