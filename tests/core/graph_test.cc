#include <gtest/gtest.h>

#include "core/test_ops.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;

TEST(IndexedGraphTest, NumbersNodesInDeterministicTopologicalOrder) {
  Symbol x = Symbol::CreateVariable("x"), y = Symbol::CreateVariable("y");
  Symbol a = Apply("core_test_add", {x, y}, {}, "a");
  Symbol s = Apply("core_test_split", {a}, {{"num_outputs", "2"}}, "s");
  Symbol b = Apply("core_test_add", {s[1], x}, {}, "b");
  Graph g(b.outputs);
  const IndexedGraph& idx = g.indexed_graph();
  ASSERT_EQ(idx.num_nodes(), 5u);
  std::vector<std::string> order;
  for (uint32_t i = 0; i < idx.num_nodes(); ++i) order.push_back(idx[i].source->attrs.name);
  EXPECT_EQ(order, (std::vector<std::string>{"x", "y", "a", "s", "b"}));
  EXPECT_EQ(idx.num_node_entries(), 6u);
  EXPECT_EQ(idx.entry_id(3, 1), 4u);
  EXPECT_EQ(idx.entry_id(b.outputs[0]), 5u);
  EXPECT_EQ(idx.input_nodes(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(idx[4].inputs[0].node_id, 3u);
  EXPECT_EQ(idx[4].inputs[0].index, 1u);
  EXPECT_EQ(idx.entry_ref_counts()[idx.entry_id(0, 0)], 2u);
  EXPECT_EQ(idx.entry_ref_counts()[idx.entry_id(3, 0)], 0u);
  EXPECT_EQ(idx.outputs().size(), 1u);
}

TEST(IndexedGraphTest, MutableInputNodes) {
  Symbol w = Symbol::CreateVariable("w"), v = Symbol::CreateVariable("v");
  Graph g(Apply("core_test_assign", {w, v}).outputs);
  EXPECT_EQ(g.indexed_graph().mutable_input_nodes(), std::vector<uint32_t>{0});
}

TEST(IndexedGraphTest, DetectsCycles) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol a = Apply("core_test_add", {x, x}, {}, "a");
  Symbol b = Apply("core_test_add", {a, x}, {}, "b");
  a.outputs[0].node->control_deps.push_back(b.outputs[0].node);
  Graph g(b.outputs);
  EXPECT_ERROR(g.indexed_graph(), "graph has a cycle: 'b' (core_test_add) -> 'a' (core_test_add) -> 'b'");
  a.outputs[0].node->control_deps.clear();  // break the cycle so the nodes can be freed
}

TEST(IndexedGraphTest, RejectsInvalidEntryIndex) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol a = Apply("core_test_add", {x, x}, {}, "a");
  a.outputs[0].node->inputs[1].index = 3;
  Graph g(a.outputs);
  EXPECT_ERROR(g.indexed_graph(), "reads output 3 of node 'x' (variable), which has 1 output");
}

TEST(GraphTest, TypedAttributes) {
  Graph g;
  g.SetAttr("n", 3);
  EXPECT_EQ(g.GetAttr<int>("n"), 3);
  EXPECT_EQ(g.GetAttrOr<int>("m", 7), 7);
  EXPECT_ERROR(g.GetAttr<std::string>("n"), "graph attribute 'n' has type int, requested as std::");
  EXPECT_ERROR(g.GetAttr<int>("missing"), "graph has no attribute 'missing'");
  Graph copy = g;
  EXPECT_EQ(copy.MoveCopyAttr<int>("n"), 3);
  EXPECT_FALSE(copy.HasAttr("n"));
  EXPECT_TRUE(g.HasAttr("n"));
}

TEST(ShapeTest, PrintsParsesAndMerges) {
  EXPECT_EQ(Shape({2, kUnknownDim, 3}).ToString(), "[2,?,3]");
  EXPECT_EQ(Shape::Scalar().ToString(), "[]");
  EXPECT_EQ(Shape().ToString(), "?");
  EXPECT_EQ(Shape::Parse("(4, 5)"), Shape({4, 5}));
  EXPECT_EQ(Shape::Parse("[?,3]"), Shape({kUnknownDim, 3}));
  EXPECT_EQ(Shape::Parse("(3,)"), Shape({3}));
  EXPECT_EQ(Shape::Parse("[]"), Shape::Scalar());
  EXPECT_ERROR(Shape::Parse("[2,x]"), "bad dimension 'x'");
  Shape merged;
  EXPECT_TRUE(Shape::Merge(Shape({kUnknownDim, 3}), Shape({2, kUnknownDim}), &merged));
  EXPECT_EQ(merged, Shape({2, 3}));
  EXPECT_FALSE(Shape::Merge(Shape({2, 3}), Shape({2, 4}), &merged));
  EXPECT_FALSE(Shape::Merge(Shape({2}), Shape({2, 4}), &merged));
  EXPECT_EQ(Shape({2, 3, 4}).Size(), 24);
  EXPECT_ERROR(Shape({2, kUnknownDim}).Size(), "partially known");
}

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_EQ(DTypeFromName("float64"), DType::kFloat64);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_ERROR(DTypeFromName("complex64"), "unknown dtype 'complex64'");
}

}  // namespace
}  // namespace ir
