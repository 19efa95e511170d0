/*!
 * \file binary_functors.h
 * \brief The math of the binary ops, one functor per op, shared by the broadcast form
 * (`add(lhs, rhs)`, broadcast.cc) and the scalar forms (`add_scalar`, `rsubtract_scalar`,
 * scalar.cc).
 *
 * A functor names its op (`kName`), says which dtypes it takes (`kKind`) and whether its
 * operands commute, and gives its CPU math (`Map`), the same math as an AST expression
 * (`Gen`; null when the AST cannot express it exactly) and its partial derivatives (`Grad`).
 * Grad is written once over Terms, which are graph entries or constants, so the broadcast
 * form and both scalar forms build their gradients from the same formula.
 *
 * Integer semantics: division never traps. x / 0, floor_divide(x, 0) and floor_mod(x, 0) are
 * 0 (as NumPy), and dividing the most negative value by -1 wraps. `divide` truncates toward
 * zero (as C and TensorFlow's Div), floor_divide and floor_mod round toward -infinity (as
 * Python and TensorFlow's FloorDiv/FloorMod) for integers and floats alike.
 */
#ifndef IR_OPS_BINARY_FUNCTORS_H_
#define IR_OPS_BINARY_FUNCTORS_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/op_common.h"

namespace ir {
namespace op {
namespace binary {

using ast::Expr;

/*! \brief Which dtypes a binary op takes and what it returns. */
enum class Kind {
  kArith,     ///< numeric operands, result of the same dtype
  kCompare,   ///< numeric operands, bool result
  kEquality,  ///< operands of any dtype, bool result
  kLogical,   ///< bool operands, bool result
};

/*! \brief The operand dtypes of ops of `kind`. */
inline const DTypeSet& OperandTypes(Kind kind) {
  static const DTypeSet bool_only = {DType::kBool};
  if (kind == Kind::kEquality) return AllTypes();
  return kind == Kind::kLogical ? bool_only : NumericTypes();
}

/*! \brief The result dtype of an op of `kind` on operands of `operand`. */
inline DType ResultType(Kind kind, DType operand) {
  return kind == Kind::kArith || operand == DType::kUnknown ? operand : DType::kBool;
}

/*! \brief True when the result has the operands' dtype, so an output may reuse an input's buffer. */
inline bool KeepsDType(Kind kind) { return kind == Kind::kArith || kind == Kind::kLogical; }

/*!
 * \brief FInferType of binary ops and their scalar forms: every input has one dtype (also
 * inferred back from the output when the result keeps it), accepted by `kind`.
 */
inline bool InferOperandType(Kind kind, const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType operand = DType::kUnknown;
  for (DType t : *in) operand = operand == DType::kUnknown ? t : operand;
  if (operand == DType::kUnknown && kind == Kind::kArith) operand = (*out)[0];
  for (size_t i = 0; i < in->size(); ++i) AssignType(attrs, StrCat("input ", i), &(*in)[i], operand);
  CheckDType(attrs, "input", operand, OperandTypes(kind));
  AssignType(attrs, "output 0", &(*out)[0], ResultType(kind, operand));
  return AllKnown(*in, *out);
}

/*! \brief Runs body(T{}) with the C++ type of operand dtype `dtype`, among the types of K. */
template <Kind K, typename Body>
void DispatchOperand(DType dtype, const Body& body) {
  if constexpr (K == Kind::kLogical) {
    IR_CHECK(dtype == DType::kBool) << "kernel expects bool, got " << DTypeName(dtype);
    body(bool{});
  } else if constexpr (K == Kind::kEquality) {
    IR_ALL_TYPES_SWITCH(dtype, DT, body(DT{}));
  } else {
    IR_NUMERIC_SWITCH(dtype, DT, body(DT{}));
  }
}

/*! \brief F's expression for operands of one accepted dtype, or {} when it has none. */
template <typename F>
std::vector<Expr> GenerateOrEmpty(const Expr& a, const Expr& b) {
  const DTypeSet& ok = OperandTypes(F::kKind);
  if (a->dtype != b->dtype || std::find(ok.begin(), ok.end(), a->dtype) == ok.end()) return {};
  Expr result = F::Gen(a, b);
  if (!result) return {};
  return {result};
}

// ---------------------------------------------------------------- integer math

template <typename T>
T WrappingNegate(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}
/*! \brief a / b truncated; 0 when b == 0. */
template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return T(0);
  return b == T(-1) ? WrappingNegate(a) : static_cast<T>(a / b);
}
/*! \brief floor(a / b); 0 when b == 0. */
template <typename T>
T IntFloorDivide(T a, T b) {
  if (b == 0) return T(0);
  if (b == T(-1)) return WrappingNegate(a);
  T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
  return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(q - 1) : q;
}
/*! \brief a - floor(a / b) * b, with the sign of b; 0 when b == 0. */
template <typename T>
T IntFloorMod(T a, T b) {
  if (b == 0 || b == T(-1)) return T(0);
  T r = static_cast<T>(a % b);
  return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
}
/*!
 * \brief base^exponent by squaring, wrapping on overflow. A negative exponent gives 1 / base^-e
 * truncated toward zero: 1 and -1 keep their powers, other bases (0 included) give 0.
 */
template <typename T>
T IntPower(T base, T exponent) {
  if (exponent < 0) return base == 1 ? T(1) : base == T(-1) ? (exponent % 2 == 0 ? T(1) : T(-1)) : T(0);
  using U = std::make_unsigned_t<T>;
  U result = 1, factor = static_cast<U>(base);
  for (; exponent != 0; exponent /= 2) {
    if (exponent % 2 != 0) result *= factor;
    factor *= factor;
  }
  return static_cast<T>(result);
}

template <typename T>
bool IsNaN(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// ---------------------------------------------------------------- AST helpers

inline bool IsInteger(const Expr& e) { return e->dtype == DType::kInt32 || e->dtype == DType::kInt64; }
inline Expr Lit(double value, const Expr& like) { return ast::ConstLike(value, like); }
inline Expr Cmp(const char* op, const Expr& a, const Expr& b) { return ast::Binary(op, a, b); }

/*! \brief b where it cannot trap, 1 where it is 0 or -1 (the callers handle those cases). */
inline Expr SafeDivisor(const Expr& b) {
  return ast::Select(ast::Binary("||", Cmp("==", b, Lit(0, b)), Cmp("==", b, Lit(-1, b))), Lit(1, b), b);
}
/*! \brief The truncated remainder r of a division by d needs a floor correction. */
inline Expr NeedsFloorFix(const Expr& r, const Expr& d) {
  return ast::Binary("&&", Cmp("!=", r, Lit(0, r)), Cmp("!=", Cmp("<", r, Lit(0, r)), Cmp("<", d, Lit(0, d))));
}
/*! \brief The value for b == 0 (0) and b == -1 (-a) around the quotient for other divisors. */
inline Expr SpecialDivisors(const Expr& a, const Expr& b, const Expr& quotient) {
  return ast::Select(Cmp("==", b, Lit(0, b)), Lit(0, a), ast::Select(Cmp("==", b, Lit(-1, b)), -a, quotient));
}
inline Expr GenIntDivide(const Expr& a, const Expr& b) { return SpecialDivisors(a, b, a / SafeDivisor(b)); }
inline Expr GenIntFloorDivide(const Expr& a, const Expr& b) {
  Expr d = SafeDivisor(b), q = a / d, r = a - q * d;
  return SpecialDivisors(a, b, ast::Select(NeedsFloorFix(r, d), q - Lit(1, q), q));
}
inline Expr GenIntFloorMod(const Expr& a, const Expr& b) {
  Expr d = SafeDivisor(b), r = a - (a / d) * d;  // d == 1 for b in {0, -1}: r == 0
  return ast::Select(NeedsFloorFix(r, d), r + d, r);
}
/*! \brief a - floor(a / b) * b for floats (what floor_mod computes, in both backends). */
template <typename T>
T FloatFloorMod(T a, T b) {
  return a - std::floor(a / b) * b;
}

// ---------------------------------------------------------------- gradient terms

/*! \brief An operand of a gradient formula: a graph entry, or a constant (a scalar op's `scalar`). */
struct Term {
  NodeEntry entry;
  double value = 0;
  bool is_constant() const { return entry.node == nullptr; }
  static Term Constant(double v) {
    Term t;
    t.value = v;
    return t;
  }
  static Term Of(NodeEntry e) {
    Term t;
    t.entry = std::move(e);
    return t;
  }
};

/*! \brief What a partial derivative may use: the operands, the output and its gradient. */
struct GradInputs {
  Term lhs, rhs, out, ograd;
};

/*!
 * \brief Builds the gradient nodes of `node`, picking each op's form by its operands: `op(a, b)`
 * for two entries, `op_scalar` or `rop_scalar` with one constant, a folded constant for two.
 */
class GradBuilder {
 public:
  explicit GradBuilder(NodePtr node) : node_(std::move(node)) {}

  template <typename F>
  Term Apply(const Term& a, const Term& b) const {
    if (a.is_constant() && b.is_constant()) return Term::Constant(F::Map(a.value, b.value));
    if (b.is_constant()) return Node(StrCat(F::kName, "_scalar"), {a.entry}, b.value);
    if (a.is_constant()) return Node(StrCat(F::kCommutative ? "" : "r", F::kName, "_scalar"), {b.entry}, a.value);
    return Node(F::kName, {a.entry, b.entry});
  }
  Term Negative(const Term& x) const {
    return x.is_constant() ? Term::Constant(-x.value) : Node("negative", {x.entry});
  }
  Term Log(const Term& x) const { return x.is_constant() ? Term::Constant(std::log(x.value)) : Node("log", {x.entry}); }
  /*! \brief `value` where `mask` is `keep_when`, else 0. */
  Term Where(const Term& mask, const Term& value, bool keep_when) const {
    NodeEntry zero = Node("zeros_like", {value.entry}).entry;
    return keep_when ? Node("where", {mask.entry, value.entry, zero}) : Node("where", {mask.entry, zero, value.entry});
  }

 private:
  Term Node(const std::string& op, std::vector<NodeEntry> inputs) const {
    return Term::Of(GradNode(op, node_, op, std::move(inputs)));
  }
  Term Node(const std::string& op, std::vector<NodeEntry> inputs, double scalar) const {
    return Term::Of(GradNode(op, node_, op, std::move(inputs), {{"scalar", NumberToString(scalar)}}));
  }
  NodePtr node_;
};

/*! \brief Base of functors whose result has no gradient (comparisons, logic, floor_divide). */
struct NoGradient {
  static NodeEntry Grad(const GradBuilder&, int, const GradInputs&) { return NodeEntry(); }
};

// ---------------------------------------------------------------- comparisons and logic

/*! \brief A bool-valued functor whose C++ and AST operator have the same spelling. */
#define IR_PREDICATE_FUNCTOR(Name, op_name, kind, commutative, op)                   \
  struct Name : NoGradient {                                                         \
    static constexpr const char* kName = op_name;                                    \
    static constexpr Kind kKind = kind;                                              \
    static constexpr bool kCommutative = commutative;                                \
    template <typename T>                                                            \
    static bool Map(T a, T b) {                                                      \
      return a op b;                                                                 \
    }                                                                                \
    static Expr Gen(const Expr& a, const Expr& b) { return ast::Binary(#op, a, b); } \
  }
IR_PREDICATE_FUNCTOR(Equal, "equal", Kind::kEquality, true, ==);
IR_PREDICATE_FUNCTOR(NotEqual, "not_equal", Kind::kEquality, true, !=);
IR_PREDICATE_FUNCTOR(Greater, "greater", Kind::kCompare, false, >);
IR_PREDICATE_FUNCTOR(GreaterEqual, "greater_equal", Kind::kCompare, false, >=);
IR_PREDICATE_FUNCTOR(Less, "less", Kind::kCompare, false, <);
IR_PREDICATE_FUNCTOR(LessEqual, "less_equal", Kind::kCompare, false, <=);
IR_PREDICATE_FUNCTOR(LogicalAnd, "logical_and", Kind::kLogical, true, &&);
IR_PREDICATE_FUNCTOR(LogicalOr, "logical_or", Kind::kLogical, true, ||);
#undef IR_PREDICATE_FUNCTOR

// ---------------------------------------------------------------- arithmetic

/*! \brief Name, kind and commutativity of an arithmetic functor. */
#define IR_ARITH_TRAITS(op_name, commutative)   \
  static constexpr const char* kName = op_name; \
  static constexpr Kind kKind = Kind::kArith;   \
  static constexpr bool kCommutative = commutative

struct Add {
  IR_ARITH_TRAITS("add", true);
  template <typename T>
  static T Map(T a, T b) {
    return a + b;
  }
  static Expr Gen(const Expr& a, const Expr& b) { return a + b; }
  static NodeEntry Grad(const GradBuilder&, int, const GradInputs& x) { return x.ograd.entry; }
};

struct Subtract {
  IR_ARITH_TRAITS("subtract", false);
  template <typename T>
  static T Map(T a, T b) {
    return a - b;
  }
  static Expr Gen(const Expr& a, const Expr& b) { return a - b; }
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    return side == 0 ? x.ograd.entry : g.Negative(x.ograd).entry;
  }
};

struct Multiply {
  IR_ARITH_TRAITS("multiply", true);
  template <typename T>
  static T Map(T a, T b) {
    return a * b;
  }
  static Expr Gen(const Expr& a, const Expr& b) { return a * b; }
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    return g.Apply<Multiply>(x.ograd, side == 0 ? x.rhs : x.lhs).entry;
  }
};

struct Divide {
  IR_ARITH_TRAITS("divide", false);
  template <typename T>
  static T Map(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntDivide(a, b);
    } else {
      return a / b;
    }
  }
  static Expr Gen(const Expr& a, const Expr& b) { return IsInteger(a) ? GenIntDivide(a, b) : a / b; }
  // d/dlhs = og / rhs; d/drhs = -og * lhs / rhs^2 = -(og * out) / rhs.
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    if (side == 0) return g.Apply<Divide>(x.ograd, x.rhs).entry;
    return g.Negative(g.Apply<Divide>(g.Apply<Multiply>(x.ograd, x.out), x.rhs)).entry;
  }
};

struct Power {
  IR_ARITH_TRAITS("power", false);
  template <typename T>
  static T Map(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntPower(a, b);
    } else {
      return std::pow(a, b);
    }
  }
  // Integer powers overflow and round where a double pow would not: no exact expression.
  static Expr Gen(const Expr& a, const Expr& b) { return IsInteger(a) ? nullptr : ast::Call("pow", {a, b}); }
  // d/dlhs = og * rhs * lhs^(rhs - 1); d/drhs = og * out * log(lhs).
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    if (side == 0) {
      Term lower = g.Apply<Power>(x.lhs, g.Apply<Subtract>(x.rhs, Term::Constant(1)));
      return g.Apply<Multiply>(x.ograd, g.Apply<Multiply>(x.rhs, lower)).entry;
    }
    return g.Apply<Multiply>(x.ograd, g.Apply<Multiply>(x.out, g.Log(x.lhs))).entry;
  }
};

/*! \brief The gradient of max/min: og goes to the operand `Pick` chose (lhs on ties). */
template <typename Pick>
NodeEntry RouteGradient(const GradBuilder& g, int side, const GradInputs& x) {
  return g.Where(g.Apply<Pick>(x.lhs, x.rhs), x.ograd, side == 0).entry;
}

// NaN propagates (as NumPy): a NaN lhs is kept, a NaN rhs fails the comparison and is taken.
struct Maximum {
  IR_ARITH_TRAITS("maximum", true);
  template <typename T>
  static T Map(T a, T b) {
    return a >= b || IsNaN(a) ? a : b;
  }
  static Expr Gen(const Expr& a, const Expr& b) {
    Expr keep_a = IsInteger(a) ? Cmp(">=", a, b) : ast::Binary("||", Cmp(">=", a, b), Cmp("!=", a, a));
    return ast::Select(keep_a, a, b);
  }
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    return RouteGradient<GreaterEqual>(g, side, x);
  }
};

struct Minimum {
  IR_ARITH_TRAITS("minimum", true);
  template <typename T>
  static T Map(T a, T b) {
    return a <= b || IsNaN(a) ? a : b;
  }
  static Expr Gen(const Expr& a, const Expr& b) {
    Expr keep_a = IsInteger(a) ? Cmp("<=", a, b) : ast::Binary("||", Cmp("<=", a, b), Cmp("!=", a, a));
    return ast::Select(keep_a, a, b);
  }
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    return RouteGradient<LessEqual>(g, side, x);
  }
};

struct FloorDivide : NoGradient {
  IR_ARITH_TRAITS("floor_divide", false);
  template <typename T>
  static T Map(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntFloorDivide(a, b);
    } else {
      return std::floor(a / b);
    }
  }
  static Expr Gen(const Expr& a, const Expr& b) {
    return IsInteger(a) ? GenIntFloorDivide(a, b) : ast::Call("floor", {a / b});
  }
};

struct FloorMod {
  IR_ARITH_TRAITS("floor_mod", false);
  template <typename T>
  static T Map(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntFloorMod(a, b);
    } else {
      return FloatFloorMod(a, b);
    }
  }
  static Expr Gen(const Expr& a, const Expr& b) {
    return IsInteger(a) ? GenIntFloorMod(a, b) : a - ast::Call("floor", {a / b}) * b;
  }
  // d/dlhs = og; d/drhs = -og * floor(lhs / rhs).
  static NodeEntry Grad(const GradBuilder& g, int side, const GradInputs& x) {
    if (side == 0) return x.ograd.entry;
    return g.Negative(g.Apply<Multiply>(x.ograd, g.Apply<FloorDivide>(x.lhs, x.rhs))).entry;
  }
};
#undef IR_ARITH_TRAITS

}  // namespace binary
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_BINARY_FUNCTORS_H_
