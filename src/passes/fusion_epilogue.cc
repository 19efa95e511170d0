/*!
 * \file fusion_epilogue.cc
 * \brief Epilogue fusion: a map group reading the output of a kOutEWiseFusable node (matmul,
 * conv2d) takes that node as its anchor, so bias adds, activations and residual adds (and
 * their gradients) run inside the anchor's kernel instead of re-reading its output.
 */
#include <algorithm>
#include <unordered_set>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "passes/fusion_plan.h"

namespace ir {
namespace fusion {
namespace {

class EpiloguePlanner {
 public:
  EpiloguePlanner(const Graph& graph, int fmax, int max_size, Plan* plan)
      : idx_(graph.indexed_graph()),
        shapes_(graph.GetAttr<ShapeVector>("shape")),
        dtypes_(graph.GetAttr<DTypeVector>("dtype")),
        fmax_(fmax),
        max_size_(max_size),
        plan_(plan),
        consumers_(idx_.num_nodes()) {
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      for (const auto& e : idx_[nid].inputs) consumers_[e.node_id].push_back(nid);
    }
    for (const auto& e : idx_.outputs()) graph_outputs_.insert(idx_.entry_id(e));
  }

  void Run() {
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      if (IsAnchor(nid)) Anchor(nid);
    }
  }

 private:
  std::string Name(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    return StrCat("'", node->attrs.name, "' (", node->op()->name, ")");
  }

  bool IsAnchor(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    if (node->is_variable() || plan_->group_of[nid] >= 0 || node->num_outputs() != 1) return false;
    if (Op::GetAttr<TOpPattern>("TOpPattern").get(node->op(), kOpaque) != kOutEWiseFusable) return false;
    // Its inputs are kernel arguments: a constant folded into the group would have no buffer.
    for (const auto& e : idx_[nid].inputs) {
      if (plan_->foldable[e.node_id]) return false;
    }
    return shapes_[idx_.entry_id(nid, 0)].is_known();
  }

  // A reduction that sums nothing (its output has its input's shape and dtype) passes its input on.
  bool IsIdentity(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    if (node->is_variable() || plan_->group_of[nid] >= 0 || node->num_outputs() != 1 || idx_[nid].inputs.empty()) {
      return false;
    }
    if (Op::GetAttr<TOpPattern>("TOpPattern").get(node->op(), kOpaque) != kCommReduce) return false;
    uint32_t in = idx_.entry_id(idx_[nid].inputs[0]), out = idx_.entry_id(nid, 0);
    return shapes_[in].is_known() && shapes_[in] == shapes_[out] && dtypes_[in] == dtypes_[out];
  }

  // The node whose value the epilogue reads: the anchor, or the last identity its only consumers make.
  uint32_t PassedThrough(uint32_t nid, std::vector<uint32_t>* identities) const {
    while (consumers_[nid].size() == 1 && !graph_outputs_.count(idx_.entry_id(nid, 0))) {
      uint32_t next = consumers_[nid][0];
      if (!IsIdentity(next) || idx_[next].inputs[0].node_id != nid) break;
      identities->push_back(next);
      nid = next;
    }
    return nid;
  }

  // The first map group (by consumer order) reading the anchor's output over its shape.
  int EpilogueOf(uint32_t nid) const {
    for (uint32_t c : consumers_[nid]) {
      int g = plan_->group_of[c];
      if (g < 0) continue;
      const Group& group = plan_->groups[g];
      if (group.kind == "map" && group.anchor < 0 && group.domain == shapes_[idx_.entry_id(nid, 0)]) return g;
    }
    return -1;
  }

  bool WritesVariable(const std::vector<uint32_t>& members) const {
    const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
    if (mutate == nullptr) return false;
    return std::any_of(members.begin(), members.end(), [&](uint32_t m) {
      const Node* node = idx_[m].source;
      return mutate->count(node->op()) && !(*mutate)[node->op()](node->attrs).empty();
    });
  }

  std::string Refusal(const Group& merged) const {
    const std::vector<uint32_t>& members = merged.members;
    if (static_cast<int>(members.size()) > max_size_) return StrCat("group size ", members.size(), " > ", max_size_);
    std::string bound = InputBoundRefusal(shapes_, GroupInputs(idx_, merged, plan_->foldable), fmax_);
    if (!bound.empty()) return bound;
    if (WritesVariable(members)) return "the epilogue writes a variable";
    return "";
  }

  void Anchor(uint32_t nid) {
    std::vector<uint32_t> identities;
    int g = EpilogueOf(PassedThrough(nid, &identities));
    if (g < 0) return;
    Group& group = plan_->groups[g];
    Group merged = group;
    merged.kind = "epilogue";
    merged.anchor = static_cast<int>(nid);
    merged.identities = identities;
    identities.push_back(nid);
    for (uint32_t m : identities)
      merged.members.insert(std::upper_bound(merged.members.begin(), merged.members.end(), m), m);
    std::string why = Refusal(merged);
    if (why.empty()) {
      std::swap(group, merged);
      for (uint32_t m : identities) plan_->group_of[m] = g;
      std::vector<bool> cyclic;
      UnitOrder(idx_, *plan_, &cyclic);
      if (std::find(cyclic.begin(), cyclic.end(), true) == cyclic.end()) return;
      std::swap(group, merged);  // a path leaves the anchor and re-enters the group elsewhere
      for (uint32_t m : identities) plan_->group_of[m] = -1;
      why = "a path leaves the group and comes back";
    }
    plan_->log.push_back(
        StrCat("cannot anchor the group of ", Name(group.members.front()), " to ", Name(nid), ": ", why));
  }

  const IndexedGraph& idx_;
  const ShapeVector& shapes_;
  const DTypeVector& dtypes_;
  int fmax_;
  int max_size_;
  Plan* plan_;
  std::vector<std::vector<uint32_t>> consumers_;
  std::unordered_set<uint32_t> graph_outputs_;
};

}  // namespace

std::vector<uint32_t> GroupInputs(const IndexedGraph& idx, const Group& group, const std::vector<bool>& foldable) {
  if (group.identities.empty()) return ExternalInputs(idx, group.members, foldable);
  std::unordered_set<uint32_t> inside(group.members.begin(), group.members.end());
  std::vector<uint32_t> inputs;
  std::unordered_set<uint32_t> seen;
  for (uint32_t nid : group.members) {
    bool identity = std::find(group.identities.begin(), group.identities.end(), nid) != group.identities.end();
    for (size_t i = 0; i < (identity ? 1 : idx[nid].inputs.size()); ++i) {
      const auto& e = idx[nid].inputs[i];
      if (inside.count(e.node_id) || foldable[e.node_id]) continue;
      if (seen.insert(idx.entry_id(e)).second) inputs.push_back(idx.entry_id(e));
    }
  }
  return inputs;
}

void AnchorEpilogues(const Graph& graph, int fmax, int max_size, Plan* plan) {
  EpiloguePlanner(graph, fmax, max_size, plan).Run();
}

}  // namespace fusion
}  // namespace ir
