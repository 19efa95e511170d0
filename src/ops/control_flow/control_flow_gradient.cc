/*!
 * \file control_flow_gradient.cc
 * \brief Gradients of control-flow bodies that never run a node with effects again (see
 * control_flow_gradient.h).
 */
#include "ops/control_flow/control_flow_gradient.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/autodiff.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

/*!
 * \brief Rewrites a gradient built from a body's own nodes so that it holds none of them with
 * effects: waits on those are dropped, their values become params (the saved values), and the
 * nodes reading them are copied.
 */
class SavedValues {
 public:
  SavedValues(const Subgraph& body, std::string name) : name_(std::move(name)) {
    PostOrderDFSVisit(body.graph.outputs, [&](const NodePtr& node) {
      if (HasEffects(*node)) effects_.insert(node.get());
    });
  }

  /*! \brief `grads` rewritten; params() and saved() then list the values it reads from the forward run. */
  std::vector<NodeEntry> Rewrite(const std::vector<NodeEntry>& grads) {
    Graph graph(grads);
    const IndexedGraph& idx = graph.indexed_graph();
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      NodePtr node = idx[nid].weak_ref.lock();
      if (node->is_variable() || effects_.count(node.get())) continue;
      std::vector<NodeEntry> inputs;
      std::vector<NodePtr> deps;
      for (const NodeEntry& in : node->inputs) inputs.push_back(Map(in));
      for (const NodePtr& dep : node->control_deps) {
        if (!effects_.count(dep.get())) deps.push_back(Map(NodeEntry{dep, 0}).node);  // the forward run did the rest
      }
      if (inputs == node->inputs && deps == node->control_deps) continue;
      NodePtr copy = Node::Create();
      copy->attrs = node->attrs;
      copy->inputs = std::move(inputs);
      copy->control_deps = std::move(deps);
      copies_[node.get()] = copy;
    }
    std::vector<NodeEntry> result;
    for (const NodeEntry& g : grads) result.push_back(Map(g));
    return result;
  }

  const std::vector<NodePtr>& params() const { return params_; }
  const std::vector<NodeEntry>& saved() const { return saved_; }

 private:
  NodeEntry Map(const NodeEntry& e) {
    if (effects_.count(e.node.get())) return Saved(e);
    auto it = copies_.find(e.node.get());
    return it == copies_.end() ? e : NodeEntry{it->second, e.index};
  }

  /*! \brief The param standing for forward value `e` (made on first use). */
  NodeEntry Saved(const NodeEntry& e) {
    auto key = std::make_pair(e.node.get(), e.index);
    auto it = by_entry_.find(key);
    if (it != by_entry_.end()) return NodeEntry{params_[it->second], 0};
    by_entry_[key] = params_.size();
    params_.push_back(Node::CreateVariable(StrCat(name_, "/saved_", params_.size())));
    saved_.push_back(e);
    return NodeEntry{params_.back(), 0};
  }

  std::string name_;
  std::unordered_set<const Node*> effects_;
  std::unordered_map<const Node*, NodePtr> copies_;
  std::map<std::pair<const Node*, uint32_t>, size_t> by_entry_;
  std::vector<NodePtr> params_;
  std::vector<NodeEntry> saved_;
};

}  // namespace

bool HasEffects(const Node& node) {
  if (node.is_variable()) return false;
  const auto* mutates = Op::FindAttr<FMutateInputs>("FMutateInputs");
  const auto* stateful = Op::FindAttr<TIsStateful>("TIsStateful");
  const auto* replayable = Op::FindAttr<TReplayable>("TReplayable");
  if (mutates != nullptr && mutates->count(node.op())) return true;
  if (stateful != nullptr && stateful->get(node.op(), false) &&
      !(replayable != nullptr && replayable->get(node.op(), false))) {
    return true;
  }
  for (const auto& body : node.attrs.subgraphs) {
    if (BodyHasEffects(*body)) return true;
  }
  return false;
}

bool BodyHasEffects(const Subgraph& body) {
  bool effects = false;
  PostOrderDFSVisit(body.graph.outputs, [&](const NodePtr& node) { effects = effects || HasEffects(*node); });
  return effects;
}

std::set<std::string> WrittenVariables(const Subgraph& body) {
  const auto* mutates = Op::FindAttr<FMutateInputs>("FMutateInputs");
  std::set<std::string> names;
  PostOrderDFSVisit(body.graph.outputs, [&](const NodePtr& node) {
    if (node->is_variable()) return;
    if (mutates != nullptr && mutates->count(node->op())) {
      for (uint32_t i : (*mutates)[node->op()](node->attrs)) {
        if (i < node->inputs.size() && node->inputs[i].node->is_variable())
          names.insert(node->inputs[i].node->attrs.name);
      }
    }
    for (const auto& nested : node->attrs.subgraphs) {
      std::set<std::string> inner = WrittenVariables(*nested);
      names.insert(inner.begin(), inner.end());
    }
  });
  return names;
}

BodyResult SplitSaved(BodyResult* result, size_t n) {
  BodyResult saved;
  if (result->outputs.size() <= n) return saved;
  saved.outputs.assign(result->outputs.begin() + n, result->outputs.end());
  result->outputs.resize(n);
  if (result->records.size() > n) {
    saved.records.assign(result->records.begin() + n, result->records.end());
    result->records.resize(n);
  }
  return saved;
}

SavedRuns* ForwardRuns(const OpContext& ctx, const NodeAttrs& attrs) {
  if (!ctx.forward) return nullptr;
  auto* runs = dynamic_cast<SavedRuns*>(ctx.forward.get());
  IR_CHECK(runs != nullptr) << NodeDesc(attrs) << ": the record on its forward input is not its forward node's";
  return runs;
}

std::vector<const NodeAttrs*> SavedValueReaders(const Subgraph& gradient, const Subgraph& saving, size_t n) {
  std::vector<const NodeAttrs*> readers(saving.graph.outputs.size(), nullptr);
  size_t num_saved = readers.size() - std::min(n, readers.size());
  if (num_saved == 0 || gradient.params.size() < num_saved) return readers;
  std::unordered_map<const Node*, size_t> saved;  // saved param -> output of `saving`
  for (size_t j = 0; j < num_saved; ++j) saved[gradient.params[gradient.params.size() - num_saved + j].get()] = n + j;
  const auto* forward_input = Op::FindAttr<FForwardInput>("FForwardInput");
  PostOrderDFSVisit(gradient.graph.outputs, [&](const NodePtr& node) {
    if (forward_input == nullptr || node->is_variable() || !forward_input->count(node->op())) return;
    int k = (*forward_input)[node->op()](node->attrs, static_cast<uint32_t>(node->inputs.size()));
    if (k < 0 || static_cast<size_t>(k) >= node->inputs.size()) return;
    auto it = saved.find(node->inputs[k].node.get());
    if (it != saved.end() && readers[it->second] == nullptr) readers[it->second] = &node->attrs;
  });
  return readers;
}

BodyGradient DifferentiateBody(const Subgraph& body, const std::string& name, size_t first_x,
                               std::vector<NodePtr> head_params, const std::vector<NodeEntry>& heads) {
  auto grad = std::make_shared<Subgraph>();
  grad->params = body.params;
  grad->params.insert(grad->params.end(), head_params.begin(), head_params.end());
  std::vector<NodeEntry> xs;
  for (size_t i = first_x; i < body.params.size(); ++i) xs.push_back(NodeEntry{body.params[i], 0});
  BodyGradient result;
  bool effects = BodyHasEffects(body);
  // Gradients applies no rewrite rule, so the gradient reads the body's own nodes (saved values below).
  std::vector<NodeEntry> grads = Gradients(body.graph.outputs, xs, heads);
  if (!effects) {
    grad->graph.outputs = std::move(grads);
    result.gradient = grad;
    return result;
  }
  SavedValues saved(body, name);
  grad->graph.outputs = saved.Rewrite(grads);
  grad->params.insert(grad->params.end(), saved.params().begin(), saved.params().end());
  result.gradient = grad;
  if (!saved.saved().empty()) {
    auto forward = std::make_shared<Subgraph>();
    forward->params = body.params;
    forward->graph.outputs = body.graph.outputs;
    forward->graph.outputs.insert(forward->graph.outputs.end(), saved.saved().begin(), saved.saved().end());
    result.forward = forward;
  }
  return result;
}

BodyGradient GradientBody(const Subgraph& body, const std::string& name) {
  std::vector<NodePtr> head_params;
  std::vector<NodeEntry> heads;
  for (size_t j = 0; j < body.graph.outputs.size(); ++j) {
    head_params.push_back(Node::CreateVariable(StrCat(name, "/head_grad_", j)));
    heads.push_back(NodeEntry{head_params.back(), 0});
  }
  return DifferentiateBody(body, name, 0, std::move(head_params), heads);
}

}  // namespace op
}  // namespace ir
