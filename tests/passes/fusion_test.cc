#include <gtest/gtest.h>

#include <random>

#include "codegen/kernel_builder.h"
#include "ir/codegen.h"
#include "ir/fusion.h"
#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ops/op_harness.h"
#include "passes/fusion_plan.h"
#include "test_util.h"

namespace ir {
namespace {

using test::ExpectNear;
using test::RandomArray;

using test::Apply;
using test::Fuse;
using test::InferFromFeeds;
using test::Var;

std::vector<const Node*> FusedNodes(const Graph& graph) {
  std::vector<const Node*> nodes;
  const IndexedGraph& idx = graph.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (!idx[nid].source->is_variable() && idx[nid].source->op()->name == "_fused") nodes.push_back(idx[nid].source);
  }
  return nodes;
}

// The inputs of `node` in `graph` that are not 0-d: those F_max bounds.
int ArrayInputs(const Graph& graph, const Node& node) {
  const IndexedGraph& idx = graph.indexed_graph();
  const auto& shapes = graph.GetAttr<ShapeVector>("shape");
  int arrays = 0;
  for (const NodeEntry& in : node.inputs) arrays += shapes[idx.entry_id(in)].ndim() == 0 ? 0 : 1;
  return arrays;
}

// Unfused, fused (members run one by one) and generated kernels all give the same values.
void ExpectSameResults(const Graph& unfused, const std::map<std::string, NDArray>& feeds, int fmax = 8) {
  std::vector<NDArray> expected = test::EvalGraphWithKernels(unfused, feeds);
  Graph fused = Fuse(unfused, fmax);
  std::vector<NDArray> interpreted = test::EvalGraphWithKernels(fused, feeds);
  Graph compiled = ApplyPasses(fused, {"CodeGen", "RTCGen"});
  std::vector<NDArray> generated = test::EvalGraphWithKernels(compiled, feeds);
  ASSERT_EQ(expected.size(), generated.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ExpectNear(interpreted[i], expected[i], 1e-6, 1e-6);
    ExpectNear(generated[i], expected[i], 1e-5, 1e-5);
  }
}

std::map<std::string, NDArray> Feeds(const std::map<std::string, Shape>& shapes, uint64_t seed = 1) {
  std::map<std::string, NDArray> feeds;
  for (const auto& kv : shapes) feeds[kv.first] = RandomArray(kv.second, DType::kFloat32, seed++);
  return feeds;
}

TEST(FusionTest, ElementwiseChainBecomesOneKernel) {
  NodeEntry x = Var("x"), y = Var("y");
  NodeEntry e = Apply("exp", "e", {x});
  NodeEntry m = Apply("multiply", "m", {e, y});
  NodeEntry a = Apply("add", "a", {m, x});
  NodeEntry out = Apply("tanh", "out", {a});
  auto feeds = Feeds({{"x", Shape{16, 33}}, {"y", Shape{16, 33}}});
  Graph graph = InferFromFeeds({out}, feeds);
  Graph fused = Fuse(graph);
  ASSERT_EQ(FusedNodes(fused).size(), 1u);
  const auto& records = fused.GetAttr<std::vector<fusion::GroupRecord>>("fusion_groups");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].members, (std::vector<std::string>{"e", "m", "a", "out"}));
  EXPECT_EQ(records[0].inputs, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(records[0].outputs, (std::vector<std::string>{"out"}));
  ExpectSameResults(graph, feeds);
}

TEST(FusionTest, DiamondComputesSharedValueOnce) {
  NodeEntry x = Var("x");
  NodeEntry a = Apply("exp", "a", {x});
  NodeEntry d = Apply("add", "d", {Apply("sin", "b", {a}), Apply("cos", "c", {a})});
  auto feeds = Feeds({{"x", Shape{100}}});
  Graph graph = InferFromFeeds({d}, feeds);
  Graph fused = Fuse(graph);
  ASSERT_EQ(FusedNodes(fused).size(), 1u);
  Graph compiled = ApplyPasses(fused, {"CodeGen"});
  const std::string& source = compiled.GetAttr<std::string>("kernel_source");
  size_t first = source.find("expf(");
  ASSERT_NE(first, std::string::npos) << source;
  EXPECT_EQ(source.find("expf(", first + 1), source.rfind("expf(")) << "exp(x) computed more than once";
  ExpectSameResults(graph, feeds);
}

TEST(FusionTest, ValuesUsedOutsideTheGroupAreWrittenOut) {
  NodeEntry x = Var("x"), w = Var("w");
  NodeEntry a = Apply("exp", "a", {x});
  NodeEntry b = Apply("multiply_scalar", "b", {a}, {{"scalar", "2"}});
  NodeEntry mm = Apply("matmul", "mm", {a, w});
  auto feeds = Feeds({{"x", Shape{4, 8}}, {"w", Shape{8, 3}}});
  Graph graph = InferFromFeeds({b, mm}, feeds);
  Graph fused = Fuse(graph);
  std::vector<const Node*> nodes = FusedNodes(fused);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->num_outputs(), 2u) << "a feeds matmul and b is a graph output";
  const auto& log = fused.GetAttr<std::vector<std::string>>("fusion_log");
  bool logged = false;
  for (const std::string& line : log) logged = logged || line.find("'mm' (matmul) is not fused") != std::string::npos;
  EXPECT_TRUE(logged) << Join(log, "\n");
  ExpectSameResults(graph, feeds);
}

TEST(FusionTest, BroadcastInputsLoadWithStrideZero) {
  NodeEntry x = Var("x"), b = Var("b"), c = Var("c");
  NodeEntry out = Apply("multiply", "out", {Apply("add", "s", {x, b}), c});
  auto feeds = Feeds({{"x", Shape{4, 5, 8}}, {"b", Shape{5, 8}}, {"c", Shape{4, 1, 1}}});
  Graph graph = InferFromFeeds({out}, feeds);
  ExpectSameResults(graph, feeds);
  Graph fused = Fuse(graph);
  const Node* node = FusedNodes(fused).at(0);
  std::vector<Shape> shapes;
  std::vector<DType> types;
  for (const char* name : {"x", "b", "c"}) {
    shapes.push_back(feeds[name].shape());
    types.push_back(DType::kFloat32);
  }
  Kernel kernel = codegen::BuildKernel(GetFusedGroup(node->attrs), shapes, types);
  EXPECT_EQ(kernel.extents, (std::vector<int64_t>{4, 40})) << kernel.Describe();
}

TEST(FusionTest, ScalarConstantsAreFoldedAndLiteralsKeepFullPrecision) {
  NodeEntry x = Var("x");
  NodeEntry out =
      Apply("multiply_scalar", "out", {Apply("add_scalar", "a", {x}, {{"scalar", "0.1"}})}, {{"scalar", "1e-30"}});
  auto feeds = Feeds({{"x", Shape{7}}});
  Graph compiled = ApplyPasses(Fuse(InferFromFeeds({out}, feeds)), {"CodeGen"});
  const std::string& source = compiled.GetAttr<std::string>("kernel_source");
  EXPECT_NE(source.find("0.100000001f"), std::string::npos) << source;
  EXPECT_NE(source.find("(t1 * 1e-30f)"), std::string::npos) << source;  // %.9g round-trips every float
}

TEST(FusionTest, IdenticalGroupsGiveIdenticalKernels) {
  auto build = [](const std::string& prefix) {
    NodeEntry x = Var(prefix + "x");
    return Apply("sigmoid", prefix + "s", {Apply("negative", prefix + "n", {x})});
  };
  auto feeds1 = Feeds({{"p_x", Shape{32}}});
  auto feeds2 = Feeds({{"q_x", Shape{32}}});
  Graph g1 = ApplyPasses(Fuse(InferFromFeeds({build("p_")}, feeds1)), {"CodeGen"});
  Graph g2 = ApplyPasses(Fuse(InferFromFeeds({build("q_")}, feeds2)), {"CodeGen"});
  EXPECT_EQ(g1.GetAttr<std::string>("kernel_source"), g2.GetAttr<std::string>("kernel_source"));
}

// Random elementwise/broadcast graphs: every fused node stays within F_max, results unchanged.
Graph RandomGraph(std::mt19937* rng, int num_inputs, int num_ops, std::map<std::string, NDArray>* feeds) {
  const std::vector<Shape> shapes = {Shape{6, 10}, Shape{10}, Shape{6, 1}, Shape::Scalar()};
  std::vector<NodeEntry> values;
  for (int i = 0; i < num_inputs; ++i) {
    std::string name = StrCat("in", i);
    values.push_back(Var(name));
    (*feeds)[name] = RandomArray(i == 0 ? shapes[0] : shapes[(*rng)() % shapes.size()], DType::kFloat32, i + 10);
  }
  const std::vector<std::string> unary = {"tanh", "sigmoid", "negative", "square", "abs", "sin"};
  const std::vector<std::string> binary = {"add", "subtract", "multiply", "maximum", "minimum"};
  for (int k = 0; k < num_ops; ++k) {
    std::string name = StrCat("op", k);
    NodeEntry a = values[(*rng)() % values.size()];
    if ((*rng)() % 3 == 0) {
      values.push_back(Apply(unary[(*rng)() % unary.size()], name, {a}));
    } else {
      NodeEntry b = values[(*rng)() % values.size()];
      values.push_back(Apply(binary[(*rng)() % binary.size()], name, {a, b}));
    }
  }
  // Outputs: the last value and a couple of random intermediates (multi-output groups).
  std::vector<NodeEntry> outputs = {values.back(), values[num_inputs + (*rng)() % num_ops],
                                    values[num_inputs + (*rng)() % num_ops]};
  return InferFromFeeds(outputs, *feeds);
}

TEST(FusionTest, RespectsFmaxBoundAndKeepsResults) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    std::map<std::string, NDArray> feeds;
    Graph graph = RandomGraph(&rng, 6, 14, &feeds);
    std::vector<NDArray> expected = test::EvalGraphWithKernels(graph, feeds);
    for (int fmax = 1; fmax <= 8; ++fmax) {
      SCOPED_TRACE(StrCat("trial ", trial, " fmax ", fmax));
      Graph fused = Fuse(graph, fmax);
      for (const Node* node : FusedNodes(fused)) EXPECT_LE(ArrayInputs(fused, *node), fmax);
      std::vector<NDArray> got = test::EvalGraphWithKernels(fused, feeds);
      for (size_t i = 0; i < got.size(); ++i) ExpectNear(got[i], expected[i], 1e-6, 1e-6);
    }
    ExpectSameResults(graph, feeds, 2 + trial % 3);
  }
}

TEST(FusionTest, FmaxOfOneStillRunsEveryOp) {
  NodeEntry x = Var("x"), y = Var("y");
  NodeEntry out = Apply("add", "out", {Apply("exp", "e", {x}), y});
  auto feeds = Feeds({{"x", Shape{5}}, {"y", Shape{5}}});
  Graph fused = Fuse(InferFromFeeds({out}, feeds), 1);
  const auto& log = fused.GetAttr<std::vector<std::string>>("fusion_log");
  bool refused = false;
  for (const std::string& line : log) refused = refused || line.find("unique inputs 2 > F_max 1") != std::string::npos;
  EXPECT_TRUE(refused) << Join(log, "\n");
}

// sum_i a_i * s_i over `arrays` arrays, the first `scalars` of them scaled by a 0-d input.
Graph ScaledSum(int arrays, int scalars, std::map<std::string, NDArray>* feeds) {
  std::map<std::string, Shape> shapes;
  NodeEntry total;
  for (int i = 0; i < arrays; ++i) {
    NodeEntry term = Var(StrCat("a", i));
    shapes[StrCat("a", i)] = Shape{4, 5};
    if (i < scalars) {
      term = Apply("multiply", StrCat("scaled", i), {term, Var(StrCat("s", i))});
      shapes[StrCat("s", i)] = Shape::Scalar();
    }
    total = i == 0 ? term : Apply("add", StrCat("sum", i), {total, term});
  }
  *feeds = Feeds(shapes);
  return InferFromFeeds({total}, *feeds);
}

TEST(FusionTest, ScalarInputsDoNotCountTowardFmax) {
  std::map<std::string, NDArray> feeds;
  Graph graph = ScaledSum(8, 6, &feeds);  // 14 inputs, 8 of them arrays: one kernel at F_max 8
  Graph fused = Fuse(graph, 8);
  ASSERT_EQ(FusedNodes(fused).size(), 1u) << Join(fused.GetAttr<std::vector<std::string>>("fusion_log"), "\n");
  EXPECT_EQ(FusedNodes(fused)[0]->inputs.size(), 14u);
  ExpectSameResults(graph, feeds);
  Graph nine = Fuse(ScaledSum(9, 6, &feeds), 8);
  EXPECT_EQ(FusedNodes(nine).size(), 2u);
  const auto& log = nine.GetAttr<std::vector<std::string>>("fusion_log");
  bool refused = false;
  for (const std::string& line : log)
    refused = refused || line.find("unique inputs 9 > F_max 8 (and 6 0-d)") != std::string::npos;
  EXPECT_TRUE(refused) << Join(log, "\n");
}

TEST(FusionTest, FusedGraphsSaveAndLoad) {
  NodeEntry x = Var("x");
  NodeEntry out = Apply("tanh", "t", {Apply("exp", "e", {x})});
  auto feeds = Feeds({{"x", Shape{3}}});
  Graph fused = Fuse(InferFromFeeds({out}, feeds));
  std::string json = SaveJSON(fused);
  Graph loaded = LoadJSON(json);
  EXPECT_EQ(SaveJSON(loaded), json);
  ExpectNear(test::EvalGraphWithKernels(loaded, feeds)[0], test::EvalGraphWithKernels(fused, feeds)[0]);
}

TEST(FusionTest, InvalidOptionsAreErrors) {
  NodeEntry x = Var("x");
  Graph graph = InferFromFeeds({Apply("exp", "e", {x})}, Feeds({{"x", Shape{3}}}));
  EXPECT_ERROR(Fuse(graph, 0), "fusion.fmax must be at least 1, got 0");
}

}  // namespace
}  // namespace ir
