/*!
 * \file rewrite_check_test.cc
 * \brief The loader's judgement of rule files (the same files ir-rules-verify must reject,
 * tests/rules/rejected, ctest Rules.VerifyRejectsWhatTheLoaderRejects): growing rules without
 * `why:`, guard arity, rule cycles, names the shipped sets already define.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/rewrite.h"
#include "test_util.h"

namespace ir {
namespace {

std::string Rejected(const std::string& file) { return std::string(IR_TEST_RULES_DIR) + "/rejected/" + file; }

std::string LoadError(const std::string& path) {
  try {
    rewrite::LoadRuleFile(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

bool Registered(const std::string& set) {
  for (const std::string& s : rewrite::ListRuleSets()) {
    if (s == set) return true;
  }
  return false;
}

TEST(RewriteCheckTest, TheLoaderRejectsTheFilesTheVerifierRejects) {
  struct Case {
    std::string file, set, message;
  };
  std::vector<Case> cases{
      {"grows_without_why.rules", "grows_without_why", "rule 'neg_as_sub' does not lower the cost order"},
      {"guard_arity.rules", "guard_arity", "rule 'mul_one_four_args': guard result_like takes 1 arguments, not 4"},
      {"cycle.rules", "cycle", "rule cycle: 'exp_to_exp2' ("},
      {"duplicate_of_shipped.rules", "duplicate_of_shipped",
       "rule 'mul_one' is already defined at rules/algebra.rules:"},
  };
  for (const Case& c : cases) {
    std::string error = LoadError(Rejected(c.file));
    EXPECT_NE(error.find(c.message), std::string::npos) << c.file << ": " << error;
    EXPECT_FALSE(Registered(c.set)) << c.file << " was registered although rejected";
  }
  // The cycle names both rules, in the order they fire, and the term they return to.
  std::string cycle = LoadError(Rejected("cycle.rules"));
  EXPECT_NE(cycle.find("-> 'exp_add_zero_back' ("), std::string::npos) << cycle;
  EXPECT_NE(cycle.find("back to exp(x)"), std::string::npos) << cycle;
  // Both files are named: the user's path and line, the shipped file and line.
  std::string duplicate = LoadError(Rejected("duplicate_of_shipped.rules"));
  EXPECT_NE(duplicate.find("duplicate_of_shipped.rules:3: rule 'mul_one'"), std::string::npos) << duplicate;
  // The shipped sets themselves pass (every Simplify run checks them together on first use).
  for (const char* set : {"algebra", "nn", "shape", "gradient"}) EXPECT_NO_THROW(rewrite::GetRuleSet(set));
}

TEST(RewriteCheckTest, CyclesAcrossSetsAndThroughCommutedArgumentsAreFound) {
  // A user rule that undoes a shipped one: the shipped exp_log (exp(log(x)) -> x, guarded) is
  // undone by x -> exp(log(x)) on a root op, through a registered set.
  rewrite::RuleFile grow = rewrite::ParseRules(R"(
commutative: add
rule swap_to_exp_log exact {
  match:   sqrt(x)
  rewrite: exp(log(sqrt(x)))
  why:     a cycle with the shipped exp_log
}
)",
                                               "test_cross_cycle");
  std::vector<rewrite::RuleSource> sets = rewrite::RegisteredRuleSets();
  sets.push_back(rewrite::RuleSource{&grow, "cross.rules"});
  bool shipped_has_exp_log = false;
  for (const rewrite::RuleSource& s : sets) {
    for (const rewrite::Rule& r : s.file->rules) shipped_has_exp_log |= r.name == "exp_log";
  }
  ASSERT_TRUE(shipped_has_exp_log) << "the shipped rules no longer have exp_log: rewrite this test";
  EXPECT_ERROR(rewrite::CheckRulesTogether(sets), "'swap_to_exp_log' (cross.rules:3) -> 'exp_log' (rules/");

  // add is commutative: add(y, x) is the term add(x, y), so swapping it forever is a cycle.
  rewrite::RuleFile swap = rewrite::ParseRules(R"(
commutative: add
rule add_swap exact {
  match:   add(x, negative(y))
  rewrite: add(negative(y), x)
  why:     swaps arguments
}
)",
                                               "test_swap");
  EXPECT_ERROR(rewrite::CheckRulesTogether({rewrite::RuleSource{&swap, "swap.rules"}}), "rule cycle: 'add_swap'");

  // A growing rule that nothing brings back is fine, and a registered set replaces its old self.
  // (sqrt(-x) -> sqrt(0 - x) would not be: the shipped zeros_like_sub brings 0 - x back to -x.)
  rewrite::RuleFile fine = rewrite::ParseRules(R"(
rule test_sin_as_cos rounding {
  match:   sin(x)
  rewrite: cos(subtract_scalar{scalar=1.5707964}(x))
  why:     grows, and no rule brings it back
}
)",
                                               "test_fine");
  EXPECT_NO_THROW(rewrite::RegisterRuleSet(fine, "fine.rules"));
  EXPECT_NO_THROW(rewrite::RegisterRuleSet(fine, "fine.rules")) << "re-registering replaces, it does not clash";
  EXPECT_ERROR(rewrite::RegisterRuleSet(rewrite::ParseRules(R"(
rule test_sin_as_cos rounding {
  match:   sin(x)
  rewrite: cos(subtract_scalar{scalar=1.5707964}(x))
  why:     the same name in another set
}
)",
                                                            "test_fine_again"),
                                        "again.rules"),
               "again.rules:2: rule 'test_sin_as_cos' is already defined at fine.rules:2");
  rewrite::RegisterRuleText("test_fine", "");  // the other tests of this process see no extra rule
}

}  // namespace
}  // namespace ir
