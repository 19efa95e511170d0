/*!
 * \file elemwise_activation.cc
 * \brief Elementwise activations and float tests of TensorFlow: elu, selu, softsign, their
 * backward ops elu_grad and selu_grad, and is_nan, is_inf, is_finite (bool results). Each has
 * FCodeGen, so fused CPU kernels and the OpenCL/CUDA kernels derive from it.
 */
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

using ast::Expr;

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

/*!
 * \brief Registers a float elementwise op of same-shaped inputs: out = F::Map(in...) on the CPU,
 * F::Gen(in...) in generated kernels; kBool makes the result bool.
 */
template <typename F, size_t N, bool kBool = false>
void FloatElemwise(Op& op) {
  op.set_num_inputs(static_cast<uint32_t>(N));
  op.set_attr<FInferShape>("FInferShape", ElemwiseShape);
  op.set_attr<FInferType>("FInferType", [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
    DType dtype = (*in)[0];
    for (size_t i = 1; i < N; ++i) AssignType(attrs, StrCat("input ", i), &dtype, (*in)[i]);
    if (!kBool) AssignType(attrs, "output 0", &dtype, (*out)[0]);
    CheckDType(attrs, "input", dtype, FloatTypes());
    for (size_t i = 0; i < N; ++i) (*in)[i] = dtype;
    (*out)[0] = kBool ? DType::kBool : dtype;
    return AllKnown(*in, *out);
  });
  op.set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                                       const std::vector<NDArray>& out) {
    IR_FLOAT_SWITCH(in[0].dtype(), T, {
      using R = std::conditional_t<kBool, bool, T>;
      const T* a = in[0].data<T>();
      const T* b = in[N - 1].data<T>();
      R* dst = out[0].data<R>();
      ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = F::template Map<T>(a[i], b[i]);
      });
    });
  });
  op.set_attr<FCodeGen>("FCodeGen", [](const NodeAttrs&, const std::vector<Expr>& in) -> std::vector<Expr> {
    if (!DTypeIsFloat(in[0]->dtype) || in[N - 1]->dtype != in[0]->dtype) return {};
    return {F::Gen(in[0], in[N - 1])};
  });
  if (!kBool) {
    op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    });
  }
  op.set_attr<TOpPattern>("TOpPattern", kElemWise);
}

Expr C(double value, const Expr& like) { return ast::ConstLike(value, like); }
Expr Negative(const Expr& x) { return ast::Binary("<", x, C(0, x)); }

// Unary functors take (x, x); binary ones (a, b).
struct Elu {  // x < 0 ? e^x - 1 : x
  template <typename T>
  static T Map(T x, T) {
    return x < T(0) ? std::expm1(x) : x;
  }
  static Expr Gen(const Expr& x, const Expr&) { return ast::Select(Negative(x), ast::Call("expm1", {x}), x); }
};
struct EluGrad {  // (dy, y): y < 0 ? dy * (y + 1) : dy (TensorFlow EluGrad(gradients, outputs))
  template <typename T>
  static T Map(T dy, T y) {
    return y < T(0) ? dy * (y + T(1)) : dy;
  }
  static Expr Gen(const Expr& dy, const Expr& y) { return ast::Select(Negative(y), dy * (y + C(1, y)), dy); }
};
struct Selu {  // scale * (x < 0 ? alpha * (e^x - 1) : x)
  template <typename T>
  static T Map(T x, T) {
    return x < T(0) ? T(kSeluScale * kSeluAlpha) * std::expm1(x) : T(kSeluScale) * x;
  }
  static Expr Gen(const Expr& x, const Expr&) {
    return ast::Select(Negative(x), C(kSeluScale * kSeluAlpha, x) * ast::Call("expm1", {x}), C(kSeluScale, x) * x);
  }
};
struct SeluGrad {  // (dy, y): y < 0 ? dy * (y + scale * alpha) : dy * scale
  template <typename T>
  static T Map(T dy, T y) {
    return y < T(0) ? dy * (y + T(kSeluScale * kSeluAlpha)) : dy * T(kSeluScale);
  }
  static Expr Gen(const Expr& dy, const Expr& y) {
    return ast::Select(Negative(y), dy * (y + C(kSeluScale * kSeluAlpha, y)), dy * C(kSeluScale, y));
  }
};
struct Softsign {  // x / (1 + |x|)
  template <typename T>
  static T Map(T x, T) {
    return x / (T(1) + std::fabs(x));
  }
  static Expr Gen(const Expr& x, const Expr&) { return x / (C(1, x) + ast::Call("fabs", {x})); }
};
struct IsNan {
  template <typename T>
  static bool Map(T x, T) {
    return std::isnan(x);
  }
  static Expr Gen(const Expr& x, const Expr&) { return ast::Binary("!=", x, x); }
};
struct IsInf {
  template <typename T>
  static bool Map(T x, T) {
    return std::isinf(x);
  }
  static Expr Gen(const Expr& x, const Expr&) {
    return ast::Binary("==", ast::Call("fabs", {x}), C(std::numeric_limits<double>::infinity(), x));
  }
};
struct IsFinite {
  template <typename T>
  static bool Map(T x, T) {
    return std::isfinite(x);
  }
  static Expr Gen(const Expr& x, const Expr&) {
    return ast::Binary("<", ast::Call("fabs", {x}), C(std::numeric_limits<double>::infinity(), x));
  }
};

NodeEntry Apply(const NodePtr& n, const std::string& op, std::vector<NodeEntry> in) {
  return GradNode(op, n, op, std::move(in));
}

/*! \brief Gradient of a backward op g(dy, y), linear in dy: d/d(dy) = g(og, y); d/dy = og * dy where y < 0. */
FGradient BackwardOpGradient(const std::string& op) {
  return [op](const NodePtr& n, const std::vector<NodeEntry>& og) {
    NodeEntry zero = Apply(n, "zeros_like", {og[0]});
    NodeEntry neg = GradNode("less_scalar", n, "negative", {In(n, 1)}, {{"scalar", "0"}});
    NodeEntry d_y = Apply(n, "where", {neg, Apply(n, "multiply", {og[0], In(n, 0)}), zero});
    return std::vector<NodeEntry>{Apply(n, op, {og[0], In(n, 1)}), d_y};
  };
}

}  // namespace

IR_REGISTER_OP(elu)
    .describe("Exponential linear unit: x < 0 ? e^x - 1 : x (TensorFlow Elu).")
    .set_input_names({"x"})
    .apply(FloatElemwise<Elu, 1>)
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "elu_grad", {og[0], Out(n)})};
    });

IR_REGISTER_OP(elu_grad)
    .describe("Gradient of elu from its output: y < 0 ? dy * (y + 1) : dy (TensorFlow EluGrad(gradients, outputs)).")
    .set_input_names({"dy", "y"})
    .apply(FloatElemwise<EluGrad, 2>)
    .set_attr<FGradient>("FGradient", BackwardOpGradient("elu_grad"));

IR_REGISTER_OP(selu)
    .describe("Scaled elu: scale * (x < 0 ? alpha * (e^x - 1) : x), TensorFlow's scale and alpha (TensorFlow Selu).")
    .set_input_names({"x"})
    .apply(FloatElemwise<Selu, 1>)
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "selu_grad", {og[0], Out(n)})};
    });

IR_REGISTER_OP(selu_grad)
    .describe("Gradient of selu from its output: y < 0 ? dy * (y + scale * alpha) : dy * scale (TensorFlow SeluGrad).")
    .set_input_names({"dy", "y"})
    .apply(FloatElemwise<SeluGrad, 2>)
    .set_attr<FGradient>("FGradient", BackwardOpGradient("selu_grad"));

IR_REGISTER_OP(softsign)
    .describe("x / (1 + |x|), elementwise (TensorFlow Softsign).")
    .set_input_names({"x"})
    .apply(FloatElemwise<Softsign, 1>)
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      // d/dx = 1 / (1 + |x|)^2
      NodeEntry denom = GradNode("add_scalar", n, "one_plus_abs", {Apply(n, "abs", {In(n, 0)})}, {{"scalar", "1"}});
      return std::vector<NodeEntry>{Apply(n, "divide", {og[0], Apply(n, "square", {denom})})};
    });

IR_REGISTER_OP(is_nan)
    .describe("Whether x is NaN, elementwise, as bool (TensorFlow IsNan).")
    .set_input_names({"x"})
    .apply(FloatElemwise<IsNan, 1, true>)
    .set_attr<FGradient>("FGradient", ZeroGradient);

IR_REGISTER_OP(is_inf)
    .describe("Whether x is +inf or -inf, elementwise, as bool (TensorFlow IsInf).")
    .set_input_names({"x"})
    .apply(FloatElemwise<IsInf, 1, true>)
    .set_attr<FGradient>("FGradient", ZeroGradient);

IR_REGISTER_OP(is_finite)
    .describe("Whether x is neither infinite nor NaN, elementwise, as bool (TensorFlow IsFinite).")
    .set_input_names({"x"})
    .apply(FloatElemwise<IsFinite, 1, true>)
    .set_attr<FGradient>("FGradient", ZeroGradient);

}  // namespace op
}  // namespace ir
