/*!
 * \file fused_epilogue.cc
 * \brief Epilogue groups: the anchor, then its epilogue as a "_fused" map node of its own.
 *
 * The epilogue's input 0 is the anchor's value. When no one outside reads that value, the
 * epilogue's first output is written over it (an assign into in0: the anchor computes straight
 * into that output's buffer and the generated kernel updates it while it is still in cache).
 */
#include "ops/fused_epilogue.h"

#include <algorithm>
#include <charconv>

#include "ir/codegen.h"
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
ast::Expr EpilogueExpr(const FusedEpilogue& e, const std::vector<NDArray>& inputs) {
  const FusedGroup& group = GetFusedGroup(e.epilogue);
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  std::vector<std::vector<ast::Expr>> values(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      values[nid] = {ast::Var(node->attrs.name, inputs.at(VariableIndex(node)).dtype())};
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

bool RunPostOps(const OpContext& ctx, const FusedEpilogue& e, const std::vector<NDArray>& anchor_in,
                const std::vector<NDArray>& epilogue_in, const NDArray& acc) {
  const auto* fn = Op::FindAttr<FComputeEpilogue>("FComputeEpilogue");
  if (fn == nullptr || !fn->count(e.anchor.op) || e.in_place_output < 0 || e.outputs.size() != 1) return false;
  ast::Expr expr = EpilogueExpr(e, epilogue_in);
  if (expr == nullptr) return false;
  std::vector<NDArray> extra(epilogue_in.begin() + 1, epilogue_in.end());
  return (*fn)[e.anchor.op](ctx, e.anchor, anchor_in, expr, extra, acc);
}

DType AnchorType(const FusedEpilogue& e, const std::vector<NDArray>& anchor_in) {
  std::vector<DType> in, out(1, DType::kUnknown);
  for (const NDArray& a : anchor_in) in.push_back(a.dtype());
  Op::GetAttr<FInferType>("FInferType")[e.anchor.op](e.anchor, &in, &out);
  return out[0];
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
  return e;
}

bool RunEpilogueGroup(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                      const std::vector<NDArray>& outputs, DeviceKernelContext* dev) {
  const FusedEpilogue& e = *GetFusedGroup(attrs).epilogue;
  std::vector<NDArray> anchor_in = Pick(inputs, e.anchor_inputs);
  const NDArray& acc = outputs.at(e.anchor_output >= 0 ? e.anchor_output : e.in_place_output);
  if (AnchorType(e, anchor_in) != acc.dtype()) return false;
  for (const NDArray& in : inputs) {
    if (in.Overlaps(acc)) return false;  // the anchor may not write over any input
  }
  std::vector<NDArray> epilogue_in = Pick(inputs, e.extra_inputs);
  epilogue_in.insert(epilogue_in.begin(), acc);
  if (dev == nullptr && RunPostOps(ctx, e, anchor_in, epilogue_in, acc)) return true;
  std::vector<NDArray> epilogue_out = Pick(outputs, e.outputs);
  if (dev != nullptr) {
    dev->RunNode(e.anchor, anchor_in, {acc});
    dev->RunDerived(e.epilogue, epilogue_in, epilogue_out);
    return true;
  }
  FCompute anchor = codegen::CpuKernelOf(e.anchor.op);
  IR_CHECK(anchor) << NodeDesc(e.anchor) << " has no CPU kernel";
  anchor(ctx, e.anchor, anchor_in, {acc});
  if (!codegen::RunGeneratedKernel("cpu", ctx, e.epilogue, epilogue_in, epilogue_out)) {
    Op::GetAttr<FCompute>("FCompute")[e.epilogue.op](ctx, e.epilogue, epilogue_in, epilogue_out);
  }
  return true;
}

}  // namespace op
}  // namespace ir
