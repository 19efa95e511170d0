/*!
 * \file broadcast.cc
 * \brief Binary ops with NumPy broadcasting: arithmetic, comparisons and logic.
 *
 * The math of each op is a functor in binary_functors.h (shared with the scalar forms in
 * scalar.cc); BinaryOp<F> registers what the broadcast form adds: shape inference by
 * broadcasting, the broadcasting kernel, and gradients summed back to each input's shape
 * with collapse_sum_like.
 */
#include "ir/vectorize.h"
#include "ops/binary_functors.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

using ast::Expr;
using binary::GradBuilder;
using binary::GradInputs;
using binary::Term;

template <typename F>
void BinaryCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  binary::DispatchOperand<F::kKind>(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(F::Map(T{}, T{}));
    const T* a = in[0].data<T>();
    const T* b = in[1].data<T>();
    R* y = out[0].data<R>();
    BroadcastSpans walk(in[0].shape(), in[1].shape(), out[0].shape());
    ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
      walk.ForEach(begin, end, [&](int64_t at, int64_t ia, int64_t sa, int64_t ib, int64_t sb, int64_t len) {
        simd::MapSpan<F>(len, y + at, a + ia, sa, b + ib, sb);
      });
    });
  });
}

/*! \brief F's partial derivatives, each summed over the dimensions its input was broadcast along. */
template <typename F>
std::vector<NodeEntry> BinaryGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  GradBuilder g(n);
  GradInputs x{Term::Of(In(n, 0)), Term::Of(In(n, 1)), Term::Of(Out(n)), Term::Of(og[0])};
  std::vector<NodeEntry> grads(2);
  for (int side : {0, 1}) {
    NodeEntry d = F::Grad(g, side, x);
    if (d.node) grads[side] = GradNode("collapse_sum_like", n, side == 0 ? "lhs" : "rhs", {d, In(n, side)});
  }
  return grads;
}

/*! \brief Registers the broadcast form of binary functor F. */
template <typename F>
void BinaryOp(Op& op) {
  op.set_num_inputs(2).set_input_names({"lhs", "rhs"});
  op.set_attr<FInferShape>("FInferShape", BroadcastShape);
  op.set_attr<FInferType>("FInferType", [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
    return binary::InferOperandType(F::kKind, attrs, in, out);
  });
  op.set_attr<FCompute>("FCompute", BinaryCompute<F>);
  op.set_attr<FCodeGen>("FCodeGen", [](const NodeAttrs&, const std::vector<Expr>& in) {
    return binary::GenerateOrEmpty<F>(in[0], in[1]);
  });
  op.set_attr<FGradient>("FGradient", BinaryGradient<F>);
  op.set_attr<TOpPattern>("TOpPattern", kBroadcast);
  op.set_attr<FVectorize>("FVectorize", VectorizeElementwise);
  if (binary::KeepsDType(F::kKind)) {
    // An input as large as the output has its shape (up to leading 1s): out[i] reads it at i.
    op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}, {1, 0}};
    });
  }
}

}  // namespace

IR_REGISTER_OP(add).describe("lhs + rhs, elementwise with NumPy broadcasting.").apply(BinaryOp<binary::Add>);

IR_REGISTER_OP(subtract).describe("lhs - rhs, elementwise with NumPy broadcasting.").apply(BinaryOp<binary::Subtract>);

IR_REGISTER_OP(multiply).describe("lhs * rhs, elementwise with NumPy broadcasting.").apply(BinaryOp<binary::Multiply>);

IR_REGISTER_OP(divide)
    .describe(
        "lhs / rhs, elementwise with NumPy broadcasting. Integers truncate toward zero, "
        "and x / 0 is 0.")
    .apply(BinaryOp<binary::Divide>);

IR_REGISTER_OP(power)
    .describe(
        "lhs ^ rhs, elementwise with NumPy broadcasting. Integer powers wrap on overflow; "
        "a negative integer exponent gives 1 / lhs^-rhs truncated toward zero.")
    .apply(BinaryOp<binary::Power>);

IR_REGISTER_OP(maximum)
    .describe("The larger of lhs and rhs (NaN if either is), elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::Maximum>);

IR_REGISTER_OP(minimum)
    .describe("The smaller of lhs and rhs (NaN if either is), elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::Minimum>);

IR_REGISTER_OP(floor_divide)
    .describe(
        "floor(lhs / rhs), elementwise with NumPy broadcasting (as Python //); "
        "for integers x // 0 is 0.")
    .apply(BinaryOp<binary::FloorDivide>);

IR_REGISTER_OP(floor_mod)
    .describe(
        "lhs - floor(lhs / rhs) * rhs, with the sign of rhs (as Python %), elementwise with "
        "NumPy broadcasting; for integers x % 0 is 0.")
    .apply(BinaryOp<binary::FloorMod>);

IR_REGISTER_OP(equal)
    .describe("lhs == rhs as bool, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::Equal>);

IR_REGISTER_OP(not_equal)
    .describe("lhs != rhs as bool, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::NotEqual>);

IR_REGISTER_OP(greater)
    .describe("lhs > rhs as bool, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::Greater>);

IR_REGISTER_OP(greater_equal)
    .describe("lhs >= rhs as bool, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::GreaterEqual>);

IR_REGISTER_OP(less).describe("lhs < rhs as bool, elementwise with NumPy broadcasting.").apply(BinaryOp<binary::Less>);

IR_REGISTER_OP(less_equal)
    .describe("lhs <= rhs as bool, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::LessEqual>);

IR_REGISTER_OP(logical_and)
    .describe("lhs AND rhs of bool tensors, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::LogicalAnd>);

IR_REGISTER_OP(logical_or)
    .describe("lhs OR rhs of bool tensors, elementwise with NumPy broadcasting.")
    .apply(BinaryOp<binary::LogicalOr>);

}  // namespace op
}  // namespace ir
