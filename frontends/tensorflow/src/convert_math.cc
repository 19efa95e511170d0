/*!
 * \file convert_math.cc
 * \brief Converters for elementwise math, comparisons, casts, matrix products and the
 * elementwise gradient ops TensorFlow's training graphs use.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief A TF op that is our op applied to the same inputs, in order. */
Converter Same(const char* op, size_t num_inputs) {
  return [op, num_inputs](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(num_inputs);
    return {ctx.Op(op, ctx.inputs())};
  };
}

/*!
 * \brief The node's T is an integer type (int8...int64 widen to int32/int64). The inputs must
 * have dtype T: whether the divisor is checked depends on it.
 */
bool IntegerT(const ImportContext& ctx) {
  DType t = ctx.HasAttr("T") ? ctx.Type("T") : ctx.InputType(0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    DType actual = ctx.InputType(i);
    IR_CHECK(actual == DType::kUnknown || actual == t)
        << "input " << i << " has dtype " << DTypeName(actual) << " but attribute 'T' is " << DTypeName(t);
  }
  return t == DType::kInt32 || t == DType::kInt64;
}

/*!
 * \brief Input `i` behind a check_int_operand that raises TensorFlow's error, naming this node,
 * when an element is not `require` ("nonzero", "nonnegative"): TensorFlow's integer kernels raise
 * where ours compute a defined value.
 */
NodeEntry CheckedOperand(ImportContext& ctx, size_t i, const char* require, const char* message) {
  return ctx.Op("check_int_operand", {ctx.input(i)},
                {{"require", require},
                 {"message", message},
                 {"context", StrCat("TensorFlow node '", ctx.name(), "' (op ", ctx.op(), ")")}},
                "check_operand");
}

/*! \brief The divisor (input 1): checked nonzero for integers. */
NodeEntry Divisor(ImportContext& ctx) {
  return IntegerT(ctx) ? CheckedOperand(ctx, 1, "nonzero", "Integer division by zero") : ctx.input(1);
}

/*! \brief trunc(x / y) for floats: |x| // |y| with the sign of x * y. */
NodeEntry FloatTruncateDiv(ImportContext& ctx, const NodeEntry& x, const NodeEntry& y) {
  NodeEntry quotient =
      ctx.Op("floor_divide", {ctx.Op("abs", {x}, {}, "abs_x"), ctx.Op("abs", {y}, {}, "abs_y")}, {}, "abs_quotient");
  NodeEntry sign =
      ctx.Op("multiply", {ctx.Op("sign", {x}, {}, "sign_x"), ctx.Op("sign", {y}, {}, "sign_y")}, {}, "sign");
  return ctx.Op("multiply", {quotient, sign});
}

/*!
 * \brief Div and TruncateDiv: for integers TensorFlow's kernel truncates toward zero (C++
 * semantics), as our `divide` does, and raises on a zero divisor; Div of floats is a true
 * division, TruncateDiv of floats truncates the quotient.
 */
Outputs ConvertDiv(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  if (IntegerT(ctx) || ctx.op() == "Div") return {ctx.Op("divide", {ctx.input(0), Divisor(ctx)})};
  return {FloatTruncateDiv(ctx, ctx.input(0), ctx.input(1))};
}

/*! \brief FloorDiv, FloorMod: our ops round toward -infinity as TensorFlow's do. */
Converter FloorOp(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    return {ctx.Op(op, {ctx.input(0), Divisor(ctx)})};
  };
}

/*!
 * \brief Mod, TruncateMod: the remainder of the truncated division (sign of x): x - trunc(x / y) * y
 * for integers (exact, as C++ %), sign(x) * (|x| mod |y|) for floats (fmod).
 */
Outputs ConvertTruncateMod(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  NodeEntry x = ctx.input(0);
  if (IntegerT(ctx)) {
    NodeEntry y = Divisor(ctx);
    NodeEntry multiple = ctx.Op("multiply", {ctx.Op("divide", {x, y}, {}, "quotient"), y}, {}, "multiple");
    return {ctx.Op("subtract", {x, multiple})};
  }
  NodeEntry rest =
      ctx.Op("floor_mod", {ctx.Op("abs", {x}, {}, "abs_x"), ctx.Op("abs", {ctx.input(1)}, {}, "abs_y")}, {}, "abs_mod");
  return {ctx.Op("multiply", {ctx.Op("sign", {x}, {}, "sign_x"), rest})};
}

/*! \brief DivNoNan: x / y, but 0 where y is 0 (newer tf.losses' safe mean divides with it). */
Outputs ConvertDivNoNan(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  NodeEntry y = ctx.input(1);
  NodeEntry quotient = ctx.Op("divide", {ctx.input(0), y}, {}, "quotient");
  NodeEntry zero_divisor = ctx.Op("equal", {y, ctx.Op("zeros_like", {y}, {}, "zero")}, {}, "zero_divisor");
  return {ctx.Op("where", {zero_divisor, ctx.Op("zeros_like", {quotient}, {}, "zeros"), quotient})};
}

/*! \brief Pow: TensorFlow raises on negative integer exponents. */
Outputs ConvertPow(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  const char* message = "Integers to negative integer powers are not allowed";
  NodeEntry exponent = IntegerT(ctx) ? CheckedOperand(ctx, 1, "nonnegative", message) : ctx.input(1);
  return {ctx.Op("power", {ctx.input(0), exponent})};
}

Outputs ConvertSquaredDifference(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("square", {ctx.Op("subtract", ctx.inputs(), {}, "difference")})};
}

Outputs ConvertRelu6(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("clip", {ctx.input(0)}, {{"a_min", "0"}, {"a_max", "6"}})};
}

Outputs ConvertLeakyRelu(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  double alpha = ctx.Float("alpha", 0.2);
  NodeEntry scaled = ctx.Op("multiply_scalar", {ctx.input(0)}, {{"scalar", NumberAttr(alpha)}}, "scaled");
  return {ctx.Op(alpha <= 1 ? "maximum" : "minimum", {ctx.input(0), scaled})};
}

Outputs ConvertAddN(ImportContext& ctx) {
  ctx.input(0);
  ctx.ExpectListLength("N", ctx.num_inputs());
  if (ctx.num_inputs() == 1) return {ctx.Op("identity", ctx.inputs())};
  return {ctx.Op("add_n", ctx.inputs())};
}

Outputs ConvertCast(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("cast", {ctx.input(0)}, {{"dtype", DTypeName(ctx.Type("DstT"))}})};
}

/*! \brief Throws unless the (possibly partial) shapes can be equal, naming both. */
void ExpectSameShape(const Shape& a, const Shape& b, const std::string& what) {
  Shape merged;
  IR_CHECK(Shape::Merge(a, b, &merged)) << what << " must have the same shape, but got " << a << " and " << b;
}

/*!
 * \brief Select (TF1) as TensorFlow's kernel checks it: 'then' and 'else' of one shape, and a
 * condition that is a scalar, of that shape too, or a vector choosing rows of higher-rank values
 * (its size the number of rows), which becomes a column [n, 1, ...] so `where` broadcasts it.
 */
NodeEntry SelectCondition(ImportContext& ctx) {
  Shape c = ctx.InputShape(0), t = ctx.InputShape(1);
  ExpectSameShape(t, ctx.InputShape(2), "'then' and 'else'");
  if (!c.rank_known() || !t.rank_known() || c.ndim() == 0) return ctx.input(0);
  if (c.ndim() != 1 || t.ndim() <= 1) {
    ExpectSameShape(c, t, "'cond' and 'then'");
    return ctx.input(0);
  }
  IR_CHECK(c[0] < 0 || t[0] < 0 || c[0] == t[0]) << "the number of rows of 'then' " << t << " must match the size of "
                                                 << "the vector 'cond' " << c;
  std::vector<int64_t> column(t.ndim(), 1);
  column[0] = t[0] >= 0 ? t[0] : -1;
  return ctx.Op("reshape", {ctx.input(0)}, {{"shape", IntsAttr(column)}}, "condition");
}

/*! \brief Select -> where with TF1's shape rules; SelectV2 broadcasts all three as `where` does. */
Outputs ConvertSelect(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  NodeEntry cond = ctx.op() == "Select" ? SelectCondition(ctx) : ctx.input(0);
  return {ctx.Op("where", {cond, ctx.input(1), ctx.input(2)})};
}

/*! \brief MatMul (transpose_a/b) and BatchMatMul (adj_x/adj_y: the adjoint of a real matrix). */
Converter MatMul(const char* flag_a, const char* flag_b) {
  return [flag_a, flag_b](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    return {ctx.Op("matmul", ctx.inputs(),
                   {{"transpose_a", ctx.Bool(flag_a, false) ? "true" : "false"},
                    {"transpose_b", ctx.Bool(flag_b, false) ? "true" : "false"}})};
  };
}

Outputs ConvertBiasAdd(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("bias_add", ctx.inputs(), {{"data_format", ctx.Str("data_format", "NHWC")}})};
}

Outputs ConvertBiasAddGrad(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("bias_add_grad", ctx.inputs(), {{"data_format", ctx.Str("data_format", "NHWC")}})};
}

/*! \brief ReluGrad(gradients, features) -> relu_grad(dy, y): the sign of features and outputs agree. */
Outputs ConvertReluGrad(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("relu_grad", {ctx.input(0), ctx.input(1)})};
}

}  // namespace

IR_TF_CONVERTER({"Neg"}, Same("negative", 1));
IR_TF_CONVERTER({"Abs"}, Same("abs", 1));
IR_TF_CONVERTER({"Square"}, Same("square", 1));
IR_TF_CONVERTER({"Sqrt"}, Same("sqrt", 1));
IR_TF_CONVERTER({"Rsqrt"}, Same("rsqrt", 1));
IR_TF_CONVERTER({"Exp"}, Same("exp", 1));
IR_TF_CONVERTER({"Log"}, Same("log", 1));
IR_TF_CONVERTER({"Log1p"}, Same("log1p", 1));
IR_TF_CONVERTER({"Expm1"}, Same("expm1", 1));
IR_TF_CONVERTER({"Tanh"}, Same("tanh", 1));
IR_TF_CONVERTER({"Sigmoid"}, Same("sigmoid", 1));
IR_TF_CONVERTER({"Relu"}, Same("relu", 1));
IR_TF_CONVERTER({"Softplus"}, Same("softplus", 1));
IR_TF_CONVERTER({"Floor"}, Same("floor", 1));
IR_TF_CONVERTER({"Ceil"}, Same("ceil", 1));
IR_TF_CONVERTER({"Round"}, Same("round", 1));
IR_TF_CONVERTER({"Sign"}, Same("sign", 1));
IR_TF_CONVERTER({"Reciprocal", "Inv"}, Same("reciprocal", 1));
IR_TF_CONVERTER({"Sin"}, Same("sin", 1));
IR_TF_CONVERTER({"Cos"}, Same("cos", 1));
IR_TF_CONVERTER({"LogicalNot"}, Same("logical_not", 1));
IR_TF_CONVERTER({"Relu6"}, ConvertRelu6);
IR_TF_CONVERTER({"LeakyRelu"}, ConvertLeakyRelu);

IR_TF_CONVERTER({"Add", "AddV2"}, Same("add", 2));
IR_TF_CONVERTER({"Sub"}, Same("subtract", 2));
IR_TF_CONVERTER({"Mul"}, Same("multiply", 2));
IR_TF_CONVERTER({"RealDiv"}, Same("divide", 2));
IR_TF_CONVERTER({"Div", "TruncateDiv"}, ConvertDiv);
IR_TF_CONVERTER({"FloorDiv"}, FloorOp("floor_divide"));
IR_TF_CONVERTER({"FloorMod"}, FloorOp("floor_mod"));
IR_TF_CONVERTER({"Mod", "TruncateMod"}, ConvertTruncateMod);
IR_TF_CONVERTER({"DivNoNan"}, ConvertDivNoNan);
IR_TF_CONVERTER({"Maximum"}, Same("maximum", 2));
IR_TF_CONVERTER({"Minimum"}, Same("minimum", 2));
IR_TF_CONVERTER({"Pow"}, ConvertPow);
IR_TF_CONVERTER({"SquaredDifference"}, ConvertSquaredDifference);
IR_TF_CONVERTER({"Equal"}, Same("equal", 2));
IR_TF_CONVERTER({"NotEqual"}, Same("not_equal", 2));
IR_TF_CONVERTER({"Greater"}, Same("greater", 2));
IR_TF_CONVERTER({"GreaterEqual"}, Same("greater_equal", 2));
IR_TF_CONVERTER({"Less"}, Same("less", 2));
IR_TF_CONVERTER({"LessEqual"}, Same("less_equal", 2));
IR_TF_CONVERTER({"LogicalAnd"}, Same("logical_and", 2));
IR_TF_CONVERTER({"LogicalOr"}, Same("logical_or", 2));

IR_TF_CONVERTER({"AddN"}, ConvertAddN);
IR_TF_CONVERTER({"Cast"}, ConvertCast);
IR_TF_CONVERTER({"Select", "SelectV2"}, ConvertSelect);
IR_TF_CONVERTER({"MatMul"}, MatMul("transpose_a", "transpose_b"));
IR_TF_CONVERTER({"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}, MatMul("adj_x", "adj_y"));
IR_TF_CONVERTER({"BiasAdd", "BiasAddV1"}, ConvertBiasAdd);
IR_TF_CONVERTER({"BiasAddGrad"}, ConvertBiasAddGrad);
IR_TF_CONVERTER({"ReluGrad"}, ConvertReluGrad);
IR_TF_CONVERTER({"SigmoidGrad"}, Same("sigmoid_grad", 2));
IR_TF_CONVERTER({"TanhGrad"}, Same("tanh_grad", 2));

}  // namespace tf
}  // namespace ir
