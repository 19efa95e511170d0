/*!
 * \file ieee_contracts.cc
 * \brief What is known over IEEE of the functions the model keeps uninterpreted: the special
 * values C99 Annex F gives libm's functions (glibc, and the OpenCL and CUDA math libraries,
 * follow it), NaN propagation through the opaque ops whose kernels propagate it, and the
 * special values of a sum whose order is left open. Finite results stay free: libm is not
 * correctly rounded, and a kernel's summation order is its own.
 */
#include <vector>

#include "smt_model.h"

namespace ir {
namespace rules_verify {
namespace {

/*! \brief Float constants of x's sort. */
struct Consts {
  explicit Consts(const z3::expr& x)
      : sort(x.get_sort()),
        pos_inf(x.ctx().fpa_inf(sort, false)),
        neg_inf(x.ctx().fpa_inf(sort, true)),
        pos_zero(z3::expr(x.ctx(), Z3_mk_fpa_zero(x.ctx(), sort, false))),
        one(Value(1)),
        minus_one(Value(-1)) {}
  z3::expr Value(double v) const { return z3::expr(sort.ctx(), Z3_mk_fpa_numeral_double(sort.ctx(), v, sort)); }
  z3::sort sort;
  z3::expr pos_inf, neg_inf, pos_zero, one, minus_one;
};

/*! \brief `fn`'s Annex F special values and result ranges, for t = fn(x). */
z3::expr UnaryContract(const std::string& fn, const z3::expr& t, const z3::expr& x) {
  Consts c(x);
  z3::context& ctx = x.ctx();
  z3::expr nan = z3::implies(IsNaN(x), IsNaN(t));
  auto within_one = [&](const z3::expr& v) { return Finite(v) && v >= c.minus_one && v <= c.one; };
  // log1p, expm1 and tanh keep the sign of x, and are zero only at a zero (which they keep).
  z3::expr keeps_sign = IsNegative(t) == IsNegative(x) && IsZero(t) == IsZero(x);
  if (fn == "exp") {
    return nan && z3::implies(x == c.pos_inf, t == c.pos_inf) && z3::implies(x == c.neg_inf, t == c.pos_zero) &&
           z3::implies(IsZero(x), t == c.one) && z3::implies(Finite(x), !IsNaN(t) && !IsNegative(t)) &&
           z3::implies(Finite(x) && x > c.pos_zero, t >= c.one) && z3::implies(Finite(x) && x < c.pos_zero, t <= c.one);
  }
  if (fn == "log") {
    z3::expr positive_finite = Finite(x) && x > c.pos_zero;
    return nan && z3::implies(x < c.pos_zero, IsNaN(t)) && z3::implies(IsZero(x), t == c.neg_inf) &&
           z3::implies(x == c.one, t == c.pos_zero) && z3::implies(x == c.pos_inf, t == c.pos_inf) &&
           z3::implies(positive_finite && x > c.one, Finite(t) && t > c.pos_zero) &&
           z3::implies(positive_finite && x < c.one, Finite(t) && t < c.pos_zero);
  }
  if (fn == "log1p") {
    return nan && z3::implies(x < c.minus_one, IsNaN(t)) && z3::implies(x == c.minus_one, t == c.neg_inf) &&
           z3::implies(IsZero(x), t == x) && z3::implies(x == c.pos_inf, t == c.pos_inf) &&
           z3::implies(Finite(x) && x > c.minus_one, Finite(t) && keeps_sign);
  }
  if (fn == "expm1") {
    return nan && z3::implies(IsZero(x), t == x) && z3::implies(x == c.pos_inf, t == c.pos_inf) &&
           z3::implies(x == c.neg_inf, t == c.minus_one) &&
           z3::implies(Finite(x), !IsNaN(t) && t >= c.minus_one && keeps_sign);
  }
  if (fn == "tanh") {
    return nan && z3::implies(IsZero(x), t == x) && z3::implies(x == c.pos_inf, t == c.one) &&
           z3::implies(x == c.neg_inf, t == c.minus_one) && z3::implies(Finite(x), within_one(t) && keeps_sign);
  }
  if (fn == "sin" || fn == "cos") {
    z3::expr at_zero = fn == "sin" ? t == x : t == c.one;
    return nan && z3::implies(IsInf(x), IsNaN(t)) && z3::implies(IsZero(x), at_zero) &&
           z3::implies(Finite(x), within_one(t));
  }
  return ctx.bool_val(true);
}

/*! \brief pow(x, y): pow(x, +-0) = 1 and pow(1, y) = 1 for any x, y (NaN too); else NaN in, NaN out. */
z3::expr PowContract(const z3::expr& t, const z3::expr& x, const z3::expr& y) {
  Consts c(x);
  z3::expr one_result = IsZero(y) || x == c.one;
  return z3::implies(one_result, t == c.one) && z3::implies(!one_result && (IsNaN(x) || IsNaN(y)), IsNaN(t));
}

/*! \brief A sum of terms in any order: NaN, +-Inf and the all-zero +0 as IEEE addition from +0 gives them. */
z3::expr SumContract(const z3::expr& t) {
  z3::context& ctx = t.ctx();
  Consts c(t);
  z3::expr any_nan = ctx.bool_val(false), pos = ctx.bool_val(false), neg = ctx.bool_val(false);
  z3::expr all_zero = ctx.bool_val(true);
  for (unsigned i = 0; i < t.num_args(); ++i) {
    z3::expr a = t.arg(i);
    any_nan = any_nan || IsNaN(a);
    pos = pos || a == c.pos_inf;
    neg = neg || a == c.neg_inf;
    all_zero = all_zero && IsZero(a);
  }
  z3::expr nan = any_nan || (pos && neg);
  return (nan == IsNaN(t)) && z3::implies(!nan && pos, t == c.pos_inf) && z3::implies(!nan && neg, t == c.neg_inf) &&
         z3::implies(all_zero, t == c.pos_zero);
}

}  // namespace

z3::expr_vector SmtModel::IeeeAxioms(const z3::expr_vector& roots) {
  z3::expr_vector axioms(*ctx_);
  std::set<unsigned> seen;
  std::vector<z3::expr> apps;
  for (unsigned i = 0; i < roots.size(); ++i) CollectApps(roots[i], &seen, &apps);
  for (const z3::expr& t : apps) {
    if (!t.is_fpa()) continue;
    std::string name = t.decl().name().str();
    if (sums_.count(name)) {
      axioms.push_back(SumContract(t));
    } else if (propagates_nan_.count(name)) {
      z3::expr any_nan = ctx_->bool_val(false);
      for (unsigned i = 0; i < t.num_args(); ++i) {
        if (t.arg(i).is_fpa()) any_nan = any_nan || IsNaN(t.arg(i));
      }
      axioms.push_back(z3::implies(any_nan, IsNaN(t)));
    } else if (name == "pow" && t.num_args() == 2) {
      axioms.push_back(PowContract(t, t.arg(0), t.arg(1)));
    } else if (t.num_args() == 1 && t.arg(0).is_fpa() && !opaque_.count(name)) {
      axioms.push_back(UnaryContract(name, t, t.arg(0)));
    }
  }
  return axioms;
}

}  // namespace rules_verify
}  // namespace ir
