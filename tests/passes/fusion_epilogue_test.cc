// Epilogue fusion: bias adds, activations, residual adds and gradient epilogues join the
// matmul/conv2d producing their input (kOutEWiseFusable), one kernel instead of two.
#include <gtest/gtest.h>

#include "ir/fusion.h"
#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ops/fused/fused_epilogue.h"
#include "ops/op_harness.h"
#include "passes/fusion_plan.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;
using test::ExpectNear;
using test::Fuse;
using test::InferFromFeeds;
using test::RandomArray;
using test::Var;

std::vector<fusion::GroupRecord> Groups(const Graph& fused) {
  return fused.GetAttr<std::vector<fusion::GroupRecord>>("fusion_groups");
}

// Op nodes of the fused graph: each one is one kernel launch.
size_t Kernels(const Graph& fused) {
  size_t n = 0;
  const IndexedGraph& idx = fused.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) n += idx[nid].source->is_variable() ? 0 : 1;
  return n;
}

// Fused (with generated kernels) equals unfused, every output.
void ExpectSameResults(const Graph& unfused, const std::map<std::string, NDArray>& feeds, int fmax = 8) {
  std::vector<NDArray> expected = test::EvalGraphWithKernels(unfused, feeds);
  Graph compiled = ApplyPasses(Fuse(unfused, fmax), {"CodeGen", "RTCGen"});
  std::vector<NDArray> fused = test::EvalGraphWithKernels(compiled, feeds);
  ASSERT_EQ(expected.size(), fused.size());
  for (size_t i = 0; i < expected.size(); ++i) ExpectNear(fused[i], expected[i], 1e-4, 1e-4);
}

std::map<std::string, NDArray> DenseFeeds(DType dtype = DType::kFloat32) {
  return {{"x", RandomArray(Shape{6, 20}, dtype, 1)},
          {"w", RandomArray(Shape{20, 12}, dtype, 2)},
          {"b", RandomArray(Shape{12}, dtype, 3)},
          {"r", RandomArray(Shape{6, 12}, dtype, 4)}};
}

TEST(FusionEpilogueTest, MatmulBiasReluIsOneKernel) {
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry out = Apply("relu", "act", {Apply("bias_add", "biased", {mm, Var("b")})});
  Graph graph = InferFromFeeds({out}, DenseFeeds());
  Graph fused = Fuse(graph);
  ASSERT_EQ(Groups(fused).size(), 1u);
  EXPECT_EQ(Groups(fused)[0].kind, "epilogue");
  EXPECT_EQ(Groups(fused)[0].members, (std::vector<std::string>{"mm", "biased", "act"}));
  EXPECT_EQ(Groups(fused)[0].inputs, (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_EQ(Kernels(fused), 1u);
  ExpectSameResults(graph, DenseFeeds());
}

TEST(FusionEpilogueTest, ResidualAddAndScaleJoinTheMatmul) {
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry out = Apply("multiply_scalar", "scaled", {Apply("add", "res", {mm, Var("r")})}, {{"scalar", "0.5"}});
  Graph graph = InferFromFeeds({out}, DenseFeeds());
  Graph fused = Fuse(graph);
  EXPECT_EQ(Kernels(fused), 1u);
  ExpectSameResults(graph, DenseFeeds());
}

TEST(FusionEpilogueTest, EpilogueOneDnnCannotTakeRunsGeneratedInPlace) {
  // sqrt(|mm| + b) * r is no post-op chain: the generated kernel runs over the matmul's output.
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry mag = Apply("bias_add", "biased", {Apply("abs", "mag", {mm}), Var("b")});
  NodeEntry out = Apply("multiply", "gated", {Apply("sqrt", "root", {mag}), Var("r")});
  Graph graph = InferFromFeeds({out}, DenseFeeds());
  EXPECT_EQ(Kernels(Fuse(graph)), 1u);
  ExpectSameResults(graph, DenseFeeds());
}

TEST(FusionEpilogueTest, ReluGradOfAMatmulGradientIsAnEpilogue) {
  // The backward step of a hidden layer: dx = relu_grad(dy . w^T, y).
  NodeEntry dx = Apply("matmul", "dx", {Var("r"), Var("w")}, {{"transpose_b", "true"}});
  NodeEntry out = Apply("relu_grad", "drelu", {dx, Var("x")});
  std::map<std::string, NDArray> feeds = {{"r", RandomArray(Shape{6, 12}, DType::kFloat32, 1)},
                                          {"w", RandomArray(Shape{20, 12}, DType::kFloat32, 2)},
                                          {"x", RandomArray(Shape{6, 20}, DType::kFloat32, 3)}};
  Graph graph = InferFromFeeds({out}, feeds);
  Graph fused = Fuse(graph);
  ASSERT_EQ(Groups(fused).size(), 1u);
  EXPECT_EQ(Groups(fused)[0].kind, "epilogue");
  ExpectSameResults(graph, feeds);
}

TEST(FusionEpilogueTest, ReductionsThatSumNothingArePassedThrough) {
  // The gradient graph's form: collapse_sum_like(dy . w^T, x) sums nothing for 2-D operands.
  NodeEntry dx = Apply("matmul", "dx", {Var("r"), Var("w")}, {{"transpose_b", "true"}});
  NodeEntry sum = Apply("collapse_sum_like", "dx_sum", {dx, Var("like")});
  NodeEntry out = Apply("relu_grad", "drelu", {sum, Var("x")});
  std::map<std::string, NDArray> feeds = {{"r", RandomArray(Shape{6, 12}, DType::kFloat32, 1)},
                                          {"w", RandomArray(Shape{20, 12}, DType::kFloat32, 2)},
                                          {"like", RandomArray(Shape{6, 20}, DType::kFloat32, 3)},
                                          {"x", RandomArray(Shape{6, 20}, DType::kFloat32, 4)}};
  Graph graph = InferFromFeeds({out, sum}, feeds);
  Graph fused = Fuse(graph);
  ASSERT_EQ(Groups(fused).size(), 1u);
  EXPECT_EQ(Groups(fused)[0].kind, "epilogue");
  EXPECT_EQ(Groups(fused)[0].members, (std::vector<std::string>{"dx", "dx_sum", "drelu"}));
  EXPECT_EQ(Groups(fused)[0].inputs, (std::vector<std::string>{"r", "w", "x"})) << "like gives a shape only";
  EXPECT_EQ(Groups(fused)[0].outputs, (std::vector<std::string>{"dx_sum", "drelu"}));
  ExpectSameResults(graph, feeds);
}

TEST(FusionEpilogueTest, Float64RunsTheGeneratedEpilogue) {
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry out = Apply("tanh", "act", {Apply("bias_add", "biased", {mm, Var("b")})});
  Graph graph = InferFromFeeds({out}, DenseFeeds(DType::kFloat64));
  EXPECT_EQ(Kernels(Fuse(graph)), 1u);
  ExpectSameResults(graph, DenseFeeds(DType::kFloat64));
}

TEST(FusionEpilogueTest, AnchorOutputUsedElsewhereIsWrittenToo) {
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry act = Apply("sigmoid", "act", {Apply("bias_add", "biased", {mm, Var("b")})});
  NodeEntry other = Apply("sum", "total", {mm}, {{"axis", "1"}});
  Graph graph = InferFromFeeds({act, other}, DenseFeeds());
  Graph fused = Fuse(graph);
  bool found = false;
  for (const auto& group : Groups(fused)) {
    if (group.kind != "epilogue") continue;
    found = true;
    EXPECT_EQ(group.outputs, (std::vector<std::string>{"mm", "act"}));
  }
  EXPECT_TRUE(found);
  ExpectSameResults(graph, DenseFeeds());
}

TEST(FusionEpilogueTest, EpilogueBeyondFmaxIsNotAbsorbed) {
  // The epilogue reads b and r; with the matmul's x and w that is 4 inputs > F_max 3.
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry out = Apply("add", "res", {Apply("bias_add", "biased", {mm, Var("b")}), Var("r")});
  Graph graph = InferFromFeeds({out}, DenseFeeds());
  Graph fused = Fuse(graph, 3);
  for (const auto& group : Groups(fused)) EXPECT_NE(group.kind, "epilogue");
  EXPECT_EQ(Kernels(fused), 2u);
  bool logged = false;
  for (const std::string& line : fused.GetAttr<std::vector<std::string>>("fusion_log")) {
    logged = logged ||
             line.find("cannot anchor the group of 'biased' (bias_add) to 'mm' (matmul): unique inputs 4 > F_max 3") !=
                 std::string::npos;
  }
  EXPECT_TRUE(logged);
  ExpectSameResults(graph, DenseFeeds(), 3);
}

TEST(FusionEpilogueTest, Conv2dBiasReluIsOneKernel) {
  NodeEntry conv = Apply("conv2d", "conv", {Var("x"), Var("w")}, {{"strides", "1"}, {"padding", "SAME"}});
  NodeEntry out = Apply("relu", "act", {Apply("bias_add", "biased", {conv, Var("b")})});
  std::map<std::string, NDArray> feeds = {{"x", RandomArray(Shape{2, 7, 7, 3}, DType::kFloat32, 1)},
                                          {"w", RandomArray(Shape{3, 3, 3, 4}, DType::kFloat32, 2)},
                                          {"b", RandomArray(Shape{4}, DType::kFloat32, 3)}};
  Graph graph = InferFromFeeds({out}, feeds);
  Graph fused = Fuse(graph);
  ASSERT_EQ(Groups(fused).size(), 1u);
  EXPECT_EQ(Groups(fused)[0].kind, "epilogue");
  EXPECT_EQ(Kernels(fused), 1u);
  ExpectSameResults(graph, feeds);
}

TEST(FusionEpilogueTest, FusedEpilogueGraphsSaveAndLoad) {
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  Graph graph = InferFromFeeds({Apply("relu", "act", {mm})}, DenseFeeds());
  Graph fused = Fuse(graph);
  Graph loaded = LoadJSON(SaveJSON(fused));
  const IndexedGraph& idx = loaded.indexed_graph();
  ASSERT_EQ(idx.num_nodes(), 3u);
  EXPECT_EQ(GetFusedGroup(idx[2].source->attrs).kind, "epilogue");
  EXPECT_EQ(GetFusedGroup(idx[2].source->attrs).epilogue->in_place_output, 0);
}

// The epilogue node of a fused graph, run alone on arrays of other shapes and dtypes than it
// was fused for (as after a rebind): each signature is derived once, then reused, and every
// run equals the unfused graph.
TEST(FusionEpilogueTest, CachedSignaturesAreReusedAcrossShapesAndDtypes) {
  NodeEntry mm = Apply("matmul", "mm", {Var("x"), Var("w")});
  NodeEntry out = Apply("relu", "act", {Apply("bias_add", "biased", {mm, Var("b")})});
  Graph fused = Fuse(InferFromFeeds({out}, DenseFeeds()));
  const IndexedGraph& idx = fused.indexed_graph();
  const NodeEntry& node_out = fused.outputs[0];
  const EpilogueRunCache& cache = *GetFusedGroup(node_out.node->attrs).epilogue->run_cache;
  auto run = [&](int64_t rows, DType dtype, uint64_t seed) {
    std::map<std::string, NDArray> arrays = {{"x", RandomArray(Shape{rows, 20}, dtype, seed)},
                                             {"w", RandomArray(Shape{20, 12}, dtype, seed + 1)},
                                             {"b", RandomArray(Shape{12}, dtype, seed + 2)}};
    std::map<const Node*, NDArray> fused_feeds;
    for (uint32_t nid : idx.input_nodes()) fused_feeds[idx[nid].source] = arrays.at(idx[nid].source->attrs.name);
    std::map<const Node*, NDArray> feeds = {{mm.node->inputs[0].node.get(), arrays["x"]},
                                            {mm.node->inputs[1].node.get(), arrays["w"]}};
    feeds[out.node->inputs[0].node->inputs[1].node.get()] = arrays["b"];
    ExpectNear(test::EvalGraph({node_out}, fused_feeds)[0], test::EvalGraph({out}, feeds)[0], 1e-4, 1e-4);
  };
  run(6, DType::kFloat32, 1);
  run(6, DType::kFloat32, 4);
  EXPECT_EQ(cache.entries.size(), 1u);
  run(9, DType::kFloat32, 7);
  run(6, DType::kFloat32, 10);
  EXPECT_EQ(cache.entries.size(), 2u);
  run(9, DType::kFloat64, 13);
  run(9, DType::kFloat64, 16);
  EXPECT_EQ(cache.entries.size(), 3u);
  run(9, DType::kFloat32, 19);
  EXPECT_EQ(cache.entries.size(), 3u);
}

}  // namespace
}  // namespace ir
