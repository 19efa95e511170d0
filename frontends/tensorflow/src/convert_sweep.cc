/*!
 * \file convert_sweep.cc
 * \brief Converters for TF ops that are short compositions of our ops: the activations and
 * inverse/hyperbolic functions real graphs use, their gradient ops, ClipByValue, L2Loss,
 * EuclideanNorm, BroadcastArgs and LinSpace.
 */
#include <cmath>

#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

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

/*!
 * \brief erf by Abramowitz & Stegun 7.1.26: sign(x) (1 - poly(t) e^{-x^2}), t = 1 / (1 + p|x|),
 * absolute error below 1.5e-7, i.e. float32 precision; float64 is refused rather than rounded.
 */
Outputs ConvertErf(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  IR_CHECK(ctx.InputType(0) != DType::kFloat64)
      << "Erf of float64 is not supported (it is computed to float32 precision only)";
  ExpectFloat(ctx, 0);
  Build b{ctx};
  NodeEntry x = ctx.input(0), ax = b.Op("abs", {x}, "abs");
  NodeEntry t =
      b.Op("reciprocal", {b.Scalar("add_scalar", b.Scalar("multiply_scalar", ax, 0.3275911, "px"), 1, "den")}, "t");
  const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  NodeEntry poly = b.Scalar("multiply_scalar", t, a[0], "poly0");
  for (int i = 1; i < 5; ++i) {
    poly = b.Op("multiply", {b.Scalar("add_scalar", poly, a[i], "poly_add"), t}, "poly");
  }
  NodeEntry gauss = b.Op("exp", {b.Op("negative", {b.Op("square", {x}, "square")}, "neg_square")}, "gauss");
  NodeEntry magnitude = b.Scalar("rsubtract_scalar", b.Op("multiply", {poly, gauss}, "tail"), 1, "magnitude");
  return {ctx.Op("multiply", {b.Op("sign", {x}, "sign"), magnitude})};
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

/*! \brief BroadcastArgs(s0, s1): the broadcast shape of two known shapes, as a constant. */
Outputs ConvertBroadcastArgs(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  std::vector<int64_t> a = ctx.ConstInts(0), b = ctx.ConstInts(1);
  if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
  if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    IR_CHECK(a[i] == b[i] || a[i] == 1 || b[i] == 1)
        << "shapes " << Shape(ctx.ConstInts(0)) << " and " << Shape(ctx.ConstInts(1)) << " do not broadcast";
    out[i] = a[i] == 1 ? b[i] : a[i];
  }
  Shape shape{static_cast<int64_t>(out.size())};
  if (ctx.HasAttr("T") && ctx.Type("T") == DType::kInt64) return {ctx.Constant(NDArray::FromVector(shape, out))};
  return {ctx.Constant(NDArray::FromVector(shape, std::vector<int32_t>(out.begin(), out.end())))};
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

/*! \brief ResourceGather(resource, indices): rows of the variable (batch_dims 0). */
Outputs ConvertResourceGather(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  IR_CHECK(ctx.Int("batch_dims", 0) == 0) << "batch_dims other than 0 is not supported";
  return {ctx.Op("gather", {ctx.VariableInput(0), ctx.input(1)}, {{"axis", "0"}})};
}

}  // namespace

IR_TF_CONVERTER({"Sinh"}, Unary([](Build& b, const NodeEntry& x) { return Hyperbolic(b, x, "subtract"); }));
IR_TF_CONVERTER({"Cosh"}, Unary([](Build& b, const NodeEntry& x) { return Hyperbolic(b, x, "add"); }));
IR_TF_CONVERTER({"Tan"}, Unary([](Build& b, const NodeEntry& x) {
                  return b.ctx.Op("divide", {b.Op("sin", {x}, "sin"), b.Op("cos", {x}, "cos")});
                }));
IR_TF_CONVERTER({"Asinh"}, Unary(Asinh));
IR_TF_CONVERTER({"Acosh"}, Unary(Acosh));
IR_TF_CONVERTER({"Atanh"}, Unary(Atanh));
IR_TF_CONVERTER({"Rint"}, Unary([](Build& b, const NodeEntry& x) { return b.ctx.Op("round", {x}); }));
IR_TF_CONVERTER({"Erf"}, ConvertErf);

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
IR_TF_CONVERTER({"BroadcastArgs"}, ConvertBroadcastArgs);
IR_TF_CONVERTER({"LinSpace"}, ConvertLinSpace);
IR_TF_CONVERTER({"ResourceGather"}, ConvertResourceGather);

}  // namespace tf
}  // namespace ir
