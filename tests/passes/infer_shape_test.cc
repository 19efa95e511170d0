#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/pass.h"
#include "passes/passes_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using passes_test::Apply;
using passes_test::Var;

Shape ShapeOf(const Graph& g, const NodeEntry& e) {
  return g.GetAttr<ShapeVector>("shape")[g.indexed_graph().entry_id(e)];
}

TEST(InferShapeTest, SeedsFromShapeInputs) {
  NodeEntry x = Var("x"), y = Var("y");
  NodeEntry z = Apply("add", "z", {x, y});
  Graph g({z});
  ASSERT_EQ(g.indexed_graph().input_nodes().size(), 2u);
  g.SetAttr("shape_inputs", ShapeVector{Shape{2, 3}, Shape()});
  g = ApplyPass(g, "InferShape");
  EXPECT_EQ(ShapeOf(g, x), (Shape{2, 3}));
  EXPECT_EQ(ShapeOf(g, y), (Shape{2, 3}));
  EXPECT_EQ(ShapeOf(g, z), (Shape{2, 3}));
  EXPECT_EQ(g.GetAttr<int>("shape_num_unknown_nodes"), 0);
  EXPECT_TRUE(g.GetAttr<std::vector<std::string>>("shape_unknown_nodes").empty());
}

TEST(InferShapeTest, SeedsFromVariableShapeHint) {
  NodeEntry x = Var("x", {{"__shape__", "[4,5]"}});
  NodeEntry z = Apply("mul", "z", {x, Apply("ones_like", "o", {x})});
  Graph g = ApplyPass(Graph({z}), "InferShape");
  EXPECT_EQ(ShapeOf(g, z), (Shape{4, 5}));
}

TEST(InferShapeTest, HintsAndShapeInputsMergePartialKnowledge) {
  NodeEntry x = Var("x", {{"__shape__", "[?,5]"}});
  Graph g({Apply("stop", "s", {x})});
  g.SetAttr("shape_inputs", ShapeVector{Shape{4, kUnknownDim}});
  g = ApplyPass(g, "InferShape");
  EXPECT_EQ(ShapeOf(g, g.outputs[0]), (Shape{4, 5}));
}

TEST(InferShapeTest, OutputShapeConstrainsInputsBackward) {
  // c = a @ b with a unknown; d's hint fixes c through add, and c fixes a's first dimension.
  NodeEntry a = Var("a"), b = Var("b", {{"__shape__", "[3,4]"}}), d = Var("d", {{"__shape__", "[2,4]"}});
  NodeEntry c = Apply("matmul", "c", {a, b});
  NodeEntry e = Apply("add", "e", {c, d});
  Graph g = ApplyPass(Graph({e}), "InferShape");
  EXPECT_EQ(ShapeOf(g, a), (Shape{2, 3}));
  EXPECT_EQ(ShapeOf(g, c), (Shape{2, 4}));
  EXPECT_EQ(g.GetAttr<int>("shape_num_unknown_nodes"), 0);
}

TEST(InferShapeTest, ReportsPartialShapesWithoutFailing) {
  NodeEntry x = Var("x"), w = Var("w", {{"__shape__", "[?,10]"}}), u = Var("u");
  NodeEntry y = Apply("add", "y", {x, w});
  Graph g = ApplyPass(Graph({y, Apply("stop", "s", {u})}), "InferShape");
  EXPECT_EQ(ShapeOf(g, x), (Shape{kUnknownDim, 10}));
  EXPECT_EQ(ShapeOf(g, u), Shape());
  EXPECT_EQ(g.GetAttr<int>("shape_num_unknown_nodes"), 5);
  std::vector<std::string> unknown = g.GetAttr<std::vector<std::string>>("shape_unknown_nodes");
  ASSERT_EQ(unknown.size(), 5u);
  EXPECT_NE(std::find(unknown.begin(), unknown.end(), "node 'y' (op passes_test_add): output 0 shape [?,10]"),
            unknown.end());
  EXPECT_NE(std::find(unknown.begin(), unknown.end(), "node 's' (op passes_test_stop): output 0 shape ?"),
            unknown.end());
}

TEST(InferShapeTest, ReportsAtMostTenUnknownNodesButCountsAll) {
  NodeEntry e = Var("x");
  for (int i = 0; i < 12; ++i) e = Apply("stop", "s" + std::to_string(i), {e});
  Graph g = ApplyPass(Graph({e}), "InferShape");
  EXPECT_EQ(g.GetAttr<int>("shape_num_unknown_nodes"), 13);
  EXPECT_EQ(g.GetAttr<std::vector<std::string>>("shape_unknown_nodes").size(), 10u);
}

TEST(InferShapeTest, MultiOutputNodesGetEveryOutputShape) {
  NodeEntry x = Var("x", {{"__shape__", "[6]"}});
  NodeEntry s1 = Apply("split", "s", {x}, 1);
  Graph g = ApplyPass(Graph({s1}), "InferShape");
  EXPECT_EQ(ShapeOf(g, s1), (Shape{6}));
  EXPECT_EQ(ShapeOf(g, NodeEntry{s1.node, 0}), (Shape{6}));
}

TEST(InferShapeTest, ContradictionNamesNodeOpAndBothShapes) {
  NodeEntry x = Var("x", {{"__shape__", "[2,3]"}}), y = Var("y", {{"__shape__", "[4,5]"}});
  EXPECT_ERROR(ApplyPass(Graph({Apply("add", "z", {x, y})}), "InferShape"),
               "pass 'InferShape': node 'z' (op passes_test_add): inferred shape [2,3] for input 1 "
               "contradicts [4,5] known before");
}

TEST(InferShapeTest, ContradictingSeedsAreAnError) {
  NodeEntry x = Var("x", {{"__shape__", "[2,3]"}});
  Graph g({Apply("stop", "s", {x})});
  g.SetAttr("shape_inputs", ShapeVector{Shape{2, 4}});
  EXPECT_ERROR(ApplyPass(g, "InferShape"),
               "node 'x' (op variable): inferred shape [2,3] for __shape__ "
               "contradicts [2,4]");
}

TEST(InferShapeTest, OpErrorsPropagateUnchanged) {
  NodeEntry a = Var("a", {{"__shape__", "[2,3]"}}), b = Var("b", {{"__shape__", "[4,5]"}});
  EXPECT_ERROR(ApplyPass(Graph({Apply("matmul", "mm", {a, b})}), "InferShape"),
               "pass 'InferShape': node 'mm' (op passes_test_matmul): inner dimensions 3 and 4 differ");
}

TEST(InferShapeTest, OtherExceptionsGetTheNodeNamed) {
  EXPECT_ERROR(ApplyPass(Graph({Apply("throws", "bad", {Var("x")})}), "InferShape"),
               "node 'bad' (op passes_test_throws): shape inference failed: vector::at index 7");
}

TEST(InferShapeTest, PreviousResultIsAStartingPointWhenItFits) {
  NodeEntry x = Var("x");
  NodeEntry s = Apply("stop", "s", {x});
  Graph g({s});
  g.SetAttr("shape", ShapeVector{Shape(), Shape{7}});
  g = ApplyPass(g, "InferShape");
  EXPECT_EQ(ShapeOf(g, x), (Shape{7}));

  Graph stale({s});
  stale.SetAttr("shape", ShapeVector{Shape{7}});
  stale = ApplyPass(stale, "InferShape");
  EXPECT_EQ(ShapeOf(stale, x), Shape());
}

TEST(InferShapeTest, RejectsMisalignedShapeInputsAndBadHints) {
  Graph g({Apply("add", "z", {Var("x"), Var("y")})});
  g.SetAttr("shape_inputs", ShapeVector{Shape{2}});
  EXPECT_ERROR(ApplyPass(g, "InferShape"), "'shape_inputs' has 1 values but the graph has 2 inputs");
  EXPECT_ERROR(ApplyPass(Graph({Apply("stop", "s", {Var("x", {{"__shape__", "[2,a]"}})})}), "InferShape"),
               "node 'x' (op variable): bad __shape__: malformed shape '[2,a]'");
}

}  // namespace
}  // namespace ir
