/*!
 * \file obligations.cc
 * \brief Each obligation's per-element condition (see obligations.h): how pattern element p
 * and replacement element r may differ without breaking a tag's promise.
 */
#include "obligations.h"

#include <set>

namespace ir {
namespace rules_verify {
namespace {

/*! \brief The free constants (the instance's input elements) `e` reads. */
std::vector<z3::expr> Inputs(const z3::expr& e) {
  std::vector<z3::expr> stack = {e}, found;
  std::set<unsigned> seen;
  while (!stack.empty()) {
    z3::expr t = stack.back();
    stack.pop_back();
    if (!t.is_app() || !seen.insert(t.id()).second) continue;
    if (t.num_args() == 0 && t.decl().decl_kind() == Z3_OP_UNINTERPRETED) found.push_back(t);
    for (unsigned i = 0; i < t.num_args(); ++i) stack.push_back(t.arg(i));
  }
  return found;
}

/*! \brief Whether `e` applies any uninterpreted function (a math function or an opaque op). */
bool HasFunctions(const z3::expr& e) {
  std::set<unsigned> seen;
  std::vector<z3::expr> apps;
  CollectApps(e, &seen, &apps);
  return !apps.empty();
}

/*!
 * \brief x's bits as a signed integer one wider than x, ordered like x's finite values (+0 and
 * -0 are both 0): the distance of two finite floats in ULPs is the difference of theirs.
 */
z3::expr Ordinal(const z3::expr& x) {
  z3::context& ctx = x.ctx();
  z3::sort sort = x.get_sort();
  unsigned width = sort.fpa_ebits() + sort.fpa_sbits();
  z3::expr bits(ctx, Z3_mk_fpa_to_ieee_bv(ctx, x));
  z3::expr magnitude = z3::zext(bits.extract(width - 2, 0), 2);
  return z3::ite(bits.extract(width - 1, width - 1) == ctx.bv_val(1, 1), -magnitude, magnitude);
}

/*! \brief Finite p and r more than kRoundingUlps apart. */
z3::expr BeyondUlps(const z3::expr& p, const z3::expr& r) {
  z3::expr a = Ordinal(p), b = Ordinal(r);
  z3::expr distance = z3::ite(z3::sge(a, b), a - b, b - a);
  return Finite(p) && Finite(r) && z3::ugt(distance, p.ctx().bv_val(rewrite::kRoundingUlps, a.get_sort().bv_size()));
}

z3::expr SpecialValues(const z3::expr& p, const z3::expr& r) {
  return IsNaN(p) != IsNaN(r) || ((IsInf(p) || IsInf(r)) && p != r) || (IsZero(p) && IsZero(r) && p != r);
}

z3::expr UlpBound(SmtModel* m, const z3::expr& p, const z3::expr& r, std::string* note) {
  if (!HasFunctions(p) && !HasFunctions(r)) return BeyondUlps(p, r);
  *note = m->HasOpaque(p) || m->HasOpaque(r)
              ? "ULP bound not modeled (a sum in another order: within (n-1) * 2^-24 * sum |terms|)"
              : "ULP bound not modeled (math functions: within kRoundingUlps plus the library's own error)";
  return p.ctx().bool_val(false);
}

z3::expr KeepsNaNAndZeros(SmtModel* m, const z3::expr& p, const z3::expr& r, std::string* note) {
  z3::context& ctx = p.ctx();
  z3::expr nan_input = ctx.bool_val(false), finite_inputs = ctx.bool_val(true);
  for (const z3::expr& x : Inputs(p)) {
    if (x.is_fpa()) nan_input = nan_input || IsNaN(x);
  }
  std::vector<z3::expr> read = Inputs(p), more = Inputs(r);
  read.insert(read.end(), more.begin(), more.end());
  for (const z3::expr& x : read) {
    if (x.is_fpa()) finite_inputs = finite_inputs && Finite(x);
  }
  z3::expr breaks = nan_input && IsNaN(p) && !IsNaN(r);
  if (m->HasOpaque(p) || m->HasOpaque(r)) {
    *note = "zero signs not modeled (opaque ops)";
    return breaks;
  }
  return breaks || (finite_inputs && IsZero(p) && IsZero(r) && p != r);
}

}  // namespace

std::vector<Obligation> ObligationsOf(rewrite::RuleTag tag) {
  switch (tag) {
    case rewrite::RuleTag::kExact:
      return {Obligation::kBitExact};
    case rewrite::RuleTag::kNsz:
      return {Obligation::kBitExactButZeroSign};
    case rewrite::RuleTag::kRounding:
      return {Obligation::kReal, Obligation::kSpecialValues, Obligation::kUlpBound};
    case rewrite::RuleTag::kStabilizing:
      return {Obligation::kRealWherePatternDefined, Obligation::kKeepsNaNAndZeros};
    default:
      return {Obligation::kRealNonzeroDivisors};
  }
}

Domain DomainOf(Obligation obligation) {
  switch (obligation) {
    case Obligation::kBitExact:
    case Obligation::kBitExactButZeroSign:
      return Domain::kIEEE;
    case Obligation::kSpecialValues:
    case Obligation::kUlpBound:
    case Obligation::kKeepsNaNAndZeros:
      return Domain::kRounding;
    default:
      return Domain::kReal;
  }
}

const char* ObligationName(Obligation obligation) {
  switch (obligation) {
    case Obligation::kBitExact:
      return "bit for bit";
    case Obligation::kBitExactButZeroSign:
      return "bit for bit but the sign of zero";
    case Obligation::kSpecialValues:
      return "special values";
    case Obligation::kUlpBound:
      return "ULP bound";
    case Obligation::kReal:
      return "reals";
    case Obligation::kRealWherePatternDefined:
      return "reals where the pattern is defined";
    case Obligation::kRealNonzeroDivisors:
      return "reals where no divisor is 0";
    default:
      return "NaN and zero signs";
  }
}

z3::expr Breaks(Obligation obligation, SmtModel* model, const z3::expr& p, const z3::expr& r, std::string* note) {
  note->clear();
  if (!p.is_fpa()) return obligation == Obligation::kKeepsNaNAndZeros ? p.ctx().bool_val(false) : p != r;
  switch (obligation) {
    case Obligation::kBitExactButZeroSign:
      return !(z3::expr(p.ctx(), Z3_mk_fpa_eq(p.ctx(), p, r)) || (IsNaN(p) && IsNaN(r)));
    case Obligation::kSpecialValues:
      return SpecialValues(p, r);
    case Obligation::kUlpBound:
      return UlpBound(model, p, r, note);
    case Obligation::kKeepsNaNAndZeros:
      return KeepsNaNAndZeros(model, p, r, note);
    default:
      return p != r;  // IEEE: all NaNs equal, -0 != +0
  }
}

}  // namespace rules_verify
}  // namespace ir
