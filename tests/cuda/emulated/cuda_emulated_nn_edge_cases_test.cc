// The nn device kernels run as CUDA C by the emulator (256 work-items per group) against the
// CPU, on what cuda_emulation_test.cc does not reach: the random ops and dropout drawing the
// CPU's numbers, group reductions over rows longer than a group, and float64.
#include <gtest/gtest.h>

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

class CUDAEmulatedNNTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::InstallCUDAEmulator(); }
};

/*! \brief The fetches of one unfused run on `target` (seed 5, training), on the host. */
std::vector<NDArray> Fetch(const std::string& target, const std::vector<NodeEntry>& fetches,
                           const std::unordered_map<std::string, NDArray>& feeds) {
  SessionOptions options;
  options.target = target;
  options.fusion = false;
  options.seed = 5;
  Session session(options);
  std::vector<NDArray> results = session.Run(fetches, feeds);
  for (NDArray& r : results) r = r.CopyTo(Device::CPU());
  EXPECT_EQ(session.last_stats().host_fallbacks, 0u) << "a kernel ran on the host";
  return results;
}

void ExpectSameAsCPU(const std::vector<NodeEntry>& fetches, const std::unordered_map<std::string, NDArray>& feeds,
                     double tol) {
  std::vector<NDArray> expected = Fetch("cpu", fetches, feeds), got = Fetch("cuda", fetches, feeds);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(StrCat("fetch ", i));
    test::ExpectNear(got[i], expected[i], tol, tol);
  }
}

TEST_F(CUDAEmulatedNNTest, RandomOpsAndDropoutDrawTheCpuNumbers) {
  for (const char* dtype : {"float32", "float64"}) {
    SCOPED_TRACE(dtype);
    std::string type = dtype;
    NodeEntry u = Apply("random_uniform", "u", {}, {{"shape", "(7,9)"}, {"dtype", type}, {"minval", "-3"}});
    NodeEntry n = Apply("random_normal", "n", {}, {{"shape", "(33)"}, {"dtype", type}, {"seed", "2"}});
    NodeEntry t = Apply("truncated_normal", "t", {}, {{"shape", "(301)"}, {"dtype", type}, {"stddev", "2"}});
    NodeEntry d = Apply("dropout", "d", {Var("x")}, {{"keep_prob", "0.6"}});
    ExpectSameAsCPU({u, n, t, d, NodeEntry{d.node, 1}},
                    {{"x", test::RandomArray({6, 11}, type == "float32" ? DType::kFloat32 : DType::kFloat64, 1)}},
                    1e-6);
  }
}

TEST_F(CUDAEmulatedNNTest, RowsLongerThanAGroupInFloat64) {
  NodeEntry x = Var("x"), labels = Var("labels");
  NodeEntry ce = Apply("sparse_softmax_cross_entropy_with_logits", "ce", {x, labels}, {}, 0);
  std::vector<NodeEntry> fetches = {Apply("softmax", "sm", {x}), Apply("log_softmax", "lsm", {x}), ce,
                                    NodeEntry{ce.node, 1}};
  ExpectSameAsCPU(fetches,
                  {{"x", test::RandomArray({3, 700}, DType::kFloat64, 1, -30, 30)},
                   {"labels", NDArray::FromVector<int64_t>({3}, {699, 0, 345})}},
                  1e-10);
}

TEST_F(CUDAEmulatedNNTest, FilterGradientOfAFilterLargerThanTheDeviceRunsAtOnceSumsPerWorkItem) {
  // 3x3x64x128 = 73,728 weight elements, more than the emulated device runs at once (65,536).
  NodeEntry x = Var("x"), dy = Var("dy"), w = Var("w");
  std::map<std::string, std::string> attrs = {{"padding", "SAME"}};
  ExpectSameAsCPU({Apply("conv2d_backprop_filter", "dw", {x, dy, w}, attrs)},
                  {{"x", test::RandomArray({1, 3, 4, 64}, DType::kFloat32, 1)},
                   {"dy", test::RandomArray({1, 3, 4, 128}, DType::kFloat32, 2)},
                   {"w", test::RandomArray({3, 3, 64, 128}, DType::kFloat32, 3)}},
                  1e-4);
}

TEST_F(CUDAEmulatedNNTest, FilterGradientSumsLongerThanAGroupInFloat64) {
  NodeEntry x = Var("x"), dy = Var("dy"), w = Var("w");
  std::map<std::string, std::string> attrs = {{"data_format", "NCHW"}, {"padding", "SAME"}, {"dilations", "2"}};
  ExpectSameAsCPU({Apply("conv2d_backprop_filter", "dw", {x, dy, w}, attrs)},
                  {{"x", test::RandomArray({2, 3, 15, 14}, DType::kFloat64, 1)},
                   {"dy", test::RandomArray({2, 4, 15, 14}, DType::kFloat64, 2)},
                   {"w", test::RandomArray({3, 3, 3, 4}, DType::kFloat64, 3)}},
                  1e-10);
}

}  // namespace
}  // namespace ir
