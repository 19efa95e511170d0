/*!
 * \file verify.h
 * \brief Proves one rewrite rule with Z3: instantiates it at its `test:` clause (one fresh
 * symbolic element per tensor element), assumes its value guards, checks its instance guards,
 * and asks whether pattern and replacement can differ as the rule's tag forbids.
 */
#ifndef IR_TOOLS_RULES_VERIFY_VERIFY_H_
#define IR_TOOLS_RULES_VERIFY_VERIFY_H_

#include <string>

#include "ir/rewrite.h"
#include "obligations.h"
#include "smt_model.h"

namespace ir {
namespace rules_verify {

struct VerifyOptions {
  /*! \brief Solver time limit per proof, in milliseconds. */
  /*!
   * \brief Z3's resource limit per proof (a count of solver steps): the same verdict on a
   * loaded or a slow machine, unlike a wall-clock limit. 0: none.
   */
  unsigned rlimit = 200000000;
  /*! \brief Wall-clock backstop per proof (ms). */
  unsigned timeout_ms = 300000;
  /*! \brief Count a proof the solver gave up on as passed. */
  bool allow_unknown = false;
};

/*! \brief The outcome of one proof. */
struct Verdict {
  enum class Kind { kProved, kCounterexample, kUnknown, kError };
  Kind kind = Kind::kError;
  /*! \brief kCounterexample: "x = [NaN, +0, ...], ...; at [0,0]: pattern NaN, replacement +0". Else why. */
  std::string detail;
  /*! \brief kProved: what the proof left out ("ULP bound not modeled: ..."), or empty. */
  std::string note;
};

/*! \brief Proves `obligation` of `rule`. */
Verdict ProveRule(const rewrite::Rule& rule, Obligation obligation, const VerifyOptions& options);

/*!
 * \brief The line the tool prints for `rule`: "ok   NAME (tag)" or "FAIL NAME (tag): why", having
 * proved each obligation of its tag, and for fast_math rules the IEEE counterexample that makes
 * them fast_math.
 * \param failed set to true when the rule fails.
 */
std::string VerifyRule(const rewrite::Rule& rule, const VerifyOptions& options, bool* failed);

}  // namespace rules_verify
}  // namespace ir

#endif  // IR_TOOLS_RULES_VERIFY_VERIFY_H_
