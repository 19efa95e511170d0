/*!
 * \file default_rewrites_test.cc
 * \brief The rewrites that run by default and are not rules (docs/REWRITE_RULES.md, "What else
 * rewrites"), against the unrewritten evaluation on inputs mixing NaN, +-Inf, +-0, denormals
 * and huge values: the CPU kernels generated from FCodeGen (the C printer and the C compiler's
 * flags) against the ops' own kernels, FoldConstants' constants against the ops' kernels, and
 * Simplify's merging of equal nodes and dropped waits. IEEE arithmetic bit for bit; math
 * functions (libm's scalar and vector variants differ) with the rounding promise.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/fold_constants.h"
#include "ir/pass.h"
#include "ir/rewrite.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

using test::Apply;
using test::Var;

const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kSpecial = {std::nan(""), kInf,  -kInf, 0.0, -0.0,  1e-40, -1e-40, 1.4e-45,
                                      3e38,         -3e38, 1e30,  1.5, -2.25, 0.1,   7.0,    -1e-20};

/*! \brief `n` floats: every pair of special values meets across inputs a, b (strides 1 and 5), c is normal. */
NDArray Input(int which, int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) {
    size_t k = kSpecial.size();
    v[i] = which == 2 ? static_cast<float>(0.37 * (i % 11) - 1.7)
                      : static_cast<float>(kSpecial[which == 0 ? i % k : (i / k + 5 * i) % k]);
  }
  return NDArray::FromVector<float>(Shape{n}, v);
}

/*! \brief Float bits as an ordered integer (+0 and -0 both 0): ULP distances are differences. */
int64_t Ordinal(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) : bits;
}

/*!
 * \brief "" when `actual` is `expected` bit for bit (any NaN for any NaN), or, with `ulps` > 0,
 * has its special values (NaN, +-Inf, the sign of zero) and lies within `ulps` otherwise.
 */
std::string Compare(float expected, float actual, int64_t ulps) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) == std::isnan(actual) ? "" : "NaN";
  bool same = expected == actual && std::signbit(expected) == std::signbit(actual);
  if (same) return "";
  if (ulps == 0 || std::isinf(expected) || std::isinf(actual) || (expected == 0 && actual == 0)) return "bits";
  int64_t d = Ordinal(expected) - Ordinal(actual);
  return (d < 0 ? -d : d) <= ulps ? "" : "ulps";
}

void ExpectAgree(const NDArray& expected, const NDArray& actual, int64_t ulps, const std::string& what,
                 const std::unordered_map<std::string, NDArray>& feeds) {
  std::vector<double> e = test::Values(expected), a = test::Values(actual);
  ASSERT_EQ(e.size(), a.size()) << what;
  for (size_t i = 0; i < e.size(); ++i) {
    std::string why = Compare(static_cast<float>(e[i]), static_cast<float>(a[i]), ulps);
    std::string inputs;
    for (const auto& kv : feeds) inputs += StrCat(" ", kv.first, "=", test::Values(kv.second)[i]);
    ASSERT_EQ(why, "") << what << " element " << i << ": " << a[i] << " instead of " << e[i] << " (" << inputs << ")";
  }
}

SessionOptions Options(bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  options.simplify = false;  // the kernels alone, no rule
  return options;
}

/*! \brief Runs `outputs` fused (generated C kernels) and unfused (the ops' kernels) and compares. */
void CheckFusedAgainstUnfused(const std::vector<std::pair<std::string, NodeEntry>>& outputs, int64_t ulps) {
  std::vector<NodeEntry> entries;
  for (const auto& o : outputs) entries.push_back(o.second);
  std::unordered_map<std::string, NDArray> feeds;
  PostOrderDFSVisit(entries, [&](const NodePtr& n) {
    if (n->is_variable()) feeds[n->attrs.name] = Input(n->attrs.name[0] - 'a', 256);
  });
  Session fused(Options(true)), unfused(Options(false));
  std::vector<NDArray> want = unfused.Run(entries, feeds), got = fused.Run(entries, feeds);
  for (size_t i = 0; i < outputs.size(); ++i) ExpectAgree(want[i], got[i], ulps, outputs[i].first, feeds);
}

TEST(DefaultRewritesTest, GeneratedKernelsDoIeeeArithmeticAsTheOpsKernelsBitForBit) {
  // Products next to sums are where a C compiler contracts into fused multiply-adds, which
  // round once (and overflow differently): a rewrite no rule tag allows by default.
  NodeEntry a = Var("a"), b = Var("b"), c = Var("c");
  auto op = [](const std::string& name, std::vector<NodeEntry> in, test::Attrs attrs = {}) {
    return Apply(name, name, std::move(in), attrs);
  };
  NodeEntry ab = op("multiply", {a, b});
  CheckFusedAgainstUnfused(
      {{"a * b + c", op("add", {ab, c})},
       {"a * b - c", op("subtract", {ab, c})},
       {"c - a * b", op("subtract", {c, ab})},
       {"(a + b) * c", op("multiply", {op("add", {a, b}), c})},
       {"a / b * c + a", op("add", {op("multiply", {op("divide", {a, b}), c}), a})},
       {"a * 1 + 0", op("add_scalar", {op("multiply_scalar", {a}, {{"scalar", "1"}})}, {{"scalar", "0"}})},
       {"a - 0, a + -0", op("add_scalar", {op("subtract_scalar", {a}, {{"scalar", "0"}})}, {{"scalar", "-0"}})},
       {"-(a - b)", op("negative", {op("subtract", {a, b})})},
       {"sqrt(|a|) * a", op("multiply", {op("sqrt", {op("abs", {a})}), a})},
       {"max(a, b) - min(a, c)", op("subtract", {op("maximum", {a, b}), op("minimum", {a, c})})},
       {"square(a) + relu(b)", op("add", {op("square", {a}), op("relu", {b})})},
       {"2 * a * b", op("multiply_scalar", {ab}, {{"scalar", "2"}})},
       {"1 / sqrt(b)", op("rsqrt", {b})}},
      0);
}

TEST(DefaultRewritesTest, GeneratedMathFunctionsKeepSpecialValuesWithinRounding) {
  // libm's vector variants (what the generated loops call) and its scalar functions round
  // differently: the rounding promise, not bits.
  NodeEntry a = Var("a"), b = Var("b");
  std::vector<std::pair<std::string, NodeEntry>> outputs;
  for (const char* fn : {"exp", "log", "tanh", "sigmoid", "softplus", "log1p", "expm1", "sin", "cos"}) {
    outputs.push_back({fn, Apply(fn, fn, {a})});
  }
  outputs.push_back({"pow", Apply("power", "pow", {a, b})});
  CheckFusedAgainstUnfused(outputs, 4);
}

/*! \brief A constant node of `values` (float32, shape [n]). */
NodeEntry Constant(const std::string& name, const std::vector<double>& values) {
  std::vector<float> v(values.begin(), values.end());
  NDArray array = NDArray::FromVector<float>(Shape{static_cast<int64_t>(v.size())}, v);
  return MakeConstantNode(name, array);
}

TEST(DefaultRewritesTest, FoldedConstantsAreTheOpsResultsBitForBit) {
  // Arrays of constants and scalar constants (kept as text: "nan", "-0", "1.40129846e-45")
  // through elementwise ops, folded, against the same graph run by the ops' kernels.
  std::vector<NodeEntry> outputs;
  NodeEntry k = Constant("k", kSpecial);
  std::vector<double> shifted(kSpecial.rbegin(), kSpecial.rend());
  NodeEntry j = Constant("j", shifted);
  outputs.push_back(Apply("add", "sum", {k, j}));
  outputs.push_back(Apply("multiply", "product", {Apply("subtract", "difference", {j, k}), k}));
  outputs.push_back(Apply("divide", "quotient", {k, j}));
  for (size_t i = 0; i < kSpecial.size(); ++i) {
    NodeEntry scalar = Constant(StrCat("s", i), {kSpecial[i]});
    NodeEntry reshaped = Apply("reshape", StrCat("r", i), {scalar}, {{"shape", "()"}});
    outputs.push_back(Apply("add", StrCat("plus", i), {Apply("negative", StrCat("neg", i), {reshaped}), k}));
    outputs.push_back(Apply("negative", StrCat("scalar", i), {reshaped}));
  }
  Graph graph = test::InferFromFeeds(outputs, {});
  Graph folded = ApplyPasses(graph, {"InferShape", "InferType", "FoldConstants"});
  ASSERT_GT(folded.GetAttr<int>("fold_constants.num_folded"), 30);
  std::vector<NDArray> want = test::EvalGraphWithKernels(graph, {}), got = test::EvalGraphWithKernels(folded, {});
  for (size_t i = 0; i < outputs.size(); ++i) {
    ExpectAgree(want[i], got[i], 0, outputs[i].node->attrs.name, {});
  }
  // The folded scalars feed a fused kernel as literals ("NAN", "-0.0f", "1.40129846e-45f").
  Session fused(Options(true));
  std::vector<NDArray> run = fused.Run(folded.outputs, {});
  for (size_t i = 0; i < outputs.size(); ++i) ExpectAgree(want[i], run[i], 0, outputs[i].node->attrs.name, {});
}

TEST(DefaultRewritesTest, MergingEqualNodesAndDroppingPureWaitsChangeNoBit) {
  // Simplify with no rule at all: hash consing (exp(a) twice is one node) and waits that order
  // nothing. The merged graph computes each value once, with the same kernel.
  rewrite::RegisterRuleText("test_no_rules", "");
  NodeEntry a = Var("a"), b = Var("b");
  NodeEntry e1 = Apply("exp", "e1", {a}), e2 = Apply("exp", "e2", {a});
  NodeEntry group = Apply("no_op", "group", {});
  group.node->control_deps.push_back(e1.node);
  NodeEntry tuple = Apply("identity", "tuple", {e2});
  tuple.node->control_deps.push_back(group.node);
  std::vector<NodeEntry> outputs{Apply("subtract", "d", {e1, tuple}),
                                 Apply("add", "s", {Apply("multiply", "m1", {a, b}), Apply("multiply", "m2", {a, b})})};
  std::map<std::string, NDArray> feeds{{"a", Input(0, 256)}, {"b", Input(1, 256)}};
  Graph graph = test::InferFromFeeds(outputs, feeds);
  graph.SetAttr("simplify.sets", std::vector<std::string>{"test_no_rules"});
  Graph merged = ApplyPass(graph, "Simplify");
  std::vector<NDArray> want = test::EvalGraphWithKernels(graph, feeds), got = test::EvalGraphWithKernels(merged, feeds);
  std::unordered_map<std::string, NDArray> shown(feeds.begin(), feeds.end());
  for (size_t i = 0; i < outputs.size(); ++i) ExpectAgree(want[i], got[i], 0, outputs[i].node->attrs.name, shown);
  EXPECT_LT(merged.indexed_graph().num_nodes(), graph.indexed_graph().num_nodes());
}

}  // namespace
}  // namespace ir
