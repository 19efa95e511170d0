/*!
 * \file kernel_builder.cc
 * \brief From a fused group to a Kernel: loop domain, buffer indexing, member expressions.
 */
#include "codegen/kernel_builder.h"

#include <algorithm>
#include <unordered_map>

#include "codegen/kernel_builder_parts.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace codegen {
namespace {

using ast::Expr;

// The non-trivial dimensions of a range (extent > 1).
std::vector<int> Dims(const Range& r, const Shape& domain) {
  std::vector<int> dims;
  for (int d = r.begin; d < r.end; ++d) {
    if (domain[d] > 1) dims.push_back(d);
  }
  return dims;
}

// A buffer walks a range with one stride (contiguously, or not at all): returns it, or -1.
int64_t UniformStride(const std::vector<int64_t>& strides, const Range& r, const Shape& domain) {
  std::vector<int> dims = Dims(r, domain);
  if (dims.empty()) return 0;
  bool all_zero = true;
  for (int d : dims) all_zero = all_zero && strides[d] == 0;
  if (all_zero) return 0;
  for (size_t k = 0; k + 1 < dims.size(); ++k) {
    if (strides[dims[k + 1]] == 0 || strides[dims[k]] != strides[dims[k + 1]] * domain[dims[k + 1]]) return -1;
  }
  return strides[dims.back()];
}

Expr Int(int64_t v) { return ast::Const(static_cast<double>(v), DType::kInt64); }

}  // namespace

std::vector<int64_t> StridesIn(const Shape& buffer, const Shape& domain) {
  int nd = domain.ndim(), offset = nd - buffer.ndim();
  IR_CHECK(offset >= 0) << "codegen: buffer " << buffer << " has more dimensions than the domain " << domain;
  std::vector<int64_t> strides(nd, 0);
  int64_t stride = 1;
  for (int d = buffer.ndim() - 1; d >= 0; --d) {
    IR_CHECK(buffer[d] == 1 || buffer[d] == domain[d + offset])
        << "codegen: buffer " << buffer << " does not broadcast to the domain " << domain;
    strides[d + offset] = buffer[d] == 1 ? 0 : stride;
    stride *= buffer[d];
  }
  return strides;
}

Expr IndexExpr(const std::vector<int64_t>& strides, const std::vector<Range>& ranges, const Shape& domain) {
  Expr index;
  auto add = [&index](const Expr& term) { index = index ? index + term : term; };
  for (size_t v = 0; v < ranges.size(); ++v) {
    Expr var = ast::Var(StrCat("i", v), DType::kInt64);
    int64_t uniform = UniformStride(strides, ranges[v], domain);
    if (uniform > 0) {
      add(uniform == 1 ? var : var * Int(uniform));
      continue;
    }
    if (uniform == 0) continue;
    // Mixed broadcast inside one loop variable: recover each dimension's coordinate.
    int64_t inner = 1;
    std::vector<int> dims = Dims(ranges[v], domain);
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      if (strides[*it] != 0) {
        Expr coord = ast::Binary("%", inner == 1 ? var : ast::Binary("/", var, Int(inner)), Int(domain[*it]));
        add(coord * Int(strides[*it]));
      }
      inner *= domain[*it];
    }
  }
  return index ? index : Int(0);
}

int64_t Extent(const Range& r, const Shape& domain) {
  int64_t e = 1;
  for (int d = r.begin; d < r.end; ++d) e *= domain[d];
  return e;
}

int InputIndex(const Node* var) { return std::stoi(var->attrs.name.substr(2)); }

void InferGroupEntries(const FusedGroup& group, const std::vector<Shape>& input_shapes,
                       const std::vector<DType>& input_types, ShapeVector* shapes, DTypeVector* types) {
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  shapes->assign(idx.num_node_entries(), Shape());
  types->assign(idx.num_node_entries(), DType::kUnknown);
  const auto& infer_shape = Op::GetAttr<FInferShape>("FInferShape");
  const auto& infer_type = Op::GetAttr<FInferType>("FInferType");
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      (*shapes)[idx.entry_id(nid, 0)] = input_shapes.at(InputIndex(node));
      (*types)[idx.entry_id(nid, 0)] = input_types.at(InputIndex(node));
      continue;
    }
    std::vector<Shape> in, out(node->num_outputs());
    std::vector<DType> tin, tout(node->num_outputs(), DType::kUnknown);
    for (const auto& e : idx[nid].inputs) {
      in.push_back((*shapes)[idx.entry_id(e)]);
      tin.push_back((*types)[idx.entry_id(e)]);
    }
    infer_shape[node->op()](node->attrs, &in, &out);
    infer_type[node->op()](node->attrs, &tin, &tout);
    for (uint32_t i = 0; i < node->num_outputs(); ++i) {
      (*shapes)[idx.entry_id(nid, i)] = out[i];
      (*types)[idx.entry_id(nid, i)] = tout[i];
    }
  }
}

std::unordered_map<int, int> AddGroupParams(const FusedGroup& group, const std::vector<DType>& input_types,
                                            const DTypeVector& types, Kernel* kernel) {
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  std::unordered_map<int, int> output_param;
  for (size_t k = 0; k < idx.input_nodes().size(); ++k) {
    bool mutated = std::find(group.mutated_inputs.begin(), group.mutated_inputs.end(), static_cast<int>(k)) !=
                   group.mutated_inputs.end();
    kernel->params.push_back(KernelParam{StrCat("in", k), input_types.at(k), mutated});
  }
  for (size_t j = 0; j < idx.outputs().size(); ++j) {
    if (group.IsAliasedOutput(static_cast<int>(j))) continue;
    output_param[static_cast<int>(j)] = static_cast<int>(kernel->params.size());
    kernel->params.push_back(KernelParam{StrCat("out", j), types[idx.entry_id(idx.outputs()[j])], true});
  }
  return output_param;
}

namespace {

// Map kernels: merge neighbouring dimensions while every buffer stays uniform across them.
std::vector<Range> CollapseMap(const Shape& domain, const std::vector<std::vector<int64_t>>& buffers) {
  std::vector<Range> ranges;
  for (int d = 0; d < domain.ndim(); ++d) {
    if (ranges.empty()) {
      ranges.push_back(Range{0, d + 1});
      continue;
    }
    Range merged{ranges.back().begin, d + 1};
    bool uniform = true;
    for (const auto& strides : buffers) uniform = uniform && UniformStride(strides, merged, domain) >= 0;
    if (uniform) {
      ranges.back().end = d + 1;
    } else {
      ranges.push_back(Range{ranges.back().end, d + 1});
    }
  }
  if (ranges.empty()) ranges.push_back(Range{0, 0});
  return ranges;
}

class Builder {
 public:
  Builder(const FusedGroup& group, const std::vector<Shape>& shapes, const std::vector<DType>& types)
      : group_(group), idx_(group.subgraph.indexed_graph()), input_shapes_(shapes), input_types_(types) {}

  Kernel Build() {
    kernel_.kind = group_.kind == "reduce" ? Kernel::kReduce : Kernel::kMap;
    InferGroupEntries(group_, input_shapes_, input_types_, &shapes_, &types_);
    output_param_ = AddGroupParams(group_, input_types_, types_, &kernel_);
    SetDomain();
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) Visit(nid);
    for (size_t j = 0; j < idx_.outputs().size(); ++j) {
      if (group_.IsAliasedOutput(static_cast<int>(j))) continue;
      int param = output_param_.at(static_cast<int>(j));
      const auto& e = idx_.outputs()[j];
      if (e.node_id == reduce_node_) {
        kernel_.reduce_output = param;
      } else {
        kernel_.stores.emplace_back(param, values_[idx_.entry_id(e)]);
      }
    }
    IR_CHECK(kernel_.kind == Kernel::kMap || kernel_.reduce_output >= 0)
        << "codegen: the reduction's result is not written";
    kernel_.AssignCanonicalName();
    return kernel_;
  }

 private:
  void SetDomain() {
    if (kernel_.kind == Kernel::kMap) {
      // Every member computes over one shape: the last member's.
      domain_ = shapes_[idx_.entry_id(idx_.num_nodes() - 1, 0)];
      std::vector<std::vector<int64_t>> buffers;
      for (const Shape& s : input_shapes_) buffers.push_back(StridesIn(s, domain_));
      ranges_ = CollapseMap(domain_, buffers);
      for (const Range& r : ranges_) kernel_.extents.push_back(Extent(r, domain_));
      return;
    }
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      const Node* node = idx_[nid].source;
      if (!node->is_variable() && Op::GetAttr<TOpPattern>("TOpPattern").get(node->op(), kOpaque) == kCommReduce) {
        reduce_node_ = nid;
      }
    }
    IR_CHECK(reduce_node_ != UINT32_MAX) << "codegen: reduce group without a reduction";
    const Node* reduce = idx_[reduce_node_].source;
    domain_ = shapes_[idx_.entry_id(idx_[reduce_node_].inputs[0])];
    std::vector<int> axes = Op::GetAttr<FReduceAxes>("FReduceAxes")[reduce->op()](reduce->attrs, domain_.ndim());
    ranges_ = {Range{0, axes.front()}, Range{axes.front(), axes.back() + 1}, Range{axes.back() + 1, domain_.ndim()}};
    for (const Range& r : ranges_) kernel_.extents.push_back(Extent(r, domain_));
    kernel_.reduce_kind = Op::GetAttr<std::string>("TReduceKind")[reduce->op()];
  }

  Expr Let(const Expr& value) {
    std::string name = StrCat("t", kernel_.lets.size());
    kernel_.lets.emplace_back(name, value);
    return ast::Var(name, value->dtype);
  }

  void Visit(uint32_t nid) {
    const Node* node = idx_[nid].source;
    if (node->is_variable()) {
      int k = InputIndex(node);
      Expr index = IndexExpr(StridesIn(input_shapes_[k], domain_), ranges_, domain_);
      values_[idx_.entry_id(nid, 0)] = Let(ast::Load(StrCat("in", k), index, input_types_[k]));
      return;
    }
    std::vector<Expr> in;
    for (const auto& e : idx_[nid].inputs) in.push_back(values_.at(idx_.entry_id(e)));
    if (nid == reduce_node_) {
      kernel_.reduce_value = in[0];
      return;
    }
    std::vector<Expr> out = Op::GetAttr<FCodeGen>("FCodeGen")[node->op()](node->attrs, in);
    IR_CHECK(out.size() == node->num_outputs()) << "codegen: op '" << node->op()->name << "' (node '"
                                                << node->attrs.name << "') gives no code for these dtypes";
    for (uint32_t i = 0; i < out.size(); ++i) {
      Expr value =
          out[i]->dtype == types_[idx_.entry_id(nid, i)] ? out[i] : ast::Cast(out[i], types_[idx_.entry_id(nid, i)]);
      value = ast::BoundDepth(value, kMaxExprDepth, [this](const Expr& sub) { return Let(sub); });
      values_[idx_.entry_id(nid, i)] = out[i]->kind == ast::ExprKind::kConst ? value : Let(value);
    }
    StoreMutations(nid);
  }

  // A member that writes an input in place (assign) stores its result into that input.
  void StoreMutations(uint32_t nid) {
    const Node* node = idx_[nid].source;
    const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
    const auto* inplace = Op::FindAttr<FInplaceOption>("FInplaceOption");
    if (mutate == nullptr || !mutate->count(node->op()) || inplace == nullptr || !inplace->count(node->op())) return;
    for (uint32_t i : (*mutate)[node->op()](node->attrs)) {
      const Node* var = idx_[idx_[nid].inputs[i].node_id].source;
      IR_CHECK(var->is_variable()) << "codegen: '" << node->attrs.name << "' mutates a value computed in its group";
      for (const auto& pair : (*inplace)[node->op()](node->attrs)) {
        if (pair.first == static_cast<int>(i)) {
          kernel_.stores.emplace_back(InputIndex(var), values_.at(idx_.entry_id(nid, pair.second)));
        }
      }
    }
  }

  const FusedGroup& group_;
  const IndexedGraph& idx_;
  const std::vector<Shape>& input_shapes_;
  const std::vector<DType>& input_types_;
  ShapeVector shapes_;
  DTypeVector types_;
  Shape domain_;
  std::vector<Range> ranges_;
  uint32_t reduce_node_ = UINT32_MAX;
  std::unordered_map<uint32_t, Expr> values_;
  std::unordered_map<int, int> output_param_;
  Kernel kernel_;
};

}  // namespace

Kernel BuildKernel(const FusedGroup& group, const std::vector<Shape>& input_shapes,
                   const std::vector<DType>& input_types) {
  if (group.kind == "row") return BuildRowKernel(group, input_shapes, input_types);
  return Builder(group, input_shapes, input_types).Build();
}

}  // namespace codegen
}  // namespace ir
