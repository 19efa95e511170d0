// Fusion beyond elementwise chains: reduction prologues, softmax parts, and multi-output
// groups that update variables in place (a whole Adam step of one variable as one kernel).
#include <gtest/gtest.h>

#include <cmath>

#include "ir/fusion.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "ops/random_graph.h"
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

std::vector<const fusion::GroupRecord*> Groups(const Graph& fused) {
  std::vector<const fusion::GroupRecord*> groups;
  for (const auto& record : fused.GetAttr<std::vector<fusion::GroupRecord>>("fusion_groups")) groups.push_back(&record);
  return groups;
}

void ExpectSameResults(const Graph& unfused, const std::map<std::string, NDArray>& feeds) {
  std::vector<NDArray> expected = test::EvalGraphWithKernels(unfused, feeds);
  Graph compiled = ApplyPasses(Fuse(unfused), {"CodeGen", "RTCGen"});
  std::vector<NDArray> generated = test::EvalGraphWithKernels(compiled, feeds);
  ASSERT_EQ(expected.size(), generated.size());
  for (size_t i = 0; i < expected.size(); ++i) ExpectNear(generated[i], expected[i], 1e-5, 1e-5);
}

TEST(FusionGroupsTest, ElementwisePrologueFusesIntoTheReduction) {
  NodeEntry a = Var("a"), b = Var("b");
  NodeEntry dot = Apply("sum", "dot", {Apply("multiply", "ab", {a, b})}, {{"axis", "1"}});
  std::map<std::string, NDArray> feeds = {{"a", RandomArray(Shape{9, 130}, DType::kFloat32, 1)},
                                          {"b", RandomArray(Shape{9, 130}, DType::kFloat32, 2)}};
  Graph graph = InferFromFeeds({dot}, feeds);
  Graph fused = Fuse(graph);
  auto groups = Groups(fused);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0]->kind, "reduce");
  EXPECT_EQ(groups[0]->members, (std::vector<std::string>{"ab", "dot"}));
  EXPECT_EQ(groups[0]->inputs, (std::vector<std::string>{"a", "b"}));
  ExpectSameResults(graph, feeds);
}

// A bias gradient ([N*H*W, C] -> [C]) has too few output columns to share among threads: the
// kernel splits the reduced axis; every kind, a prologue output kept, odd sizes, NaN included.
TEST(FusionGroupsTest, NarrowColumnReductionsSplitTheReducedAxisAndMatchUnfused) {
  for (const char* kind : {"sum", "mean", "max", "min"}) {
    for (Shape shape : {Shape{70001, 3}, Shape{5, 4099, 16}, Shape{65537, 1, 2}}) {
      SCOPED_TRACE(StrCat(kind, " over ", shape));
      NodeEntry a = Var("a"), b = Var("b");
      NodeEntry masked = Apply("relu_grad", "masked", {a, b});
      std::string axes = shape.ndim() == 2 ? "0" : "(0,1)";
      NodeEntry r = Apply(kind, "r", {masked}, {{"axis", axes}});
      NDArray x = RandomArray(shape, DType::kFloat32, 3);
      x.data<float>()[shape.Size() / 2] = NAN;
      std::map<std::string, NDArray> feeds = {{"a", x}, {"b", RandomArray(shape, DType::kFloat32, 4)}};
      Graph graph = InferFromFeeds({r, masked}, feeds);
      Graph compiled = ApplyPasses(Fuse(graph), {"CodeGen"});
      EXPECT_NE(compiled.GetAttr<std::string>("kernel_source").find("omp_get_thread_num"), std::string::npos);
      ExpectSameResults(graph, feeds);
    }
  }
}

TEST(FusionGroupsTest, ExpandedSoftmaxNeedsOneKernelPerReductionPlusOne) {
  // softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))), written out op by op.
  NodeEntry x = Var("x");
  NodeEntry mx = Apply("max", "mx", {x}, {{"axis", "1"}, {"keepdims", "true"}});
  NodeEntry e = Apply("exp", "e", {Apply("subtract", "shifted", {x, mx})});
  NodeEntry s = Apply("sum", "s", {e}, {{"axis", "1"}, {"keepdims", "true"}});
  NodeEntry out = Apply("divide", "out", {e, s});
  std::map<std::string, NDArray> feeds = {{"x", RandomArray(Shape{16, 10}, DType::kFloat32, 3)}};
  Graph graph = InferFromFeeds({out}, feeds);
  Graph fused = Fuse(graph);
  // max; (x - mx, exp) into sum; the division reads e from the sum's group output.
  EXPECT_LE(Groups(fused).size(), 3u);
  size_t opaque = 0;
  const IndexedGraph& idx = fused.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (!idx[nid].source->is_variable() && idx[nid].source->op()->name != "_fused") ++opaque;
  }
  EXPECT_EQ(opaque, 0u) << "every op of the expanded softmax is in some group";
  ExpectSameResults(graph, feeds);
}

// One Adam step on variable `w` (m, v its moments), built from elementwise ops and the
// assign family, as optimizers that build their updates as graph ops do.
struct AdamGraph {
  NodeEntry w = Var("w"), m = Var("m"), v = Var("v");
  NodePtr step;
  explicit AdamGraph(NodeEntry grad) {
    auto scalar = [](const std::string& op, const std::string& name, NodeEntry x, double value) {
      return Apply(op, name, {x}, {{"scalar", std::to_string(value)}});
    };
    NodeEntry m_new = Apply(
        "assign", "m_new",
        {m, Apply("add", "m_sum",
                  {scalar("multiply_scalar", "m_decay", m, 0.9), scalar("multiply_scalar", "g_part", grad, 0.1)})});
    NodeEntry g2 = Apply("square", "g2", {grad});
    NodeEntry v_new = Apply(
        "assign", "v_new",
        {v, Apply("add", "v_sum",
                  {scalar("multiply_scalar", "v_decay", v, 0.999), scalar("multiply_scalar", "g2_part", g2, 0.001)})});
    NodeEntry denom = scalar("add_scalar", "denom", Apply("sqrt", "v_sqrt", {v_new}), 1e-8);
    NodeEntry delta = scalar("multiply_scalar", "delta", Apply("divide", "ratio", {m_new, denom}), 0.01);
    NodeEntry w_new = Apply("assign_sub", "w_new", {w, delta});
    step = Apply("group", "adam_step", {w_new}).node;
  }
};

SessionOptions Options(bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  return options;
}

TEST(FusionGroupsTest, AdamUpdateOfOneVariableIsOneKernel) {
  NodeEntry grad = Apply("multiply_scalar", "grad", {Var("g")}, {{"scalar", "1"}});
  AdamGraph adam(grad);
  std::map<std::string, std::vector<float>> results[2];
  for (bool fusion : {false, true}) {
    Session sess(Options(fusion));
    sess.variables().Set("w", RandomArray(Shape{37, 5}, DType::kFloat32, 4));
    sess.variables().Set("m", RandomArray(Shape{37, 5}, DType::kFloat32, 5));
    sess.variables().Set("v", RandomArray(Shape{37, 5}, DType::kFloat32, 6, 0.1, 1));
    for (int i = 0; i < 3; ++i) {
      sess.Run({}, {{"g", RandomArray(Shape{37, 5}, DType::kFloat32, 10 + i)}}, {adam.step});
    }
    for (const char* name : {"w", "m", "v"}) results[fusion][name] = sess.variables().Get(name).ToVector<float>();
    if (!fusion) continue;
    const Graph& bound = sess.last_graph();
    auto groups = Groups(bound);
    ASSERT_EQ(groups.size(), 1u) << "the whole update, gradient scaling included, is one kernel";
    EXPECT_EQ(groups[0]->inputs, (std::vector<std::string>{"m", "g", "v", "w"}));
    const IndexedGraph& idx = bound.indexed_graph();
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      const Node* node = idx[nid].source;
      if (node->is_variable()) continue;
      EXPECT_TRUE(node->op()->name == "_fused" || node->op()->name == "group" || node->op()->name == "no_op")
          << "'" << node->attrs.name << "' (" << node->op()->name << ") runs outside the fused update";
    }
  }
  for (const char* name : {"w", "m", "v"}) {
    ASSERT_EQ(results[0][name].size(), results[1][name].size());
    for (size_t i = 0; i < results[0][name].size(); ++i) {
      EXPECT_NEAR(results[1][name][i], results[0][name][i], 1e-5) << name << "[" << i << "]";
    }
  }
}

TEST(FusionGroupsTest, FusedAssignInitializesAVariable) {
  // w = 0.5 * init: the assign joins the scale's group and still initializes w.
  NodeEntry w = Var("w");
  NodeEntry init = Apply("assign", "init", {w, Apply("multiply_scalar", "scaled", {Var("x")}, {{"scalar", "0.5"}})});
  Session sess(Options(true));
  NDArray x = RandomArray(Shape{11}, DType::kFloat32, 7);
  sess.Run({}, {{"x", x}}, {init.node});
  ASSERT_EQ(Groups(sess.last_graph()).size(), 1u);
  std::vector<float> got = sess.variables().Get("w").ToVector<float>(), in = x.ToVector<float>();
  for (size_t i = 0; i < in.size(); ++i) EXPECT_FLOAT_EQ(got[i], 0.5f * in[i]);
}

TEST(FusionGroupsTest, ReadAfterWriteOfAVariableStaysOutOfTheWritersKernel) {
  // r reads w after the assign (ordered by a control dependency): it must see the new value.
  NodeEntry w = Var("w");
  NodeEntry set = Apply("assign", "set", {w, Apply("negative", "neg", {Var("x")})});
  NodeEntry read = Apply("exp", "read", {w});
  read.node->control_deps.push_back(set.node);
  NodeEntry out = Apply("add", "out", {read, set});
  Session sess(Options(true));
  NDArray x = RandomArray(Shape{6}, DType::kFloat32, 8);
  sess.variables().Set("w", RandomArray(Shape{6}, DType::kFloat32, 9));
  std::vector<float> got = sess.Run({out}, {{"x", x}})[0].ToVector<float>(), in = x.ToVector<float>();
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(got[i], std::exp(-in[i]) - in[i], 1e-5);
  bool refused = false;
  for (const std::string& line : sess.last_graph().GetAttr<std::vector<std::string>>("fusion_log")) {
    refused = refused || line.find("reads 'w' (variable) after 'set' (assign) writes it") != std::string::npos;
  }
  EXPECT_TRUE(refused);
}

// y = exp(t)*exp(c) + exp(c)*mean(exp(t)) with c of shape [b, 1]: exp(c) feeds the reduce
// group {exp(t), exp(t)*exp(c), mean} and the mean comes back into exp(c)'s [b, 1] domain.
// Only the contracted graph of groups shows the cycle (issue 9 item 18).
Graph ExpMeanGraph(std::map<std::string, NDArray>* feeds) {
  NodeEntry t = Var("t"), c = Var("c");
  NodeEntry et = Apply("exp", "et", {t}), ec = Apply("exp", "ec", {c});
  NodeEntry mean = Apply("mean", "mean", {et}, {{"axis", "-1"}, {"keepdims", "true"}});
  NodeEntry y = Apply("add", "y", {Apply("multiply", "left", {et, ec}), Apply("multiply", "right", {ec, mean})});
  *feeds = {{"t", RandomArray(Shape{4, 6}, DType::kFloat32, 1)}, {"c", RandomArray(Shape{4, 1}, DType::kFloat32, 2)}};
  return InferFromFeeds({y}, *feeds);
}

TEST(FusionGroupsTest, CycleThroughAnotherGroupIsNotPlanned) {
  std::map<std::string, NDArray> feeds;
  Graph graph = ExpMeanGraph(&feeds);
  for (int fmax = 1; fmax <= 8; ++fmax) {
    SCOPED_TRACE(StrCat("F_max ", fmax));
    std::vector<NDArray> expected = test::EvalGraphWithKernels(graph, feeds);
    Graph compiled = ApplyPasses(Fuse(graph, fmax), {"CodeGen", "RTCGen"});
    std::vector<NDArray> got = test::EvalGraphWithKernels(compiled, feeds);
    ExpectNear(got[0], expected[0], 1e-5, 1e-5);
  }
}

// A plan whose groups depend on each other is repaired by splitting a group, not refused.
TEST(FusionGroupsTest, CyclicPlanIsSplitNotRefused) {
  std::map<std::string, NDArray> feeds;
  Graph graph = ExpMeanGraph(&feeds);
  const IndexedGraph& idx = graph.indexed_graph();
  fusion::Plan plan;
  plan.group_of.assign(idx.num_nodes(), -1);
  plan.foldable.assign(idx.num_nodes(), false);
  plan.groups = {fusion::Group{"reduce", {}, Shape{4, 6}, true}, fusion::Group{"map", {}, Shape{4, 1}, false}};
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const std::string& name = idx[nid].source->attrs.name;
    int g = name == "et" || name == "left" || name == "mean" ? 0 : name == "ec" || name == "right" ? 1 : -1;
    if (g >= 0) plan.groups[g].members.push_back(nid);
    plan.group_of[nid] = g;
  }
  std::vector<fusion::GroupRecord> records;
  EXPECT_THROW(fusion::RewriteFusedGraph(graph, plan, &records), Error);
  fusion::SplitCyclicGroups(idx, &plan);
  ASSERT_EQ(plan.log.size(), 1u);
  EXPECT_NE(plan.log[0].find("is split"), std::string::npos) << plan.log[0];
  Graph fused = fusion::RewriteFusedGraph(graph, plan, &records);
  ExpectNear(test::EvalGraphWithKernels(fused, feeds)[0], test::EvalGraphWithKernels(graph, feeds)[0], 1e-6, 1e-6);
}

// Fused runs equal the unfused run for every F_max from 1 to 8, and no kernel exceeds F_max.
void ExpectFusedMatchesUnfusedForEveryFmax(const std::vector<NodeEntry>& fetches,
                                           const std::unordered_map<std::string, NDArray>& feeds) {
  std::vector<NDArray> expected = Session(Options(false)).Run(fetches, feeds);
  for (int fmax = 1; fmax <= 8; ++fmax) {
    SCOPED_TRACE(StrCat("F_max ", fmax));
    SessionOptions options = Options(true);
    options.fmax = fmax;
    Session fused(options);
    std::vector<NDArray> got = fused.Run(fetches, feeds);
    for (size_t i = 0; i < got.size(); ++i) ExpectNear(got[i], expected[i], 1e-5, 1e-4);
    const IndexedGraph& idx = fused.last_graph().indexed_graph();
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      const Node* node = idx[nid].source;
      if (!node->is_variable() && node->op()->name == "_fused") {
        EXPECT_LE(static_cast<int>(node->inputs.size()), fmax) << node->attrs.name;
      }
    }
  }
}

TEST(FusionGroupsTest, RandomGraphsWithReductionsMatchUnfusedForEveryFmax) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(StrCat("graph seed ", seed));
    test::RandomGraph graph(seed);
    ExpectFusedMatchesUnfusedForEveryFmax(graph.fetches(), graph.feeds());
  }
}

NodeEntry RowMean(const std::string& name, const NodeEntry& x) {
  return Apply("mean", name, {x}, {{"axis", "-1"}, {"keepdims", "true"}});
}

std::unordered_map<std::string, NDArray> NormFeeds() {
  return {{"x", RandomArray(Shape{6, 10}, DType::kFloat32, 1)},
          {"gamma", RandomArray(Shape{10}, DType::kFloat32, 2)},
          {"dy", RandomArray(Shape{6, 10}, DType::kFloat32, 3)}};
}

// Layer-norm backward over the last axis, op by op: every row mean is read back by
// elementwise ops that also read the mean's input.
TEST(FusionGroupsTest, LayerNormBackwardMatchesUnfusedForEveryFmax) {
  NodeEntry x = Var("x"), gamma = Var("gamma"), dy = Var("dy");
  NodeEntry xc = Apply("subtract", "xc", {x, RowMean("mu", x)});
  NodeEntry var = RowMean("var", Apply("multiply", "xc2", {xc, xc}));
  NodeEntry rstd = Apply("rsqrt", "rstd", {Apply("add_scalar", "var_eps", {var}, {{"scalar", "1e-5"}})});
  NodeEntry xhat = Apply("multiply", "xhat", {xc, rstd});
  NodeEntry g = Apply("multiply", "g", {dy, gamma});
  NodeEntry centered = Apply("subtract", "g_centered", {g, RowMean("g_mean", g)});
  NodeEntry proj = Apply("multiply", "proj", {xhat, RowMean("gx_mean", Apply("multiply", "gx", {g, xhat}))});
  NodeEntry dx = Apply("multiply", "dx", {rstd, Apply("subtract", "inner", {centered, proj})});
  NodeEntry dgamma = Apply("sum", "dgamma", {Apply("multiply", "dy_xhat", {dy, xhat})}, {{"axis", "0"}});
  NodeEntry dbeta = Apply("sum", "dbeta", {dy}, {{"axis", "0"}});
  ExpectFusedMatchesUnfusedForEveryFmax({dx, dgamma, dbeta}, NormFeeds());
}

// RMS-norm backward: dx = r * (g - x * r^2 * mean(g * x)), r = rsqrt(mean(x^2) + eps).
TEST(FusionGroupsTest, RmsNormBackwardMatchesUnfusedForEveryFmax) {
  NodeEntry x = Var("x"), gamma = Var("gamma"), dy = Var("dy");
  NodeEntry ms = RowMean("ms", Apply("multiply", "x2", {x, x}));
  NodeEntry r = Apply("rsqrt", "r", {Apply("add_scalar", "ms_eps", {ms}, {{"scalar", "1e-6"}})});
  NodeEntry g = Apply("multiply", "g", {dy, gamma});
  NodeEntry gx_mean = RowMean("gx_mean", Apply("multiply", "gx", {g, x}));
  NodeEntry proj = Apply("multiply", "proj", {Apply("multiply", "xr2", {x, Apply("multiply", "r2", {r, r})}), gx_mean});
  NodeEntry dx = Apply("multiply", "dx", {r, Apply("subtract", "inner", {g, proj})});
  NodeEntry dgamma =
      Apply("sum", "dgamma", {Apply("multiply", "dy_xr", {dy, Apply("multiply", "xr", {x, r})})}, {{"axis", "0"}});
  ExpectFusedMatchesUnfusedForEveryFmax({dx, dgamma}, NormFeeds());
}

}  // namespace
}  // namespace ir
