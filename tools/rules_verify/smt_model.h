/*!
 * \file smt_model.h
 * \brief The verifier's model of tensor values in Z3: a tensor is a shape, a dtype and one Z3
 * term per element (row-major). Floats are IEEE terms (FPSort) when proving `exact` rules and
 * real numbers when proving `real` and `fast_math` rules; integers are bit-vectors and bools
 * are Booleans in both. Math functions Z3 lacks (exp, log, tanh...) are uninterpreted
 * functions: over IEEE congruence and their C99 Annex F special values hold of them (so a rule
 * is proved only when it holds for ANY such function, as bit-exactness requires), over the
 * reals sound axioms hold.
 */
#ifndef IR_TOOLS_RULES_VERIFY_SMT_MODEL_H_
#define IR_TOOLS_RULES_VERIFY_SMT_MODEL_H_

#include <z3++.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ast.h"
#include "ir/base.h"

namespace ir {
namespace rules_verify {

/*!
 * \brief What float elements are: IEEE terms with the kernels' summation order left opaque
 * (kIEEE, for exact and nsz proofs), IEEE terms with sums of the same terms taken in any order
 * equal and pow(x, 1), pow(x, 2) correctly rounded (kRounding, for the special values of
 * rounding rules), or real numbers (kReal).
 */
enum class Domain { kIEEE, kRounding, kReal };

/*! \brief A symbolic tensor: one Z3 term per element, row-major. */
struct SymTensor {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::vector<z3::expr> elems;
};

/*! \brief Sorts, constants, math functions and the axioms of one proof. */
class SmtModel {
 public:
  SmtModel(z3::context* ctx, Domain domain) : ctx_(ctx), domain_(domain) {}

  z3::context& ctx() const { return *ctx_; }
  Domain domain() const { return domain_; }
  /*! \brief Whether floats are IEEE terms (kIEEE or kRounding). */
  bool ieee() const { return domain_ != Domain::kReal; }
  /*! \brief The sort of one element of `dtype`; throws for dtypes the model lacks. */
  z3::sort SortOf(DType dtype) const;
  /*! \brief A fresh unknown element named `name`. */
  z3::expr Fresh(const std::string& name, DType dtype) const;
  /*! \brief The element `value` of `dtype` (IEEE: rounded to nearest even; NaN and Inf allowed). */
  z3::expr Constant(double value, DType dtype) const;
  /*! \brief The rounding mode of IEEE arithmetic (nearest, ties to even). */
  z3::expr Rne() const;

  /*! \brief a + b, a - b, a * b, a / b for elements of `dtype` (integers: wrapping, truncating). */
  z3::expr Arith(char op, const z3::expr& a, const z3::expr& b, DType dtype) const;
  /*! \brief A comparison ("<", "<=", ">", ">=", "==", "!=") with IEEE semantics (NaN compares false). */
  z3::expr Compare(const std::string& op, const z3::expr& a, const z3::expr& b, DType dtype) const;
  /*! \brief x converted from `from` to `to`. */
  z3::expr Cast(const z3::expr& x, DType from, DType to) const;
  /*! \brief A math function of ast::MathFunctions(); native where Z3 has it, else uninterpreted. */
  z3::expr Call(const std::string& fn, const std::vector<z3::expr>& args, DType dtype);
  /*!
   * \brief An element of an op the model keeps opaque: an uninterpreted function named `name`
   * of `args` (congruence: equal arguments give equal results). `propagates_nan`: the op's
   * kernels give NaN when an argument is NaN (sums, matmul, softmax; not max and min, whose
   * comparisons skip NaN).
   */
  z3::expr Opaque(const std::string& name, const std::vector<z3::expr>& args, DType result, bool propagates_nan = true);
  /*!
   * \brief An IEEE sum of `terms` in an order the kernels choose: one term t is +0 + t (the
   * kernels start from +0); several (kRounding only) give the same value for the same multiset
   * of terms (no partial sum overflows where another order's does not), with NaN, +-Inf and an
   * all-zero +0 as IEEE addition gives them.
   */
  z3::expr OrderFreeSum(const std::vector<z3::expr>& terms, DType dtype);

  /*!
   * \brief The element expression `expr` (an FCodeGen result) with its variables replaced by
   * `vars` (name -> element). Throws naming the construct the model lacks.
   */
  z3::expr Translate(const ast::Expr& expr, const std::map<std::string, z3::expr>& vars);

  /*!
   * \brief Over the reals, ground instances of the laws of exp, log and sqrt for the terms
   * under `roots` (exp > 0, exp(a)exp(b) = exp(a+b), log(exp x) = x, exp(log x) = x and
   * log(ab) = log a + log b for positive operands...); over IEEE, the special values of the
   * math functions (C99 Annex F: exp(-Inf) = +0, log(1) = +0, tanh(-0) = -0...) and NaN
   * propagation through the opaque ops that propagate it (ieee_contracts.cc).
   */
  z3::expr_vector Axioms(const z3::expr_vector& roots);
  /*! \brief Over the reals, every divisor the model built (x / 0 has no real value). */
  const std::vector<z3::expr>& divisors() const { return divisors_; }
  /*!
   * \brief Over the reals, the conditions under which what the model built has a value, in
   * the order built: divisors nonzero, log's argument positive, sqrt's nonnegative...
   */
  const std::vector<z3::expr>& domain_conditions() const { return conditions_; }
  /*! \brief Whether `e` applies an opaque op's function (not a math function) somewhere. */
  bool HasOpaque(const z3::expr& e) const;

 private:
  z3::func_decl Function(const std::string& name, const std::vector<z3::sort>& domain, const z3::sort& range);
  z3::expr RealCall(const std::string& fn, const std::vector<z3::expr>& args);
  z3::expr IeeeCall(const std::string& fn, const std::vector<z3::expr>& args, DType dtype);
  z3::expr_vector IeeeAxioms(const z3::expr_vector& roots);

  z3::context* ctx_;
  Domain domain_;
  std::map<std::string, z3::func_decl> functions_;
  /*! \brief Names of the opaque ops' functions, and those of them that propagate NaN. */
  std::set<std::string> opaque_, propagates_nan_, sums_;
  mutable std::vector<z3::expr> divisors_, conditions_;
};

/*! \brief IEEE classification of a float element. */
inline z3::expr IsNaN(const z3::expr& x) { return z3::expr(x.ctx(), Z3_mk_fpa_is_nan(x.ctx(), x)); }
inline z3::expr IsInf(const z3::expr& x) { return z3::expr(x.ctx(), Z3_mk_fpa_is_infinite(x.ctx(), x)); }
inline z3::expr IsZero(const z3::expr& x) { return z3::expr(x.ctx(), Z3_mk_fpa_is_zero(x.ctx(), x)); }
inline z3::expr IsNegative(const z3::expr& x) { return z3::expr(x.ctx(), Z3_mk_fpa_is_negative(x.ctx(), x)); }
inline z3::expr Finite(const z3::expr& x) { return !IsNaN(x) && !IsInf(x); }

/*! \brief Applications of uninterpreted functions (of arguments) under `e`, children first. */
void CollectApps(const z3::expr& e, std::set<unsigned>* seen, std::vector<z3::expr>* apps);

/*! \brief Elements of a counterexample as text: "NaN", "-0", "+Inf", "1.5", "true", "7". */
std::string ElementText(const z3::expr& value);

}  // namespace rules_verify
}  // namespace ir

#endif  // IR_TOOLS_RULES_VERIFY_SMT_MODEL_H_
