/*!
 * \file fold_constants_test.cc
 * \brief FoldConstants: what it evaluates, what it must leave alone, and the graph it returns.
 */
#include <gtest/gtest.h>

#include "ir/fold_constants.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "test_util.h"

namespace ir {
namespace {

NodeEntry Var(const std::string& name, const std::string& shape, const std::string& dtype = "float32") {
  return NodeEntry{Node::CreateVariable(name, {{"__shape__", shape}, {"__dtype__", dtype}}), 0};
}

NodeEntry Const(const std::string& name, const NDArray& value) { return MakeConstantNode(name, value); }

Graph Fold(std::vector<NodeEntry> outputs, int max_bytes = -1) {
  Graph graph(std::move(outputs));
  if (max_bytes >= 0) graph.SetAttr("fold_constants.max_bytes", max_bytes);
  return ApplyPasses(graph, {"InferShape", "InferType", "FoldConstants"});
}

bool IsConstant(const NodeEntry& e) { return !e.node->is_variable() && e.node->op()->name == "constant"; }

template <typename T>
std::vector<T> ValueOf(const NodeEntry& e) {
  EXPECT_TRUE(IsConstant(e)) << e.node->attrs.name << " was not folded";
  return IsConstant(e) ? ConstantNodeValue(*e.node).ToVector<T>() : std::vector<T>();
}

TEST(FoldConstantsTest, EvaluatesShapeArithmeticOfKnownShapes) {
  // prod(shape(x)[1:]) / 2 with x of known shape: TensorFlow's way to compute a reshape target.
  NodeEntry x = Var("x", "[4,3,5]");
  NodeEntry shape = MakeNode("shape", "shape", {x});
  NodeEntry tail = MakeNode("slice", "tail", {shape}, {{"begin", "(1)"}, {"size", "(2)"}});
  NodeEntry prod = MakeNode("prod", "prod", {tail});
  NodeEntry half = MakeNode("floor_divide", "half", {prod, Const("two", NDArray::Scalar<int32_t>(2))});
  Graph g = Fold({half, MakeNode("size", "size", {x}), MakeNode("rank", "rank", {x})});
  EXPECT_EQ(ValueOf<int32_t>(g.outputs[0]), std::vector<int32_t>{7});
  EXPECT_EQ(ValueOf<int32_t>(g.outputs[1]), std::vector<int32_t>{60});
  EXPECT_EQ(ValueOf<int32_t>(g.outputs[2]), std::vector<int32_t>{3});
  EXPECT_EQ(g.GetAttr<int>("fold_constants.num_folded"), 6);
  // The variable is read only for its shape: it is no longer part of the graph.
  EXPECT_TRUE(g.indexed_graph().input_nodes().empty());
}

TEST(FoldConstantsTest, KeepsWhatDependsOnValuesNotKnownBeforeRunning) {
  NodeEntry x = Var("x", "[2,3]");
  NodeEntry w = Const("w", NDArray::FromVector<float>(Shape{3}, {1, 2, 3}));
  NodeEntry w2 = MakeNode("multiply_scalar", "w2", {w}, {{"scalar", "2"}});
  NodeEntry y = MakeNode("add", "y", {x, w2});
  NodeEntry random = MakeNode("random_uniform", "r", {}, {{"shape", "(3)"}});
  NodeEntry noisy = MakeNode("add", "noisy", {random, w});
  Graph g = Fold({y, noisy});
  const Node* add = g.outputs[0].node.get();
  EXPECT_EQ(add->op()->name, "add");
  EXPECT_TRUE(add->inputs[0].node->is_variable());
  EXPECT_EQ(ValueOf<float>(add->inputs[1]), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(g.outputs[1].node->op()->name, "add") << "a stateful op's result must not be folded";
  EXPECT_EQ(g.outputs[1].node->inputs[0].node->op()->name, "random_uniform");
}

TEST(FoldConstantsTest, LeavesPartiallyKnownShapesAndLargeResults) {
  NodeEntry x = Var("x", "[?,3]");
  NodeEntry big = MakeNode("zeros", "big", {}, {{"shape", "(1000)"}});
  NodeEntry big_plus = MakeNode("add_scalar", "big_plus", {big}, {{"scalar", "1"}});
  Graph g = Fold({MakeNode("shape", "shape", {x}), big_plus}, 1000);
  EXPECT_EQ(g.outputs[0].node->op()->name, "shape");
  EXPECT_EQ(g.outputs[1].node->op()->name, "add_scalar") << "4000 bytes exceed fold_constants.max_bytes";
}

TEST(FoldConstantsTest, KeepsNodesWithControlDependencies) {
  NodeEntry v = Var("v", "[2]");
  NodeEntry write = MakeNode("assign", "write", {v, Const("c", NDArray::FromVector<float>(Shape{2}, {1, 2}))});
  NodeEntry sized = MakeNode("size", "size", {v});
  sized.node->control_deps.push_back(write.node);
  Graph g = Fold({sized});
  EXPECT_EQ(g.outputs[0].node->op()->name, "size");
  EXPECT_EQ(g.outputs[0].node->control_deps.size(), 1u);
}

TEST(FoldConstantsTest, FoldsNodesWhoseControlDependenciesHaveNoEffects) {
  // TensorFlow's tf.losses puts Shape and Const under control dependencies on no-op asserts
  // (static_scalar_check_success); their values are still known before running.
  NodeEntry v = Var("v", "[3,2]");
  NodeEntry check = MakeNode("no_op", "static_scalar_check_success", {});
  NodeEntry inner_check = MakeNode("no_op", "inner_check", {});
  inner_check.node->control_deps.push_back(check.node);
  NodeEntry shape = MakeNode("shape", "shape", {v});
  shape.node->control_deps.push_back(inner_check.node);
  NodeEntry one = Const("one", NDArray::Scalar<int32_t>(1));
  one.node->control_deps.push_back(check.node);
  NodeEntry plus = MakeNode("add", "plus", {shape, one});
  EXPECT_EQ(ValueOf<int32_t>(Fold({plus}).outputs[0]), (std::vector<int32_t>{4, 3}));
  // A dependency on a no_op that itself waits for a write still has effects: nothing folds.
  NodeEntry six = Const("c", NDArray::FromVector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6}));
  NodeEntry write = MakeNode("assign", "write", {v, six});
  NodeEntry after_write = MakeNode("no_op", "after_write", {});
  after_write.node->control_deps.push_back(write.node);
  NodeEntry sized = MakeNode("size", "size", {v});
  sized.node->control_deps.push_back(after_write.node);
  EXPECT_EQ(Fold({sized}).outputs[0].node->op()->name, "size");
}

TEST(FoldConstantsTest, ReplacesNodesWithoutInputsOnlyWhenTheyAreOutputs) {
  NodeEntry range = MakeNode("range", "range", {}, {{"limit", "3"}, {"dtype", "int32"}});
  NodeEntry x = Var("x", "[3]", "int32");
  NodeEntry sum = MakeNode("add", "sum", {range, x});
  EXPECT_EQ(ValueOf<int32_t>(Fold({range}).outputs[0]), (std::vector<int32_t>{0, 1, 2})) << "an output's value";
  EXPECT_EQ(Fold({sum}).outputs[0].node->inputs[0].node->op()->name, "range") << "inside the graph, range is as cheap";
}

TEST(FoldConstantsTest, DropsOrderingOnReplacedNodesAndFoldsEmptyTensors) {
  NodeEntry empty = MakeNode("shape", "shape", {MakeConstantNode("s", NDArray::Scalar<float>(1))});
  NodeEntry token = MakeNode("no_op", "after", {});
  token.node->control_deps.push_back(empty.node);
  Graph g = Fold({empty, token});
  EXPECT_EQ(ValueOf<int32_t>(g.outputs[0]), std::vector<int32_t>{}) << "the shape of a scalar has no elements";
  EXPECT_TRUE(g.outputs[1].node->control_deps.empty()) << "a folded node had no effect to wait for";
}

TEST(FoldConstantsTest, ProvidesShapesAndRealignsInputAttributes) {
  NodeEntry a = NodeEntry{Node::CreateVariable("a"), 0};
  NodeEntry b = NodeEntry{Node::CreateVariable("b"), 0};
  NodeEntry sum = MakeNode("add", "sum", {MakeNode("shape", "sa", {a}), b});
  Graph graph({sum});
  graph.SetAttr("shape_inputs", ShapeVector{Shape{2, 5}, Shape{2}});
  graph.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32, DType::kInt32});
  Graph g = ApplyPasses(graph, {"InferShape", "InferType", "FoldConstants"});
  ASSERT_EQ(g.indexed_graph().input_nodes().size(), 1u);
  EXPECT_EQ(g.GetAttr<ShapeVector>("shape_inputs"), ShapeVector{Shape{2}});
  EXPECT_EQ(g.GetAttr<DTypeVector>("dtype_inputs"), DTypeVector{DType::kInt32});
  const IndexedGraph& idx = g.indexed_graph();
  EXPECT_EQ(g.GetAttr<ShapeVector>("shape")[idx.entry_id(g.outputs[0])], Shape{2});
  // Shape inference on the folded graph agrees with what the pass provided.
  Graph again = ApplyPasses(g, {"InferShape", "InferType", "PlanMemory"});
  EXPECT_EQ(again.GetAttr<ShapeVector>("shape"), g.GetAttr<ShapeVector>("shape"));
}

TEST(FoldConstantsTest, DoesNotChangeTheCallersNodes) {
  NodeEntry c = Const("c", NDArray::FromVector<float>(Shape{2}, {1, 2}));
  NodeEntry neg = MakeNode("negative", "neg", {c});
  NodeEntry out = MakeNode("add", "out", {neg, Var("x", "[2]")});
  Graph g = Fold({out});
  EXPECT_EQ(out.node->inputs[0].node, neg.node) << "the input graph keeps its nodes";
  EXPECT_EQ(ValueOf<float>(g.outputs[0].node->inputs[0]), (std::vector<float>{-1, -2}));
}

TEST(FoldConstantsTest, MakesConstantsThatSurviveTheirText) {
  NDArray f = NDArray::FromVector<float>(Shape{1}, {0.1f});
  EXPECT_EQ(ConstantNodeValue(*MakeConstantNode("f", f).node).ToVector<float>(), std::vector<float>{0.1f});
  NDArray d = NDArray::FromVector<double>(Shape{2, 1}, {1.0 / 3, -2e300});
  EXPECT_EQ(ConstantNodeValue(*MakeConstantNode("d", d).node).ToVector<double>(), d.ToVector<double>());
  NDArray l = NDArray::FromVector<int64_t>(Shape::Scalar(), {int64_t{1} << 60});
  EXPECT_EQ(ConstantNodeValue(*MakeConstantNode("l", l).node).ToVector<int64_t>(), l.ToVector<int64_t>());
  NDArray b = NDArray::FromVector<bool>(Shape{3}, {true, false, true});
  NDArray b2 = ConstantNodeValue(*MakeConstantNode("b", b).node);
  EXPECT_EQ(b2.shape(), Shape{3});
  EXPECT_EQ(b2.ToVector<bool>(), b.ToVector<bool>());
  EXPECT_FALSE(ConstantNodeValue(*Var("v", "[1]").node).defined());
}

}  // namespace
}  // namespace ir
