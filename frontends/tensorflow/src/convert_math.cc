/*!
 * \file convert_math.cc
 * \brief Converters for elementwise math, comparisons, casts, matrix products and the
 * elementwise gradient ops TensorFlow's training graphs use; the activations Elu, Selu, Softsign
 * and IsNan/IsInf/IsFinite; and the TF ops that are short compositions of our ops (Build): the
 * inverse/hyperbolic functions and Erf, the y/dy gradient ops, ClipByValue, L2Loss, EuclideanNorm
 * and LinSpace.
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

/*! \brief Builds nodes named "<tf node>/<suffix>" for one conversion. */
struct Build {
  ImportContext& ctx;

  NodeEntry Op(const char* op, std::vector<NodeEntry> inputs, const char* suffix) {
    return ctx.Op(op, std::move(inputs), {}, suffix);
  }
  /*! \brief `x <op> scalar` through our `<op>_scalar` ops. */
  NodeEntry Scalar(const char* op, const NodeEntry& x, double scalar, const char* suffix) {
    return ctx.Op(op, {x}, {{"scalar", NumberAttr(scalar)}}, suffix);
  }
  NodeEntry Positive(const NodeEntry& x) { return Scalar("greater_scalar", x, 0, "positive"); }
  NodeEntry Zeros(const NodeEntry& like) { return Op("zeros_like", {like}, "zeros"); }
};

/*! \brief Throws unless input 0 is a float tensor (these are float-only ops in TensorFlow). */
void ExpectFloat(const ImportContext& ctx, size_t i) {
  DType t = ctx.InputType(i);
  IR_CHECK(t == DType::kUnknown || t == DType::kFloat32 || t == DType::kFloat64)
      << "input " << i << " has dtype " << DTypeName(t) << ", but the op takes float tensors";
}

/*! \brief A unary float op built by `fn` from input 0. */
Converter Unary(std::function<NodeEntry(Build&, const NodeEntry&)> fn) {
  return [fn](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(1);
    ExpectFloat(ctx, 0);
    Build b{ctx};
    return {fn(b, ctx.input(0))};
  };
}

/*! \brief A gradient op (gradients or y/dy first, then features/outputs) built by `fn(b, in0, in1)`. */
Converter Binary(std::function<NodeEntry(Build&, const NodeEntry&, const NodeEntry&)> fn) {
  return [fn](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    ExpectFloat(ctx, 0);
    Build b{ctx};
    return {fn(b, ctx.input(0), ctx.input(1))};
  };
}

/*! \brief sinh = (e^x - e^-x) / 2, cosh = (e^x + e^-x) / 2. */
NodeEntry Hyperbolic(Build& b, const NodeEntry& x, const char* combine) {
  NodeEntry ex = b.Op("exp", {x}, "exp");
  NodeEntry emx = b.Op("exp", {b.Op("negative", {x}, "neg")}, "exp_neg");
  return b.ctx.Op("multiply_scalar", {b.Op(combine, {ex, emx}, "combined")}, {{"scalar", "0.5"}});
}

/*! \brief asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1)) (odd, so no cancellation for x < 0). */
NodeEntry Asinh(Build& b, const NodeEntry& x) {
  NodeEntry ax = b.Op("abs", {x}, "abs");
  NodeEntry root = b.Op("sqrt", {b.Scalar("add_scalar", b.Op("square", {x}, "square"), 1, "square_plus_1")}, "root");
  NodeEntry magnitude = b.Op("log", {b.Op("add", {ax, root}, "sum")}, "magnitude");
  return b.ctx.Op("multiply", {b.Op("sign", {x}, "sign"), magnitude});
}

/*! \brief acosh(x) = log(x + sqrt(x^2 - 1)); NaN below 1 as in TensorFlow. */
NodeEntry Acosh(Build& b, const NodeEntry& x) {
  NodeEntry root =
      b.Op("sqrt", {b.Scalar("subtract_scalar", b.Op("square", {x}, "square"), 1, "square_minus_1")}, "root");
  return b.ctx.Op("log", {b.Op("add", {x, root}, "sum")});
}

/*! \brief atanh(x) = (log1p(x) - log1p(-x)) / 2. */
NodeEntry Atanh(Build& b, const NodeEntry& x) {
  NodeEntry diff = b.Op(
      "subtract", {b.Op("log1p", {x}, "log1p"), b.Op("log1p", {b.Op("negative", {x}, "neg")}, "log1p_neg")}, "diff");
  return b.ctx.Op("multiply_scalar", {diff}, {{"scalar", "0.5"}});
}

/*! \brief Relu6Grad(g, features) = g where 0 < features < 6. */
NodeEntry Relu6Grad(Build& b, const NodeEntry& g, const NodeEntry& f) {
  NodeEntry inside = b.Op("logical_and", {b.Positive(f), b.Scalar("less_scalar", f, 6, "below_6")}, "inside");
  return b.ctx.Op("where", {inside, g, b.Zeros(g)});
}

/*! \brief LeakyReluGrad(g, features) = features > 0 ? g : alpha * g. */
Outputs ConvertLeakyReluGrad(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  Build b{ctx};
  NodeEntry g = ctx.input(0);
  NodeEntry leaked = b.Scalar("multiply_scalar", g, ctx.Float("alpha", 0.2), "leaked");
  return {ctx.Op("where", {b.Positive(ctx.input(1)), g, leaked})};
}

/*! \brief ClipByValue(t, min, max) = min(max(t, min), max); the bounds broadcast. */
Outputs ConvertClipByValue(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  NodeEntry low = ctx.Op("maximum", {ctx.input(0), ctx.input(1)}, {}, "low");
  return {ctx.Op("minimum", {low, ctx.input(2)})};
}

/*! \brief L2Loss(t) = sum(t^2) / 2, a scalar. */
Outputs ConvertL2Loss(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  ExpectFloat(ctx, 0);
  Build b{ctx};
  return {
      ctx.Op("multiply_scalar", {b.Op("sum", {b.Op("square", {ctx.input(0)}, "square")}, "sum")}, {{"scalar", "0.5"}})};
}

/*! \brief EuclideanNorm(t, axes) = sqrt(sum(t^2, axes)); no axes is t itself as with Sum. */
Outputs ConvertEuclideanNorm(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  ExpectFloat(ctx, 0);
  std::vector<int64_t> axes = ctx.ConstInts(1);
  if (axes.empty()) return {ctx.Op("abs", {ctx.input(0)})};
  bool keep = ctx.Bool("keep_dims", false);
  NodeEntry sum = ctx.Op("sum", {ctx.Op("square", {ctx.input(0)}, {}, "square")},
                         {{"axis", IntsAttr(axes)}, {"keepdims", keep ? "true" : "false"}}, "sum");
  return {ctx.Op("sqrt", {sum})};
}

/*! \brief LinSpace(start, stop, num): start + i * (stop - start) / (num - 1); num must be known. */
Outputs ConvertLinSpace(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  ExpectFloat(ctx, 0);
  int64_t num = static_cast<int64_t>(ctx.ConstScalar(2));
  IR_CHECK(num > 0) << "Requires num > 0: " << num;
  IR_CHECK(num <= ctx.max_const_bytes() / 8) << "num " << num << " is larger than the importer's constant limit";
  std::vector<double> steps(static_cast<size_t>(num));
  for (size_t i = 0; i < steps.size(); ++i) steps[i] = static_cast<double>(i);
  NDArray index = ctx.InputType(0) == DType::kFloat64
                      ? NDArray::FromVector(Shape{num}, steps)
                      : NDArray::FromVector(Shape{num}, std::vector<float>(steps.begin(), steps.end()));
  Build b{ctx};
  NodeEntry start = ctx.input(0);
  if (num == 1) return {ctx.Op("reshape", {start}, {{"shape", "(1)"}})};
  NodeEntry step =
      b.Scalar("divide_scalar", b.Op("subtract", {ctx.input(1), start}, "range"), static_cast<double>(num - 1), "step");
  return {ctx.Op("add", {start, b.Op("multiply", {step, ctx.Constant(index, "index")}, "offsets")})};
}

/*! \brief SoftsignGrad(gradients, features) = gradients / (1 + |features|)^2. */
Outputs ConvertSoftsignGrad(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  NodeEntry denom = ctx.Op("add_scalar", {ctx.Op("abs", {ctx.input(1)}, {}, "abs")}, {{"scalar", "1"}}, "denom");
  return {ctx.Op("divide", {ctx.input(0), ctx.Op("square", {denom}, {}, "square")})};
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
IR_TF_CONVERTER({"Erf"}, Same("erf", 1));
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

IR_TF_CONVERTER({"Sinh"}, Unary([](Build& b, const NodeEntry& x) { return Hyperbolic(b, x, "subtract"); }));
IR_TF_CONVERTER({"Cosh"}, Unary([](Build& b, const NodeEntry& x) { return Hyperbolic(b, x, "add"); }));
IR_TF_CONVERTER({"Tan"}, Unary([](Build& b, const NodeEntry& x) {
                  return b.ctx.Op("divide", {b.Op("sin", {x}, "sin"), b.Op("cos", {x}, "cos")});
                }));
IR_TF_CONVERTER({"Asinh"}, Unary(Asinh));
IR_TF_CONVERTER({"Acosh"}, Unary(Acosh));
IR_TF_CONVERTER({"Atanh"}, Unary(Atanh));
IR_TF_CONVERTER({"Rint"}, Unary([](Build& b, const NodeEntry& x) { return b.ctx.Op("round", {x}); }));

IR_TF_CONVERTER({"Relu6Grad"}, Binary(Relu6Grad));
IR_TF_CONVERTER({"SoftplusGrad"}, Binary([](Build& b, const NodeEntry& g, const NodeEntry& f) {
                  return b.ctx.Op("multiply", {g, b.Op("sigmoid", {f}, "sigmoid")});
                }));
// The y/dy gradients take the op's output y first, then the incoming gradient dy.
IR_TF_CONVERTER({"SqrtGrad"}, Binary([](Build& b, const NodeEntry& y, const NodeEntry& dy) {
                  return b.ctx.Op("divide", {b.Scalar("multiply_scalar", dy, 0.5, "half_dy"), y});
                }));
IR_TF_CONVERTER({"RsqrtGrad"}, Binary([](Build& b, const NodeEntry& y, const NodeEntry& dy) {
                  NodeEntry cube = b.Op("multiply", {b.Op("square", {y}, "square"), y}, "cube");
                  return b.ctx.Op("multiply", {b.Scalar("multiply_scalar", dy, -0.5, "scaled_dy"), cube});
                }));
IR_TF_CONVERTER({"ReciprocalGrad", "InvGrad"}, Binary([](Build& b, const NodeEntry& y, const NodeEntry& dy) {
                  return b.ctx.Op("multiply", {b.Op("negative", {dy}, "neg_dy"), b.Op("square", {y}, "square")});
                }));
IR_TF_CONVERTER({"LeakyReluGrad"}, ConvertLeakyReluGrad);

IR_TF_CONVERTER({"ClipByValue"}, ConvertClipByValue);
IR_TF_CONVERTER({"L2Loss"}, ConvertL2Loss);
IR_TF_CONVERTER({"EuclideanNorm"}, ConvertEuclideanNorm);
IR_TF_CONVERTER({"LinSpace"}, ConvertLinSpace);

IR_TF_CONVERTER({"Elu"}, Same("elu", 1));
IR_TF_CONVERTER({"EluGrad"}, Same("elu_grad", 2));
IR_TF_CONVERTER({"Selu"}, Same("selu", 1));
IR_TF_CONVERTER({"SeluGrad"}, Same("selu_grad", 2));
IR_TF_CONVERTER({"Softsign"}, Same("softsign", 1));
IR_TF_CONVERTER({"SoftsignGrad"}, ConvertSoftsignGrad);
IR_TF_CONVERTER({"IsNan"}, Same("is_nan", 1));
IR_TF_CONVERTER({"IsInf"}, Same("is_inf", 1));
IR_TF_CONVERTER({"IsFinite"}, Same("is_finite", 1));

}  // namespace tf
}  // namespace ir
