/*!
 * \file elemwise.cc
 * \brief Unary elementwise math ops and the elementwise backward ops of activations.
 *
 * Each op is one functor: `Map` is the CPU reference math, `Gen` the same math as an AST
 * expression for fused kernels. UnaryOp<F> registers everything the family shares.
 */
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "ops/op_common.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

using ast::Expr;

/*! \brief Which dtypes an elementwise op accepts. */
enum class TypeClass { kFloat, kNumeric, kBool };

const DTypeSet& TypesOf(TypeClass cls) {
  static const DTypeSet bool_only = {DType::kBool};
  return cls == TypeClass::kFloat ? FloatTypes() : cls == TypeClass::kNumeric ? NumericTypes() : bool_only;
}

/*! \brief Runs body(T{}) with the C++ type of `dtype` among the types of `cls`. */
template <TypeClass kClass, typename Body>
void DispatchType(DType dtype, const Body& body) {
  if constexpr (kClass == TypeClass::kFloat) {
    IR_FLOAT_SWITCH(dtype, DT, body(DT{}));
  } else if constexpr (kClass == TypeClass::kNumeric) {
    IR_NUMERIC_SWITCH(dtype, DT, body(DT{}));
  } else {
    IR_CHECK(dtype == DType::kBool) << "kernel expects bool, got " << DTypeName(dtype);
    body(bool{});
  }
}

/*! \brief out[i] = F::Map(in0[i], in1[i], ...) over arrays of one shape and dtype. */
template <typename F, TypeClass kClass, size_t... I>
void ElemwiseCompute(const std::vector<NDArray>& in, const NDArray& out, std::index_sequence<I...>) {
  DispatchType<kClass>(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src[] = {in[I].data<T>()...};
    T* dst = out.data<T>();
    ParallelFor(out.Size(),
                [&](int64_t begin, int64_t end) { simd::Map<F>(end - begin, dst + begin, (src[I] + begin)...); });
  });
}

template <size_t N, size_t... I>
auto ToTupleImpl(const std::vector<Expr>& in, std::index_sequence<I...>) {
  return std::make_tuple(in[I]...);
}
template <size_t N>
auto ToTuple(const std::vector<Expr>& in) {
  return ToTupleImpl<N>(in, std::make_index_sequence<N>());
}

/*! \brief Registers the shared story of an elementwise op with N same-shaped inputs. */
template <typename F, TypeClass kClass, size_t N>
auto ElemwiseOp(const std::vector<std::string>& input_names) {
  return [input_names](Op& op) {
    // Separate statements: lambdas that use template parameters make a chain type-dependent.
    op.set_num_inputs(static_cast<uint32_t>(N)).set_input_names(input_names);
    op.set_attr<FInferShape>("FInferShape", ElemwiseShape);
    op.set_attr<FInferType>("FInferType", [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
      bool known = ElemwiseType(attrs, in, out);
      CheckDType(attrs, "input", (*out)[0], TypesOf(kClass));
      return known;
    });
    op.set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                                         const std::vector<NDArray>& out) {
      ElemwiseCompute<F, kClass>(in, out[0], std::make_index_sequence<N>());
    });
    op.set_attr<FCodeGen>("FCodeGen", [](const NodeAttrs&, const std::vector<Expr>& in) -> std::vector<Expr> {
      const DTypeSet& ok = TypesOf(kClass);
      if (std::find(ok.begin(), ok.end(), in[0]->dtype) == ok.end()) return {};
      return {std::apply(F::Gen, ToTuple<N>(in))};
    });
    op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    });
    op.set_attr<TOpPattern>("TOpPattern", kElemWise);
  };
}

template <typename F, TypeClass kClass>
auto UnaryOp() {
  return ElemwiseOp<F, kClass, 1>({"x"});
}

Expr Zero(const Expr& like) { return ast::ConstLike(0, like); }
Expr One(const Expr& like) { return ast::ConstLike(1, like); }

// ---------------------------------------------------------------- math functors

struct Negative {
  template <typename T>
  static T Map(T x) {
    return -x;
  }
  static Expr Gen(const Expr& x) { return -x; }
};
struct Abs {
  template <typename T>
  static T Map(T x) {
    // fabs for floats: |-0| is +0 (IEEE, TensorFlow, and the generated code's fabs agree).
    if constexpr (std::is_floating_point<T>::value) return std::fabs(x);
    return x < T(0) ? T(-x) : x;
  }
  static Expr Gen(const Expr& x) {
    return DTypeIsFloat(x->dtype) ? ast::Call("fabs", {x}) : ast::Select(ast::Binary("<", x, Zero(x)), -x, x);
  }
};
struct Square {
  template <typename T>
  static T Map(T x) {
    return x * x;
  }
  static Expr Gen(const Expr& x) { return x * x; }
};
struct Sign {
  template <typename T>
  static T Map(T x) {
    return T((x > T(0)) - (x < T(0)));
  }
  static Expr Gen(const Expr& x) {
    return ast::Select(ast::Binary(">", x, Zero(x)), One(x),
                       ast::Select(ast::Binary("<", x, Zero(x)), ast::ConstLike(-1, x), Zero(x)));
  }
};
struct Relu {
  template <typename T>
  static T Map(T x) {
    return x > T(0) ? x : T(0);
  }
  static Expr Gen(const Expr& x) { return ast::Select(ast::Binary(">", x, Zero(x)), x, Zero(x)); }
};

/*! \brief A float functor that calls one math function of the same name in C++ and in the AST. */
#define IR_MATH_FUNCTOR(Name, cpp_expr, ast_fn)                       \
  struct Name {                                                       \
    template <typename T>                                             \
    static T Map(T x) {                                               \
      return cpp_expr;                                                \
    }                                                                 \
    static Expr Gen(const Expr& x) { return ast::Call(ast_fn, {x}); } \
  }
IR_MATH_FUNCTOR(Exp, simd::Exp(x), "exp");
IR_MATH_FUNCTOR(Log, std::log(x), "log");
IR_MATH_FUNCTOR(Log1p, std::log1p(x), "log1p");
IR_MATH_FUNCTOR(Expm1, std::expm1(x), "expm1");
IR_MATH_FUNCTOR(Sqrt, std::sqrt(x), "sqrt");
IR_MATH_FUNCTOR(Rsqrt, T(1) / std::sqrt(x), "rsqrt");
IR_MATH_FUNCTOR(Sin, std::sin(x), "sin");
IR_MATH_FUNCTOR(Cos, std::cos(x), "cos");
IR_MATH_FUNCTOR(Tanh, simd::Tanh(x), "tanh");
IR_MATH_FUNCTOR(Erf, simd::Erf(x), "erf");
IR_MATH_FUNCTOR(Floor, std::floor(x), "floor");
IR_MATH_FUNCTOR(Ceil, std::ceil(x), "ceil");
// Round half to even, as NumPy and TensorFlow do.
IR_MATH_FUNCTOR(Round, std::nearbyint(x), "rint");
#undef IR_MATH_FUNCTOR

struct Reciprocal {
  template <typename T>
  static T Map(T x) {
    return T(1) / x;
  }
  static Expr Gen(const Expr& x) { return One(x) / x; }
};
struct Sigmoid {
  template <typename T>
  static T Map(T x) {
    return simd::Sigmoid(x);
  }
  static Expr Gen(const Expr& x) { return One(x) / (One(x) + ast::Call("exp", {-x})); }
};
// log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
struct Softplus {
  template <typename T>
  static T Map(T x) {
    return std::max(x, T(0)) + std::log1p(simd::Exp(-std::abs(x)));
  }
  static Expr Gen(const Expr& x) {
    return ast::Call("fmax", {x, Zero(x)}) + ast::Call("log1p", {ast::Call("exp", {-ast::Call("fabs", {x})})});
  }
};
struct LogicalNot {
  static bool Map(bool x) { return !x; }
  static Expr Gen(const Expr& x) { return ast::Unary("!", x); }
};

// Backward ops of activations, in TensorFlow's argument order.
struct ReluGrad {  // (dy, y): dy where y > 0
  template <typename T>
  static T Map(T dy, T y) {
    return y > T(0) ? dy : T(0);
  }
  static Expr Gen(const Expr& dy, const Expr& y) { return ast::Select(ast::Binary(">", y, Zero(y)), dy, Zero(dy)); }
};
struct SigmoidGrad {  // (y, dy): dy * y * (1 - y)
  template <typename T>
  static T Map(T y, T dy) {
    return dy * y * (T(1) - y);
  }
  static Expr Gen(const Expr& y, const Expr& dy) { return dy * y * (One(y) - y); }
};
struct TanhGrad {  // (y, dy): dy * (1 - y^2)
  template <typename T>
  static T Map(T y, T dy) {
    return dy * (T(1) - y * y);
  }
  static Expr Gen(const Expr& y, const Expr& dy) { return dy * (One(y) - y * y); }
};

// ---------------------------------------------------------------- gradients

NodeEntry Apply(const NodePtr& n, const std::string& op, std::vector<NodeEntry> in,
                const std::map<std::string, std::string>& attrs = {}) {
  return GradNode(op, n, op, std::move(in), attrs);
}
NodeEntry Scalar(const NodePtr& n, const std::string& op, const NodeEntry& x, double value) {
  return Apply(n, op, {x}, {{"scalar", NumberToString(value)}});
}

/*! \brief An FGradient returning og * f(node) for one input. */
template <typename Fn>
FGradient TimesOgrad(Fn factor) {
  return [factor](const NodePtr& n, const std::vector<NodeEntry>& og) -> std::vector<NodeEntry> {
    return {Apply(n, "multiply", {og[0], factor(n)})};
  };
}

}  // namespace

IR_REGISTER_OP(negative)
    .describe("-x, elementwise.")
    .apply(UnaryOp<Negative, TypeClass::kNumeric>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "negative", {og[0]})};
    });

IR_REGISTER_OP(abs)
    .describe("|x|, elementwise.")
    .apply(UnaryOp<Abs, TypeClass::kNumeric>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) { return Apply(n, "sign", {In(n, 0)}); }));

IR_REGISTER_OP(square)
    .describe("x * x, elementwise.")
    .apply(UnaryOp<Square, TypeClass::kNumeric>())
    .set_attr<FGradient>("FGradient",
                         TimesOgrad([](const NodePtr& n) { return Scalar(n, "multiply_scalar", In(n, 0), 2); }));

IR_REGISTER_OP(sign)
    .describe("-1, 0 or 1 by the sign of x, elementwise.")
    .apply(UnaryOp<Sign, TypeClass::kNumeric>())
    .set_attr<FGradient>("FGradient", ZeroGradient);

IR_REGISTER_OP(relu)
    .describe("max(x, 0), elementwise.")
    .apply(UnaryOp<Relu, TypeClass::kNumeric>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "relu_grad", {og[0], Out(n)})};
    });

IR_REGISTER_OP(exp)
    .describe("e^x, elementwise.")
    .apply(UnaryOp<Exp, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) { return Out(n); }));

IR_REGISTER_OP(log)
    .describe("Natural logarithm, elementwise.")
    .apply(UnaryOp<Log, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "divide", {og[0], In(n, 0)})};
    });

IR_REGISTER_OP(log1p)
    .describe("log(1 + x), elementwise, accurate for small x.")
    .apply(UnaryOp<Log1p, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "divide", {og[0], Scalar(n, "add_scalar", In(n, 0), 1)})};
    });

IR_REGISTER_OP(expm1)
    .describe("e^x - 1, elementwise, accurate for small x.")
    .apply(UnaryOp<Expm1, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) { return Scalar(n, "add_scalar", Out(n), 1); }));

IR_REGISTER_OP(sqrt)
    .describe("Square root, elementwise.")
    .apply(UnaryOp<Sqrt, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "divide", {Scalar(n, "multiply_scalar", og[0], 0.5), Out(n)})};
    });

IR_REGISTER_OP(rsqrt)
    .describe("1 / sqrt(x), elementwise.")
    .apply(UnaryOp<Rsqrt, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) {
                           NodeEntry y3 = Apply(n, "multiply", {Apply(n, "square", {Out(n)}), Out(n)});
                           return Scalar(n, "multiply_scalar", y3, -0.5);
                         }));

IR_REGISTER_OP(reciprocal)
    .describe("1 / x, elementwise.")
    .apply(UnaryOp<Reciprocal, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) {
                           return Apply(n, "negative", {Apply(n, "square", {Out(n)})});
                         }));

IR_REGISTER_OP(sin)
    .describe("Sine, elementwise.")
    .apply(UnaryOp<Sin, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) { return Apply(n, "cos", {In(n, 0)}); }));

IR_REGISTER_OP(cos)
    .describe("Cosine, elementwise.")
    .apply(UnaryOp<Cos, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) {
                           return Apply(n, "negative", {Apply(n, "sin", {In(n, 0)})});
                         }));

IR_REGISTER_OP(tanh)
    .describe("Hyperbolic tangent, elementwise.")
    .apply(UnaryOp<Tanh, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "tanh_grad", {Out(n), og[0]})};
    });

IR_REGISTER_OP(erf)
    .describe("The error function 2/sqrt(pi) * integral of e^-t^2 from 0 to x, elementwise (TensorFlow Erf).")
    .apply(UnaryOp<Erf, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) {
                           // d/dx = 2/sqrt(pi) e^-x^2
                           NodeEntry gauss = Apply(n, "exp", {Apply(n, "negative", {Apply(n, "square", {In(n, 0)})})});
                           return Scalar(n, "multiply_scalar", gauss, 1.1283791670955126);
                         }));

IR_REGISTER_OP(sigmoid)
    .describe("1 / (1 + e^-x), elementwise.")
    .apply(UnaryOp<Sigmoid, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "sigmoid_grad", {Out(n), og[0]})};
    });

IR_REGISTER_OP(softplus)
    .describe("log(1 + e^x), elementwise.")
    .apply(UnaryOp<Softplus, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", TimesOgrad([](const NodePtr& n) { return Apply(n, "sigmoid", {In(n, 0)}); }));

IR_REGISTER_OP(floor)
    .describe("Largest integer not above x, elementwise.")
    .apply(UnaryOp<Floor, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", ZeroGradient);

IR_REGISTER_OP(ceil)
    .describe("Smallest integer not below x, elementwise.")
    .apply(UnaryOp<Ceil, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", ZeroGradient);

IR_REGISTER_OP(round)
    .describe("Nearest integer, halves to even (as NumPy and TensorFlow), elementwise.")
    .apply(UnaryOp<Round, TypeClass::kFloat>())
    .set_attr<FGradient>("FGradient", ZeroGradient);

IR_REGISTER_OP(logical_not)
    .describe("Logical negation of a bool tensor.")
    .apply(UnaryOp<LogicalNot, TypeClass::kBool>());

IR_REGISTER_OP(relu_grad)
    .describe("Gradient of relu: dy where y > 0, else 0 (TensorFlow ReluGrad(gradients, features)).")
    .apply(ElemwiseOp<ReluGrad, TypeClass::kNumeric, 2>({"dy", "y"}))
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{Apply(n, "relu_grad", {og[0], In(n, 1)}), NodeEntry()};
    });

IR_REGISTER_OP(sigmoid_grad)
    .describe("Gradient of sigmoid from its output: dy * y * (1 - y) (TensorFlow SigmoidGrad(y, dy)).")
    .apply(ElemwiseOp<SigmoidGrad, TypeClass::kFloat, 2>({"y", "dy"}))
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      // d/dy = og * dy * (1 - 2y); d/d(dy) = og * y * (1 - y).
      NodeEntry one_minus_2y = Scalar(n, "rsubtract_scalar", Scalar(n, "multiply_scalar", In(n, 0), 2), 1);
      NodeEntry d_y = Apply(n, "multiply", {Apply(n, "multiply", {og[0], In(n, 1)}), one_minus_2y});
      return std::vector<NodeEntry>{d_y, Apply(n, "sigmoid_grad", {In(n, 0), og[0]})};
    });

IR_REGISTER_OP(tanh_grad)
    .describe("Gradient of tanh from its output: dy * (1 - y^2) (TensorFlow TanhGrad(y, dy)).")
    .apply(ElemwiseOp<TanhGrad, TypeClass::kFloat, 2>({"y", "dy"}))
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      // d/dy = og * dy * (-2y); d/d(dy) = og * (1 - y^2).
      NodeEntry d_y =
          Apply(n, "multiply", {Apply(n, "multiply", {og[0], In(n, 1)}), Scalar(n, "multiply_scalar", In(n, 0), -2)});
      return std::vector<NodeEntry>{d_y, Apply(n, "tanh_grad", {In(n, 0), og[0]})};
    });

}  // namespace op
}  // namespace ir
