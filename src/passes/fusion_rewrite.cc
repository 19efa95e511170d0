/*!
 * \file fusion_rewrite.cc
 * \brief Replacing each planned group by one "_fused" node holding the group as a subgraph.
 *
 * Units (an unfused node, or a whole group) are built depth first so that every unit's
 * producers exist first; the plan guarantees groups form a DAG. A group writes out every
 * member value read outside it or returned by the graph.
 */
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/fusion.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "passes/fusion_plan.h"

namespace ir {
namespace fusion {

void GroupRecord::Save(dmlc::JSONWriter* writer) const {
  writer->BeginObject(false);
  writer->WriteObjectKeyValue("node", node);
  writer->WriteObjectKeyValue("kind", kind);
  writer->WriteObjectKeyValue("members", members);
  writer->WriteObjectKeyValue("inputs", inputs);
  writer->WriteObjectKeyValue("outputs", outputs);
  writer->EndObject();
}

void GroupRecord::Load(dmlc::JSONReader* reader) {
  dmlc::JSONObjectReadHelper helper;
  helper.DeclareField("node", &node);
  helper.DeclareField("kind", &kind);
  helper.DeclareField("members", &members);
  helper.DeclareField("inputs", &inputs);
  helper.DeclareField("outputs", &outputs);
  helper.ReadAllFields(reader);
}

namespace {

NodePtr CopyNode(const Node* old) {
  NodePtr node = Node::Create();
  node->attrs = old->attrs;
  return node;
}

class Rewriter {
 public:
  Rewriter(const Graph& graph, const Plan& plan)
      : graph_(graph), idx_(graph.indexed_graph()), plan_(plan), entry_map_(idx_.num_node_entries()) {
    for (const auto& e : idx_.outputs()) graph_outputs_.insert(idx_.entry_id(e));
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      for (const auto& e : idx_[nid].inputs) readers_[idx_.entry_id(e)].push_back(nid);
      for (uint32_t dep : idx_[nid].control_deps) control_readers_[dep].push_back(nid);
    }
  }

  Graph Run(std::vector<GroupRecord>* records) {
    records_ = records;
    for (uint32_t unit : Order()) {
      if (unit < plan_.groups.size()) {
        BuildGroup(static_cast<int>(unit));
      } else {
        BuildSingle(unit - static_cast<uint32_t>(plan_.groups.size()));
      }
    }
    Graph result;
    for (const auto& e : idx_.outputs()) result.outputs.push_back(Entry(e));
    const IndexedGraph& new_idx = result.indexed_graph();
    const auto& shapes = graph_.GetAttr<ShapeVector>("shape");
    const auto& dtypes = graph_.GetAttr<DTypeVector>("dtype");
    ShapeVector new_shapes(new_idx.num_node_entries());
    DTypeVector new_dtypes(new_idx.num_node_entries(), DType::kUnknown);
    for (uint32_t nid = 0; nid < new_idx.num_nodes(); ++nid) {
      const std::vector<uint32_t>& old_entries = origin_.at(new_idx[nid].source);
      for (size_t i = 0; i < old_entries.size(); ++i) {
        new_shapes[new_idx.entry_id(nid, static_cast<uint32_t>(i))] = shapes[old_entries[i]];
        new_dtypes[new_idx.entry_id(nid, static_cast<uint32_t>(i))] = dtypes[old_entries[i]];
      }
    }
    result.attrs = graph_.attrs;
    result.SetAttr("shape", std::move(new_shapes));
    result.SetAttr("dtype", std::move(new_dtypes));
    return result;
  }

 private:
  uint32_t UnitOf(uint32_t nid) const { return fusion::UnitOf(plan_, nid); }

  // Units in dependency order (iterative, so long chains need no deep recursion).
  std::vector<uint32_t> Order() const {
    std::vector<bool> cyclic;
    std::vector<uint32_t> order = UnitOrder(idx_, plan_, &cyclic);
    IR_CHECK(std::find(cyclic.begin(), cyclic.end(), true) == cyclic.end())
        << "fusion: the planned groups form a cycle";
    return order;
  }

  NodeEntry Entry(const IndexedGraph::Entry& e) const {
    const NodeEntry& entry = entry_map_[idx_.entry_id(e)];
    IR_CHECK(entry.node != nullptr) << "fusion: entry of '" << idx_[e.node_id].source->attrs.name
                                    << "' used before it was built";
    return entry;
  }

  NodePtr NodeOf(uint32_t nid) const {
    // A control dependency on a node that has no outputs written: depend on its unit's node.
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
      const NodeEntry& entry = entry_map_[idx_.entry_id(nid, i)];
      if (entry.node) return entry.node;
    }
    auto it = unit_node_.find(UnitOf(nid));
    IR_CHECK(it != unit_node_.end()) << "fusion: control dependency on '" << idx_[nid].source->attrs.name
                                     << "' before it was built";
    return it->second;
  }

  void BuildSingle(uint32_t nid) {
    const Node* old = idx_[nid].source;
    NodePtr node = CopyNode(old);
    for (const auto& e : idx_[nid].inputs) node->inputs.push_back(Entry(e));
    for (uint32_t dep : idx_[nid].control_deps) node->control_deps.push_back(NodeOf(dep));
    std::vector<uint32_t> entries;
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
      entry_map_[idx_.entry_id(nid, i)] = NodeEntry{node, i};
      entries.push_back(idx_.entry_id(nid, i));
    }
    origin_[node.get()] = entries;
    unit_node_[UnitOf(nid)] = node;
  }

  bool ReadOutside(uint32_t eid, const std::unordered_set<uint32_t>& members) const {
    if (graph_outputs_.count(eid)) return true;
    auto it = readers_.find(eid);
    if (it == readers_.end()) return false;
    for (uint32_t reader : it->second) {
      if (!members.count(reader)) return true;
    }
    return false;
  }

  /*! \brief True when a node outside the group has a control dependency on member `nid`
   *  (a session target, say): the member must then produce something to depend on. */
  bool ControlledFromOutside(uint32_t nid, const std::unordered_set<uint32_t>& members) const {
    auto it = control_readers_.find(nid);
    if (it == control_readers_.end()) return false;
    for (uint32_t reader : it->second) {
      if (!members.count(reader)) return true;
    }
    return false;
  }

  /*! \brief True when member `nid` is the only member of the group reading entry `eid`. */
  bool OnlyReader(uint32_t eid, uint32_t nid, const std::unordered_set<uint32_t>& members) const {
    auto it = readers_.find(eid);
    if (it == readers_.end()) return true;
    for (uint32_t reader : it->second) {
      if (reader != nid && members.count(reader)) return false;
    }
    return true;
  }

  std::string Label(const IndexedGraph::Entry& e) const {
    const std::string& name = idx_[e.node_id].source->attrs.name;
    return idx_.num_outputs(e.node_id) == 1 ? name : StrCat(name, ":", e.index);
  }

  void BuildGroup(int g);

  const Graph& graph_;
  const IndexedGraph& idx_;
  const Plan& plan_;
  std::vector<NodeEntry> entry_map_;
  std::unordered_set<uint32_t> graph_outputs_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> readers_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> control_readers_;  // node id -> nodes depending on it
  std::unordered_map<const Node*, std::vector<uint32_t>> origin_;
  std::unordered_map<uint32_t, NodePtr> unit_node_;
  std::vector<GroupRecord>* records_ = nullptr;
};

void Rewriter::BuildGroup(int g) {
  const Group& group = plan_.groups[g];
  std::unordered_set<uint32_t> members(group.members.begin(), group.members.end());
  std::vector<uint32_t> inputs = GroupInputs(idx_, group, plan_.foldable);
  std::unordered_map<uint32_t, int> input_position;
  GroupRecord record;
  FusedGroup fused;
  fused.kind = group.kind;
  std::vector<NodeEntry> fused_inputs;
  std::unordered_map<uint32_t, NodeEntry> sub_entry;  // old entry id -> entry in the subgraph
  for (size_t k = 0; k < inputs.size(); ++k) {
    input_position[inputs[k]] = static_cast<int>(k);
    sub_entry[inputs[k]] = NodeEntry{Node::CreateVariable(StrCat("in", k)), 0};
  }
  // Producers of the inputs first (this may build other units recursively).
  for (uint32_t nid : group.members) {
    for (const auto& e : idx_[nid].inputs) {
      uint32_t eid = idx_.entry_id(e);
      if (input_position.count(eid) && fused_inputs.size() <= static_cast<size_t>(input_position[eid])) {
        fused_inputs.push_back(Entry(e));
        record.inputs.push_back(Label(e));
      }
    }
  }
  std::vector<NodePtr> control_deps;
  struct Output {
    uint32_t eid;
    NodeEntry sub;
    std::string label;
  };
  std::vector<Output> outputs;
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  const auto* inplace = Op::FindAttr<FInplaceOption>("FInplaceOption");
  const auto* overwrites = Op::FindAttr<TOverwritesMutatedInputs>("TOverwritesMutatedInputs");
  std::unordered_map<uint32_t, int> aliased_input;  // old entry id -> mutated input position
  for (uint32_t nid : group.members) {
    const Node* old = idx_[nid].source;
    if (std::find(group.identities.begin(), group.identities.end(), nid) != group.identities.end()) {
      // It passes input 0 on: the subgraph reads that input's value instead.
      uint32_t eid = idx_.entry_id(nid, 0);
      sub_entry[eid] = sub_entry.at(idx_.entry_id(idx_[nid].inputs[0]));
      for (uint32_t dep : idx_[nid].control_deps) {
        if (!members.count(dep)) control_deps.push_back(NodeOf(dep));
      }
      record.members.push_back(old->attrs.name);
      if (ReadOutside(eid, members) || ControlledFromOutside(nid, members))
        outputs.push_back(Output{eid, sub_entry[eid], Label(IndexedGraph::Entry{nid, 0})});
      continue;
    }
    NodePtr node = CopyNode(old);
    for (const auto& e : idx_[nid].inputs) {
      uint32_t eid = idx_.entry_id(e);
      if (!sub_entry.count(eid)) {  // a folded constant: copy it into the subgraph
        NodePtr constant = CopyNode(idx_[e.node_id].source);
        sub_entry[eid] = NodeEntry{constant, e.index};
      }
      node->inputs.push_back(sub_entry.at(eid));
    }
    for (uint32_t dep : idx_[nid].control_deps) {
      if (!members.count(dep)) control_deps.push_back(NodeOf(dep));
    }
    if (mutate != nullptr && mutate->count(old->op())) {
      for (uint32_t i : (*mutate)[old->op()](old->attrs)) {
        uint32_t ref = idx_.entry_id(idx_[nid].inputs[i]);
        int position = input_position.at(ref);
        fused.mutated_inputs.push_back(position);
        if (overwrites != nullptr && overwrites->get(old->op(), false) && OnlyReader(ref, nid, members)) {
          fused.overwritten_inputs.push_back(position);
        }
        if (inplace == nullptr || !inplace->count(old->op())) continue;
        for (const auto& pair : (*inplace)[old->op()](old->attrs)) {
          if (pair.first == static_cast<int>(i)) aliased_input[idx_.entry_id(nid, pair.second)] = position;
        }
      }
    }
    record.members.push_back(old->attrs.name);
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
      uint32_t eid = idx_.entry_id(nid, i);
      sub_entry[eid] = NodeEntry{node, i};
      // A variable's new value is always an output: it aliases the variable, so it costs no
      // store of its own, and the node stays something control dependencies can name. A
      // member that only a control dependency names (a run target) writes its first output,
      // so the target is computed and the fused node has an output to depend on.
      bool target = i == 0 && ControlledFromOutside(nid, members);
      if (ReadOutside(eid, members) || aliased_input.count(eid) || target)
        outputs.push_back(Output{eid, NodeEntry{node, i}, Label(IndexedGraph::Entry{nid, i})});
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    fused.subgraph.outputs.push_back(outputs[j].sub);
    auto alias = aliased_input.find(outputs[j].eid);
    if (alias != aliased_input.end()) fused.aliases.emplace_back(alias->second, static_cast<int>(j));
  }
  std::string name = StrCat("fused_", idx_[group.members.front()].source->attrs.name);
  NodePtr node = Node::Create(Op::Get("_fused"), name, fused.ToAttrs(), fused_inputs);
  for (const NodePtr& dep : control_deps) {
    if (std::find(node->control_deps.begin(), node->control_deps.end(), dep) == node->control_deps.end()) {
      node->control_deps.push_back(dep);
    }
  }
  std::vector<uint32_t> entries;
  for (size_t j = 0; j < outputs.size(); ++j) {
    entry_map_[outputs[j].eid] = NodeEntry{node, static_cast<uint32_t>(j)};
    entries.push_back(outputs[j].eid);
    record.outputs.push_back(outputs[j].label);
  }
  origin_[node.get()] = entries;
  unit_node_[static_cast<uint32_t>(g)] = node;
  record.node = name;
  record.kind = group.kind;
  records_->push_back(record);
}

}  // namespace

Graph RewriteFusedGraph(const Graph& graph, const Plan& plan, std::vector<GroupRecord>* records) {
  return Rewriter(graph, plan).Run(records);
}

}  // namespace fusion
}  // namespace ir
