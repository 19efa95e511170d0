#include <gtest/gtest.h>

#include "ir/pass.h"
#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Filled;
using runtime_test::Op;
using runtime_test::UnfusedOptions;
using runtime_test::Var;
using runtime_test::Variable;

std::shared_ptr<VariableStore> NewStore() { return std::make_shared<VariableStore>(); }

Executor MakeExecutor(std::vector<NodeEntry> outputs, std::shared_ptr<VariableStore> store = NewStore(),
                      SessionOptions options = UnfusedOptions()) {
  return Executor(Graph(std::move(outputs)), options, std::move(store));
}

TEST(ExecutorTest, ComputesThroughInPlaceChainsAndDiamonds) {
  NodeEntry x = Var("x");
  NodeEntry a = Op("runtime_test_scale", "a", {x});
  NodeEntry b = Op("runtime_test_scale", "b", {a});
  NodeEntry c = Op("runtime_test_add", "c", {a, b});
  NodeEntry d = Op("runtime_test_scale", "d", {Op("runtime_test_scale", "e", {c})});
  Executor exec = MakeExecutor({d});
  // 16 floats: pooled values take 64-byte aligned arena offsets, so smaller ones could not share.
  std::vector<float> xs(16), expected(16);
  for (int i = 0; i < 16; ++i) xs[i] = static_cast<float>(i + 1), expected[i] = 24.0f * static_cast<float>(i + 1);
  std::vector<NDArray> out = exec.Run({{"x", NDArray::FromVector<float>({16}, xs)}});
  // a = 2x, b = 4x, c = 6x, d = 24x
  EXPECT_EQ(out[0].ToVector<float>(), expected);
  const RunStats& stats = exec.last_stats();
  EXPECT_TRUE(stats.bound);
  EXPECT_EQ(stats.kernels_launched, 5u);
  EXPECT_EQ(stats.host_fallbacks, 0u);
  EXPECT_EQ(static_cast<int64_t>(stats.bytes_allocated), exec.bound_graph().GetAttr<int64_t>("memory_plan_bytes"));
  EXPECT_LT(stats.bytes_allocated, stats.bytes_without_reuse);
}

TEST(ExecutorTest, FetchedArraysStayValidAfterLaterRuns) {
  auto store = NewStore();
  store->Set("W", Filled({2}, 1));
  NodeEntry w = Variable("W");
  NodeEntry y = Op("runtime_test_scale", "y", {Var("x")});
  Executor exec = MakeExecutor({y, w, Op("assign_add", "inc", {w, Var("one")})}, store);
  std::vector<NDArray> first = exec.Run({{"x", Filled({2}, 1)}, {"one", Filled({2}, 1)}});
  std::vector<NDArray> second = exec.Run({{"x", Filled({2}, 5)}, {"one", Filled({2}, 1)}});
  EXPECT_EQ(first[0].ToVector<float>(), std::vector<float>({2, 2}));
  EXPECT_EQ(second[0].ToVector<float>(), std::vector<float>({10, 10}));
  // A fetched variable (read when the run ends) is a snapshot, not the variable's storage.
  EXPECT_EQ(first[1].ToVector<float>(), std::vector<float>({2, 2}));
  EXPECT_EQ(first[2].ToVector<float>(), std::vector<float>({2, 2}));
  EXPECT_EQ(second[2].ToVector<float>(), std::vector<float>({3, 3}));
  EXPECT_EQ(store->Get("W").ToVector<float>(), std::vector<float>({3, 3}));
}

TEST(ExecutorTest, RebindsWhenFeedShapesChangeAndCachesPlans) {
  Executor exec = MakeExecutor({Op("runtime_test_scale", "y", {Var("x", {{"__shape__", "[?,3]"}})})});
  exec.Run({{"x", Filled({2, 3}, 1)}});
  EXPECT_TRUE(exec.last_stats().bound);
  exec.Run({{"x", Filled({2, 3}, 1)}});
  EXPECT_FALSE(exec.last_stats().bound);
  std::vector<NDArray> out = exec.Run({{"x", Filled({5, 3}, 1)}});
  EXPECT_TRUE(exec.last_stats().bound);
  EXPECT_EQ(out[0].shape(), Shape({5, 3}));
  EXPECT_EQ(exec.bound_graph().GetAttr<ShapeVector>("shape").back(), Shape({5, 3}));
  exec.Run({{"x", Filled({2, 3}, 1)}});
  EXPECT_FALSE(exec.last_stats().bound);
}

TEST(ExecutorTest, UnfedPlaceholderIsAnError) {
  Executor exec = MakeExecutor({Op("runtime_test_add", "y", {Var("x"), Var("z")})});
  EXPECT_ERROR(exec.Run({{"x", Filled({2}, 1)}}), "placeholder 'z' must be fed");
}

TEST(ExecutorTest, UnknownFeedNameListsThePlaceholders) {
  Executor exec = MakeExecutor({Op("runtime_test_add", "y", {Var("x"), Var("z")})});
  EXPECT_ERROR(exec.Run({{"x", Filled({2}, 1)}, {"z", Filled({2}, 1)}, {"q", Filled({2}, 1)}}),
               "feed 'q' is not an input of this graph (its placeholders: x, z)");
}

TEST(ExecutorTest, FeedOfTheWrongShapeNamesThePlaceholderAndBothShapes) {
  Executor exec = MakeExecutor({Op("runtime_test_scale", "y", {Var("x", {{"__shape__", "[?,3]"}})})});
  EXPECT_ERROR(exec.Run({{"x", Filled({2, 4}, 1)}}),
               "feed for placeholder 'x' has shape [2,4] but the placeholder expects [?,3]");
}

TEST(ExecutorTest, FeedOfTheWrongDTypeNamesThePlaceholder) {
  Executor exec = MakeExecutor({Op("runtime_test_scale", "y", {Var("x", {{"__dtype__", "float32"}})})});
  EXPECT_ERROR(exec.Run({{"x", NDArray::FromVector<int32_t>({2}, {1, 2})}}),
               "feed for placeholder 'x' has dtype int32 but the placeholder is float32");
}

TEST(ExecutorTest, FeedThatContradictsTheGraphFailsToBind) {
  NodeEntry w = Var("w", {{"__shape__", "[3,4]"}, {"__dtype__", "float32"}});
  Executor exec = MakeExecutor({Op("runtime_test_matmul", "h", {Var("x"), w})});
  EXPECT_ERROR(exec.Run({{"x", Filled({2, 5}, 1)}, {"w", Filled({3, 4}, 1)}}),
               "cannot bind the graph for inputs (x: float32[2,5]");
}

TEST(ExecutorTest, UninitializedVariableIsAnError) {
  Executor exec = MakeExecutor({Op("runtime_test_scale", "y", {Variable("W")})});
  EXPECT_ERROR(exec.Run({}), "variable 'W' is not initialized (run its initializer first)");
}

TEST(ExecutorTest, ReadingAVariableBeforeItsInitializerRunsIsAnError) {
  NodeEntry w = Var("W", {{"__shape__", "[2]"}, {"__dtype__", "float32"}});
  NodeEntry init = Op("assign", "init", {w, Var("v")});
  Executor exec = MakeExecutor({init, Op("runtime_test_scale", "r", {w})});
  EXPECT_ERROR(exec.Run({{"v", Filled({2}, 1)}}),
               "variable 'W' is not initialized (run its initializer first); node 'r'");
}

TEST(ExecutorTest, MissingKernelNamesNodeAndOp) {
  Executor exec = MakeExecutor({Op("runtime_test_no_kernel", "nk", {Var("x")})});
  EXPECT_ERROR(exec.Run({{"x", Filled({2}, 1)}}), "no kernel for node 'nk' (op runtime_test_no_kernel) on cpu");
}

TEST(ExecutorTest, UnknownShapeFailsToBindNamingTheNode) {
  Executor exec = MakeExecutor({Op("runtime_test_unknown", "u", {Var("x")})});
  EXPECT_ERROR(exec.Run({{"x", Filled({2}, 1)}}),
               "unknown shape at node 'u' (op runtime_test_unknown): output 0 is [?,?]");
}

/*! \brief One run of runtime_test_random over a [16] input. */
std::vector<float> RandomValues(Executor* exec) { return exec->Run({{"x", Filled({16}, 0)}})[0].ToVector<float>(); }

TEST(ExecutorTest, SeedsDifferPerRunAndReproduceAcrossExecutors) {
  auto make = [](uint64_t seed, const std::map<std::string, std::string>& attrs) {
    SessionOptions options = UnfusedOptions();
    options.seed = seed;
    return MakeExecutor({Op("runtime_test_random", "r", {Var("x")}, attrs)}, NewStore(), options);
  };
  Executor a = make(1, {}), b = make(1, {}), c = make(2, {}), d = make(1, {{"seed", "7"}});
  std::vector<float> a1 = RandomValues(&a), a2 = RandomValues(&a);
  EXPECT_NE(a1, a2) << "a random op differs run to run";
  EXPECT_EQ(RandomValues(&b), a1) << "same graph, seed and run count: same values";
  EXPECT_EQ(RandomValues(&b), a2);
  EXPECT_NE(RandomValues(&c), a1) << "the graph seed matters";
  EXPECT_NE(RandomValues(&d), a1) << "the op's seed attribute matters";
}

TEST(ExecutorTest, OverriddenPipelineMustPlanMemory) {
  SessionOptions options = UnfusedOptions();
  options.passes = {"InferShape", "InferType"};
  Executor exec = MakeExecutor({Op("runtime_test_scale", "y", {Var("x")})}, NewStore(), options);
  EXPECT_ERROR(exec.Run({{"x", Filled({2}, 1)}}), "did not provide graph attribute 'storage_id'");
}

TEST(ExecutorTest, DefaultPipelineOrdersMutationsThenInfersThenPlans) {
  Executor exec = MakeExecutor({Op("runtime_test_scale", "y", {Var("x")})}, NewStore(), SessionOptions());
  EXPECT_EQ(exec.Run({{"x", Filled({2}, 3)}})[0].ToVector<float>(), std::vector<float>({6, 6}));
  std::vector<std::string> passes;
  for (const PassTiming& t : exec.bound_graph().GetAttr<std::vector<PassTiming>>("pass_timings")) {
    passes.push_back(t.pass);
  }
  std::vector<std::string> registered = PassReg::ListNames();
  std::vector<std::string> expected{"OrderMutations", "InferShape", "InferType",
                                    "Vectorize",      "Simplify",   "ScheduleCollectives"};
  for (const char* fusion : {"Fusion", "CodeGen", "RTCGen"}) {
    if (std::find(registered.begin(), registered.end(), fusion) != registered.end()) expected.push_back(fusion);
  }
  expected.push_back("PlanMemory");
  EXPECT_EQ(passes, expected);
  EXPECT_EQ(exec.bound_graph().GetAttr<std::string>("target"), "cpu");
}

TEST(ExecutorTest, BadTargetIsAnError) {
  SessionOptions options;
  options.target = "tpu";
  EXPECT_ERROR(MakeExecutor({Var("x")}, NewStore(), options), "unknown device 'tpu'");
}

}  // namespace
}  // namespace ir
