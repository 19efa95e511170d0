// The verifier's model on hand-built rules and expressions: FCodeGen translation over IEEE
// and the reals, counterexamples, and the failures it must report (an op or guard it cannot
// model, a test instance that breaks a guard).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/ast.h"
#include "smt_model.h"
#include "verify.h"

namespace ir {
namespace rules_verify {
namespace {

using rewrite::Rule;
using rewrite::RuleTag;
using rewrite::Term;

Term V(const std::string& name) {
  Term t;
  t.name = name;
  return t;
}
Term L(double value) {
  Term t;
  t.kind = Term::Kind::kLiteral;
  t.literal = value;
  return t;
}
Term Op(const std::string& name, std::vector<Term> args, std::vector<std::pair<std::string, std::string>> attrs = {}) {
  Term t;
  t.kind = Term::Kind::kOp;
  t.name = name;
  t.args = std::move(args);
  t.attrs = std::move(attrs);
  return t;
}
Rule MakeRule(RuleTag tag, Term pattern, Term replacement, std::vector<rewrite::Guard> guards = {}) {
  Rule r;
  r.name = "r";
  r.tag = tag;
  r.pattern = std::move(pattern);
  r.replacement = std::move(replacement);
  r.guards = std::move(guards);
  return r;
}

Verdict Prove(const Rule& rule, Obligation obligation) { return ProveRule(rule, obligation, VerifyOptions()); }

TEST(SmtModel, TranslatesFCodeGenExpressionsOverIeee) {
  z3::context ctx;
  SmtModel m(&ctx, Domain::kIEEE);
  z3::expr x = m.Fresh("x", DType::kFloat32);
  ast::Expr vx = ast::Var("x", DType::kFloat32);
  // relu as its FCodeGen writes it, and maximum(x, 0) as its FCodeGen writes it (NaN
  // propagates): they differ exactly at x = NaN (and -0).
  ast::Expr zero = ast::ConstLike(0, vx);
  ast::Expr relu = ast::Select(ast::Binary(">", vx, zero), vx, zero);
  ast::Expr keep = ast::Binary("||", ast::Binary(">=", vx, zero), ast::Binary("!=", vx, vx));
  ast::Expr maximum = ast::Select(keep, vx, zero);
  z3::solver s(ctx);
  s.add(m.Translate(relu, {{"x", x}}) != m.Translate(maximum, {{"x", x}}));
  s.add(!z3::expr(ctx, Z3_mk_fpa_is_zero(ctx, x)));
  ASSERT_EQ(s.check(), z3::sat);
  EXPECT_EQ(ElementText(s.get_model().eval(x, true)), "NaN");
}

TEST(SmtModel, CastsAndIntegerDivisionFollowC) {
  z3::context ctx;
  SmtModel m(&ctx, Domain::kReal);
  ast::Expr seven = ast::Const(-7, DType::kInt32), two = ast::Const(2, DType::kInt32);
  z3::expr q = m.Translate(ast::Cast(ast::Binary("/", seven, two), DType::kFloat32), {}).simplify();
  EXPECT_EQ(q.get_decimal_string(3), "-3");  // truncates toward zero, as C
  z3::expr back = m.Translate(ast::Cast(ast::Const(-2.5, DType::kFloat32), DType::kInt32), {}).simplify();
  EXPECT_EQ(ElementText(back), "-2");
}

TEST(SmtModel, PrintsIeeeSpecialValues) {
  z3::context ctx;
  SmtModel m(&ctx, Domain::kIEEE);
  EXPECT_EQ(ElementText(m.Constant(-0.0, DType::kFloat32)), "-0");
  EXPECT_EQ(ElementText(m.Constant(1.0 / 0.0, DType::kFloat32)), "+Inf");
  EXPECT_EQ(ElementText(m.Constant(0.1, DType::kFloat32)), "0.100000001");
}

TEST(ProveRule, ProvesExactIdentitiesAndRejectsAddZero) {
  EXPECT_EQ(Prove(MakeRule(RuleTag::kExact, Op("multiply", {V("x"), L(1)}), V("x")), Obligation::kBitExact).kind,
            Verdict::Kind::kProved);
  Verdict v = Prove(MakeRule(RuleTag::kExact, Op("add", {V("x"), L(0)}), V("x")), Obligation::kBitExact);
  ASSERT_EQ(v.kind, Verdict::Kind::kCounterexample) << v.detail;
  EXPECT_NE(v.detail.find("-0"), std::string::npos) << v.detail;
  // Over the reals x + 0 is x; bit for bit but for the sign of zero too (nsz).
  EXPECT_EQ(Prove(MakeRule(RuleTag::kNsz, Op("add", {V("x"), L(0)}), V("x")), Obligation::kReal).kind,
            Verdict::Kind::kProved);
  EXPECT_EQ(Prove(MakeRule(RuleTag::kNsz, Op("add", {V("x"), L(0)}), V("x")), Obligation::kBitExactButZeroSign).kind,
            Verdict::Kind::kProved);
  Verdict zero = Prove(MakeRule(RuleTag::kNsz, Op("multiply", {V("x"), L(0)}), Op("zeros_like", {V("x")})),
                       Obligation::kBitExactButZeroSign);
  EXPECT_EQ(zero.kind, Verdict::Kind::kCounterexample) << zero.detail;  // x = NaN or Inf
}

TEST(ProveRule, RealAxiomsProveLogOfSoftmaxButNotLogOfAProduct) {
  Rule log_softmax = MakeRule(RuleTag::kStabilizing, Op("log", {Op("softmax", {V("x")})}), Op("log_softmax", {V("x")}));
  EXPECT_EQ(Prove(log_softmax, Obligation::kReal).kind, Verdict::Kind::kProved);
  Term log_xy = Op("log", {Op("multiply", {V("x"), V("y")})});
  Term sum_logs = Op("add", {Op("log", {V("x")}), Op("log", {V("y")})});
  EXPECT_EQ(Prove(MakeRule(RuleTag::kStabilizing, log_xy, sum_logs), Obligation::kReal).kind,
            Verdict::Kind::kCounterexample);
  rewrite::Guard px{"positive", {"x"}, false}, py{"positive", {"y"}, false};
  EXPECT_EQ(Prove(MakeRule(RuleTag::kStabilizing, log_xy, sum_logs, {px, py}), Obligation::kReal).kind,
            Verdict::Kind::kProved);
}

TEST(ProveRule, ShapeOpsAreCheckedOnTheInstance) {
  Rule r = MakeRule(RuleTag::kExact, Op("transpose", {Op("transpose", {V("x")}, {{"axes", "(1,2,0)"}})}), V("x"));
  r.test = {{"x", "f32[2,3,4]"}};
  Verdict v = Prove(r, Obligation::kBitExact);
  EXPECT_EQ(v.kind, Verdict::Kind::kCounterexample);
  EXPECT_NE(v.detail.find("replacement float32[2,3,4]"), std::string::npos) << v.detail;  // shapes differ
  Rule back =
      MakeRule(RuleTag::kExact,
               Op("transpose", {Op("transpose", {V("x")}, {{"axes", "(1,2,0)"}})}, {{"axes", "(2,0,1)"}}), V("x"));
  back.test = r.test;
  EXPECT_EQ(Prove(back, Obligation::kBitExact).kind, Verdict::Kind::kProved)
      << Prove(back, Obligation::kBitExact).detail;
}

TEST(ProveRule, ReportsWhatItCannotModel) {
  Verdict op = Prove(MakeRule(RuleTag::kExact, Op("argmax", {V("x")}), Op("argmax", {V("x")})), Obligation::kBitExact);
  EXPECT_EQ(op.kind, Verdict::Kind::kError);
  EXPECT_NE(op.detail.find("cannot model op argmax"), std::string::npos) << op.detail;
  Verdict guard =
      Prove(MakeRule(RuleTag::kExact, Op("negative", {V("x")}), Op("negative", {V("x")}), {{"no_such_guard", {"x"}}}),
            Obligation::kBitExact);
  EXPECT_NE(guard.detail.find("unknown guard no_such_guard in the verifier"), std::string::npos) << guard.detail;
}

TEST(ProveRule, SumsAreOpaqueOverIeeeAndOrderFreeInTheRoundingModel) {
  // Summation order is the kernel's: sum(x) over all axes is not provably sum(transpose(x)) bit
  // for bit, but the same terms in another order keep the special values (rounding).
  Rule r = MakeRule(RuleTag::kRounding, Op("sum", {Op("transpose", {V("x")})}), Op("sum", {V("x")}));
  EXPECT_EQ(Prove(r, Obligation::kBitExact).kind, Verdict::Kind::kCounterexample);
  EXPECT_EQ(Prove(r, Obligation::kReal).kind, Verdict::Kind::kProved);
  Verdict v = Prove(r, Obligation::kSpecialValues);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
  v = Prove(r, Obligation::kUlpBound);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
  EXPECT_NE(v.note.find("ULP bound not modeled"), std::string::npos) << v.note;
  // A sum of one term adds it to +0: -0 becomes +0, a special value the rounding tag keeps.
  Rule one = MakeRule(RuleTag::kRounding, Op("sum", {V("x")}, {{"axis", "1"}, {"keepdims", "true"}}), V("x"));
  one.test = {{"x", "f32[2,1]"}, {"?a", "1"}};
  Verdict minus_zero = Prove(one, Obligation::kSpecialValues);
  ASSERT_EQ(minus_zero.kind, Verdict::Kind::kCounterexample) << minus_zero.detail;
  EXPECT_NE(minus_zero.detail.find("-0"), std::string::npos) << minus_zero.detail;
}

TEST(ProveRule, RoundingRejectsChangedSpecialValuesAndBoundsUlps) {
  Verdict add_zero = Prove(MakeRule(RuleTag::kRounding, Op("add", {V("x"), L(0)}), V("x")), Obligation::kSpecialValues);
  ASSERT_EQ(add_zero.kind, Verdict::Kind::kCounterexample);
  EXPECT_NE(add_zero.detail.find("-0"), std::string::npos) << add_zero.detail;
  // (x * 4) * 0.25 overflows where x * 1 does not: reassociation is fast_math.
  Term chain = Op("multiply_scalar", {Op("multiply_scalar", {V("x")}, {{"scalar", "4"}})}, {{"scalar", "0.25"}});
  Rule reassoc = MakeRule(RuleTag::kRounding, chain, Op("multiply_scalar", {V("x")}, {{"scalar", "1"}}));
  reassoc.test = {{"x", "f32[1]"}};
  Verdict overflow = Prove(reassoc, Obligation::kSpecialValues);
  ASSERT_EQ(overflow.kind, Verdict::Kind::kCounterexample);
  EXPECT_NE(overflow.detail.find("Inf"), std::string::npos) << overflow.detail;
  // (x * 3) * 0.5 and x * 1.5 round alike but in subnormals: within the bound; x * 1.25 is not.
  Term halved = Op("multiply_scalar", {Op("multiply_scalar", {V("x")}, {{"scalar", "3"}})}, {{"scalar", "0.5"}});
  Rule scaled = MakeRule(RuleTag::kRounding, halved, Op("multiply_scalar", {V("x")}, {{"scalar", "1.5"}}));
  scaled.test = {{"x", "f32[1]"}};
  Verdict within = Prove(scaled, Obligation::kUlpBound);
  EXPECT_EQ(within.kind, Verdict::Kind::kProved) << within.detail;
  EXPECT_EQ(within.note, "");
  Rule wrong = scaled;
  wrong.replacement.attrs = {{"scalar", "1.25"}};
  EXPECT_EQ(Prove(wrong, Obligation::kUlpBound).kind, Verdict::Kind::kCounterexample);
}

TEST(ProveRule, StabilizingKeepsNaNInputsAndZeroSigns) {
  Rule log_softmax = MakeRule(RuleTag::kStabilizing, Op("log", {Op("softmax", {V("x")})}), Op("log_softmax", {V("x")}));
  EXPECT_EQ(Prove(log_softmax, Obligation::kRealWherePatternDefined).kind, Verdict::Kind::kProved);
  Verdict v = Prove(log_softmax, Obligation::kKeepsNaNAndZeros);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
  // x / x -> 1 turns a NaN input into 1; log(exp(-0)) = +0 is not -0.
  Verdict div_self = Prove(MakeRule(RuleTag::kStabilizing, Op("divide", {V("x"), V("x")}), Op("ones_like", {V("x")})),
                           Obligation::kKeepsNaNAndZeros);
  ASSERT_EQ(div_self.kind, Verdict::Kind::kCounterexample);
  EXPECT_NE(div_self.detail.find("NaN"), std::string::npos) << div_self.detail;
  Verdict log_exp =
      Prove(MakeRule(RuleTag::kStabilizing, Op("log", {Op("exp", {V("x")})}), V("x")), Obligation::kKeepsNaNAndZeros);
  ASSERT_EQ(log_exp.kind, Verdict::Kind::kCounterexample);
  EXPECT_NE(log_exp.detail.find("-0"), std::string::npos) << log_exp.detail;
}

TEST(ProveRule, ProvesTheFusedCrossEntropyOnlyForRowsSummingToOne) {
  // softmax(x) * sum(y) - y, the decomposed form's true gradient, is the fused op's p - y
  // only when every label row sums to 1.
  Term p = Op("softmax", {V("x")});
  Term total = Op("sum", {V("y")}, {{"axis", "-1"}, {"keepdims", "true"}});
  Term grad = Op("subtract", {Op("multiply", {p, total}), V("y")});
  Term fused = Op("softmax_cross_entropy_with_logits", {V("x"), V("y")});
  fused.output = 1;
  EXPECT_EQ(Prove(MakeRule(RuleTag::kStabilizing, grad, fused), Obligation::kReal).kind,
            Verdict::Kind::kCounterexample);
  rewrite::Guard rows{"rows_sum_to_one", {"y", "-1"}, false};
  Verdict v = Prove(MakeRule(RuleTag::kStabilizing, grad, fused, {rows}), Obligation::kReal);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
  // The loss: -sum(y * log_softmax(x), axis 1).
  Term loss = Op("negative", {Op("sum", {Op("multiply", {V("y"), Op("log_softmax", {V("x")})})}, {{"axis", "1"}})});
  fused.output = 0;
  v = Prove(MakeRule(RuleTag::kStabilizing, loss, fused), Obligation::kReal);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
}

TEST(ProveRule, ProvesSparseLabelsAsOneHotAndSoftplusByHand) {
  Term dense = Op("softmax_cross_entropy_with_logits", {V("x"), Op("one_hot", {V("k")}, {{"depth", "3"}})});
  Term sparse = Op("sparse_softmax_cross_entropy_with_logits", {V("x"), V("k")});
  Rule r = MakeRule(RuleTag::kStabilizing, dense, sparse);
  r.test = {{"x", "f32[2,3]"}, {"k", "i32[2]"}};
  Verdict v = Prove(r, Obligation::kReal);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
  Rule softplus =
      MakeRule(RuleTag::kStabilizing, Op("log", {Op("add", {L(1), Op("exp", {V("x")})})}), Op("softplus", {V("x")}));
  v = Prove(softplus, Obligation::kReal);
  EXPECT_EQ(v.kind, Verdict::Kind::kProved) << v.detail;
}

}  // namespace
}  // namespace rules_verify
}  // namespace ir
