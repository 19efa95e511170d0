#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/autodiff.h"
#include "ir/c_api.h"
#include "ir/graph.h"
#include "ir/pass.h"
#include "ir/symbol.h"
#include "passes/passes_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using passes_test::Apply;
using passes_test::OpName;
using passes_test::Var;

GradientOptions TestOptions() {
  GradientOptions options;
  options.aggregate_op = "passes_test_add_n";
  options.zero_op = "passes_test_zeros_like";
  options.ones_op = "passes_test_ones_like";
  return options;
}

std::vector<NodeEntry> Grad(const std::vector<NodeEntry>& ys, const std::vector<NodeEntry>& xs,
                            const std::vector<NodeEntry>& heads = {}) {
  return Gradients(ys, xs, heads, TestOptions());
}

/*! \brief Expects `e` to be output 0 of a node of `op` and returns its inputs. */
std::vector<NodeEntry> Expect(const NodeEntry& e, const std::string& op, size_t num_inputs) {
  EXPECT_EQ(OpName(e), op);
  EXPECT_EQ(e.node->inputs.size(), num_inputs);
  return e.node->inputs;
}

TEST(GradientTest, AppliesTheChainRuleThroughSeveralNodes) {
  // y = (x * w) * v: dy/dx = (ones * v) * w.
  NodeEntry x = Var("x"), w = Var("w"), v = Var("v");
  NodeEntry h = Apply("mul", "h", {x, w});
  NodeEntry y = Apply("mul", "y", {h, v});
  std::vector<NodeEntry> grads = Grad({y}, {x});
  ASSERT_EQ(grads.size(), 1u);
  std::vector<NodeEntry> dx = Expect(grads[0], "passes_test_mul", 2);
  EXPECT_EQ(dx[1], w);
  std::vector<NodeEntry> dh = Expect(dx[0], "passes_test_mul", 2);
  EXPECT_EQ(dh[1], v);
  std::vector<NodeEntry> head = Expect(dh[0], "passes_test_ones_like", 1);
  EXPECT_EQ(head[0], y);
}

TEST(GradientTest, EntryUsedTwiceGetsContributionsAggregatedByTheConfiguredOp) {
  NodeEntry x = Var("x");
  NodeEntry y = Apply("mul", "y", {x, x});
  std::vector<NodeEntry> sum = Expect(Grad({y}, {x})[0], "passes_test_add_n", 2);
  EXPECT_EQ(OpName(sum[0]), "passes_test_mul");
  EXPECT_EQ(OpName(sum[1]), "passes_test_mul");
  EXPECT_EQ(sum[0].node->inputs[1], x);

  GradientOptions options = TestOptions();
  options.aggregate_op = "passes_test_sum_alt";
  Expect(Gradients({y}, {x}, {}, options)[0], "passes_test_sum_alt", 2);
}

TEST(GradientTest, InnerEntryIsAggregatedOnceAndReusedDownstream) {
  // x -> h used twice; asking for dh and dx must share one sum for h.
  NodeEntry x = Var("x"), w = Var("w");
  NodeEntry h = Apply("mul", "h", {x, w});
  NodeEntry y = Apply("add", "y", {h, h});
  std::vector<NodeEntry> grads = Grad({y}, {h, x});
  Expect(grads[0], "passes_test_add_n", 2);
  std::vector<NodeEntry> dx = Expect(grads[1], "passes_test_mul", 2);
  EXPECT_EQ(dx[0], grads[0]);
}

TEST(GradientTest, HeadGradientsSeedTheBackwardPass) {
  NodeEntry x = Var("x"), w = Var("w"), g = Var("g");
  NodeEntry y = Apply("mul", "y", {x, w});
  std::vector<NodeEntry> dx = Expect(Grad({y}, {x}, {g})[0], "passes_test_mul", 2);
  EXPECT_EQ(dx[0], g);
  EXPECT_EQ(dx[1], w);
}

TEST(GradientTest, SeveralYsSumTheirGradients) {
  NodeEntry x = Var("x"), g1 = Var("g1"), g2 = Var("g2");
  NodeEntry y1 = Apply("stop", "y1", {x});
  NodeEntry y2 = Apply("add", "y2", {x, Var("c")});
  // y1 contributes nothing (its gradient is a null entry), so dx is y2's head alone.
  EXPECT_EQ(Grad({y1, y2}, {x}, {g1, g2})[0], g2);
  std::vector<NodeEntry> sum = Expect(Grad({y2, y2}, {x}, {g1, g2})[0], "passes_test_add_n", 2);
  EXPECT_EQ(sum[0], g1);
  EXPECT_EQ(sum[1], g2);
}

TEST(GradientTest, UnreachedXGetsTheZeroOp) {
  NodeEntry x = Var("x"), u = Var("u");
  NodeEntry y = Apply("mul", "y", {x, x});
  std::vector<NodeEntry> grads = Grad({y}, {x, u});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(Expect(grads[1], "passes_test_zeros_like", 1)[0], u);
}

TEST(GradientTest, OpWithoutGradientOnThePathIsAnError) {
  NodeEntry x = Var("x");
  NodeEntry y = Apply("add", "y", {Apply("argmax", "am", {x}), Var("c")});
  EXPECT_ERROR(Grad({y}, {x}),
               "cannot differentiate through node 'am' (op passes_test_argmax): the op registers no "
               "gradient (FGradient)");
}

TEST(GradientTest, OpWithoutGradientOffThePathIsFine) {
  NodeEntry x = Var("x"), c = Var("c");
  NodeEntry y = Apply("mul", "y", {Apply("argmax", "am", {c}), x});
  std::vector<NodeEntry> dx = Expect(Grad({y}, {x})[0], "passes_test_mul", 2);
  EXPECT_EQ(OpName(dx[1]), "passes_test_argmax");
}

TEST(GradientTest, NullGradientEntriesAreSkipped) {
  NodeEntry x = Var("x");
  NodeEntry y = Apply("add", "y", {Apply("stop", "s", {x}), x});
  // Only add's second input carries gradient to x: no aggregation, the head flows through.
  std::vector<NodeEntry> head = Expect(Grad({y}, {x})[0], "passes_test_ones_like", 1);
  EXPECT_EQ(head[0], y);
  // Through stop alone nothing arrives: the zero op.
  EXPECT_EQ(OpName(Grad({Apply("stop", "s2", {x})}, {x})[0]), "passes_test_zeros_like");
}

TEST(GradientTest, NodeReceivingOnlyZeroGradientIsNotDifferentiated) {
  // argmax has no FGradient, but stop cuts the gradient before it.
  NodeEntry x = Var("x");
  NodeEntry y = Apply("stop", "s", {Apply("argmax", "am", {x})});
  EXPECT_EQ(OpName(Grad({y}, {x})[0]), "passes_test_zeros_like");
}

TEST(GradientTest, MultiOutputNodeGetsZerosForOutputsWithoutGradient) {
  NodeEntry x = Var("x"), w = Var("w");
  NodeEntry part0 = Apply("split", "sp", {x}, 0);
  NodeEntry y = Apply("mul", "y", {part0, w});
  std::vector<NodeEntry> dx = Expect(Grad({y}, {x})[0], "passes_test_add", 2);
  std::vector<NodeEntry> d0 = Expect(dx[0], "passes_test_mul", 2);
  EXPECT_EQ(d0[1], w);
  std::vector<NodeEntry> zero = Expect(dx[1], "passes_test_zeros_like", 1);
  EXPECT_EQ(zero[0], (NodeEntry{part0.node, 1}));
}

TEST(GradientTest, RunsAsAPassWithOptionsFromGraphAttributes) {
  NodeEntry x = Var("x", {{"__shape__", "[2,3]"}}), w = Var("w", {{"__shape__", "[2,3]"}});
  Graph g({Apply("mul", "y", {x, w})});
  g.SetAttr("grad_xs", std::vector<NodeEntry>{w, x});
  g.SetAttr("grad.ones_op", std::string("passes_test_ones_like"));
  g = ApplyPasses(g, {"InferShape", "Gradient", "InferShape"});
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(OpName(g.outputs[0].node->inputs[0]), "passes_test_ones_like");
  EXPECT_FALSE(g.HasAttr("grad_xs"));
  EXPECT_TRUE(g.HasAttr("grad.ones_op"));
  for (const NodeEntry& grad : g.outputs) {
    EXPECT_EQ(g.GetAttr<ShapeVector>("shape")[g.indexed_graph().entry_id(grad)], (Shape{2, 3}));
  }
}

TEST(GradientTest, ReportsMissingOrMalformedInputs) {
  NodeEntry x = Var("x");
  Graph g({Apply("mul", "y", {x, x})});
  EXPECT_ERROR(ApplyPass(g, "Gradient"), "needs graph attribute 'grad_xs'");
  g.SetAttr("grad_xs", std::vector<NodeEntry>{x});
  g.SetAttr("grad_ys_out_grad", std::vector<NodeEntry>{Var("g1"), Var("g2")});
  EXPECT_ERROR(ApplyPass(g, "Gradient"), "'grad_ys_out_grad' has 2 head gradients for 1 ys");
  g.SetAttr("grad_ys_out_grad", std::vector<NodeEntry>{Var("g1")});
  g.SetAttr("grad.aggregate_op", std::string("passes_test_no_such_op"));
  EXPECT_ERROR(ApplyPass(g, "Gradient"), "option 'grad.aggregate_op' names op 'passes_test_no_such_op'");
}

TEST(GradientTest, CApiReturnsOneGradientPerX) {
  Symbol x = Symbol::CreateVariable("x"), w = Symbol::CreateVariable("w"), g = Symbol::CreateVariable("g");
  Symbol y;
  y.outputs = {Apply("mul", "y", {x.outputs[0], w.outputs[0]})};
  Symbol xs = Symbol::CreateGroup({x, w});
  IRSymbolHandle out = nullptr;
  ASSERT_EQ(IRSymbolGradient(&y, &xs, &g, &out), 0) << IRGetLastError();
  Symbol* grads = static_cast<Symbol*>(out);
  ASSERT_EQ(grads->outputs.size(), 2u);
  EXPECT_EQ(Expect(grads->outputs[0], "passes_test_mul", 2)[1], w.outputs[0]);
  EXPECT_EQ(Expect(grads->outputs[1], "passes_test_mul", 2)[1], x.outputs[0]);
  IRSymbolFree(out);

  Symbol bad;
  bad.outputs = {Apply("argmax", "am", {x.outputs[0]})};
  EXPECT_EQ(IRSymbolGradient(&bad, &xs, &g, &out), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("cannot differentiate through node 'am'"), std::string::npos);
  EXPECT_EQ(IRSymbolGradient(nullptr, &xs, nullptr, &out), -1);
  // Gradients take no rewrite-rule options (the session's decide the rules): a clear error.
  EXPECT_EQ(IRSymbolGradientEx(&y, &xs, nullptr, "{\"simplify\": false}", &out), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("the options simplify, fast_math and rule_sets are gone"),
            std::string::npos)
      << IRGetLastError();
  EXPECT_EQ(IRSymbolGradientEx(&y, &xs, nullptr, "{\"rule_sets\": []}", &out), -1);
  ASSERT_EQ(IRSymbolGradientEx(&y, &xs, nullptr, "{\"stop_nodes\": [\"w\"]}", &out), 0) << IRGetLastError();
  IRSymbolFree(out);
}

}  // namespace
}  // namespace ir
