// Row groups: chains of reductions over the trailing axes and the elementwise nodes around them
// (softmax, log-softmax, layer norm forward and backward, softmax cross-entropy) become one
// kernel that walks each row in stages; fused results equal unfused ones on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "ir/autodiff.h"
#include "ir/fusion.h"
#include "ir/pass.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "ops/row_graphs.h"
#include "passes/fusion_plan.h"
#include "test_util.h"

namespace ir {
namespace {

using row_graphs::In;
using row_graphs::RowGraph;
using row_graphs::RowReduce;

SessionOptions Options(bool fusion, int fmax = -1) {
  SessionOptions options;
  options.fusion = fusion;
  options.fmax = fmax;
  options.simplify = false;  // these rows are written out by hand to test row fusion, not the rules
  return options;
}

Graph FusedGraph(const RowGraph& g, int fmax = 8) {
  std::map<std::string, NDArray> feeds(g.feeds.begin(), g.feeds.end());
  return test::Fuse(test::InferFromFeeds(g.fetches, feeds), fmax);
}

std::vector<fusion::GroupRecord> FusedGroups(const RowGraph& g, int fmax = 8) {
  return FusedGraph(g, fmax).GetAttr<std::vector<fusion::GroupRecord>>("fusion_groups");
}

// Runs fused and unfused; expects equal results and returns the fused run's kernel count.
size_t ExpectFusedEqualsUnfused(const RowGraph& g, double tol = 1e-5, int fmax = -1) {
  SCOPED_TRACE(g.name);
  Session fused(Options(true, fmax)), unfused(Options(false));
  std::vector<NDArray> expected = unfused.Run(g.fetches, g.feeds);
  std::vector<NDArray> got = fused.Run(g.fetches, g.feeds);
  for (size_t i = 0; i < expected.size(); ++i) test::ExpectNear(got[i], expected[i], tol, tol);
  return fused.last_stats().kernels_launched;
}

TEST(FusionRowTest, EachRowComputationPlansToOneRowGroup) {
  for (const RowGraph& g : row_graphs::AllRowGraphs(16, 10)) {
    SCOPED_TRACE(g.name);
    auto groups = FusedGroups(g);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].kind, "row");
    // CodeGen builds the row kernel (no fallback to running the members one by one).
    Graph compiled = ApplyPasses(FusedGraph(g), {"CodeGen"});
    EXPECT_TRUE(compiled.GetAttr<std::vector<std::string>>("codegen_log").empty());
    EXPECT_NE(compiled.GetAttr<std::string>("kernel_source").find("for (int64_t i1 = 0; i1 < 10; ++i1)"),
              std::string::npos);
    if (std::getenv("IR_TEST_PRINT_ROW")) std::cout << compiled.GetAttr<std::string>("kernel_source");
    EXPECT_EQ(ExpectFusedEqualsUnfused(g), 1u);
  }
}

TEST(FusionRowTest, OddShortAndLongRowsMatchUnfused) {
  for (auto shape :
       std::vector<std::pair<int64_t, int64_t>>{{7, 33}, {5, 1}, {1, 1}, {3, 1 << 16}, {300, 130}, {0, 5}, {4, 0}}) {
    SCOPED_TRACE(StrCat(shape.first, "x", shape.second));
    for (const RowGraph& g : row_graphs::AllRowGraphs(shape.first, shape.second, 2)) {
      EXPECT_EQ(ExpectFusedEqualsUnfused(g, 1e-4), 1u);
    }
  }
}

TEST(FusionRowTest, NanAndInfinityPropagateAsUnfused) {
  for (RowGraph g : row_graphs::AllRowGraphs(6, 9, 3)) {
    float* x = g.feeds.at("x").data<float>();
    x[2] = std::numeric_limits<float>::quiet_NaN();
    x[9 + 4] = std::numeric_limits<float>::infinity();
    x[18 + 1] = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < 9; ++c) x[27 + c] = -std::numeric_limits<float>::infinity();
    EXPECT_EQ(ExpectFusedEqualsUnfused(g), 1u);
  }
}

TEST(FusionRowTest, IntegerRowsMatchUnfused) {
  // d = x - max(x); out = d * sum(d * d) + min(x): int32 all the way.
  NodeEntry x = In("x");
  NodeEntry d = row_graphs::Op("subtract", "d", {x, RowReduce("max", "mx", x)});
  NodeEntry s = RowReduce("sum", "s", row_graphs::Op("multiply", "dd", {d, d}));
  NodeEntry out = row_graphs::Op("add", "out", {row_graphs::Op("multiply", "ds", {d, s}), RowReduce("min", "mn", x)});
  RowGraph g{"int rows", {out}, {{"x", test::RandomArray({9, 17}, DType::kInt32, 4, -50, 50)}}};
  EXPECT_EQ(FusedGroups(g)[0].kind, "row");
  EXPECT_EQ(ExpectFusedEqualsUnfused(g, 0), 1u);
}

TEST(FusionRowTest, RowsOverSeveralLeadingAndTrailingAxes) {
  // Rows over [2, 3], columns over the trailing [4, 5]: reduce axes 2 and 3 with keepdims.
  NodeEntry x = In("x");
  auto reduce = [](const std::string& op, const std::string& name, NodeEntry v) {
    return row_graphs::Op(op, name, {v}, {{"axis", "(2, 3)"}, {"keepdims", "true"}});
  };
  NodeEntry e = row_graphs::Op("exp", "e", {row_graphs::Op("subtract", "sh", {x, reduce("max", "mx", x)})});
  NodeEntry out = row_graphs::Op("divide", "out", {e, reduce("sum", "s", e)});
  RowGraph g{"4-d softmax", {out}, {{"x", test::RandomArray({2, 3, 4, 5}, DType::kFloat32, 5)}}};
  EXPECT_EQ(FusedGroups(g)[0].kind, "row");
  EXPECT_EQ(ExpectFusedEqualsUnfused(g), 1u);
}

TEST(FusionRowTest, FmaxSplitsTheRowGroup) {
  // Layer norm reads x, gamma and beta: with F_max 2 the group cannot hold all three.
  RowGraph g = row_graphs::AllRowGraphs(8, 12)[2];
  ASSERT_EQ(g.name, "layer_norm");
  auto groups = FusedGroups(g, 2);
  EXPECT_GT(groups.size(), 1u);
  for (const auto& group : groups) EXPECT_LE(group.inputs.size(), 2u);
  EXPECT_GT(ExpectFusedEqualsUnfused(g, 1e-5, 2), 1u);
}

TEST(FusionRowTest, AValueLeavingAndReenteringSplitsTheGroup) {
  // t = transpose(exp(x - max(x))) leaves the row domain; t's transposed copy is added back.
  NodeEntry x = In("x");
  NodeEntry e = row_graphs::Op("exp", "e", {row_graphs::Op("subtract", "sh", {x, RowReduce("max", "mx", x)})});
  NodeEntry back = row_graphs::Op("transpose", "tt", {row_graphs::Op("transpose", "t", {e})});
  NodeEntry out = row_graphs::Op("add", "out", {row_graphs::Op("divide", "q", {e, RowReduce("sum", "s", e)}), back});
  RowGraph g{"reenter", {out}, {{"x", test::RandomArray({6, 6}, DType::kFloat32, 6)}}};
  auto groups = FusedGroups(g);
  for (const auto& group : groups) {
    bool has_e = std::find(group.members.begin(), group.members.end(), "e") != group.members.end();
    bool has_out = std::find(group.members.begin(), group.members.end(), "out") != group.members.end();
    EXPECT_FALSE(has_e && has_out) << "out reads e through the transposes outside the group";
  }
  ExpectFusedEqualsUnfused(g);
}

TEST(FusionRowTest, ColumnReductionsStayReduceGroups) {
  // sum over axis 0 of a square matrix, then a division by it: not a row group.
  NodeEntry x = In("x");
  NodeEntry e = row_graphs::Op("exp", "e", {x});
  NodeEntry s = row_graphs::Op("sum", "s", {e}, {{"axis", "0"}, {"keepdims", "true"}});
  NodeEntry out = row_graphs::Op("divide", "out", {e, s});
  RowGraph g{"column softmax", {out}, {{"x", test::RandomArray({8, 8}, DType::kFloat32, 7)}}};
  for (const auto& group : FusedGroups(g)) EXPECT_NE(group.kind, "row");
  EXPECT_GT(ExpectFusedEqualsUnfused(g), 1u);
}

TEST(FusionRowTest, PerRowValueWithoutKeepdimsIsNotBroadcastAlongRows) {
  // sum(x, axis=-1) of a square matrix has shape [n]; x / s broadcasts it along columns,
  // so the division must not join the row group as a per-row value.
  NodeEntry x = In("x");
  NodeEntry s = row_graphs::Op("sum", "s", {x}, {{"axis", "-1"}});
  NodeEntry out = row_graphs::Op("divide", "out", {x, s});
  RowGraph g{"column broadcast", {out}, {{"x", test::RandomArray({5, 5}, DType::kFloat32, 8, 1, 2)}}};
  for (const auto& group : FusedGroups(g)) EXPECT_NE(group.kind, "row");
  ExpectFusedEqualsUnfused(g);
}

TEST(FusionRowTest, LayerNormGradientFromTheGradientPass) {
  // dx of sum(layer_norm(x) * w) as the Gradient pass derives it from the forward ops.
  NodeEntry x = In("x"), gamma = In("gamma"), beta = In("beta"), w = In("w");
  NodeEntry y = row_graphs::LayerNorm(x, gamma, beta);
  NodeEntry loss = row_graphs::Op("sum", "loss", {row_graphs::Op("multiply", "yw", {y, w})});
  NodeEntry dx = Gradients({loss}, {x})[0];
  RowGraph g{"layer norm dx by Gradient",
             {dx},
             {{"x", test::RandomArray({12, 40}, DType::kFloat32, 9)},
              {"gamma", test::RandomArray({40}, DType::kFloat32, 10)},
              {"beta", test::RandomArray({40}, DType::kFloat32, 11)},
              {"w", test::RandomArray({12, 40}, DType::kFloat32, 12)}}};
  // The forward's reductions share one row group. The backward's collapse_sum_like and
  // _reduce_grad_broadcast nodes declare no reduced axes, so they stay kernels of their own.
  bool forward_in_one_row_group = false;
  for (const auto& group : FusedGroups(g)) {
    auto has = [&](const std::string& m) {
      return std::find(group.members.begin(), group.members.end(), m) != group.members.end();
    };
    forward_in_one_row_group = forward_in_one_row_group || (group.kind == "row" && has("ln_mean") && has("ln_var"));
  }
  EXPECT_TRUE(forward_in_one_row_group);
  ExpectFusedEqualsUnfused(g, 1e-4);
}

}  // namespace
}  // namespace ir
