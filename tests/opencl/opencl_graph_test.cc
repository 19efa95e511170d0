// Graphs on the OpenCL device: generated elementwise kernels with fusion off, and random
// elementwise/broadcast/reduction graphs through Fusion + CodeGen + RTCGen, against the CPU.
#include <gtest/gtest.h>

#include <unordered_map>

#include "ir/codegen.h"
#include "ir/graph.h"
#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "ops/random_graph.h"
#include "passes/fusion_plan.h"
#include "runtime/device/kernel_selection.h"
#include "test_util.h"

namespace ir {
namespace {

using Feeds = std::unordered_map<std::string, NDArray>;

SessionOptions Options(const std::string& target, bool fusion) {
  SessionOptions options;
  options.target = target;
  options.fusion = fusion;
  return options;
}

NodeEntry Placeholder(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

/*! \brief Runs `fetches` on the CPU unfused and on `target`, and expects equal results. */
RunStats ExpectSameAsCpu(const std::vector<NodeEntry>& fetches, const Feeds& feeds, const SessionOptions& options,
                         double tol = 1e-5) {
  Session cpu(Options("cpu", false)), device(options);
  std::vector<NDArray> expected = cpu.Run(fetches, feeds);
  std::vector<NDArray> got = device.Run(fetches, feeds);
  for (size_t i = 0; i < fetches.size(); ++i) {
    SCOPED_TRACE(StrCat("fetch ", i, " (", fetches[i].node->attrs.name, ")"));
    EXPECT_EQ(got[i].device().type, DeviceType::kOpenCL);
    test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], tol, tol);
  }
  return device.last_stats();
}

TEST(OpenCLGraphTest, ElementwiseOpsRunGeneratedKernelsWithFusionOff) {
  IR_REQUIRE_OPENCL();
  NodeEntry x = Placeholder("x"), y = Placeholder("y");
  NodeEntry s = MakeNode("sigmoid", "s", {x});
  NodeEntry b = MakeNode("add", "b", {s, y});
  NodeEntry w = MakeNode("where", "w", {MakeNode("greater", "g", {b, MakeNode("zeros_like", "z", {b})}), b, s});
  NodeEntry c = MakeNode("cast", "c", {w}, {{"dtype", "int32"}});
  Feeds feeds{{"x", test::RandomArray({3, 4}, DType::kFloat32, 1, -3, 3)},
              {"y", test::RandomArray({4}, DType::kFloat32, 2, -3, 3)}};
  RunStats stats = ExpectSameAsCpu({b, w, c}, feeds, Options("opencl", false));
  EXPECT_EQ(stats.host_fallbacks, 0u);
  // Another session binds the same graph: every kernel comes from the cache.
  int64_t compilations = KernelCache::Global().stats().compilations;
  ExpectSameAsCpu({b, w, c}, feeds, Options("opencl", false));
  EXPECT_EQ(KernelCache::Global().stats().compilations, compilations);
}

TEST(OpenCLGraphTest, OpsWithoutDeviceCodeFallBackCounted) {
  IR_REQUIRE_OPENCL();
  // power has no generated code for integers: the generic kernel runs it on host copies.
  int64_t before = device::DerivedHostFallbacks();
  NodeEntry p = MakeNode("power", "p", {Placeholder("a"), Placeholder("b")});
  Feeds feeds{{"a", NDArray::FromVector<int32_t>({3}, {2, -3, 4})},
              {"b", NDArray::FromVector<int32_t>({3}, {3, 2, 0})}};
  ExpectSameAsCpu({p}, feeds, Options("opencl", false));
  EXPECT_EQ(device::DerivedHostFallbacks(), before + 1);
}

TEST(OpenCLGraphTest, FusedRandomGraphsMatchUnfusedCpu) {
  IR_REQUIRE_OPENCL();
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(StrCat("graph seed ", seed));
    test::RandomGraph graph(seed);
    Session device(Options("opencl", true));
    Session cpu(Options("cpu", false));
    std::vector<NDArray> got = device.Run(graph.fetches(), graph.feeds());
    std::vector<NDArray> expected = cpu.Run(graph.fetches(), graph.feeds());
    for (size_t i = 0; i < got.size(); ++i) test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], 1e-5, 1e-4);
    EXPECT_EQ(device.last_stats().host_fallbacks, 0u);
    EXPECT_FALSE(device.last_graph().GetAttr<std::string>("kernel_source").empty()) << "nothing was fused";
  }
}

TEST(OpenCLGraphTest, EpiloguesOfMatmulAndConvMatchUnfusedCpu) {
  IR_REQUIRE_OPENCL();
  // A dense layer forward (bias, relu), its relu gradient, a residual sigmoid, a conv layer.
  NodeEntry x = Placeholder("x"), w = Placeholder("w"), b = Placeholder("b"), g = Placeholder("g");
  NodeEntry h = MakeNode("relu", "h", {MakeNode("bias_add", "hb", {MakeNode("matmul", "mm", {x, w}), b})});
  NodeEntry dx = MakeNode("matmul", "dx", {g, w}, {{"transpose_b", "true"}});
  NodeEntry dh = MakeNode("relu_grad", "dh", {dx, x});
  NodeEntry w2 = Placeholder("w2");  // its own weights: Simplify would merge a second matmul(x, w) into mm
  NodeEntry mm2 = MakeNode("matmul", "mm2", {x, w2});
  NodeEntry res = MakeNode("sigmoid", "res", {MakeNode("add", "sum", {mm2, g})});
  NodeEntry img = Placeholder("img"), k = Placeholder("k");
  NodeEntry conv = MakeNode("conv2d", "conv", {img, k}, {{"padding", "SAME"}});
  NodeEntry act = MakeNode("relu", "act", {MakeNode("bias_add", "cb", {conv, b})});
  Feeds feeds{{"x", test::RandomArray({5, 12}, DType::kFloat32, 1)},
              {"w", test::RandomArray({12, 7}, DType::kFloat32, 2)},
              {"w2", test::RandomArray({12, 7}, DType::kFloat32, 7)},
              {"b", test::RandomArray({7}, DType::kFloat32, 3)},
              {"g", test::RandomArray({5, 7}, DType::kFloat32, 4)},
              {"img", test::RandomArray({2, 6, 5, 3}, DType::kFloat32, 5)},
              {"k", test::RandomArray({3, 3, 3, 7}, DType::kFloat32, 6)}};
  Session device(Options("opencl", true));
  std::vector<NodeEntry> fetches = {h, dh, res, mm2, act};
  RunStats stats = ExpectSameAsCpu(fetches, feeds, Options("opencl", true), 1e-4);
  EXPECT_EQ(stats.host_fallbacks, 0u);
  device.Run(fetches, feeds);
  size_t epilogues = 0;
  for (const auto& record : device.last_graph().GetAttr<std::vector<fusion::GroupRecord>>("fusion_groups")) {
    epilogues += record.kind == "epilogue";
  }
  EXPECT_EQ(epilogues, 4u) << "mm, dx, mm2 (kept as an output) and conv each anchor their epilogue";
}

}  // namespace
}  // namespace ir
