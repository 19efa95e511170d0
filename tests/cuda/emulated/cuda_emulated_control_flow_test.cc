// Control flow on the emulated CUDA device against the CPU: cond, a while_loop over an
// elementwise chain, an RNN-like loop over tensor arrays and its gradient. Each body is bound
// once by its own executor, with the CUDA device target's kernels.
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_emulator.h"
#include "ir/runtime.h"
#include "ops/control_flow_graphs.h"
#include "runtime/device/kernel_selection.h"

namespace ir {
namespace {

using Feeds = std::unordered_map<std::string, NDArray>;

class CUDAEmulatedControlFlowTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::InstallCUDAEmulator(); }
};

/*! \brief Same values on the emulated CUDA device (fused and not) as on the CPU, no op on the host. */
void ExpectSameAsCpu(const std::vector<NodeEntry>& fetches, const Feeds& feeds, double tol = 1e-5) {
  Session cpu;
  std::vector<NDArray> expected = cpu.Run(fetches, feeds);
  for (bool fusion : {false, true}) {
    SessionOptions options;
    options.target = "cuda";
    options.fusion = fusion;
    Session device(options);
    int64_t derived_fallbacks = device::DerivedHostFallbacks();
    std::vector<NDArray> got = device.Run(fetches, feeds);
    for (size_t i = 0; i < fetches.size(); ++i) {
      SCOPED_TRACE(StrCat("fetch ", i, " (", fetches[i].node->attrs.name, "), fusion ", fusion));
      EXPECT_EQ(got[i].device().type, DeviceType::kCUDA);
      test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], tol, tol);
    }
    EXPECT_EQ(device.last_stats().host_fallbacks, 0u);
    EXPECT_EQ(device::DerivedHostFallbacks(), derived_fallbacks) << "derived kernels ran on the host";
  }
}

NDArray Rand(const Shape& shape, uint64_t seed) { return test::RandomArray(shape, DType::kFloat32, seed); }

TEST_F(CUDAEmulatedControlFlowTest, CondAndAnElementwiseLoop) {
  NodePtr c = test::SquashOrSubtract();
  for (bool pred : {true, false}) {
    ExpectSameAsCpu({{c, 0}}, {{"pred", NDArray::Scalar<bool>(pred)}, {"a", Rand({4, 7}, 1)}, {"b", Rand({7}, 2)}});
  }
  NodePtr loop = test::ElementwiseLoop();
  ExpectSameAsCpu({{loop, 0}, {loop, 2}},
                  {{"i0", NDArray::Scalar<int32_t>(0)}, {"n", NDArray::Scalar<int32_t>(4)}, {"x", Rand({5, 6}, 3)}});
}

TEST_F(CUDAEmulatedControlFlowTest, RnnLoopOverTensorArraysAndItsGradient) {
  NodePtr loop = test::RnnLoop();
  ExpectSameAsCpu({{loop, 2}, {loop, 4}}, test::RnnFeeds(6));
  ExpectSameAsCpu(test::RnnLossGradients(loop), test::RnnFeeds(5), 1e-4);
}

}  // namespace
}  // namespace ir
