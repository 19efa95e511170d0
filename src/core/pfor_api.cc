/*!
 * \file pfor_api.cc
 * \brief Pfor (a loop body closed into a pfor node), Jacobian, BatchJacobian, PerExampleGradients.
 */
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/vectorize.h"

namespace ir {

namespace {

/*! \brief Entry `e` seen from inside the body: a copy, a param capturing it, or itself. */
class BodyCloser {
 public:
  BodyCloser(const NodePtr& index, std::string name) : name_(std::move(name)) {
    body_ = std::make_shared<Subgraph>();
    body_->params.push_back(index);
    depends_.insert(index.get());
  }

  /*! \brief Puts `nodes` (but no variable) in the body even when they do not read the index. */
  void Include(const std::vector<NodePtr>& nodes) {
    for (const NodePtr& node : nodes) {
      if (!node->is_variable()) depends_.insert(node.get());
    }
  }

  /*! \brief Captures the outer `e` (the first capture is input 0 of the pfor node). */
  void CaptureOuter(const NodeEntry& e) { Capture(e); }

  std::shared_ptr<const Subgraph> Close(const std::vector<NodeEntry>& outputs) {
    PostOrderDFSVisit(outputs, [&](const NodePtr& node) {
      bool dep = depends_.count(node.get()) > 0;
      for (const NodeEntry& in : node->inputs) dep = dep || depends_.count(in.node.get());
      for (const NodePtr& c : node->control_deps) dep = dep || depends_.count(c.get());
      if (dep) depends_.insert(node.get());
    });
    for (const NodeEntry& e : outputs) body_->graph.outputs.push_back(Inner(e));
    return body_;
  }

  /*! \brief The outer entries the body's params after the index capture, in order. */
  const std::vector<NodeEntry>& captures() const { return captures_; }
  const std::vector<NodePtr>& outer_deps() const { return outer_deps_; }

 private:
  NodeEntry Inner(const NodeEntry& e) {
    if (e.node == body_->params[0]) return e;
    if (!depends_.count(e.node.get())) return Capture(e);
    auto it = copies_.find(e.node.get());
    if (it != copies_.end()) return NodeEntry{it->second, e.index};
    // Iterative copy: inputs first.
    std::vector<NodePtr> order;
    PostOrderDFSVisit({e}, [&](const NodePtr& node) {
      if (depends_.count(node.get()) && node != body_->params[0] && !copies_.count(node.get())) order.push_back(node);
    });
    for (const NodePtr& node : order) {
      NodePtr copy = Node::Create();
      copy->attrs = node->attrs;
      std::vector<uint32_t> mutated;
      static const auto& mutates = Op::GetAttr<FMutateInputs>("FMutateInputs");
      if (!node->is_variable() && mutates.count(node->op())) mutated = mutates[node->op()](node->attrs);
      for (uint32_t i = 0; i < node->inputs.size(); ++i) {
        const NodeEntry& in = node->inputs[i];
        // A variable the body writes stays the session's variable (as in cond and while_loop bodies).
        bool written = in.node->is_variable() && std::count(mutated.begin(), mutated.end(), i);
        copy->inputs.push_back(written ? in : Inner(in));
      }
      for (const NodePtr& c : node->control_deps) {
        if (depends_.count(c.get())) {
          copy->control_deps.push_back(Inner(NodeEntry{c, 0}).node);
        } else {
          outer_deps_.push_back(c);
        }
      }
      copies_[node.get()] = copy;
    }
    return NodeEntry{copies_.at(e.node.get()), e.index};
  }

  NodeEntry Capture(const NodeEntry& e) {
    for (size_t i = 0; i < captures_.size(); ++i) {
      if (captures_[i] == e) return NodeEntry{body_->params[i + 1], 0};
    }
    NodePtr param = Node::CreateVariable(StrCat(name_, "/capture_", captures_.size()));
    body_->params.push_back(param);
    captures_.push_back(e);
    return NodeEntry{param, 0};
  }

  std::string name_;
  std::shared_ptr<Subgraph> body_;
  std::unordered_set<const Node*> depends_;
  std::unordered_map<const Node*, NodePtr> copies_;
  std::vector<NodeEntry> captures_;
  std::vector<NodePtr> outer_deps_;
};

std::string ShapeText(std::initializer_list<int64_t> dims) {
  std::string text = "(";
  size_t i = 0;
  for (int64_t d : dims) text += (i++ ? "," : "") + std::to_string(d);
  return text + ")";
}

}  // namespace

std::vector<NodeEntry> ClosePfor(const NodePtr& index, const std::vector<NodeEntry>& outputs,
                                 const std::vector<NodePtr>& inside, const NodeEntry* n_from,
                                 std::map<std::string, std::string> attrs, const std::string& name) {
  IR_CHECK(!outputs.empty()) << "Pfor '" << name << "': the body returns no value";
  BodyCloser closer(index, name);
  closer.Include(inside);
  if (n_from != nullptr) {
    closer.CaptureOuter(*n_from);
    attrs["n_from"] = "0";
  }
  std::shared_ptr<const Subgraph> closed = closer.Close(outputs);
  NodePtr loop = Node::Create(Op::Get("pfor"), name, attrs, closer.captures(), {closed});
  loop->control_deps = closer.outer_deps();
  std::vector<NodeEntry> result;
  for (uint32_t i = 0; i < outputs.size(); ++i) result.push_back(NodeEntry{loop, i});
  return result;
}

std::vector<NodeEntry> Pfor(int64_t n, const std::function<std::vector<NodeEntry>(const NodeEntry& index)>& body,
                            const std::string& name) {
  IR_CHECK(n >= 0) << "Pfor '" << name << "': the iteration count must be >= 0, got " << n;
  NodePtr index = Node::CreateVariable(name + "/index", {{"__dtype__", "int32"}, {"__shape__", "()"}});
  return ClosePfor(index, body(NodeEntry{index, 0}), {}, nullptr, {{"n", std::to_string(n)}}, name);
}

std::vector<NodeEntry> Jacobian(const NodeEntry& y, const std::vector<NodeEntry>& xs, int64_t y_size,
                                const std::string& name) {
  NodeEntry flat = MakeNode("reshape", name + "/flat_y", {y}, {{"shape", "(-1)"}});
  return Pfor(
      y_size,
      [&](const NodeEntry& i) {
        NodeEntry yi = MakeNode("gather", name + "/y_i", {flat, i});
        return Gradients({yi}, xs);
      },
      name);
}

NodeEntry BatchJacobian(const NodeEntry& y, const NodeEntry& x, int64_t y_row_size, int x_rank,
                        const std::string& name) {
  IR_CHECK(x_rank >= 1) << "BatchJacobian '" << name << "': x needs a batch axis, got rank " << x_rank;
  NodeEntry rows = MakeNode("reshape", name + "/rows", {y}, {{"shape", ShapeText({-1, y_row_size})}});
  NodeEntry stacked = Pfor(
      y_row_size,
      [&](const NodeEntry& j) {
        NodeEntry column = MakeNode("gather", name + "/column", {rows, j}, {{"axis", "1"}});
        return Gradients({column}, {x});
      },
      name)[0];
  std::string perm = "(1,0";
  for (int a = 2; a <= x_rank; ++a) perm += "," + std::to_string(a);
  return MakeNode("transpose", name + "/batch_major", {stacked}, {{"axes", perm + ")"}});
}

std::vector<NodeEntry> PerExampleGradients(
    const std::function<NodeEntry(const std::vector<NodeEntry>& examples)>& loss_fn,
    const std::vector<NodeEntry>& examples, const std::vector<NodeEntry>& params, int64_t n, const std::string& name) {
  return Pfor(
      n,
      [&](const NodeEntry& i) {
        std::vector<NodeEntry> rows;
        for (size_t k = 0; k < examples.size(); ++k) {
          NodeEntry row = MakeNode("gather", StrCat(name, "/example_", k), {examples[k], i});
          rows.push_back(MakeNode("expand_dims", StrCat(name, "/example_", k, "_batch"), {row}, {{"axis", "0"}}));
        }
        return Gradients({loss_fn(rows)}, params);
      },
      name);
}

}  // namespace ir
