#include "passes/passes_test_ops.h"

#include <stdexcept>

#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace passes_test {

NodeEntry Var(const std::string& name, const std::map<std::string, std::string>& dict) {
  return NodeEntry{Node::CreateVariable(name, dict), 0};
}

NodeEntry Apply(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs, uint32_t index) {
  return MakeNode("passes_test_" + op, name, std::move(inputs), {}, index);
}

std::string OpName(const NodeEntry& e) { return e.node->is_variable() ? "variable" : e.node->op()->name; }

namespace {

// Merges every shape it can; a contradicting one is overwritten so that the pass reports it.
bool SameShape(const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape merged;
  for (const auto* list : {in, out}) {
    for (const Shape& s : *list) Shape::Merge(merged, s, &merged);
  }
  for (Shape& s : *in) s = merged;
  for (Shape& s : *out) s = merged;
  return merged.is_known();
}

// The first known dtype wins; contradicting ones are overwritten for the pass to report.
bool SameType(const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out) {
  DType first = DType::kUnknown;
  for (const auto* list : {in, out}) {
    for (DType t : *list) {
      if (first == DType::kUnknown) first = t;
    }
  }
  for (DType& t : *in) t = first;
  for (DType& t : *out) t = first;
  return first != DType::kUnknown;
}

int64_t Dim(const Shape& s, int i) { return s.ndim() > i ? s[i] : kUnknownDim; }
int64_t Either(int64_t a, int64_t b) { return a != kUnknownDim ? a : b; }

bool MatmulShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape &a = (*in)[0], &b = (*in)[1], &c = (*out)[0];
  int64_t ka = Dim(a, 1), kb = Dim(b, 0);
  IR_CHECK(ka == kUnknownDim || kb == kUnknownDim || ka == kb)
      << "node '" << attrs.name << "' (op passes_test_matmul): inner dimensions " << ka << " and " << kb << " differ";
  int64_t m = Either(Dim(a, 0), Dim(c, 0)), k = Either(ka, kb), n = Either(Dim(b, 1), Dim(c, 1));
  a = Shape{m, k};
  b = Shape{k, n};
  c = Shape{m, n};
  return a.is_known() && b.is_known();
}

NodeEntry GradOf(const std::string& op, const NodePtr& node, const std::string& suffix, std::vector<NodeEntry> inputs) {
  return Apply(op, node->attrs.name + "_grad_" + suffix, std::move(inputs));
}

std::vector<NodeEntry> PassThrough(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  return std::vector<NodeEntry>(node->inputs.size(), ograds[0]);
}

std::vector<NodeEntry> NoGradient(const NodePtr& node, const std::vector<NodeEntry>&) {
  return std::vector<NodeEntry>(node->inputs.size(), NodeEntry{});
}

IR_REGISTER_OP(passes_test_add)
    .set_num_inputs(2)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", PassThrough);

IR_REGISTER_OP(passes_test_mul)
    .set_num_inputs(2)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{GradOf("mul", n, "lhs", {og[0], n->inputs[1]}),
                                    GradOf("mul", n, "rhs", {og[0], n->inputs[0]})};
    });

IR_REGISTER_OP(passes_test_add_n)
    .set_num_inputs(kVariadic)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", PassThrough);

IR_REGISTER_OP(passes_test_sum_alt)
    .set_num_inputs(kVariadic)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", PassThrough);

IR_REGISTER_OP(passes_test_zeros_like)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", NoGradient);

IR_REGISTER_OP(passes_test_ones_like)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", NoGradient);

IR_REGISTER_OP(passes_test_stop)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", NoGradient);

IR_REGISTER_OP(passes_test_split)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{GradOf("add", n, "data", {og[0], og[1]})};
    });

IR_REGISTER_OP(passes_test_matmul)
    .set_num_inputs(2)
    .set_attr<FInferShape>("FInferShape", MatmulShape)
    .set_attr<FInferType>("FInferType", SameType);

IR_REGISTER_OP(passes_test_argmax)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", [](const NodeAttrs&, std::vector<DType>*, std::vector<DType>* out) {
      (*out)[0] = DType::kInt32;
      return true;
    });

IR_REGISTER_OP(passes_test_throws)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape",
                           [](const NodeAttrs&, std::vector<Shape>*, std::vector<Shape>*) -> bool {
                             throw std::out_of_range("vector::at index 7");
                           })
    .set_attr<FInferType>("FInferType", SameType);

}  // namespace
}  // namespace passes_test
}  // namespace ir
