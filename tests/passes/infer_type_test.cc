#include <gtest/gtest.h>

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

DType DTypeOf(const Graph& g, const NodeEntry& e) {
  return g.GetAttr<DTypeVector>("dtype")[g.indexed_graph().entry_id(e)];
}

TEST(InferTypeTest, SeedsFromDTypeInputs) {
  NodeEntry x = Var("x"), y = Var("y");
  NodeEntry z = Apply("add", "z", {x, y});
  Graph g({z});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kUnknown, DType::kFloat64});
  g = ApplyPass(g, "InferType");
  EXPECT_EQ(DTypeOf(g, x), DType::kFloat64);
  EXPECT_EQ(DTypeOf(g, z), DType::kFloat64);
  EXPECT_EQ(g.GetAttr<int>("dtype_num_unknown_nodes"), 0);
  EXPECT_TRUE(g.GetAttr<std::vector<std::string>>("dtype_unknown_nodes").empty());
}

TEST(InferTypeTest, SeedsFromVariableDTypeHint) {
  NodeEntry x = Var("x", {{"__dtype__", "int64"}});
  Graph g = ApplyPass(Graph({Apply("stop", "s", {x})}), "InferType");
  EXPECT_EQ(DTypeOf(g, g.outputs[0]), DType::kInt64);
}

TEST(InferTypeTest, DownstreamDTypeConstrainsUpstreamInputs) {
  // d's dtype reaches c through e, then a and b through c (a backward sweep).
  NodeEntry a = Var("a"), b = Var("b"), d = Var("d", {{"__dtype__", "float64"}});
  NodeEntry c = Apply("add", "c", {a, b});
  Graph g = ApplyPass(Graph({Apply("add", "e", {c, d})}), "InferType");
  EXPECT_EQ(DTypeOf(g, a), DType::kFloat64);
  EXPECT_EQ(DTypeOf(g, b), DType::kFloat64);
}

TEST(InferTypeTest, OpsMayFixTheirOutputDType) {
  NodeEntry x = Var("x", {{"__dtype__", "float32"}});
  NodeEntry i = Apply("argmax", "i", {x});
  Graph g = ApplyPass(Graph({i}), "InferType");
  EXPECT_EQ(DTypeOf(g, x), DType::kFloat32);
  EXPECT_EQ(DTypeOf(g, i), DType::kInt32);
}

TEST(InferTypeTest, ReportsUnknownDTypesWithoutFailing) {
  NodeEntry x = Var("x");
  Graph g = ApplyPass(Graph({Apply("split", "s", {x})}), "InferType");
  EXPECT_EQ(g.GetAttr<int>("dtype_num_unknown_nodes"), 2);
  EXPECT_EQ(g.GetAttr<std::vector<std::string>>("dtype_unknown_nodes"),
            (std::vector<std::string>{"node 'x' (op variable): output 0 dtype unknown",
                                      "node 's' (op passes_test_split): output 0 dtype unknown, "
                                      "output 1 dtype unknown"}));
}

TEST(InferTypeTest, ContradictionNamesNodeOpAndBothDTypes) {
  NodeEntry i = Apply("argmax", "i", {Var("x")});
  NodeEntry w = Var("w", {{"__dtype__", "float32"}});
  EXPECT_ERROR(ApplyPass(Graph({Apply("add", "z", {i, w})}), "InferType"),
               "pass 'InferType': node 'z' (op passes_test_add): inferred dtype int32 for input 1 "
               "contradicts float32 known before");
}

TEST(InferTypeTest, RejectsMisalignedDTypeInputsAndBadHints) {
  Graph g({Apply("stop", "s", {Var("x")})});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32, DType::kFloat32});
  EXPECT_ERROR(ApplyPass(g, "InferType"), "'dtype_inputs' has 2 values but the graph has 1 inputs");
  EXPECT_ERROR(ApplyPass(Graph({Apply("stop", "s", {Var("x", {{"__dtype__", "float16"}})})}), "InferType"),
               "node 'x' (op variable): bad __dtype__: unknown dtype 'float16'");
}

TEST(InferTypeTest, ShapeAndTypeInferenceRunTogether) {
  NodeEntry x = Var("x", {{"__shape__", "[3]"}, {"__dtype__", "float64"}});
  Graph g = ApplyPasses(Graph({Apply("mul", "y", {x, x})}), {"InferShape", "InferType"});
  EXPECT_EQ(g.GetAttr<ShapeVector>("shape").back(), (Shape{3}));
  EXPECT_EQ(g.GetAttr<DTypeVector>("dtype").back(), DType::kFloat64);
}

}  // namespace
}  // namespace ir
