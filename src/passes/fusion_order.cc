/*!
 * \file fusion_order.cc
 * \brief The graph of units a fusion plan makes (each group contracted to one unit, every
 * other node a unit of its own): ordering it, and splitting groups until it has no cycle.
 */
#include <algorithm>
#include <functional>
#include <queue>

#include "passes/fusion_plan.h"

namespace ir {
namespace fusion {

uint32_t UnitOf(const Plan& plan, uint32_t nid) {
  int g = plan.group_of[nid];
  return g >= 0 ? static_cast<uint32_t>(g) : static_cast<uint32_t>(plan.groups.size()) + nid;
}

std::vector<uint32_t> UnitOrder(const IndexedGraph& idx, const Plan& plan, std::vector<bool>* cyclic) {
  size_t num_units = plan.groups.size() + idx.num_nodes();
  std::vector<std::vector<uint32_t>> next(num_units);
  std::vector<uint32_t> pending(num_units, 0), first_node(num_units, UINT32_MAX);
  std::vector<bool> present(num_units, false);
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    uint32_t unit = UnitOf(plan, nid);
    present[unit] = true;
    first_node[unit] = std::min(first_node[unit], nid);
    auto depend = [&](uint32_t producer) {
      uint32_t from = UnitOf(plan, producer);
      if (from == unit || (plan.group_of[nid] >= 0 && plan.foldable[producer])) return;
      next[from].push_back(unit);
      ++pending[unit];
    };
    for (const auto& e : idx[nid].inputs) depend(e.node_id);
    for (uint32_t dep : idx[nid].control_deps) depend(dep);
  }
  using Item = std::pair<uint32_t, uint32_t>;  // (first node id, unit)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (uint32_t u = 0; u < num_units; ++u) {
    if (present[u] && pending[u] == 0) ready.push({first_node[u], u});
  }
  std::vector<uint32_t> order;
  while (!ready.empty()) {
    uint32_t u = ready.top().second;
    ready.pop();
    order.push_back(u);
    for (uint32_t v : next[u]) {
      if (--pending[v] == 0) ready.push({first_node[v], v});
    }
  }
  if (cyclic != nullptr) {
    cyclic->assign(num_units, false);
    for (uint32_t u = 0; u < num_units; ++u) (*cyclic)[u] = present[u] && pending[u] > 0;
  }
  return order;
}

void SplitCyclicGroups(const IndexedGraph& idx, Plan* plan) {
  std::vector<bool> cyclic;
  for (;;) {
    UnitOrder(idx, *plan, &cyclic);
    if (std::find(cyclic.begin(), cyclic.end(), true) == cyclic.end()) return;
    // Unordered units lie on a cycle or after one. Single nodes alone form a DAG, so every
    // cycle holds a group: dissolving unordered groups one at a time ends with none.
    int victim = -1;
    for (size_t g = 0; g < plan->groups.size() && victim < 0; ++g) {
      if (cyclic[g]) victim = static_cast<int>(g);
    }
    IR_CHECK(victim >= 0) << "fusion: the graph itself has a cycle";
    Group& group = plan->groups[victim];
    plan->log.push_back(StrCat("the group of '", idx[group.members.front()].source->attrs.name,
                               "' is split into single nodes: its kernel and another depend on each other"));
    for (uint32_t nid : group.members) plan->group_of[nid] = -1;
    group.members.clear();
  }
}

}  // namespace fusion
}  // namespace ir
