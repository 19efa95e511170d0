#include <gtest/gtest.h>

#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Filled;
using runtime_test::Op;
using runtime_test::UnfusedOptions;
using runtime_test::Var;
using runtime_test::Variable;

std::vector<float> Values(const NDArray& a) { return a.ToVector<float>(); }

TEST(SessionTest, AssignInitializesAndAssignAddAccumulates) {
  Session sess(UnfusedOptions());
  NodeEntry w = Variable("W");
  NodeEntry init = Op("assign", "init", {w, Var("init_value")});
  NodeEntry step = Op("assign_add", "step", {w, Op("runtime_test_scale", "twice", {Var("delta")})});
  std::vector<NDArray> out = sess.Run({}, {{"init_value", Filled({3}, 1)}}, {init.node});
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(Values(sess.variables().Get("W")), std::vector<float>({1, 1, 1}));
  for (int i = 0; i < 3; ++i) sess.Run({}, {{"delta", Filled({3}, 0.5f)}}, {step.node});
  EXPECT_EQ(Values(sess.variables().Get("W")), std::vector<float>({4, 4, 4}));
  EXPECT_FALSE(sess.last_stats().bound) << "the step's executor was bound by its first run";
  NodeEntry read = Op("runtime_test_scale", "read", {w});
  EXPECT_EQ(Values(sess.Run({read})[0]), std::vector<float>({8, 8, 8}));
  EXPECT_EQ(sess.variables().Names(), std::vector<std::string>({"W"}));
}

TEST(SessionTest, AFeedReplacesTheOpNodeItNames) {
  // tf.placeholder_with_default: an identity of the default, which a run may feed instead.
  Session sess(UnfusedOptions());
  NodeEntry with_default = Op("identity", "training", {Op("runtime_test_scale", "default", {Var("x")})});
  NodeEntry y = Op("runtime_test_add", "y", {with_default, Var("x")});
  EXPECT_EQ(Values(sess.Run({y}, {{"x", Filled({2}, 1)}})[0]), std::vector<float>({3, 3}));
  EXPECT_EQ(Values(sess.Run({y}, {{"x", Filled({2}, 1)}, {"training", Filled({2}, 10)}})[0]),
            std::vector<float>({11, 11}));
  EXPECT_EQ(Values(sess.Run({with_default}, {{"training", Filled({2}, 4)}})[0]), std::vector<float>({4, 4}))
      << "fetching the fed node gives the fed value; x need not be fed";
  EXPECT_EQ(Values(sess.Run({y}, {{"x", Filled({2}, 2)}})[0]), std::vector<float>({6, 6})) << "unfed again";
}

TEST(SessionTest, AssignSubAndTheirOutputsAreTheNewValue) {
  Session sess(UnfusedOptions());
  sess.variables().Set("W", Filled({2}, 10));
  NodeEntry w = Variable("W");
  NodeEntry sub = Op("assign_sub", "sub", {w, Var("d")});
  EXPECT_EQ(Values(sess.Run({sub}, {{"d", Filled({2}, 3)}})[0]), std::vector<float>({7, 7}));
  EXPECT_EQ(Values(sess.variables().Get("W")), std::vector<float>({7, 7}));
}

TEST(SessionTest, ReadsRunBeforeWritesTheyDoNotDependOn) {
  Session sess(UnfusedOptions());
  sess.variables().Set("W", Filled({2}, 1));
  NodeEntry w = Variable("W");
  NodeEntry upd = Op("assign", "upd", {w, Var("v")});
  NodeEntry read = Op("runtime_test_scale", "read", {w});
  // Post-order lists upd first; the read still sees W from before the write.
  std::vector<NDArray> out = sess.Run({upd, read}, {{"v", Filled({2}, 5)}});
  EXPECT_EQ(Values(out[0]), std::vector<float>({5, 5}));
  EXPECT_EQ(Values(out[1]), std::vector<float>({2, 2}));
}

TEST(SessionTest, OrderingOneSubgraphDoesNotLeakIntoAnother) {
  Session sess(UnfusedOptions());
  sess.variables().Set("W", Filled({2}, 1));
  NodeEntry w = Variable("W");
  NodeEntry upd = Op("assign", "upd", {w, Var("v")});
  NodeEntry read = Op("runtime_test_add", "read", {w, Var("x")});
  sess.Run({upd, read}, {{"v", Filled({2}, 5)}, {"x", Filled({2}, 0)}});
  // Had the first run's ordering edited the shared nodes, upd would now need x.
  sess.Run({}, {{"v", Filled({2}, 7)}}, {upd.node});
  EXPECT_EQ(Values(sess.variables().Get("W")), std::vector<float>({7, 7}));
}

TEST(SessionTest, TokensOfGroupAndNoOpAreInt32Zero) {
  Session sess(UnfusedOptions());
  NodeEntry w = Variable("W");
  NodeEntry init = Op("assign", "init", {w, Var("v")});
  NodeEntry grouped = Op("group", "all", {init, Op("runtime_test_scale", "s", {Var("x")})});
  NodeEntry nothing = Op("no_op", "nothing", {});
  nothing.node->control_deps.push_back(grouped.node);
  std::vector<NDArray> out = sess.Run({grouped, nothing}, {{"v", Filled({2}, 3)}, {"x", Filled({4}, 1)}});
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].shape(), Shape::Scalar());
  EXPECT_EQ(out[0].ToVector<int32_t>(), std::vector<int32_t>({0}));
  EXPECT_EQ(out[1].ToVector<int32_t>(), std::vector<int32_t>({0}));
  EXPECT_EQ(Values(sess.variables().Get("W")), std::vector<float>({3, 3}));
}

TEST(SessionTest, AssignAddRejectsBool) {
  Session sess(UnfusedOptions());
  sess.variables().Set("B", NDArray::FromVector<bool>({1}, {true}));
  NodeEntry bad = Op("assign_add", "bad", {Variable("B"), Var("b")});
  EXPECT_ERROR(sess.Run({bad}, {{"b", NDArray::FromVector<bool>({1}, {true})}}), "dtype bool is not supported");
}

TEST(SessionTest, AssignShapeMustMatchTheVariable) {
  Session sess(UnfusedOptions());
  sess.variables().Set("W", Filled({2}, 1));
  NodeEntry upd = Op("assign", "upd", {Variable("W"), Var("v")});
  EXPECT_ERROR(sess.Run({upd}, {{"v", Filled({3}, 1)}}), "cannot bind the graph");
}

TEST(SessionTest, CachesOneExecutorPerFetchesAndTargets) {
  Session sess(UnfusedOptions());
  NodeEntry y = Op("runtime_test_scale", "y", {Var("x")});
  NodeEntry z = Op("runtime_test_scale", "z", {y});
  sess.Run({y}, {{"x", Filled({2}, 1)}});
  EXPECT_TRUE(sess.last_stats().bound);
  sess.Run({z}, {{"x", Filled({2}, 1)}});
  EXPECT_TRUE(sess.last_stats().bound);
  std::vector<NDArray> again = sess.Run({y}, {{"x", Filled({2}, 2)}});
  EXPECT_FALSE(sess.last_stats().bound);
  EXPECT_EQ(Values(again[0]), std::vector<float>({4, 4}));
  EXPECT_TRUE(sess.last_graph().HasAttr("storage_id"));
}

TEST(SessionTest, FetchOfAMissingOutputIsAnError) {
  Session sess(UnfusedOptions());
  NodeEntry y = Op("runtime_test_scale", "y", {Var("x")});
  EXPECT_ERROR(sess.Run({NodeEntry{y.node, 3}}, {{"x", Filled({2}, 1)}}), "reads output 3 of node 'y'");
}

TEST(SessionTest, FusedTargetsNamedOnlyByTheRunAreComputed) {
  Session sess;  // fusion on: a target's group has no data consumer, only the run's control dependency
  NodeEntry y = Op("exp", "y", {Op("negative", "neg", {Var("x")})});
  EXPECT_TRUE(sess.Run({}, {{"x", Filled({3}, 0)}}, {y.node}).empty());
  sess.variables().Set("W", Filled({3}, 1));
  NodeEntry step = Op("assign_add", "step", {Variable("W"), Op("exp", "e", {Var("x")})});
  sess.Run({}, {{"x", Filled({3}, 0)}}, {step.node, y.node});
  EXPECT_EQ(Values(sess.variables().Get("W")), std::vector<float>({2, 2, 2}));
}

TEST(SessionTest, NothingToRunIsAnError) {
  Session sess;
  EXPECT_ERROR(sess.Run({}), "nothing to fetch");
  EXPECT_ERROR(sess.last_graph(), "has not run");
}

}  // namespace
}  // namespace ir
