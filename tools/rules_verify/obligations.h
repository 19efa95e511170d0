/*!
 * \file obligations.h
 * \brief What one proof of ir-rules-verify establishes: a tag's promise is one or two such
 * obligations (VerifyRule), each a per-element condition under which pattern and replacement
 * break it, over the domain the obligation is stated in.
 */
#ifndef IR_TOOLS_RULES_VERIFY_OBLIGATIONS_H_
#define IR_TOOLS_RULES_VERIFY_OBLIGATIONS_H_

#include <string>
#include <vector>

#include "ir/rewrite.h"
#include "smt_model.h"

namespace ir {
namespace rules_verify {

/*!
 * \brief What one proof establishes (a tag's promise is one or two of them, VerifyRule).
 */
enum class Obligation {
  /*! \brief IEEE: equal bit for bit (any NaN for any NaN; +0 and -0 differ). exact. */
  kBitExact,
  /*! \brief IEEE: equal but for the sign of zero. nsz. */
  kBitExactButZeroSign,
  /*!
   * \brief IEEE, rounding model: NaN where the pattern is NaN and only there, the same infinity
   * where either side is infinite, the same zero where both are zero. rounding.
   */
  kSpecialValues,
  /*!
   * \brief IEEE: finite results within kRoundingUlps, where both sides use only IEEE arithmetic
   * (elsewhere the bound is the library's or the summation's, noted). rounding, where tractable.
   */
  kUlpBound,
  /*! \brief Reals: equal for every input the guards admit. rounding. */
  kReal,
  /*! \brief Reals: equal wherever the pattern has a value (divisors nonzero, log's argument positive...). stabilizing.
   */
  kRealWherePatternDefined,
  /*! \brief Reals: equal wherever no divisor is 0. fast_math. */
  kRealNonzeroDivisors,
  /*!
   * \brief IEEE: NaN where the pattern is NaN from a NaN input it reads, and, on finite inputs,
   * the same zero where both are zero (where no opaque op decides it). stabilizing.
   */
  kKeepsNaNAndZeros,
};

/*! \brief The obligations that prove a tag's promise, in the order VerifyRule proves them. */
std::vector<Obligation> ObligationsOf(rewrite::RuleTag tag);
/*! \brief The domain `obligation` is stated over. */
Domain DomainOf(Obligation obligation);
/*! \brief "bit for bit", "special values", "reals"...: what a FAIL line names. */
const char* ObligationName(Obligation obligation);

/*!
 * \brief Where element `p` of the pattern and `r` of the replacement break `obligation`.
 * `note` receives what the proof of this element leaves out ("" when nothing).
 */
z3::expr Breaks(Obligation obligation, SmtModel* model, const z3::expr& p, const z3::expr& r, std::string* note);

}  // namespace rules_verify
}  // namespace ir

#endif  // IR_TOOLS_RULES_VERIFY_OBLIGATIONS_H_
