/*!
 * \file fold_constants_control_flow_test.cc
 * \brief FoldConstants on control flow (FInlineConstantInputs): a cond with a known predicate
 * becomes its taken branch inlined, a while_loop that runs no iteration becomes its inputs, and
 * what is not known stays a control-flow node.
 */
#include <gtest/gtest.h>

#include <memory>
#include <unordered_map>

#include "ir/fold_constants.h"
#include "ir/pass.h"
#include "ir/runtime.h"
#include "ops/control_flow_graphs.h"
#include "test_util.h"

namespace ir {
namespace {

using test::ControlFlow;
using test::MakeBody;
using test::N;
using test::Var;

Graph Fold(std::vector<NodeEntry> outputs, const std::unordered_map<std::string, NDArray>& feeds = {}) {
  Graph graph(std::move(outputs));
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (uint32_t nid : graph.indexed_graph().input_nodes()) {
    const NDArray& value = feeds.at(graph.indexed_graph()[nid].source->attrs.name);
    shapes.push_back(value.shape());
    dtypes.push_back(value.dtype());
  }
  graph.SetAttr("shape_inputs", shapes);
  graph.SetAttr("dtype_inputs", dtypes);
  return ApplyPasses(graph, {"InferShape", "InferType", "FoldConstants"});
}

/*! \brief How many nodes of `op` the graph (not its bodies) holds. */
int CountOp(const Graph& g, const std::string& op) {
  int count = 0;
  PostOrderDFSVisit(g.outputs, [&](const NodePtr& n) { count += !n->is_variable() && n->op()->name == op; });
  return count;
}

std::vector<NDArray> RunGraph(const Graph& g, const std::unordered_map<std::string, NDArray>& feeds) {
  Session sess;
  return sess.Run(g.outputs, feeds);
}

NDArray Floats(std::vector<float> v) { return NDArray::FromVector<float>(Shape{static_cast<int64_t>(v.size())}, v); }

TEST(FoldConstantsControlFlowTest, CondWithAConstantPredicateBecomesTheTakenBranch) {
  std::unordered_map<std::string, NDArray> feeds{{"a", Floats({0.5f, -1, 2})}, {"b", Floats({3, 0.25f, -2})}};
  for (bool pred : {true, false}) {
    NodePtr c = test::SquashOrSubtract();
    NodeEntry known = MakeNode("greater", "known",
                               {MakeConstantNode("three", NDArray::Scalar<int32_t>(3)),
                                MakeConstantNode("two", NDArray::Scalar<int32_t>(pred ? 2 : 4))});
    c->inputs[0] = known;  // the predicate folds to a constant first
    Graph g = Fold({{c, 0}}, feeds);
    EXPECT_EQ(CountOp(g, "cond"), 0) << "pred " << pred;
    EXPECT_EQ(CountOp(g, pred ? "tanh" : "exp"), 1);
    EXPECT_EQ(CountOp(g, pred ? "exp" : "tanh"), 0);
    EXPECT_EQ(g.outputs[0].node->attrs.name, pred ? "c/c/t" : "c/c/s");
    auto with_pred = feeds;
    with_pred["pred"] = NDArray::Scalar<bool>(pred);
    NodePtr unfolded = test::SquashOrSubtract();
    test::ExpectNear(RunGraph(g, feeds)[0], RunGraph(Graph({{unfolded, 0}}), with_pred)[0]);
  }
}

TEST(FoldConstantsControlFlowTest, NestedCondsOfKnownPredicatesInlineWithTheirOutputsDtypes) {
  // tf.case as TF1 writes it: a cond in a branch of a cond, each returning a float and an int32
  // (Merge's value_index). The inner cond, inlined in the second round, must not inherit dtypes.
  auto pair = [](const std::string& name, NodeEntry x, float scale, int index) {
    return std::vector<NodeEntry>{N("multiply_scalar", name, {x}, {{"scalar", std::to_string(scale)}}),
                                  MakeConstantNode(name + "/index", NDArray::Scalar<int32_t>(index))};
  };
  auto inner_then = MakeBody("i/then", 1, [&](std::vector<NodeEntry> p) { return pair("i/two", p[0], 2, 1); });
  auto inner_else = MakeBody("i/else", 1, [&](std::vector<NodeEntry> p) { return pair("i/three", p[0], 3, 0); });
  auto outer_then = MakeBody("o/then", 2, [&](std::vector<NodeEntry> p) { return pair("o/one", p[1], 1, 1); });
  auto outer_else = MakeBody("o/else", 2, [&](std::vector<NodeEntry> p) {
    NodePtr inner = ControlFlow("cond", "i", {p[0], p[1]}, {inner_then, inner_else});
    return std::vector<NodeEntry>{{inner, 0}, MakeConstantNode("o/index", NDArray::Scalar<int32_t>(0))};
  });
  NodePtr outer = ControlFlow("cond", "o",
                              {MakeConstantNode("p", NDArray::Scalar<bool>(false)),
                               MakeConstantNode("q", NDArray::Scalar<bool>(true)), Var("x")},
                              {outer_then, outer_else});
  Graph g = Fold({{outer, 0}, {outer, 1}}, {{"x", Floats({1.5f})}});
  EXPECT_EQ(CountOp(g, "cond"), 0);
  EXPECT_EQ(g.GetAttr<DTypeVector>("dtype")[g.indexed_graph().entry_id(g.outputs[1])], DType::kInt32);
  test::ExpectNear(RunGraph(g, {{"x", Floats({1.5f})}})[0], {3});
}

TEST(FoldConstantsControlFlowTest, InlinedBranchOfConstantsFoldsToAConstant) {
  NodePtr c = test::SquashOrSubtract();
  c->inputs = {MakeConstantNode("pred", NDArray::Scalar<bool>(false)), MakeConstantNode("a", Floats({0, 1})),
               MakeConstantNode("b", Floats({1, 1}))};
  Graph g = Fold({{c, 0}});
  ASSERT_EQ(g.outputs[0].node->op()->name, "constant");
  test::ExpectNear(ConstantNodeValue(*g.outputs[0].node), {0, 1.718281828}, 1e-6, 1e-6);
}

TEST(FoldConstantsControlFlowTest, InlinedIntegerAndBoolBranchesKeepTheirDtypes) {
  // The inlined branch's nodes are inferred afresh: what they start from must be unknown, not
  // float32 (DType()), or the InferType after inlining rejects int32 and bool values.
  auto then_branch = MakeBody("k/then", 1, [](std::vector<NodeEntry> p) {
    NodeEntry doubled = N("add", "k/double", {p[0], p[0]});
    return std::vector<NodeEntry>{doubled, N("greater_scalar", "k/positive", {doubled}, {{"scalar", "0"}})};
  });
  auto else_branch = MakeBody("k/else", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("negative", "k/neg", {p[0]}),
                                  N("less_scalar", "k/negative", {p[0]}, {{"scalar", "0"}})};
  });
  for (bool pred : {true, false}) {
    NodePtr c = ControlFlow("cond", "k", {MakeConstantNode("pred", NDArray::Scalar<bool>(pred)), Var("x")},
                            {then_branch, else_branch});
    NDArray x = NDArray::FromVector<int32_t>(Shape{2}, {3, -4});
    Graph g = Fold({{c, 0}, {c, 1}}, {{"x", x}});
    EXPECT_EQ(CountOp(g, "cond"), 0);
    const auto& dtypes = g.GetAttr<DTypeVector>("dtype");
    EXPECT_EQ(dtypes[g.indexed_graph().entry_id(g.outputs[0])], DType::kInt32);
    EXPECT_EQ(dtypes[g.indexed_graph().entry_id(g.outputs[1])], DType::kBool);
    std::vector<NDArray> out = RunGraph(g, {{"x", x}});
    EXPECT_EQ(out[0].ToVector<int32_t>(), pred ? (std::vector<int32_t>{6, -8}) : (std::vector<int32_t>{-3, 4}));
    EXPECT_EQ(out[1].ToVector<bool>(), pred ? (std::vector<bool>{true, false}) : (std::vector<bool>{false, true}));
  }
}

TEST(FoldConstantsControlFlowTest, CondWithAnUnknownPredicateStays) {
  NodePtr c = test::SquashOrSubtract();
  Graph g = Fold({{c, 0}}, {{"pred", NDArray::Scalar<bool>(true)}, {"a", Floats({1})}, {"b", Floats({2})}});
  EXPECT_EQ(CountOp(g, "cond"), 1);
  EXPECT_EQ(g.GetAttr<int>("fold_constants.num_folded"), 0);
}

TEST(FoldConstantsControlFlowTest, LoopThatRunsNoIterationBecomesItsInputs) {
  std::unordered_map<std::string, NDArray> feeds{{"x", Floats({0.5f, 2})}};
  NodePtr loop = test::ElementwiseLoop();  // while (i < n): i0 = 5, n = 3 never enters
  loop->inputs[0] = MakeConstantNode("five", NDArray::Scalar<int32_t>(5));
  loop->inputs[1] =
      MakeNode("add_scalar", "three", {MakeConstantNode("two", NDArray::Scalar<int32_t>(2))}, {{"scalar", "1"}});
  Graph g = Fold({{loop, 0}, {loop, 2}}, feeds);
  EXPECT_EQ(CountOp(g, "while_loop"), 0);
  EXPECT_TRUE(g.outputs[1].node->is_variable());
  EXPECT_EQ(g.outputs[1].node->attrs.name, "x");
  std::vector<NDArray> got = RunGraph(g, feeds);
  EXPECT_EQ(got[0].ToVector<int32_t>(), std::vector<int32_t>{5});
  test::ExpectNear(got[1], {0.5, 2});
  // maximum_iterations = 0 runs no iteration whatever the condition.
  NodePtr bounded = test::ElementwiseLoop();
  bounded->attrs.dict["maximum_iterations"] = "0";
  bounded->ReparseAttrs();
  feeds["i0"] = NDArray::Scalar<int32_t>(0);
  feeds["n"] = NDArray::Scalar<int32_t>(4);
  EXPECT_EQ(CountOp(Fold({{bounded, 2}}, feeds), "while_loop"), 0);
}

TEST(FoldConstantsControlFlowTest, LoopWhoseConditionIsTrueOrUnknownStays) {
  std::unordered_map<std::string, NDArray> feeds{{"x", Floats({0.5f})}, {"n", NDArray::Scalar<int32_t>(2)}};
  NodePtr loop = test::ElementwiseLoop();  // i0 known (0), n not: the condition is not known
  loop->inputs[0] = MakeConstantNode("zero", NDArray::Scalar<int32_t>(0));
  Graph g = Fold({{loop, 2}}, feeds);
  EXPECT_EQ(CountOp(g, "while_loop"), 1);
  std::vector<NDArray> got = RunGraph(g, feeds);
  EXPECT_EQ(got[0].shape(), (Shape{1}));
  loop->inputs[1] = MakeConstantNode("one", NDArray::Scalar<int32_t>(1));  // known true: it must still run
  feeds.erase("n");
  EXPECT_EQ(CountOp(Fold({{loop, 2}}, feeds), "while_loop"), 1);
}

}  // namespace
}  // namespace ir
