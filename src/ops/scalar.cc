/*!
 * \file scalar.cc
 * \brief The scalar forms of the binary ops: `<op>_scalar` computes `x <op> scalar` and
 * `r<op>_scalar` computes `scalar <op> x` (for the non-commutative ops).
 *
 * The math is the binary functor of the op (binary_functors.h); ScalarOp<F, kReversed>
 * registers what the scalar form adds. The scalar is converted to x's dtype, and must be
 * representable in it exactly when x is an integer or bool tensor.
 */
#include <cstdlib>

#include "ops/binary_functors.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

/*! \brief The parameter of every scalar op. */
struct ScalarParam : public dmlc::Parameter<ScalarParam> {
  double scalar;
  DMLC_DECLARE_PARAMETER(ScalarParam) {
    DMLC_DECLARE_FIELD(scalar).describe("The scalar operand, converted to the input's dtype.");
  }
};
DMLC_REGISTER_PARAMETER(ScalarParam);

using ast::Expr;
using binary::GradBuilder;
using binary::GradInputs;
using binary::Term;

/*!
 * \brief The scalar, correctly rounded from the attribute's text: dmlc's parser is not (it reads
 * "0.17677669529663687", 1/sqrt(32), one ulp high), and a gradient that wrote that value back as text
 * would no longer equal the forward's scalar, so rules binding both to one attribute (fused
 * attention's scale) would not match.
 */
double ScalarOf(const NodeAttrs& attrs) {
  auto text = attrs.dict.find("scalar");
  if (text != attrs.dict.end()) {
    char* end = nullptr;
    double value = std::strtod(text->second.c_str(), &end);
    if (end != text->second.c_str() && *end == '\0') return value;
  }
  return dmlc::get<ScalarParam>(attrs.parsed).scalar;
}

/*! \brief Throws naming the node when `scalar` would change on conversion to `dtype`. */
void CheckScalarFits(const NodeAttrs& attrs, DType dtype) {
  double s = ScalarOf(attrs);
  IR_CHECK(ValueFitsDType(s, dtype)) << NodeDesc(attrs) << ": scalar " << NumberToString(s)
                                     << " is not representable in the input's dtype " << DTypeName(dtype);
}

template <typename F, bool kReversed>
void ScalarCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  double scalar = ScalarOf(attrs);
  binary::DispatchOperand<F::kKind>(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(F::Map(T{}, T{}));
    const T* x = in[0].data<T>();
    R* y = out[0].data<R>();
    const T s = static_cast<T>(scalar);
    ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
      if (kReversed) {
        simd::MapScalarVector<F>(end - begin, y + begin, s, x + begin);
      } else {
        simd::MapVectorScalar<F>(end - begin, y + begin, x + begin, s);
      }
    });
  });
}

template <typename F, bool kReversed>
std::vector<NodeEntry> ScalarGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  Term x = Term::Of(In(n, 0)), s = Term::Constant(ScalarOf(n->attrs));
  GradInputs args{kReversed ? s : x, kReversed ? x : s, Term::Of(Out(n)), Term::Of(og[0])};
  return {F::Grad(GradBuilder(n), kReversed ? 1 : 0, args)};
}

/*! \brief Registers `x F scalar`, or `scalar F x` when kReversed. */
template <typename F, bool kReversed>
void ScalarOp(Op& op) {
  op.set_num_inputs(1).set_input_names({"x"}).set_param<ScalarParam>();
  op.set_attr<FInferShape>("FInferShape", ElemwiseShape);
  op.set_attr<FInferType>("FInferType", [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
    bool known = binary::InferOperandType(F::kKind, attrs, in, out);
    CheckScalarFits(attrs, (*in)[0]);
    return known;
  });
  op.set_attr<FCompute>("FCompute", ScalarCompute<F, kReversed>);
  op.set_attr<FCodeGen>("FCodeGen", [](const NodeAttrs& attrs, const std::vector<Expr>& in) {
    Expr s = ast::Const(ScalarOf(attrs), in[0]->dtype);
    return kReversed ? binary::GenerateOrEmpty<F>(s, in[0]) : binary::GenerateOrEmpty<F>(in[0], s);
  });
  op.set_attr<FGradient>("FGradient", ScalarGradient<F, kReversed>);
  op.set_attr<TOpPattern>("TOpPattern", kElemWise);
  if (binary::KeepsDType(F::kKind)) {
    op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    });
  }
}

template <typename F>
void ScalarRhs(Op& op) {
  ScalarOp<F, false>(op);
}
template <typename F>
void ScalarLhs(Op& op) {
  ScalarOp<F, true>(op);
}

}  // namespace

IR_REGISTER_OP(add_scalar).describe("x + scalar, elementwise.").apply(ScalarRhs<binary::Add>);
IR_REGISTER_OP(subtract_scalar).describe("x - scalar, elementwise.").apply(ScalarRhs<binary::Subtract>);
IR_REGISTER_OP(rsubtract_scalar).describe("scalar - x, elementwise.").apply(ScalarLhs<binary::Subtract>);
IR_REGISTER_OP(multiply_scalar).describe("x * scalar, elementwise.").apply(ScalarRhs<binary::Multiply>);
IR_REGISTER_OP(divide_scalar)
    .describe("x / scalar, elementwise (integers as divide).")
    .apply(ScalarRhs<binary::Divide>);
IR_REGISTER_OP(rdivide_scalar)
    .describe("scalar / x, elementwise (integers as divide).")
    .apply(ScalarLhs<binary::Divide>);
IR_REGISTER_OP(power_scalar).describe("x ^ scalar, elementwise (integers as power).").apply(ScalarRhs<binary::Power>);
IR_REGISTER_OP(rpower_scalar).describe("scalar ^ x, elementwise (integers as power).").apply(ScalarLhs<binary::Power>);
IR_REGISTER_OP(maximum_scalar).describe("max(x, scalar), elementwise.").apply(ScalarRhs<binary::Maximum>);
IR_REGISTER_OP(minimum_scalar).describe("min(x, scalar), elementwise.").apply(ScalarRhs<binary::Minimum>);
IR_REGISTER_OP(floor_divide_scalar)
    .describe("floor(x / scalar), elementwise (as floor_divide).")
    .apply(ScalarRhs<binary::FloorDivide>);
IR_REGISTER_OP(rfloor_divide_scalar)
    .describe("floor(scalar / x), elementwise (as floor_divide).")
    .apply(ScalarLhs<binary::FloorDivide>);
IR_REGISTER_OP(floor_mod_scalar)
    .describe("x - floor(x / scalar) * scalar, elementwise (as floor_mod).")
    .apply(ScalarRhs<binary::FloorMod>);
IR_REGISTER_OP(rfloor_mod_scalar)
    .describe("scalar - floor(scalar / x) * x, elementwise (as floor_mod).")
    .apply(ScalarLhs<binary::FloorMod>);
IR_REGISTER_OP(equal_scalar).describe("x == scalar as bool, elementwise.").apply(ScalarRhs<binary::Equal>);
IR_REGISTER_OP(not_equal_scalar).describe("x != scalar as bool, elementwise.").apply(ScalarRhs<binary::NotEqual>);
IR_REGISTER_OP(greater_scalar).describe("x > scalar as bool, elementwise.").apply(ScalarRhs<binary::Greater>);
IR_REGISTER_OP(greater_equal_scalar)
    .describe("x >= scalar as bool, elementwise.")
    .apply(ScalarRhs<binary::GreaterEqual>);
IR_REGISTER_OP(less_scalar).describe("x < scalar as bool, elementwise.").apply(ScalarRhs<binary::Less>);
IR_REGISTER_OP(less_equal_scalar).describe("x <= scalar as bool, elementwise.").apply(ScalarRhs<binary::LessEqual>);
IR_REGISTER_OP(logical_and_scalar)
    .describe("x AND scalar (0 or 1) of a bool tensor.")
    .apply(ScalarRhs<binary::LogicalAnd>);
IR_REGISTER_OP(logical_or_scalar)
    .describe("x OR scalar (0 or 1) of a bool tensor.")
    .apply(ScalarRhs<binary::LogicalOr>);

}  // namespace op
}  // namespace ir
