/*!
 * \file fusion_epilogue.cc
 * \brief Epilogue fusion: a map group reading the output of a kOutEWiseFusable node (matmul,
 * conv2d) takes that node as its anchor, so bias adds, activations and residual adds (and
 * their gradients) run inside the anchor's kernel instead of re-reading its output.
 */
#include <algorithm>

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
        fmax_(fmax),
        max_size_(max_size),
        plan_(plan),
        consumers_(idx_.num_nodes()) {
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      for (const auto& e : idx_[nid].inputs) consumers_[e.node_id].push_back(nid);
    }
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

  std::string Refusal(const std::vector<uint32_t>& members) const {
    if (static_cast<int>(members.size()) > max_size_) return StrCat("group size ", members.size(), " > ", max_size_);
    size_t inputs = ExternalInputs(idx_, members, plan_->foldable).size();
    if (static_cast<int>(inputs) > fmax_) return StrCat("unique inputs ", inputs, " > F_max ", fmax_);
    if (WritesVariable(members)) return "the epilogue writes a variable";
    return "";
  }

  void Anchor(uint32_t nid) {
    int g = EpilogueOf(nid);
    if (g < 0) return;
    Group& group = plan_->groups[g];
    std::vector<uint32_t> members = group.members;
    members.insert(std::upper_bound(members.begin(), members.end(), nid), nid);
    std::string why = Refusal(members);
    if (why.empty()) {
      std::vector<uint32_t> old = group.members;
      group.members = members;
      plan_->group_of[nid] = g;
      std::vector<bool> cyclic;
      UnitOrder(idx_, *plan_, &cyclic);
      if (std::find(cyclic.begin(), cyclic.end(), true) == cyclic.end()) {
        group.kind = "epilogue";
        group.anchor = static_cast<int>(nid);
        return;
      }
      group.members = old;  // a path leaves the anchor and re-enters the group elsewhere
      plan_->group_of[nid] = -1;
      why = "a path leaves the group and comes back";
    }
    plan_->log.push_back(
        StrCat("cannot anchor the group of ", Name(group.members.front()), " to ", Name(nid), ": ", why));
  }

  const IndexedGraph& idx_;
  const ShapeVector& shapes_;
  int fmax_;
  int max_size_;
  Plan* plan_;
  std::vector<std::vector<uint32_t>> consumers_;
};

}  // namespace

void AnchorEpilogues(const Graph& graph, int fmax, int max_size, Plan* plan) {
  EpiloguePlanner(graph, fmax, max_size, plan).Run();
}

}  // namespace fusion
}  // namespace ir
