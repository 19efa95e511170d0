/*!
 * \file smt_model.h
 * \brief The verifier's model of tensor values in Z3: a tensor is a shape, a dtype and one Z3
 * term per element (row-major). Floats are IEEE terms (FPSort) when proving `exact` rules and
 * real numbers when proving `real` and `fast_math` rules; integers are bit-vectors and bools
 * are Booleans in both. Math functions Z3 lacks (exp, log, tanh...) are uninterpreted
 * functions: over IEEE only congruence holds of them (so a rule is proved only when it holds
 * for ANY such function, as bit-exactness requires), over the reals sound axioms hold.
 */
#ifndef IR_TOOLS_RULES_VERIFY_SMT_MODEL_H_
#define IR_TOOLS_RULES_VERIFY_SMT_MODEL_H_

#include <z3++.h>

#include <map>
#include <string>
#include <vector>

#include "ir/ast.h"
#include "ir/base.h"

namespace ir {
namespace rules_verify {

/*! \brief What float elements are. */
enum class Domain { kIEEE, kReal };

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
   * of `args` (congruence only: equal arguments give equal results).
   */
  z3::expr Opaque(const std::string& name, const std::vector<z3::expr>& args, DType result);

  /*!
   * \brief The element expression `expr` (an FCodeGen result) with its variables replaced by
   * `vars` (name -> element). Throws naming the construct the model lacks.
   */
  z3::expr Translate(const ast::Expr& expr, const std::map<std::string, z3::expr>& vars);

  /*!
   * \brief Over the reals, ground instances of the laws of exp, log and sqrt for the terms
   * under `roots` (exp > 0, exp(a)exp(b) = exp(a+b), log(exp x) = x, exp(log x) = x and
   * log(ab) = log a + log b for positive operands...); none over IEEE, where only congruence holds.
   */
  z3::expr_vector Axioms(const z3::expr_vector& roots);
  /*! \brief Over the reals, every divisor the model built (x / 0 has no real value). */
  const std::vector<z3::expr>& divisors() const { return divisors_; }

 private:
  z3::func_decl Function(const std::string& name, const std::vector<z3::sort>& domain, const z3::sort& range);
  z3::expr RealCall(const std::string& fn, const std::vector<z3::expr>& args);
  z3::expr IeeeCall(const std::string& fn, const std::vector<z3::expr>& args, DType dtype);

  z3::context* ctx_;
  Domain domain_;
  std::map<std::string, z3::func_decl> functions_;
  mutable std::vector<z3::expr> divisors_;
};

/*! \brief Elements of a counterexample as text: "NaN", "-0", "+Inf", "1.5", "true", "7". */
std::string ElementText(const z3::expr& value);

}  // namespace rules_verify
}  // namespace ir

#endif  // IR_TOOLS_RULES_VERIFY_SMT_MODEL_H_
