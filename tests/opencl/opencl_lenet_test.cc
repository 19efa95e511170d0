// A LeNet training step on the OpenCL device equals the CPU's, with no host fallback.
#include <gtest/gtest.h>

#include <cmath>
#include <unordered_map>

#include "ir/autodiff.h"
#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "runtime/device/kernel_selection.h"

namespace ir {
namespace {

constexpr int64_t kBatch = 4;

/*!
 * \brief conv5x5 6 -> relu -> maxpool -> conv5x5 16 -> relu -> maxpool -> fc120 -> fc84 -> fc10,
 * softmax cross entropy, SGD.
 */
struct LeNet {
  std::vector<std::pair<std::string, Shape>> params = {
      {"w1", {5, 5, 1, 6}}, {"b1", {6}},       {"w2", {5, 5, 6, 16}}, {"b2", {16}},     {"w3", {256, 120}},
      {"b3", {120}},        {"w4", {120, 84}}, {"b4", {84}},          {"w5", {84, 10}}, {"b5", {10}}};
  NodeEntry loss;
  NodeEntry train;

  LeNet() {
    std::map<std::string, NodeEntry> p;
    for (const auto& kv : params) {
      p[kv.first] = NodeEntry{Node::CreateVariable(kv.first, {{"__kind__", "variable"}}), 0};
    }
    NodeEntry x = NodeEntry{Node::CreateVariable("images"), 0};
    NodeEntry labels = NodeEntry{Node::CreateVariable("labels"), 0};
    NodeEntry h = ConvBlock("c1", x, p["w1"], p["b1"]);
    h = ConvBlock("c2", h, p["w2"], p["b2"]);
    h = MakeNode("reshape", "flat", {h}, {{"shape", "(-1,256)"}});
    h = Dense("f3", h, p["w3"], p["b3"], true);
    h = Dense("f4", h, p["w4"], p["b4"], true);
    NodeEntry logits = Dense("f5", h, p["w5"], p["b5"], false);
    NodeEntry xent = MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {logits, labels});
    loss = MakeNode("mean", "loss", {xent});
    std::vector<NodeEntry> xs;
    for (const auto& kv : params) xs.push_back(p[kv.first]);
    std::vector<NodeEntry> grads = Gradients({loss}, xs);
    std::vector<NodeEntry> updates;
    for (size_t i = 0; i < xs.size(); ++i) {
      const std::string& name = params[i].first;
      NodeEntry step = MakeNode("multiply_scalar", "lr_" + name, {grads[i]}, {{"scalar", "0.1"}});
      updates.push_back(MakeNode("assign", "sgd_" + name, {xs[i], MakeNode("subtract", "new_" + name, {xs[i], step})}));
    }
    train = MakeNode("group", "train", updates);
  }

  static NodeEntry ConvBlock(const std::string& name, const NodeEntry& x, const NodeEntry& w, const NodeEntry& b) {
    NodeEntry conv = MakeNode("conv2d", name, {x, w});
    NodeEntry act = MakeNode("relu", name + "_relu", {MakeNode("bias_add", name + "_bias", {conv, b})});
    return MakeNode("max_pool2d", name + "_pool", {act}, {{"ksize", "2"}, {"strides", "2"}});
  }

  static NodeEntry Dense(const std::string& name, const NodeEntry& x, const NodeEntry& w, const NodeEntry& b,
                         bool relu) {
    NodeEntry y = MakeNode("bias_add", name + "_bias", {MakeNode("matmul", name, {x, w}), b});
    return relu ? MakeNode("relu", name + "_relu", {y}) : y;
  }

  void Initialize(Session* sess) const {
    uint64_t seed = 1;
    for (const auto& kv : params) {
      const Shape& shape = kv.second;
      double fan_in = static_cast<double>(shape.Size() / shape[shape.ndim() - 1]);
      double scale = shape.ndim() == 1 ? 0.1 : 1.0 / std::sqrt(fan_in);
      sess->variables().Set(kv.first, test::RandomArray(kv.second, DType::kFloat32, seed++, -scale, scale));
    }
  }
};

std::unordered_map<std::string, NDArray> Batch(uint64_t seed) {
  std::vector<int32_t> labels;
  for (int64_t i = 0; i < kBatch; ++i) labels.push_back(static_cast<int32_t>((seed * 7 + i * 3) % 10));
  return {{"images", test::RandomArray({kBatch, 28, 28, 1}, DType::kFloat32, seed, 0, 1)},
          {"labels", NDArray::FromVector<int32_t>({kBatch}, labels)}};
}

/*! \brief Runs `steps` training steps on the CPU (unfused) and on OpenCL and compares loss and weights. */
void ExpectTrainingMatchesCpu(bool fusion, int steps) {
  LeNet net;
  SessionOptions cpu_options;
  cpu_options.fusion = false;
  SessionOptions cl_options;
  cl_options.target = "opencl";
  cl_options.fusion = fusion;
  Session cpu(cpu_options), device(cl_options);
  net.Initialize(&cpu);
  net.Initialize(&device);
  int64_t generic_fallbacks = device::DerivedHostFallbacks();
  for (int step = 1; step <= steps; ++step) {
    SCOPED_TRACE(StrCat("step ", step));
    std::vector<NDArray> expected = cpu.Run({net.loss}, Batch(step), {net.train.node});
    std::vector<NDArray> got = device.Run({net.loss}, Batch(step), {net.train.node});
    EXPECT_EQ(device.last_stats().host_fallbacks, 0u);
    test::ExpectNear(got[0].CopyTo(Device::CPU()), expected[0], 1e-5, 1e-4);
    for (const auto& kv : net.params) {
      SCOPED_TRACE(kv.first);
      const NDArray& value = device.variables().Get(kv.first);
      EXPECT_EQ(value.device().type, DeviceType::kOpenCL) << "variables stay on the device";
      test::ExpectNear(value.CopyTo(Device::CPU()), cpu.variables().Get(kv.first), 1e-5, 1e-3);
    }
  }
  EXPECT_EQ(device::DerivedHostFallbacks(), generic_fallbacks);
  EXPECT_EQ(device.last_graph().GetAttrOr<std::string>("kernel_source", "").empty(), !fusion);
}

TEST(OpenCLLeNetTest, FusedTrainingStepsMatchTheCpuWithoutHostFallbacks) {
  IR_REQUIRE_OPENCL();
  ExpectTrainingMatchesCpu(true, 2);
}

TEST(OpenCLLeNetTest, UnfusedTrainingStepRunsOnTheDeviceToo) {
  IR_REQUIRE_OPENCL();
  ExpectTrainingMatchesCpu(false, 1);
}

}  // namespace
}  // namespace ir
