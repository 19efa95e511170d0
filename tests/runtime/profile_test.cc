#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Filled;
using runtime_test::Op;
using runtime_test::UnfusedOptions;
using runtime_test::Var;

/*! \brief A 384^3 matrix product (~57 MFLOP) beside a one-element scale: the product is slower by far. */
std::vector<NodeEntry> SlowAndFastNodes() {
  NodeEntry slow = Op("runtime_test_matmul", "slow", {Var("a"), Var("b")});
  NodeEntry fast = Op("runtime_test_scale", "fast", {Var("x")});
  return {slow, Op("runtime_test_scale", "after", {fast})};
}

std::unordered_map<std::string, NDArray> Feeds() {
  return {{"a", Filled({384, 384}, 1)}, {"b", Filled({384, 384}, 1)}, {"x", Filled({1}, 1)}};
}

TEST(ProfileTest, RecordsEveryNodeRunWithItsOpAndTime) {
  SessionOptions options = UnfusedOptions();
  options.profile = true;
  Executor exec(Graph(SlowAndFastNodes()), options, std::make_shared<VariableStore>());
  exec.Run(Feeds());
  RunStats stats = exec.last_stats();
  ASSERT_EQ(stats.nodes.size(), stats.kernels_launched);
  ASSERT_EQ(stats.nodes.size(), 3u);
  std::vector<std::string> names;
  for (const NodeProfile& node : stats.nodes) {
    names.push_back(node.name);
    EXPECT_GE(node.ms, 0) << node.name;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, std::vector<std::string>({"after", "fast", "slow"}));
  auto slowest = std::max_element(stats.nodes.begin(), stats.nodes.end(),
                                  [](const NodeProfile& a, const NodeProfile& b) { return a.ms < b.ms; });
  EXPECT_EQ(slowest->name, "slow");
  EXPECT_EQ(slowest->op, "runtime_test_matmul");
  EXPECT_LE(slowest->ms, stats.run_ms);
  exec.Run(Feeds());  // a second run records its own nodes, not the first run's too
  EXPECT_EQ(exec.last_stats().nodes.size(), 3u);
}

TEST(ProfileTest, RecordsNothingWhenOff) {
  Executor exec(Graph(SlowAndFastNodes()), UnfusedOptions(), std::make_shared<VariableStore>());
  exec.Run(Feeds());
  EXPECT_TRUE(exec.last_stats().nodes.empty());
  EXPECT_EQ(exec.last_stats().kernels_launched, 3u);
}

}  // namespace
}  // namespace ir
