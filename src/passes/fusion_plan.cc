/*!
 * \file fusion_plan.cc
 * \brief Choosing fusion groups: eligibility by TOpPattern and FCodeGen, the F_max bound,
 * one iteration domain per group, acyclicity, and reduction prologues.
 */
#include "passes/fusion_plan.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/ast.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace fusion {

std::vector<uint32_t> ExternalInputs(const IndexedGraph& idx, const std::vector<uint32_t>& members,
                                     const std::vector<bool>& foldable) {
  std::unordered_set<uint32_t> inside(members.begin(), members.end());
  std::vector<uint32_t> inputs;
  std::unordered_set<uint32_t> seen;
  for (uint32_t nid : members) {
    for (const auto& e : idx[nid].inputs) {
      if (inside.count(e.node_id) || foldable[e.node_id]) continue;
      uint32_t eid = idx.entry_id(e);
      if (seen.insert(eid).second) inputs.push_back(eid);
    }
  }
  return inputs;
}

std::string InputBoundRefusal(const ShapeVector& shapes, const std::vector<uint32_t>& inputs, int fmax) {
  auto scalar = [&shapes](uint32_t eid) { return shapes[eid].is_known() && shapes[eid].ndim() == 0; };
  long arrays = std::count_if(inputs.begin(), inputs.end(), [&](uint32_t eid) { return !scalar(eid); });
  if (arrays > fmax) {
    long scalars = static_cast<long>(inputs.size()) - arrays;
    return StrCat("unique inputs ", arrays, " > F_max ", fmax, scalars ? StrCat(" (and ", scalars, " 0-d)") : "");
  }
  if (static_cast<int>(inputs.size()) > kMaxKernelInputs) {
    return StrCat("unique inputs ", inputs.size(), " (0-d included) > ", kMaxKernelInputs, " kernel arguments");
  }
  return "";
}

namespace {

class Planner {
 public:
  Planner(const Graph& graph, int fmax, int max_size)
      : idx_(graph.indexed_graph()),
        shapes_(graph.GetAttr<ShapeVector>("shape")),
        dtypes_(graph.GetAttr<DTypeVector>("dtype")),
        fmax_(fmax),
        max_size_(max_size),
        consumers_(idx_.num_nodes()) {
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      for (const auto& e : idx_[nid].inputs) consumers_[e.node_id].push_back(nid);
      for (uint32_t dep : idx_[nid].control_deps) consumers_[dep].push_back(nid);
    }
    plan_.group_of.assign(idx_.num_nodes(), -1);
    plan_.foldable.assign(idx_.num_nodes(), false);
  }

  Plan Run() {
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      if (idx_[nid].source->is_variable()) continue;
      std::string why;
      if (IsFoldable(nid)) {
        plan_.foldable[nid] = true;
      } else if (IsElementwise(nid, &why)) {
        AddElementwise(nid);
      } else if (IsReduction(nid, &why)) {
        AddReduction(nid);
      } else {
        Log(StrCat(Name(nid), " is not fused: ", why));
      }
    }
    SplitCyclicGroups(idx_, &plan_);  // a safety net: the merge checks keep the plan acyclic
    // Drop the groups emptied by merges, renumbering group_of.
    Plan result;
    result.foldable = plan_.foldable;
    result.log = plan_.log;
    result.group_of.assign(idx_.num_nodes(), -1);
    for (const Group& group : plan_.groups) {
      if (group.members.empty()) continue;
      for (uint32_t nid : group.members) result.group_of[nid] = static_cast<int>(result.groups.size());
      result.groups.push_back(group);
    }
    return result;
  }

 private:
  std::string Name(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    return StrCat("'", node->attrs.name, "' (", node->is_variable() ? "variable" : node->op()->name, ")");
  }
  void Log(const std::string& line) { plan_.log.push_back(line); }
  const Shape& OutShape(uint32_t nid, uint32_t i = 0) const { return shapes_[idx_.entry_id(nid, i)]; }

  // FCodeGen gives expressions for this node's input dtypes.
  bool GeneratesCode(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
    if (codegen == nullptr || !codegen->count(node->op())) return false;
    std::vector<ast::Expr> vars;
    for (size_t i = 0; i < idx_[nid].inputs.size(); ++i) {
      DType dtype = dtypes_[idx_.entry_id(idx_[nid].inputs[i])];
      if (dtype == DType::kUnknown) return false;
      vars.push_back(ast::Var(StrCat("x", i), dtype));
    }
    return (*codegen)[node->op()](node->attrs, vars).size() == node->num_outputs();
  }

  // A size-1 node with no inputs that generates code: copied into each group as a literal.
  bool IsFoldable(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    bool stateful = Op::FindAttr<TIsStateful>("TIsStateful") != nullptr &&
                    Op::GetAttr<TIsStateful>("TIsStateful").get(node->op(), false);
    return idx_[nid].inputs.empty() && !stateful && node->num_outputs() == 1 && OutShape(nid).is_known() &&
           OutShape(nid).Size() == 1 && GeneratesCode(nid);
  }

  bool IsElementwise(uint32_t nid, std::string* why) const {
    const Node* node = idx_[nid].source;
    int pattern = Op::GetAttr<TOpPattern>("TOpPattern").get(node->op(), kOpaque);
    if (pattern != kElemWise && pattern != kBroadcast) {
      *why = StrCat("pattern ", OpPatternName(pattern));
      return false;
    }
    for (uint32_t i = 0; i < node->num_outputs(); ++i) {
      if (!OutShape(nid, i).is_known() || OutShape(nid, i) != OutShape(nid)) {
        *why = StrCat("output shape ", OutShape(nid, i), " is unknown or differs from output 0");
        return false;
      }
    }
    for (const IndexedGraph::Entry& e : idx_[nid].inputs) {  // a dynamic plan's shapes found as it runs
      if (!shapes_[idx_.entry_id(e)].is_known()) {
        *why = StrCat("input shape ", shapes_[idx_.entry_id(e)], " is known only when the graph runs");
        return false;
      }
    }
    if (!GeneratesCode(nid)) {
      *why = "no FCodeGen for its input dtypes";
      return false;
    }
    return true;
  }

  bool IsReduction(uint32_t nid, std::string* why) const {
    const Node* node = idx_[nid].source;
    if (Op::GetAttr<TOpPattern>("TOpPattern").get(node->op(), kOpaque) != kCommReduce) return false;
    const auto* kinds = Op::FindAttr<std::string>("TReduceKind");
    const auto* axes = Op::FindAttr<FReduceAxes>("FReduceAxes");
    if (kinds == nullptr || axes == nullptr || !kinds->count(node->op()) || !axes->count(node->op())) {
      *why = "reduction without TReduceKind/FReduceAxes";
      return false;
    }
    const Shape& in = shapes_[idx_.entry_id(idx_[nid].inputs[0])];
    if (idx_[nid].inputs.size() != 1 || !in.is_known() || !OutShape(nid).is_known()) {
      *why = "reduction of unknown shape";
      return false;
    }
    std::vector<int> reduced = (*axes)[node->op()](node->attrs, in.ndim());
    if (reduced.empty() || reduced.back() - reduced.front() + 1 != static_cast<int>(reduced.size())) {
      *why = "reduced axes are not one contiguous block";
      return false;
    }
    return true;
  }

  std::vector<uint32_t> Union(const std::vector<int>& groups, uint32_t nid) const {
    std::vector<uint32_t> members;
    for (int g : groups) members.insert(members.end(), plan_.groups[g].members.begin(), plan_.groups[g].members.end());
    members.push_back(nid);
    std::sort(members.begin(), members.end());
    return members;
  }

  // A node outside `members` that is reachable from them and reaches them, if any. Other
  // groups count as one node each (a path into any member leaves by any member's consumers):
  // a cycle through a group that has no path through single nodes still makes the groups'
  // kernels depend on each other. Nodes after the last member belong to no group yet and only
  // reach later nodes, so the walk stops there.
  bool LeavesAndReenters(const std::vector<uint32_t>& members, std::string* through) const {
    std::unordered_set<uint32_t> inside(members.begin(), members.end());
    uint32_t last = members.back();
    std::vector<uint32_t> stack;
    std::unordered_set<uint32_t> seen;
    std::unordered_set<int> seen_groups;
    auto visit = [&](uint32_t n) {
      int g = plan_.group_of[n];
      if (g < 0) {
        if (seen.insert(n).second) stack.push_back(n);
      } else if (seen_groups.insert(g).second) {
        for (uint32_t m : plan_.groups[g].members) stack.push_back(m);
      }
    };
    for (uint32_t m : members) {
      for (uint32_t c : consumers_[m]) {
        if (!inside.count(c) && c < last) visit(c);
      }
    }
    while (!stack.empty()) {
      uint32_t n = stack.back();
      stack.pop_back();
      for (uint32_t c : consumers_[n]) {
        if (inside.count(c)) {
          *through = Name(n);
          return true;
        }
        if (c < last) visit(c);
      }
    }
    return false;
  }

  // Members that write an input in place (assign): the entry each writes -> the writer.
  std::unordered_map<uint32_t, uint32_t> Writers(const std::vector<uint32_t>& members, std::string* why) const {
    std::unordered_map<uint32_t, uint32_t> writers;
    const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
    if (mutate == nullptr) return writers;
    for (uint32_t nid : members) {
      const Node* node = idx_[nid].source;
      if (!mutate->count(node->op())) continue;
      for (uint32_t i : (*mutate)[node->op()](node->attrs)) {
        uint32_t eid = idx_.entry_id(idx_[nid].inputs.at(i));
        auto it = writers.find(eid);
        if (it != writers.end() && why != nullptr) {
          *why = StrCat(Name(nid), " and ", Name(it->second), " both write ", Name(idx_[nid].inputs[i].node_id));
        }
        writers[eid] = nid;
      }
    }
    return writers;
  }

  // In a kernel every element loads its inputs before it stores: a member may read a variable
  // another member writes only if it runs before the write in the unfused order too.
  bool MutationsKeepOrder(const std::vector<uint32_t>& members, std::string* why) const {
    std::string twice;
    std::unordered_map<uint32_t, uint32_t> writers = Writers(members, &twice);
    if (!twice.empty()) {
      *why = twice;
      return false;
    }
    for (uint32_t nid : members) {
      for (const auto& e : idx_[nid].inputs) {
        auto it = writers.find(idx_.entry_id(e));
        if (it != writers.end() && it->second != nid && nid > it->second) {
          *why = StrCat(Name(nid), " reads ", Name(e.node_id), " after ", Name(it->second), " writes it");
          return false;
        }
      }
    }
    return true;
  }

  bool Admissible(const std::vector<uint32_t>& members, std::string* why) const {
    if (static_cast<int>(members.size()) > max_size_) {
      *why = StrCat("group size ", members.size(), " > ", max_size_);
      return false;
    }
    *why = InputBoundRefusal(shapes_, ExternalInputs(idx_, members, plan_.foldable), fmax_);
    if (!why->empty()) return false;
    if (!MutationsKeepOrder(members, why)) return false;
    std::string through;
    if (LeavesAndReenters(members, &through)) {
      *why = StrCat("a path leaves the group and comes back through ", through);
      return false;
    }
    return true;
  }

  void Merge(const std::vector<int>& groups, uint32_t nid, const Group& shape) {
    Group& target = plan_.groups[groups[0]];
    target.members = Union(groups, nid);
    target.kind = shape.kind;
    target.domain = shape.domain;
    target.split = shape.split;
    target.closed = shape.kind == "reduce";
    for (size_t i = 1; i < groups.size(); ++i) plan_.groups[groups[i]].members.clear();
    for (uint32_t m : target.members) plan_.group_of[m] = groups[0];
  }

  void NewGroup(uint32_t nid, const std::string& kind, const Shape& domain, int split = -1) {
    std::string why;
    if (!Admissible({nid}, &why)) {  // even alone, the node would break the bounds
      Log(StrCat(Name(nid), " is not fused: ", why));
      return;
    }
    plan_.groups.push_back(Group{kind, {nid}, domain, kind == "reduce", split});
    plan_.group_of[nid] = static_cast<int>(plan_.groups.size() - 1);
  }

  // The first reduced axis when a reduction reduces the trailing axes of its input, else -1.
  int TrailingSplit(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    int ndim = shapes_[idx_.entry_id(idx_[nid].inputs[0])].ndim();
    std::vector<int> axes = Op::GetAttr<FReduceAxes>("FReduceAxes")[node->op()](node->attrs, ndim);
    return axes.back() == ndim - 1 ? axes.front() : -1;
  }

  static bool RowCapable(const Group& group) {
    return group.kind == "row" || (group.kind == "reduce" && group.split >= 0);
  }

  // One value per row of `domain`: [rows..., 1...] (keepdims) or [rows...].
  static bool PerRow(const Shape& s, const Shape& domain, int split) {
    bool keep = s.ndim() == domain.ndim(), drop = s.ndim() == split;
    if (!keep && !drop) return false;
    for (int d = 0; d < s.ndim(); ++d) {
      if (s[d] != (d < split ? domain[d] : 1)) return false;
    }
    return true;
  }

  // A node computes per element or per row of a row group and reads the group's values alike:
  // per element from the domain or per-row values that broadcast along the row, per row from
  // values of its own shape (size-1 values fit both).
  bool FitsRow(uint32_t nid, const Group& row, const std::unordered_set<uint32_t>& inside, std::string* why) const {
    const Shape& out = OutShape(nid);
    bool elem = out == row.domain;
    if (!elem && !PerRow(out, row.domain, row.split)) {
      *why = StrCat("shape ", out, " is neither the row domain ", row.domain, " nor one value per row");
      return false;
    }
    for (const auto& e : idx_[nid].inputs) {
      if (!inside.count(e.node_id)) continue;
      const Shape& in = shapes_[idx_.entry_id(e)];
      bool fits =
          in.Size() == 1 || in == out || (elem && in.ndim() == row.domain.ndim() && PerRow(in, row.domain, row.split));
      if (!fits) {
        *why = StrCat("it reads ", Name(e.node_id), " of shape ", in, " across rows of ", row.domain);
        return false;
      }
    }
    if (!Writers({nid}, nullptr).empty()) {
      *why = "it writes a variable";
      return false;
    }
    return true;
  }

  // The group `option` merged with `nid` forms: a map group, or a row group when one of them
  // may become one (all row-capable groups of the option must share the domain).
  bool MergedShape(const std::vector<int>& option, uint32_t nid, Group* shape, std::string* why) const {
    *shape = Group{"map", {}, OutShape(nid), false, -1};
    for (int g : option) {
      const Group& group = plan_.groups[g];
      if (!RowCapable(group)) continue;
      if (shape->kind == "row" && (shape->domain != group.domain || shape->split != group.split)) {
        *why = "its row groups have different domains";
        return false;
      }
      *shape = Group{"row", {}, group.domain, false, group.split};
    }
    if (shape->kind == "map") return true;
    std::vector<uint32_t> members = Union(option, nid);
    std::unordered_set<uint32_t> inside(members.begin(), members.end());
    return FitsRow(nid, *shape, inside, why) && Writers(members, nullptr).empty();
  }

  void AddElementwise(uint32_t nid) {
    const Shape& domain = OutShape(nid);
    std::vector<int> candidates;
    for (const auto& e : idx_[nid].inputs) {
      int g = plan_.group_of[e.node_id];
      if (g < 0 || std::find(candidates.begin(), candidates.end(), g) != candidates.end()) continue;
      const Group& group = plan_.groups[g];
      if (!RowCapable(group) && (group.closed || group.domain != domain)) {
        Log(StrCat("cannot fuse ", Name(nid), " into the group of ", Name(e.node_id), ": ",
                   group.closed ? "that group ends in a reduction"
                                : StrCat("domain ", group.domain, " differs from ", domain)));
        continue;
      }
      candidates.push_back(g);
    }
    // Prefer joining every producer group at once (diamonds), then the largest alone.
    std::vector<std::vector<int>> options;
    if (candidates.size() > 1) options.push_back(candidates);
    std::sort(candidates.begin(), candidates.end(),
              [&](int a, int b) { return plan_.groups[a].members.size() > plan_.groups[b].members.size(); });
    for (int g : candidates) options.push_back({g});
    for (const std::vector<int>& option : options) {
      std::string why;
      Group shape;
      if (MergedShape(option, nid, &shape, &why) && Admissible(Union(option, nid), &why)) {
        Merge(option, nid, shape);
        return;
      }
      Log(StrCat("cannot fuse ", Name(nid), " into the group of ", Name(plan_.groups[option[0]].members[0]), ": ",
                 why));
    }
    NewGroup(nid, "map", domain);
  }

  void AddReduction(uint32_t nid) {
    const auto& input = idx_[nid].inputs[0];
    const Shape& domain = shapes_[idx_.entry_id(input)];
    int split = TrailingSplit(nid);
    int g = plan_.group_of[input.node_id];
    if (g >= 0 && split >= 0 && RowCapable(plan_.groups[g]) && plan_.groups[g].domain == domain &&
        plan_.groups[g].split == split) {
      std::string why = "the group writes a variable";
      if (Writers(plan_.groups[g].members, nullptr).empty() && Admissible(Union({g}, nid), &why)) {
        Merge({g}, nid, Group{"row", {}, domain, false, split});
        return;
      }
      Log(StrCat("cannot fuse reduction ", Name(nid), " into the row group of its input: ", why));
    } else if (g >= 0 && plan_.groups[g].kind == "map" && plan_.groups[g].domain == domain) {
      std::string why = "the prologue writes a variable";
      if (Writers(plan_.groups[g].members, nullptr).empty() && Admissible(Union({g}, nid), &why)) {
        Merge({g}, nid, Group{"reduce", {}, domain, true, split});
        return;
      }
      Log(StrCat("cannot fuse reduction ", Name(nid), " with its prologue: ", why));
    }
    NewGroup(nid, "reduce", domain, split);
  }

  const IndexedGraph& idx_;
  const ShapeVector& shapes_;
  const DTypeVector& dtypes_;
  int fmax_;
  int max_size_;
  std::vector<std::vector<uint32_t>> consumers_;
  Plan plan_;
};

}  // namespace

Plan PlanFusion(const Graph& graph, int fmax, int max_size) { return Planner(graph, fmax, max_size).Run(); }

}  // namespace fusion
}  // namespace ir
