/*!
 * \file fused_epilogue.cc
 * \brief Epilogue groups: the anchor, then its epilogue as a "_fused" map node of its own.
 *
 * The epilogue's input 0 is the anchor's value. When no one outside reads that value, the
 * epilogue's first output is written over it (an assign into in0: the anchor computes straight
 * into that output's buffer and the generated kernel updates it while it is still in cache).
 *
 * What a run needs besides the arrays (the anchor's dtype, the epilogue as one expression for
 * FComputeEpilogue, the kernels) depends only on the inputs' dtypes and shapes: it is derived
 * once per such signature and kept in the FusedEpilogue (a few signatures: rebinding to new
 * shapes adds one), not re-derived by codegen of every member on every call.
 */
#include "ops/fused/fused_epilogue.h"

#include <algorithm>
#include <charconv>

#include "ir/op_attr_types.h"
#include "ops/op_common.h"

namespace ir {

namespace op {
namespace {

int VariableIndex(const Node* var) {
  int k = 0;
  const std::string& name = var->attrs.name;
  std::from_chars(name.data() + 2, name.data() + name.size(), k);
  return k;
}

uint32_t FindAnchor(const NodeAttrs& attrs, const IndexedGraph& idx) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  uint32_t anchor = UINT32_MAX;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable() || pattern.get(node->op(), kOpaque) != kOutEWiseFusable) continue;
    IR_CHECK(anchor == UINT32_MAX) << NodeDesc(attrs) << ": epilogue group with two anchors";
    anchor = nid;
  }
  IR_CHECK(anchor != UINT32_MAX) << NodeDesc(attrs) << ": epilogue group without an anchor";
  return anchor;
}

std::vector<NDArray> Pick(const std::vector<NDArray>& arrays, const std::vector<int>& positions) {
  std::vector<NDArray> picked;
  for (int k : positions) picked.push_back(arrays.at(k));
  return picked;
}

/*! \brief The epilogue's first output as an expression over Vars in0, in1, ...; null when a member has no code. */
ast::Expr EpilogueExpr(const FusedEpilogue& e, const std::vector<DType>& types) {
  const FusedGroup& group = GetFusedGroup(e.epilogue);
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  std::vector<std::vector<ast::Expr>> values(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      values[nid] = {ast::Var(node->attrs.name, types.at(VariableIndex(node)))};
      continue;
    }
    std::vector<ast::Expr> in;
    for (const auto& entry : idx[nid].inputs) in.push_back(values[entry.node_id][entry.index]);
    if (codegen == nullptr || !codegen->count(node->op())) return nullptr;
    values[nid] = (*codegen)[node->op()](node->attrs, in);
    if (values[nid].size() != node->num_outputs()) return nullptr;
  }
  const auto& out = idx.outputs()[0];
  // In place, output 0 is assign(in0, value): the op computes `value`.
  if (e.in_place_output >= 0) return values[idx[out.node_id].inputs[1].node_id][idx[out.node_id].inputs[1].index];
  return values[out.node_id][out.index];
}

DType AnchorType(const FusedEpilogue& e, const std::vector<DType>& types) {
  std::vector<DType> in, out(1, DType::kUnknown);
  for (int k : e.anchor_inputs) in.push_back(types.at(k));
  Op::GetAttr<FInferType>("FInferType")[e.anchor.op](e.anchor, &in, &out);
  return out[0];
}

using Entry = EpilogueRunCache::Entry;

std::shared_ptr<const Entry> Derive(const FusedEpilogue& e, const std::vector<NDArray>& inputs) {
  auto entry = std::make_shared<Entry>();
  for (const NDArray& a : inputs) {
    entry->types.push_back(a.dtype());
    entry->shapes.push_back(a.shape());
  }
  entry->anchor_type = AnchorType(e, entry->types);
  entry->anchor = CpuKernelOf(e.anchor.op);
  const auto* post = Op::FindAttr<FComputeEpilogue>("FComputeEpilogue");
  if (post != nullptr && post->count(e.anchor.op) && e.in_place_output >= 0 && e.outputs.size() == 1) {
    std::vector<DType> epilogue_types = {entry->anchor_type};
    for (int k : e.extra_inputs) epilogue_types.push_back(entry->types.at(k));
    entry->expr = EpilogueExpr(e, epilogue_types);
    if (entry->expr != nullptr) entry->post = (*post)[e.anchor.op];
  }
  return entry;
}

bool Matches(const Entry& entry, const std::vector<NDArray>& inputs) {
  if (entry.types.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (entry.types[i] != inputs[i].dtype() || entry.shapes[i] != inputs[i].shape()) return false;
  }
  return true;
}

/*! \brief The cached entry of the inputs' signature, derived (outside the lock) when new. */
std::shared_ptr<const Entry> Lookup(const FusedEpilogue& e, const std::vector<NDArray>& inputs) {
  EpilogueRunCache& cache = *e.run_cache;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    for (const auto& entry : cache.entries) {
      if (Matches(*entry, inputs)) return entry;
    }
  }
  std::shared_ptr<const Entry> entry = Derive(e, inputs);
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.entries.push_back(entry);
  if (cache.entries.size() > EpilogueRunCache::kCapacity) cache.entries.erase(cache.entries.begin());
  return entry;
}

bool RunPostOps(const OpContext& ctx, const FusedEpilogue& e, const Entry& entry, const std::vector<NDArray>& anchor_in,
                const std::vector<NDArray>& epilogue_in, const NDArray& acc) {
  if (!entry.post || entry.refused.load(std::memory_order_relaxed)) return false;
  std::vector<NDArray> extra(epilogue_in.begin() + 1, epilogue_in.end());
  if (entry.post(ctx, e.anchor, anchor_in, entry.expr, extra, acc)) return true;
  entry.refused.store(true, std::memory_order_relaxed);
  return false;
}

}  // namespace

std::shared_ptr<const FusedEpilogue> DeriveEpilogue(const NodeAttrs& attrs, const FusedGroup& group) {
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  uint32_t anchor = FindAnchor(attrs, idx);
  auto e = std::make_shared<FusedEpilogue>();
  e->anchor = idx[anchor].source->attrs;
  for (const auto& in : idx[anchor].inputs) {
    IR_CHECK(idx[in.node_id].source->is_variable()) << NodeDesc(attrs) << ": the anchor reads a member";
    e->anchor_inputs.push_back(VariableIndex(idx[in.node_id].source));
  }
  NodeEntry acc{Node::CreateVariable("in0"), 0};
  std::vector<NodeEntry> vars;  // per group input, once used
  vars.resize(idx.input_nodes().size());
  std::vector<std::vector<NodeEntry>> entries(idx.num_nodes());
  entries[anchor] = {acc};
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable() || nid == anchor) continue;
    NodePtr copy = Node::Create();
    copy->attrs = node->attrs;
    for (const auto& in : idx[nid].inputs) {
      const Node* src = idx[in.node_id].source;
      if (!src->is_variable()) {
        copy->inputs.push_back(entries[in.node_id].at(in.index));
        continue;
      }
      int k = VariableIndex(src);
      if (vars.at(k).node == nullptr) {
        e->extra_inputs.push_back(k);
        vars[k] = NodeEntry{Node::CreateVariable(StrCat("in", e->extra_inputs.size())), 0};
      }
      copy->inputs.push_back(vars[k]);
    }
    for (uint32_t i = 0; i < node->num_outputs(); ++i) entries[nid].push_back(NodeEntry{copy, i});
  }
  FusedGroup epilogue;
  for (size_t j = 0; j < idx.outputs().size(); ++j) {
    const auto& out = idx.outputs()[j];
    if (out.node_id == anchor) {
      e->anchor_output = static_cast<int>(j);
      continue;
    }
    e->outputs.push_back(static_cast<int>(j));
    epilogue.subgraph.outputs.push_back(entries[out.node_id].at(out.index));
  }
  IR_CHECK(!e->outputs.empty()) << NodeDesc(attrs) << ": epilogue group without an epilogue output";
  if (e->anchor_output < 0) {
    e->in_place_output = e->outputs[0];
    NodeEntry value = epilogue.subgraph.outputs[0];
    epilogue.subgraph.outputs[0] =
        NodeEntry{Node::Create(Op::Get("assign"), attrs.name + "/in_place", {}, {acc, value}), 0};
    epilogue.mutated_inputs = {0};
    epilogue.aliases = {{0, 0}};
  }
  e->epilogue.op = Op::Get("_fused");
  e->epilogue.name = attrs.name + "/epilogue";
  e->epilogue.dict = epilogue.ToAttrs();
  e->epilogue.op->attr_parser(&e->epilogue);
  e->run_cache = std::make_shared<EpilogueRunCache>();
  return e;
}

bool RunEpilogueGroup(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                      const std::vector<NDArray>& outputs, DeviceKernelContext* dev) {
  const FusedEpilogue& e = *GetFusedGroup(attrs).epilogue;
  std::vector<NDArray> anchor_in = Pick(inputs, e.anchor_inputs);
  std::shared_ptr<const Entry> entry = Lookup(e, inputs);
  const NDArray& acc = outputs.at(e.anchor_output >= 0 ? e.anchor_output : e.in_place_output);
  if (entry->anchor_type != acc.dtype()) return false;
  for (const NDArray& in : inputs) {
    if (in.Overlaps(acc)) return false;  // the anchor may not write over any input
  }
  std::vector<NDArray> epilogue_in = Pick(inputs, e.extra_inputs);
  epilogue_in.insert(epilogue_in.begin(), acc);
  if (dev == nullptr && RunPostOps(ctx, e, *entry, anchor_in, epilogue_in, acc)) return true;
  std::vector<NDArray> epilogue_out = Pick(outputs, e.outputs);
  if (dev != nullptr) {
    dev->RunNode(e.anchor, anchor_in, {acc});
    dev->RunDerived(e.epilogue, epilogue_in, epilogue_out);
    return true;
  }
  IR_CHECK(entry->anchor) << NodeDesc(e.anchor) << " has no CPU kernel";
  entry->anchor(ctx, e.anchor, anchor_in, {acc});
  const GeneratedKernel* generated = entry->generated.load();
  if (generated == nullptr) {
    generated = FindGeneratedCpuKernel(e.epilogue, epilogue_in);
    entry->generated.store(generated);
  }
  if (generated != nullptr) {
    generated->Launch(ctx, epilogue_in, epilogue_out);
  } else {
    Op::GetAttr<FCompute>("FCompute")[e.epilogue.op](ctx, e.epilogue, epilogue_in, epilogue_out);
  }
  return true;
}

}  // namespace op
}  // namespace ir
