/*!
 * \file simplify_test.cc
 * \brief The rule engine: the language's errors, the cost order, hash consing, explanations,
 * rule sets of op libraries (rules and guards registered from code), the tags that run by
 * default (none changes a special value), the value-guarded fast_math rules, and the
 * hand-written softmax cross-entropy reaching a stable gradient when a Session binds its
 * rule-free gradient graph.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir/autodiff.h"
#include "ir/fold_constants.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir/rewrite.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

using test::Apply;
using test::Var;

#define EXPECT_ERROR(stmt, text)                                                                   \
  try {                                                                                            \
    stmt;                                                                                          \
    ADD_FAILURE() << "no error thrown";                                                            \
  } catch (const Error& err) {                                                                     \
    EXPECT_NE(std::string(err.what()).find(text), std::string::npos) << "message: " << err.what(); \
  }

TEST(RuleLanguageTest, ParsesClausesAttributesLiteralsAndOutputs) {
  rewrite::RuleFile file = rewrite::ParseRules(R"(
# a comment
commutative: add, multiply
weight: bias_add = 0.5
rule r1 exact {
  match:   multiply_scalar{scalar=?s}(softmax_cross_entropy_with_logits(z,
           y).1)
  where:   attr_is(?s, 1), not same_shape(z, y)
  rewrite: softmax_cross_entropy_with_logits(z, y).1
  test:    z f32[2,3], y f32[2,3], ?s = 1
}
rule r2 fast_math {
  match:   subtract(x, -0)
  rewrite: x
  why:     a test
}
)",
                                               "t");
  ASSERT_EQ(file.rules.size(), 2u);
  const rewrite::Rule& r = file.rules[0];
  EXPECT_EQ(r.line, 5);
  EXPECT_EQ(r.pattern.attrs[0].second, "?s");
  EXPECT_EQ(r.pattern.args[0].output, 1);
  EXPECT_EQ(r.pattern.args[0].args[1].name, "y");
  EXPECT_TRUE(r.guards[1].negated);
  EXPECT_EQ(r.test.size(), 3u);
  EXPECT_EQ(file.rules[1].tag, rewrite::RuleTag::kFastMath);
  EXPECT_TRUE(std::signbit(file.rules[1].pattern.args[1].literal));
  EXPECT_EQ(file.commutative, (std::vector<std::string>{"add", "multiply"}));
}

TEST(RuleLanguageTest, ErrorsNameTheSetTheLineAndWhatWasExpected) {
  EXPECT_ERROR(rewrite::ParseRules("rule a wrong {\n match: exp(x)\n rewrite: x\n}", "s"), "s:1: unknown tag 'wrong'");
  EXPECT_ERROR(rewrite::ParseRules("rule a exact {\n match: exp(x)\n rewrite: y\n}", "s"),
               "replacement variable 'y' is unbound");
  EXPECT_ERROR(rewrite::ParseRules("rule a exact {\n match: exp(x)\n rewrite: x\n", "s"), "is not closed");
  EXPECT_ERROR(rewrite::ParseRules("rule a exact {\n match: exp(x\n rewrite: x\n}", "s"), "s:2: expected ','");
  EXPECT_ERROR(rewrite::ParseRules("rule a exact {\n match: exp(x)\n rewrite: add(x, 1)\n}", "s"),
               "literals are patterns only");
  EXPECT_ERROR(rewrite::ParseRules("rule a exact {\n match: x\n rewrite: x\n}", "s"), "a pattern is an op term");
  EXPECT_ERROR(rewrite::ParseRules("garbage here", "s"), "s:1: expected 'rule'");
}

TEST(RuleLanguageTest, TheSplitRealTagIsAnErrorThatNamesItsSuccessors) {
  // real rules ran by default though x + 0 -> x among them turns -0 into +0: no silent mapping.
  EXPECT_ERROR(rewrite::ParseRules("rule a real {\n match: add(x, 0)\n rewrite: x\n}", "user"),
               "user:1: tag 'real' was split");
  EXPECT_ERROR(rewrite::ParseRules("rule a real {\n match: add(x, 0)\n rewrite: x\n}", "user"),
               "rounding (the same special values, finite results within 2 ULP), stabilizing");
  for (const char* tag : {"exact", "rounding", "stabilizing", "nsz", "fast_math"}) {
    rewrite::RuleFile f = rewrite::ParseRules(StrCat("rule a ", tag, " {\n match: add(x, 0)\n rewrite: x\n}"), "t");
    EXPECT_STREQ(rewrite::TagName(f.rules[0].tag), tag);
  }
}

TEST(RuleLanguageTest, CheckRulesNeedsKnownOpsAndGuardsAndALowerCost) {
  auto check = [](const std::string& text) { rewrite::CheckRules(rewrite::ParseRules(text, "c")); };
  EXPECT_ERROR(check("rule a exact {\n match: no_such_op(x)\n rewrite: x\n}"), "unknown op 'no_such_op'");
  EXPECT_ERROR(check("rule a exact {\n match: exp(x)\n where: no_guard(x)\n rewrite: x\n}"), "unknown guard");
  EXPECT_ERROR(check("rule a exact {\n match: exp(x)\n rewrite: log(x)\n}"), "does not lower the cost order");
  check("rule a exact {\n match: exp(x)\n rewrite: log(x)\n why: grows on purpose\n}");
  EXPECT_ERROR(check("rule a exact {\n match: exp(x, x)\n rewrite: x\n}"), "exp takes 1 inputs");
}

/*! \brief Simplify of `outputs` with only `sets` (and fast_math or nsz if asked), inferred from `feeds`. */
Graph Simplified(const std::vector<NodeEntry>& outputs, const std::map<std::string, NDArray>& feeds,
                 const std::vector<std::string>& sets, bool fast_math = false, bool nsz = false) {
  Graph g = test::InferFromFeeds(outputs, feeds);
  if (!sets.empty()) g.SetAttr("simplify.sets", sets);
  g.SetAttr("simplify.fast_math", fast_math ? 1 : 0);
  g.SetAttr("simplify.nsz", nsz ? 1 : 0);
  return ApplyPass(g, "Simplify");
}

size_t OpNodes(const Graph& g) {
  size_t n = 0;
  const IndexedGraph& idx = g.indexed_graph();
  for (uint32_t i = 0; i < idx.num_nodes(); ++i) n += !idx[i].source->is_variable();
  return n;
}

std::vector<std::string> Fired(const Graph& g) { return g.GetAttrOr<std::vector<std::string>>("simplify.fired", {}); }

TEST(SimplifyTest, MergesEqualSubexpressionsAndAppliesFastMathOnlyWhenAsked) {
  NodeEntry x = Var("x");
  NodeEntry d = Apply("subtract", "d", {Apply("exp", "e1", {x}), Apply("exp", "e2", {x})});
  std::map<std::string, NDArray> feeds{{"x", test::RandomArray({2, 3}, DType::kFloat32, 1)}};
  Graph plain = Simplified({d}, feeds, {"algebra"});
  EXPECT_EQ(OpNodes(plain), 2u) << "the two exp(x) are one node";
  EXPECT_TRUE(Fired(plain).empty()) << "x - x -> 0 is fast_math";
  Graph fast = Simplified({d}, feeds, {"algebra"}, true);
  ASSERT_FALSE(Fired(fast).empty());
  EXPECT_EQ(Fired(fast)[0], "sub_self @ d");
  EXPECT_EQ(test::Values(test::EvalGraphWithKernels(fast, feeds)[0]), std::vector<double>(6, 0.0));
}

TEST(SimplifyTest, DefaultRulesKeepSpecialValuesNszAndFastMathChangeThem) {
  // x + 0 with x = -0 is +0: the default (exact, rounding, stabilizing) leaves it; nsz or
  // fast_math rewrite it to x (-0). log(exp(-0)) = +0 likewise needs fast_math.
  NodeEntry x = Var("x");
  NodeEntry zero = MakeConstantNode("zero", NDArray::FromVector<float>(Shape::Scalar(), {0.0f}));
  NodeEntry sum = Apply("add", "sum", {x, zero}), log_exp = Apply("log", "le", {Apply("exp", "e", {x})});
  std::map<std::string, NDArray> feeds{{"x", NDArray::FromVector<float>(Shape{3}, {-0.0f, 1.0f, -2.0f})}};
  Graph by_default = Simplified({sum, log_exp}, feeds, {});
  EXPECT_TRUE(Fired(by_default).empty()) << Fired(by_default)[0];
  EXPECT_FALSE(std::signbit(test::Values(test::EvalGraphWithKernels(by_default, feeds)[0])[0]));
  Graph nsz = Simplified({sum, log_exp}, feeds, {}, false, true);
  EXPECT_EQ(Fired(nsz), std::vector<std::string>{"add_zero @ sum"});
  Graph fast = Simplified({sum, log_exp}, feeds, {}, true);
  EXPECT_EQ(Fired(fast), (std::vector<std::string>{"add_zero @ sum", "log_exp @ le"}));
  EXPECT_TRUE(std::signbit(test::Values(test::EvalGraphWithKernels(fast, feeds)[0])[0]));
}

TEST(SimplifyTest, ValueGuardedFastMathRulesFireWhereTheProducerTellsTheSign) {
  NodeEntry v = Var("v");
  NodeEntry positive = Apply("softplus", "p", {v}), square = Apply("square", "sq", {v});
  NodeEntry exp_log = Apply("exp", "el", {Apply("log", "l", {positive})});
  NodeEntry root_twice = Apply("multiply", "rr", {Apply("sqrt", "r", {square}), Apply("sqrt", "r2", {square})});
  NodeEntry ratio = Apply("divide", "q", {positive, positive});
  NodeEntry unknown = Apply("exp", "eu", {Apply("log", "lu", {v})});  // v may be <= 0: log has no value
  std::map<std::string, NDArray> feeds{{"v", NDArray::FromVector<float>(Shape{3}, {-1.5f, 0.25f, 2.0f})}};
  std::vector<NodeEntry> outputs{exp_log, root_twice, ratio, unknown};
  EXPECT_TRUE(Fired(Simplified(outputs, feeds, {"algebra"})).empty());
  Graph fast = Simplified(outputs, feeds, {"algebra"}, true);
  EXPECT_EQ(Fired(fast), (std::vector<std::string>{"exp_log @ el", "sqrt_mul_sqrt @ rr", "div_self @ q"}));
  std::vector<NDArray> got = test::EvalGraphWithKernels(fast, feeds);
  test::ExpectNear(got[0], {std::log1p(std::exp(-1.5)), std::log1p(std::exp(0.25)), std::log1p(std::exp(2.0))}, 1e-6,
                   1e-6);
  test::ExpectNear(got[1], {2.25, 0.0625, 4}, 1e-6, 1e-6);
  EXPECT_EQ(test::Values(got[2]), std::vector<double>(3, 1.0));
}

TEST(SimplifyTest, ExplainsWhyANamedRuleDidNotFire) {
  NodeEntry x = Var("x");
  NodeEntry y = Apply("log", "l", {Apply("softmax", "s", {x}, {{"axis", "0"}})});
  Graph g = test::InferFromFeeds({y}, {{"x", test::RandomArray({2, 3}, DType::kFloat32, 1)}});
  g.SetAttr("simplify.disable", std::vector<std::string>{"log_of_softmax"});
  g.SetAttr("simplify.explain", std::vector<std::string>{"log_of_softmax", "xent_neg_sum", "no_such_rule"});
  Graph out = ApplyPass(g, "Simplify");
  auto explained = out.GetAttr<std::vector<std::string>>("simplify.explained");
  EXPECT_NE(std::find(explained.begin(), explained.end(), "log_of_softmax: no such active rule"), explained.end());
  EXPECT_NE(std::find(explained.begin(), explained.end(), "no_such_rule: no such active rule"), explained.end());
  // Enabled, it fires; a value the pattern needs that is another op is explained.
  g.SetAttr("simplify.disable", std::vector<std::string>{});
  NodeEntry not_softmax = Apply("log", "l2", {Apply("tanh", "t", {x})});
  g.outputs.push_back(not_softmax);
  out = ApplyPass(g, "Simplify");
  explained = out.GetAttr<std::vector<std::string>>("simplify.explained");
  bool found = std::any_of(explained.begin(), explained.end(), [](const std::string& s) {
    return s.find("log_of_softmax @ l2: wants softmax output 0, found tanh 't' output 0") == 0;
  });
  EXPECT_TRUE(found) << "explanations: " << explained.size();
}

TEST(SimplifyTest, OpLibrariesRegisterRulesAndGuardsAndACycleIsAnErrorNotAHang) {
  rewrite::RegisterGuard("test_is_float64", 1, "x is float64", [](const rewrite::Bindings& b, const auto& args) {
    return b.values.at(args[0]).dtype == DType::kFloat64;
  });
  const std::string guarded = R"(
rule test_double_exp_log stabilizing {
  match:   log(exp(x))
  where:   test_is_float64(x)
  rewrite: x
}
rule test_sin_to_cos exact {
  match:   sin(x)
  rewrite: cos(x)
  why:     grows the graph (a test of the once-per-node rule)
}
)";
  rewrite::RegisterRuleText("test_library", guarded + R"(rule test_cos_to_sin exact {
  match:   cos(x)
  rewrite: sin(x)
  why:     a deliberate cycle
}
)");
  // The first use checks the registered sets together: the library's cycle is an error that
  // names both rules, for every set, until the library is fixed.
  EXPECT_ERROR(rewrite::GetRuleSet("algebra"),
               "rule cycle: 'test_sin_to_cos' (IR_REGISTER_RULES(test_library):7) -> 'test_cos_to_sin' "
               "(IR_REGISTER_RULES(test_library):12) -> back to sin(x)");
  rewrite::RegisterRuleText("test_library", guarded);
  NodeEntry x = Var("x");
  NodeEntry y = Apply("log", "l", {Apply("exp", "e", {x})});
  auto fired = [&](DType dtype) {
    return Fired(Simplified({y}, {{"x", test::RandomArray({3}, dtype, 1)}}, {"test_library"}));
  };
  EXPECT_EQ(fired(DType::kFloat64), std::vector<std::string>{"test_double_exp_log @ l"});
  EXPECT_TRUE(fired(DType::kFloat32).empty()) << "the library's guard said no";
  Graph grown =
      Simplified({Apply("sin", "s", {x})}, {{"x", test::RandomArray({3}, DType::kFloat32, 1)}}, {"test_library"});
  EXPECT_EQ(Fired(grown), std::vector<std::string>{"test_sin_to_cos @ s"});
}

/*! \brief -sum(y * log(softmax(z)), 1), as TF1 programs write it. */
NodeEntry HandWrittenCrossEntropy(const NodeEntry& z, const NodeEntry& y) {
  NodeEntry log_p = Apply("log", "log_p", {Apply("softmax", "p", {z})});
  return Apply("negative", "xent", {Apply("sum", "row", {Apply("multiply", "yl", {y, log_p})}, {{"axis", "1"}})});
}

TEST(SimplifyTest, HandWrittenCrossEntropyGetsAStableGeneralGradientWhenBound) {
  NodeEntry z = Var("z"), y = Var("y");
  NodeEntry loss = Apply("mean", "loss", {HandWrittenCrossEntropy(z, y)});
  // Logits of 1e4 overflow exp; label rows that sum to 2, 1 and 0.5 (p - y is not the gradient).
  NDArray logits = NDArray::FromVector<float>(Shape{3, 3}, {1e4f, 0, -1e4f, 3, 1, 2, -5e3f, 5e3f, 0});
  NDArray labels = NDArray::FromVector<float>(Shape{3, 3}, {1, 1, 0, 0, 1, 0, 0.25f, 0, 0.25f});
  std::unordered_map<std::string, NDArray> feeds{{"z", logits}, {"y", labels}};
  // The gradient is built as written (log's g / p, softmax's backward): no rule runs here.
  NodeEntry grad = Gradients({loss}, {z})[0];
  bool raw = false;
  PostOrderDFSVisit(std::vector<NodeEntry>{grad},
                    [&](const NodePtr& n) { raw = raw || (!n->is_variable() && n->op()->name == "divide"); });
  EXPECT_TRUE(raw) << "log's gradient g / p is in the gradient graph";
  Session session;
  std::vector<NDArray> out = session.Run({loss, grad}, feeds);
  std::vector<std::string> rewrites = session.last_stats().rewrites;
  for (const char* rule : {"xent_neg_sum", "log_softmax_grad_by_hand"}) {
    EXPECT_TRUE(
        std::any_of(rewrites.begin(), rewrites.end(), [&](const std::string& r) { return r.rfind(rule, 0) == 0; }))
        << rule << " did not fire when the session bound the graph";
  }
  std::vector<double> p = test::Values(test::RunOp("softmax", {}, {logits})[0]), yv = test::Values(labels);
  std::vector<double> want(9);
  for (int r = 0; r < 3; ++r) {
    double mass = yv[r * 3] + yv[r * 3 + 1] + yv[r * 3 + 2];
    for (int j = 0; j < 3; ++j) want[r * 3 + j] = (p[r * 3 + j] * mass - yv[r * 3 + j]) / 3;
  }
  test::ExpectNear(out[1], want, 1e-6, 1e-5);
  EXPECT_TRUE(std::isfinite(test::Values(out[0])[0]));
  // simplify = false runs the same graph as written (as TF with grappler off): no rule fires,
  // and log(softmax) overflows, in the loss and in its gradient.
  SessionOptions off;
  off.simplify = false;
  Session plain(off);
  std::vector<NDArray> unsimplified = plain.Run({loss, grad}, feeds);
  EXPECT_TRUE(plain.last_stats().rewrites.empty());
  EXPECT_FALSE(std::isfinite(test::Values(unsimplified[0])[0]));
  std::vector<double> g = test::Values(unsimplified[1]);
  EXPECT_FALSE(std::all_of(g.begin(), g.end(), [](double v) { return std::isfinite(v); }));
}

TEST(SimplifyTest, GradientsAreBuiltAsWrittenWithoutRewriteRules) {
  // log(exp(x)) -> x and x * 1 -> x would leave no exp or multiply to differentiate; the
  // Gradient pass applies no rule (a Session applies them when it binds the graph).
  NodeEntry x = Var("x");
  NodeEntry one = Apply("ones_like", "one", {x});
  NodeEntry y = Apply("log", "l", {Apply("exp", "e", {Apply("multiply", "m", {x, one})})});
  NodeEntry dx = Gradients({y}, {x})[0];
  std::set<std::string> ops;
  PostOrderDFSVisit(std::vector<NodeEntry>{dx}, [&](const NodePtr& n) {
    if (!n->is_variable()) ops.insert(n->op()->name);
  });
  EXPECT_TRUE(ops.count("exp") && ops.count("divide") && ops.count("multiply")) << ops.size();
}

TEST(SimplifyTest, GradientWithRespectToAnIntermediateKeepsThatValue) {
  NodeEntry z = Var("z"), y = Var("y");
  NodeEntry p = Apply("softmax", "p", {z});
  NodeEntry loss = Apply("sum", "loss", {Apply("multiply", "yl", {y, Apply("log", "lp", {p})})});
  NodeEntry dp = Gradients({loss}, {p})[0];  // log(softmax) must not swallow p
  std::unordered_map<std::string, NDArray> feeds{{"z", test::RandomArray({2, 3}, DType::kFloat32, 1)},
                                                 {"y", test::RandomArray({2, 3}, DType::kFloat32, 2)}};
  Session session;
  std::vector<NDArray> out = session.Run({dp, p}, feeds);
  std::vector<double> yv = test::Values(feeds["y"]), pv = test::Values(out[1]), want(6);
  for (int i = 0; i < 6; ++i) want[i] = yv[i] / pv[i];
  test::ExpectNear(out[0], want, 1e-5, 1e-4);
}

TEST(SimplifyTest, WaitsThatOrderNothingAreDroppedWaitsOnWritesKept) {
  // TF's gradient tuple: identity(g) waiting on a no_op that groups pure values.
  NodeEntry x = Var("x");
  NodeEntry g = Apply("exp", "g", {x});
  NodeEntry group = Apply("no_op", "group_deps", {});
  group.node->control_deps.push_back(g.node);
  NodeEntry tuple = Apply("identity", "tuple", {g});
  tuple.node->control_deps.push_back(group.node);
  Graph out = Simplified({Apply("log", "y", {tuple})}, {{"x", test::RandomArray({3}, DType::kFloat32, 1)}}, {});
  EXPECT_EQ(OpNodes(out), 2u) << "the identity no longer waits, so it goes; log(exp(x)) stays (fast_math)";
  // A write waiting on a read keeps waiting (OrderMutations' order of reads before writes).
  NodeEntry w = Var("w");
  NodeEntry read = Apply("exp", "read", {w});
  NodeEntry write = Apply("assign", "write", {w, x});
  write.node->control_deps.push_back(read.node);
  Graph kept = Simplified(
      {read, write},
      {{"x", test::RandomArray({3}, DType::kFloat32, 1)}, {"w", test::RandomArray({3}, DType::kFloat32, 2)}}, {});
  const Node* assign = kept.outputs[1].node.get();
  ASSERT_EQ(assign->control_deps.size(), 1u);
  EXPECT_EQ(assign->control_deps[0].get(), kept.outputs[0].node.get());
}

TEST(SimplifyTest, IsDeterministic) {
  NodeEntry z = Var("z"), y = Var("y");
  std::map<std::string, NDArray> feeds{{"z", test::RandomArray({2, 3}, DType::kFloat32, 1)},
                                       {"y", test::RandomArray({2, 3}, DType::kFloat32, 2)}};
  NodeEntry loss = HandWrittenCrossEntropy(z, y);
  EXPECT_EQ(Fired(Simplified({loss}, feeds, {})), Fired(Simplified({loss}, feeds, {})));
  EXPECT_EQ(Fired(Simplified({loss}, feeds, {})),
            (std::vector<std::string>{"log_of_softmax @ log_p", "xent_neg_sum @ xent"}));
}

TEST(RuleLanguageTest, MutatedRuleFilesGiveErrorsNeverCrashes) {
  std::ifstream in(std::string(IR_TEST_SOURCE_DIR) + "/rules/nn.rules");
  ASSERT_TRUE(in.good());
  const std::string seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 rng(14);
  const std::string alphabet = "(){},.=?@:#-01x \n\"rule exact real";
  size_t parsed = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    std::string text = seed;
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0 && !text.empty(); --edits) {
      size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.insert(at, 1, static_cast<char>(rng() % 256));
          break;
        case 2:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.resize(at);
      }
    }
    try {
      rewrite::CheckRules(rewrite::ParseRules(text, "mutated"));
      ++parsed;
    } catch (const Error&) {  // the expected outcome of bad text
    }
  }
  EXPECT_GT(parsed, 0u) << "some mutations (in comments, say) leave a valid file";
  std::string deep = "rule deep exact {\n match: ";
  for (int i = 0; i < 100000; ++i) deep += "exp(";
  EXPECT_ERROR(rewrite::ParseRules(deep + "x\n rewrite: x\n}", "deep"), "terms nest deeper than 64");
}

TEST(RuleDocsTest, EveryShippedRuleIsListedInTheManual) {
  std::ifstream in(std::string(IR_TEST_SOURCE_DIR) + "/docs/REWRITE_RULES.md");
  ASSERT_TRUE(in.good());
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t rules = 0;
  for (const std::string& set : rewrite::ListRuleSets()) {
    if (set.rfind("test_", 0) == 0) continue;  // registered by these tests
    for (const rewrite::Rule& r : rewrite::GetRuleSet(set).rules) {
      ++rules;
      EXPECT_NE(doc.find("`" + r.name + "` | " + rewrite::TagName(r.tag)), std::string::npos)
          << "docs/REWRITE_RULES.md does not list rule " << r.name << " (" << rewrite::TagName(r.tag) << ")";
    }
  }
  EXPECT_GE(rules, 60u);
}

}  // namespace
}  // namespace ir
