// The device kernels of depthwise convolution, lrn, layer_norm, top_k, mirror_pad and space/batch (src/ops/)
// run as CUDA C by the emulator against the CPU kernels, with no host fallback.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_emulator.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

using test::Apply;
using test::Var;

class CUDAEmulatedNNExtraTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::InstallCUDAEmulator(); }
};

std::vector<NDArray> Fetch(const std::string& target, const std::vector<NodeEntry>& fetches,
                           const std::unordered_map<std::string, NDArray>& feeds) {
  SessionOptions options;
  options.target = target;
  options.fusion = false;
  Session session(options);
  std::vector<NDArray> results = session.Run(fetches, feeds);
  for (NDArray& r : results) r = r.CopyTo(Device::CPU());
  EXPECT_EQ(session.last_stats().host_fallbacks, 0u) << "a kernel ran on the host";
  return results;
}

void ExpectSameAsCPU(const std::vector<NodeEntry>& fetches, const std::unordered_map<std::string, NDArray>& feeds) {
  std::vector<NDArray> expected = Fetch("cpu", fetches, feeds), got = Fetch("cuda", fetches, feeds);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(StrCat("fetch ", i));
    test::ExpectNear(got[i], expected[i], 1e-10, 1e-10);
  }
}

TEST_F(CUDAEmulatedNNExtraTest, DepthwiseConvolutionPasses) {
  for (const char* format : {"NHWC", "NCHW"}) {
    for (const std::map<std::string, std::string>& a :
         {std::map<std::string, std::string>{{"padding", "SAME"}, {"strides", "(2)"}},
          std::map<std::string, std::string>{{"padding", "VALID"}, {"dilations", "(2,1)"}}}) {
      std::map<std::string, std::string> attrs = a;
      attrs["data_format"] = format;
      NodeEntry x = Var("x"), w = Var("w");
      NodeEntry y = Apply("depthwise_conv2d", "y", {x, w}, attrs);
      Shape xs = std::string(format) == "NHWC" ? Shape{2, 7, 6, 3} : Shape{2, 3, 7, 6};
      std::vector<NDArray> cpu = Fetch("cpu", {y},
                                       {{"x", test::RandomArray(xs, DType::kFloat64, 1)},
                                        {"w", test::RandomArray({3, 2, 3, 2}, DType::kFloat64, 2)}});
      NodeEntry dy = Var("dy");
      ExpectSameAsCPU({y, Apply("depthwise_conv2d_backprop_input", "dx", {dy, w, x}, attrs),
                       Apply("depthwise_conv2d_backprop_filter", "dw", {x, dy, w}, attrs)},
                      {{"x", test::RandomArray(xs, DType::kFloat64, 1)},
                       {"w", test::RandomArray({3, 2, 3, 2}, DType::kFloat64, 2)},
                       {"dy", test::RandomArray(cpu[0].shape(), DType::kFloat64, 3)}});
    }
  }
}

TEST_F(CUDAEmulatedNNExtraTest, LRNTopKInTopKMirrorPadSpaceBatch) {
  NodeEntry x = Var("x"), dy = Var("dy"), v = Var("v");
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::map<std::string, std::string> lrn = {{"depth_radius", "2"}, {"alpha", "0.3"}, {"beta", "0.75"}};
  NodeEntry top = Apply("top_k", "top", {v}, {{"k", "3"}});
  NodeEntry ties = Apply("top_k", "ties", {Var("t")}, {{"k", "4"}});
  std::map<std::string, std::string> pad = {{"paddings", "(1,2,0,0,3,2,1,0)"}, {"mode", "SYMMETRIC"}};
  std::map<std::string, std::string> reflect = {{"paddings", "(1,1,0,1,1,2,0,0)"}, {"mode", "REFLECT"}};
  std::map<std::string, std::string> sb = {{"block_shape", "(2,3)"}, {"paddings", "(1,0,0,1)"}};
  NodeEntry s2b = Apply("space_to_batch_nd", "s2b", {x}, sb);
  ExpectSameAsCPU(
      {Apply("lrn", "lrn", {x}, lrn), Apply("lrn_grad", "lrn_grad", {dy, x}, lrn), top, NodeEntry{top.node, 1},
       Apply("top_k_grad", "top_grad", {Var("g"), NodeEntry{top.node, 1}, v}), ties, NodeEntry{ties.node, 1},
       Apply("mirror_pad", "mp", {x}, pad), Apply("mirror_pad", "mr", {x}, reflect),
       Apply("mirror_pad_grad", "mpg", {Var("py")}, pad), s2b, Apply("batch_to_space_nd", "b2s", {s2b}, sb),
       Apply("in_top_k", "in32", {Var("p"), Var("t32")}, {{"k", "2"}}),
       Apply("in_top_k", "in64", {Var("p"), Var("t64")}, {{"k", "1"}})},
      {{"x", test::RandomArray({2, 3, 5, 9}, DType::kFloat64, 1)},
       {"dy", test::RandomArray({2, 3, 5, 9}, DType::kFloat64, 2)},
       {"v", test::RandomArray({4, 7}, DType::kFloat64, 3)},
       {"g", test::RandomArray({4, 3}, DType::kFloat64, 4)},
       {"t", NDArray::FromVector<double>({2, 5}, {1, 3, 3, -1, 3, 5, 4, 5, 5, 0})},
       {"py", test::RandomArray({5, 3, 10, 10}, DType::kFloat64, 5)},
       {"p", NDArray::FromVector<float>({4, 3}, {0.1f, 0.8f, 0.1f, 0.3f, 0.3f, 0.4f, 1, nan, 0, 2, 2, 1})},
       {"t32", NDArray::FromVector<int32_t>({4}, {1, 0, 1, 2})},
       {"t64", NDArray::FromVector<int64_t>({4}, {1, 2, 0, 7})}});
}

TEST_F(CUDAEmulatedNNExtraTest, LayerNormAndItsGradient) {
  NodeEntry x = Var("x"), g = Var("g"), b = Var("b"), dy = Var("dy"), dm = Var("dm"), dr = Var("dr");
  NodeEntry y = Apply("layer_norm", "ln", {x, g, b}, {{"epsilon", "0.01"}});
  NodeEntry mean{y.node, 1}, rstd{y.node, 2};
  NodeEntry grad = Apply("layer_norm_grad", "ln_grad", {dy, x, g, mean, rstd});
  NodeEntry stat = Apply("layer_norm_grad", "ln_grad_stat", {dy, x, g, mean, rstd, dm, dr}, {{"stat_grads", "1"}});
  ExpectSameAsCPU({y, mean, rstd, grad, NodeEntry{grad.node, 1}, NodeEntry{grad.node, 2}, stat, NodeEntry{stat.node, 1},
                   NodeEntry{stat.node, 2}},
                  {{"x", test::RandomArray({3, 4, 9}, DType::kFloat64, 1)},
                   {"g", test::RandomArray({9}, DType::kFloat64, 2)},
                   {"b", test::RandomArray({9}, DType::kFloat64, 3)},
                   {"dy", test::RandomArray({3, 4, 9}, DType::kFloat64, 4)},
                   {"dm", test::RandomArray({3, 4}, DType::kFloat64, 5)},
                   {"dr", test::RandomArray({3, 4}, DType::kFloat64, 6)}});
}

}  // namespace
}  // namespace ir
