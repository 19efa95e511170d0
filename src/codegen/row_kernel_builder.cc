/*!
 * \file row_kernel_builder.cc
 * \brief From a "row" group to a kRow Kernel: the group's reductions over the trailing axes of
 * one domain [rows, cols] split each row into stages; member values live per element or per row.
 *
 * A value computed per element in one stage and needed by a later one is computed again there
 * (loads and arithmetic are cheap once the row is in cache); when its expression calls a math
 * function (exp, log) the later stage may instead reload it from a row scratch slot.
 */
#include <functional>
#include <unordered_map>

#include "codegen/kernel_builder_parts.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace codegen {
namespace {

using ast::Expr;

bool CallsMath(const Expr& e) {
  if (e->kind == ast::ExprKind::kCall) return true;
  for (const Expr& arg : e->args) {
    if (CallsMath(arg)) return true;
  }
  return false;
}

bool IsReduction(const Node* node) {
  return !node->is_variable() && Op::GetAttr<TOpPattern>("TOpPattern").get(node->op(), kOpaque) == kCommReduce;
}

class RowBuilder {
 public:
  RowBuilder(const FusedGroup& group, const std::vector<Shape>& shapes, const std::vector<DType>& types)
      : group_(group), idx_(group.subgraph.indexed_graph()), input_shapes_(shapes), input_types_(types) {}

  Kernel Build() {
    IR_CHECK(group_.mutated_inputs.empty()) << "codegen: a row group writes an input";
    kernel_.kind = Kernel::kRow;
    InferGroupEntries(group_, input_shapes_, input_types_, &shapes_, &types_);
    std::unordered_map<int, int> output_param = AddGroupParams(group_, input_types_, types_, &kernel_);
    SetDomain();
    kernel_.stages.emplace_back();
    stage_values_.emplace_back();
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      if (!idx_[nid].source->is_variable()) Visit(nid);
    }
    for (size_t j = 0; j < idx_.outputs().size(); ++j) {
      if (group_.IsAliasedOutput(static_cast<int>(j))) continue;
      uint32_t eid = idx_.entry_id(idx_.outputs()[j]);
      int param = output_param.at(static_cast<int>(j));
      auto row = row_values_.find(eid);
      int64_t expected = row != row_values_.end() ? kernel_.extents[0] : kernel_.NumIterations();
      IR_CHECK(shapes_[eid].Size() == expected)
          << "codegen: row group output " << j << " of shape " << shapes_[eid] << " is not " << expected << " values";
      if (row != row_values_.end()) {
        kernel_.row_stores.emplace_back(param, row->second);
      } else {
        int home = home_.at(eid);
        kernel_.stages[home].stores.emplace_back(param, Need(home, eid));
      }
    }
    const RowStage& last = kernel_.stages.back();
    if (last.row_lets.empty() && last.lets.empty() && last.stores.empty()) kernel_.stages.pop_back();
    kernel_.AssignCanonicalName();
    return kernel_;
  }

 private:
  // The domain is the first reduction's input: rows are its kept leading axes.
  void SetDomain() {
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      const Node* node = idx_[nid].source;
      if (!IsReduction(node)) continue;
      domain_ = shapes_[idx_.entry_id(idx_[nid].inputs[0])];
      std::vector<int> axes = Op::GetAttr<FReduceAxes>("FReduceAxes")[node->op()](node->attrs, domain_.ndim());
      IR_CHECK(!axes.empty() && axes.back() == domain_.ndim() - 1)
          << "codegen: row group reduction '" << node->attrs.name << "' does not reduce trailing axes";
      ranges_ = {Range{0, axes.front()}, Range{axes.front(), domain_.ndim()}};
      kernel_.extents = {Extent(ranges_[0], domain_), Extent(ranges_[1], domain_)};
      return;
    }
    throw Error("codegen: row group without a reduction");
  }

  RowStage& Current() { return kernel_.stages.back(); }
  int CurrentIndex() const { return static_cast<int>(kernel_.stages.size()) - 1; }

  Expr Let(int stage, const Expr& value) {
    std::string name = StrCat("t", counter_++);
    kernel_.stages[stage].lets.emplace_back(name, value);
    return ast::Var(name, value->dtype);
  }

  Expr RowLet(const Expr& value) {
    if (value->kind == ast::ExprKind::kConst) return value;
    std::string name = StrCat("p", counter_++);
    Current().row_lets.emplace_back(name, value);
    return ast::Var(name, value->dtype);
  }

  // The node's outputs from its inputs' values, cast to the inferred dtypes, depth-bounded.
  std::vector<Expr> Generate(uint32_t nid, const std::vector<Expr>& in, const std::function<Expr(const Expr&)>& let) {
    const Node* node = idx_[nid].source;
    std::vector<Expr> out = Op::GetAttr<FCodeGen>("FCodeGen")[node->op()](node->attrs, in);
    IR_CHECK(out.size() == node->num_outputs()) << "codegen: op '" << node->op()->name << "' (node '"
                                                << node->attrs.name << "') gives no code for these dtypes";
    for (uint32_t i = 0; i < out.size(); ++i) {
      DType dtype = types_[idx_.entry_id(nid, i)];
      Expr value = out[i]->dtype == dtype ? out[i] : ast::Cast(out[i], dtype);
      out[i] = ast::BoundDepth(value, kMaxExprDepth, let);
    }
    return out;
  }

  // Element value `eid` in stage `stage`: a per-row scalar, or a let of this stage.
  Expr Need(int stage, uint32_t eid) {
    auto row = row_values_.find(eid);
    if (row != row_values_.end()) return row->second;
    auto& values = stage_values_[stage];
    auto it = values.find(eid);
    if (it != values.end()) return it->second;
    uint32_t nid = FindNode(eid);
    const Node* node = idx_[nid].source;
    if (node->is_variable()) {
      int k = InputIndex(node);
      Expr index = IndexExpr(StridesIn(input_shapes_[k], domain_), ranges_, domain_);
      return values[eid] = Let(stage, ast::Load(StrCat("in", k), index, input_types_[k]));
    }
    std::vector<Expr> in;
    for (const auto& e : idx_[nid].inputs) in.push_back(Need(stage, idx_.entry_id(e)));
    std::vector<Expr> out = Generate(nid, in, [&](const Expr& sub) { return Let(stage, sub); });
    for (uint32_t i = 0; i < out.size(); ++i) {
      uint32_t oid = idx_.entry_id(nid, i);
      Expr var = Let(stage, out[i]);
      stage_values_[stage][oid] = var;
      if (!home_.count(oid)) home_[oid] = stage;
      if (home_[oid] < stage && CallsMath(out[i])) Reload(stage, oid, var);
    }
    return stage_values_[stage].at(eid);
  }

  // A value first computed by an earlier stage: that stage saves it, this one may reload it.
  void Reload(int stage, uint32_t eid, const Expr& var) {
    auto slot = slot_.find(eid);
    if (slot == slot_.end()) {
      slot = slot_.emplace(eid, static_cast<int>(kernel_.scratch.size())).first;
      kernel_.scratch.push_back(var->dtype);
      kernel_.stages[home_.at(eid)].saves.emplace_back(slot->second, stage_values_[home_.at(eid)].at(eid)->name);
    }
    kernel_.stages[stage].reloads.emplace_back(kernel_.stages[stage].lets.size() - 1, slot->second);
  }

  uint32_t FindNode(uint32_t eid) const {
    uint32_t nid = 0;
    while (nid + 1 < idx_.num_nodes() && idx_.entry_id(nid + 1, 0) <= eid) ++nid;
    return nid;
  }

  // A per-row value of input k for a consumer whose output has the per-row shape `out`.
  Expr RowLoad(int k, const Shape& out) {
    Expr index = IndexExpr(StridesIn(input_shapes_[k], out), {Range{0, out.ndim()}}, out);
    return RowLet(ast::Load(StrCat("in", k), index, input_types_[k]));
  }

  void Visit(uint32_t nid) {
    const Node* node = idx_[nid].source;
    uint32_t eid = idx_.entry_id(nid, 0);
    if (IsReduction(node)) {
      // Every reduction walks the same rows: the same domain, reduced from the same axis on.
      const Shape& in = shapes_[idx_.entry_id(idx_[nid].inputs[0])];
      std::vector<int> axes = Op::GetAttr<FReduceAxes>("FReduceAxes")[node->op()](node->attrs, in.ndim());
      IR_CHECK(in == domain_ && !axes.empty() && axes.front() == ranges_[1].begin && axes.back() == in.ndim() - 1)
          << "codegen: reduction '" << node->attrs.name << "' of " << in << " does not reduce the rows of " << domain_;
      int stage = CurrentIndex();
      Expr value = Need(stage, idx_.entry_id(idx_[nid].inputs[0]));
      std::string kind = Op::GetAttr<std::string>("TReduceKind")[node->op()];
      std::string result = StrCat("r", counter_++);
      Current().reduce_kind = kind;
      Current().reduce_value = value;
      Current().result = result;
      row_values_[eid] = ast::Var(result, value->dtype);
      kernel_.stages.emplace_back();
      stage_values_.emplace_back();
      return;
    }
    if (shapes_[eid] == domain_) {
      Need(CurrentIndex(), eid);
      return;
    }
    // A per-row member: its inputs are per-row values, per-row group inputs or scalars.
    std::vector<Expr> in;
    for (const auto& e : idx_[nid].inputs) {
      const Node* src = idx_[e.node_id].source;
      auto row = row_values_.find(idx_.entry_id(e));
      IR_CHECK(src->is_variable() || row != row_values_.end())
          << "codegen: per-row member '" << node->attrs.name << "' reads a per-element value";
      in.push_back(src->is_variable() ? RowLoad(InputIndex(src), shapes_[eid]) : row->second);
    }
    std::vector<Expr> out = Generate(nid, in, [&](const Expr& sub) { return RowLet(sub); });
    for (uint32_t i = 0; i < out.size(); ++i) row_values_[idx_.entry_id(nid, i)] = RowLet(out[i]);
  }

  const FusedGroup& group_;
  const IndexedGraph& idx_;
  const std::vector<Shape>& input_shapes_;
  const std::vector<DType>& input_types_;
  ShapeVector shapes_;
  DTypeVector types_;
  Shape domain_;
  std::vector<Range> ranges_;
  int counter_ = 0;
  /*! \brief Per-row values by entry (reduction results, per-row members). */
  std::unordered_map<uint32_t, Expr> row_values_;
  /*! \brief Per stage: the lets holding element values by entry. */
  std::vector<std::unordered_map<uint32_t, Expr>> stage_values_;
  /*! \brief The stage that first computes each element value, and its scratch slot if any. */
  std::unordered_map<uint32_t, int> home_;
  std::unordered_map<uint32_t, int> slot_;
  Kernel kernel_;
};

}  // namespace

Kernel BuildRowKernel(const FusedGroup& group, const std::vector<Shape>& input_shapes,
                      const std::vector<DType>& input_types) {
  return RowBuilder(group, input_shapes, input_types).Build();
}

}  // namespace codegen
}  // namespace ir
