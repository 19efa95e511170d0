// Training end to end on the CPU: softmax regression and a small conv net learn, and
// fused training follows the unfused loss curve step for step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <unordered_map>

#include "ir/autodiff.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

NodeEntry Input(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }
NodeEntry Param(const std::string& name) {
  return NodeEntry{Node::CreateVariable(name, {{"__kind__", "variable"}}), 0};
}

/*! \brief Adds an SGD step on every parameter: p = p - lr * dloss/dp, grouped as "train". */
NodeEntry SgdStep(const NodeEntry& loss, const std::vector<NodeEntry>& params, double lr) {
  std::vector<NodeEntry> grads = Gradients({loss}, params);
  std::vector<NodeEntry> updates;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].node->attrs.name;
    NodeEntry step = MakeNode("multiply_scalar", "lr_" + name, {grads[i]}, {{"scalar", std::to_string(lr)}});
    updates.push_back(MakeNode("assign_sub", "sgd_" + name, {params[i], step}));
  }
  return MakeNode("group", "train", updates);
}

/*! \brief Points around 3 class centres in `dim` dimensions; labels are the centre index. */
std::unordered_map<std::string, NDArray> Blobs(int64_t batch, int64_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.5f);
  NDArray x(Shape{batch, dim}, DType::kFloat32);
  NDArray y(Shape{batch}, DType::kInt32);
  for (int64_t i = 0; i < batch; ++i) {
    int32_t label = static_cast<int32_t>(rng() % 3);
    y.data<int32_t>()[i] = label;
    for (int64_t j = 0; j < dim; ++j) {
      float centre = (j % 3 == label) ? 1.5f : -0.5f;
      x.data<float>()[i * dim + j] = centre + noise(rng);
    }
  }
  return {{"x", x}, {"labels", y}};
}

SessionOptions Options(bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  return options;
}

std::vector<float> Train(bool fusion, const NodeEntry& loss, const NodeEntry& train,
                         const std::map<std::string, NDArray>& init, int steps,
                         const std::function<std::unordered_map<std::string, NDArray>(int)>& batch) {
  Session sess(Options(fusion));
  for (const auto& kv : init) sess.variables().Set(kv.first, kv.second.CopyTo(Device::CPU()));
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    std::vector<NDArray> out = sess.Run({loss}, batch(step), {train.node});
    losses.push_back(out[0].ToVector<float>()[0]);
  }
  return losses;
}

TEST(TrainingTest, SoftmaxRegressionLearnsAndFusionFollowsTheSameCurve) {
  const int64_t dim = 12, batch = 64;
  NodeEntry w = Param("w"), b = Param("b");
  NodeEntry logits = MakeNode("bias_add", "logits", {MakeNode("matmul", "xw", {Input("x"), w}), b});
  NodeEntry xent = MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {logits, Input("labels")});
  NodeEntry loss = MakeNode("mean", "loss", {xent});
  NodeEntry train = SgdStep(loss, {w, b}, 0.5);
  std::map<std::string, NDArray> init = {{"w", test::RandomArray(Shape{dim, 3}, DType::kFloat32, 1, -0.1, 0.1)},
                                         {"b", NDArray(Shape{3}, DType::kFloat32)}};
  std::memset(init["b"].data<float>(), 0, 3 * sizeof(float));
  auto batches = [&](int step) { return Blobs(batch, dim, 100 + step); };
  std::vector<float> unfused = Train(false, loss, train, init, 40, batches);
  std::vector<float> fused = Train(true, loss, train, init, 40, batches);
  EXPECT_GT(unfused.front(), 0.9f) << "starts near log(3)";
  EXPECT_LT(unfused.back(), 0.1f) << "separable blobs are learned";
  for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], unfused[i], 1e-4) << "step " << i;
}

TEST(TrainingTest, ConvNetLearnsAndFusionFollowsTheSameCurve) {
  // 6x6x3 "images" whose channel means carry the class: conv3x3 -> relu -> maxpool -> dense.
  const int64_t batch = 32;
  NodeEntry w1 = Param("w1"), b1 = Param("b1"), w2 = Param("w2"), b2 = Param("b2");
  NodeEntry conv = MakeNode("conv2d", "conv", {Input("x"), w1}, {{"padding", "SAME"}});
  NodeEntry act = MakeNode("relu", "act", {MakeNode("bias_add", "conv_b", {conv, b1})});
  NodeEntry pool = MakeNode("max_pool2d", "pool", {act}, {{"ksize", "2"}, {"strides", "2"}});
  NodeEntry flat = MakeNode("reshape", "flat", {pool}, {{"shape", "(-1, 36)"}});
  NodeEntry logits = MakeNode("bias_add", "logits", {MakeNode("matmul", "fc", {flat, w2}), b2});
  NodeEntry loss = MakeNode("mean", "loss",
                            {MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {logits, Input("labels")})});
  NodeEntry train = SgdStep(loss, {w1, b1, w2, b2}, 0.2);
  std::map<std::string, NDArray> init = {{"w1", test::RandomArray(Shape{3, 3, 3, 4}, DType::kFloat32, 2, -0.3, 0.3)},
                                         {"b1", test::RandomArray(Shape{4}, DType::kFloat32, 3, 0, 0.1)},
                                         {"w2", test::RandomArray(Shape{36, 3}, DType::kFloat32, 4, -0.2, 0.2)},
                                         {"b2", test::RandomArray(Shape{3}, DType::kFloat32, 5, -0.01, 0.01)}};
  // Each image's channel c is blob coordinate c plus a fixed spatial pattern.
  auto images = [&](int step) {
    auto feeds = Blobs(batch, 3, 200 + step);
    const float* centre = feeds["x"].data<float>();
    NDArray x(Shape{batch, 6, 6, 3}, DType::kFloat32);
    float* p = x.data<float>();
    for (int64_t i = 0; i < batch; ++i) {
      for (int64_t k = 0; k < 36; ++k) {
        for (int64_t c = 0; c < 3; ++c) p[(i * 36 + k) * 3 + c] = centre[i * 3 + c] + 0.1f * std::sin(float(k + c));
      }
    }
    feeds["x"] = x;
    return feeds;
  };
  std::vector<float> unfused = Train(false, loss, train, init, 30, images);
  std::vector<float> fused = Train(true, loss, train, init, 30, images);
  EXPECT_LT(unfused.back(), 0.5f * unfused.front()) << "the loss at least halves";
  for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], unfused[i], 1e-3 * (1 + unfused[i])) << "step " << i;
}

}  // namespace
}  // namespace ir
