// Control flow on the OpenCL device against the CPU: the TensorArray kernels, cond, a while_loop
// with an elementwise chain, an RNN-like loop reading its inputs from and writing its outputs to
// tensor arrays, and that loop's gradient.
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/control_flow_graphs.h"
#include "test_util.h"

namespace ir {
namespace {

using Feeds = std::unordered_map<std::string, NDArray>;
using opencl_test::ExpectSameOnDevice;
using test::RandomArray;

NDArray I32(int32_t value) { return NDArray::Scalar<int32_t>(value); }
NDArray Rand(const Shape& shape, uint64_t seed) { return RandomArray(shape, DType::kFloat32, seed); }

/*! \brief Runs `fetches` on the CPU and on OpenCL (fused and not); expects equal results, returns the last stats. */
RunStats ExpectSameAsCpu(const std::vector<NodeEntry>& fetches, const Feeds& feeds, double tol = 1e-5) {
  SessionOptions cpu_options;
  cpu_options.fusion = false;
  Session cpu(cpu_options);
  std::vector<NDArray> expected = cpu.Run(fetches, feeds);
  RunStats stats;
  for (bool fusion : {false, true}) {
    SessionOptions options;
    options.target = "opencl";
    options.fusion = fusion;
    Session device(options);
    std::vector<NDArray> got = device.Run(fetches, feeds);
    for (size_t i = 0; i < fetches.size(); ++i) {
      SCOPED_TRACE(StrCat("fetch ", i, " (", fetches[i].node->attrs.name, "), fusion ", fusion));
      EXPECT_EQ(got[i].device().type, DeviceType::kOpenCL);
      test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], tol, tol);
    }
    stats = device.last_stats();
  }
  return stats;
}

TEST(OpenCLControlFlowTest, TensorArrayKernelsMatchTheCpu) {
  IR_REQUIRE_OPENCL();
  NDArray ta = Rand({6, 3, 5}, 1);
  ExpectSameOnDevice("tensor_array_read", {}, {ta, I32(4)});
  ExpectSameOnDevice("tensor_array_write", {}, {ta, NDArray::Scalar<int64_t>(0), Rand({3, 5}, 2)});
  ExpectSameOnDevice("tensor_array_gather", {}, {ta, NDArray::FromVector<int32_t>(Shape{4}, {2, 3, 0, 2})});
  ExpectSameOnDevice("tensor_array_scatter", {},
                     {ta, NDArray::FromVector<int64_t>(Shape{3}, {5, 1, 2}), Rand({3, 3, 5}, 3)});
  EXPECT_ERROR(opencl_test::RunOpOn(opencl_test::OpenCLDevice(), "tensor_array_read", {}, {ta, I32(6)}),
               "tried to read from index 6 but array size is: 6");
}

TEST(OpenCLControlFlowTest, CondRunsTheTakenBranchOnTheDevice) {
  IR_REQUIRE_OPENCL();
  NodePtr c = test::SquashOrSubtract();
  for (bool pred : {true, false}) {
    ExpectSameAsCpu({{c, 0}}, {{"pred", NDArray::Scalar<bool>(pred)}, {"a", Rand({4, 7}, 4)}, {"b", Rand({7}, 5)}});
  }
}

TEST(OpenCLControlFlowTest, WhileLoopWithAnElementwiseChain) {
  IR_REQUIRE_OPENCL();
  NodePtr loop = test::ElementwiseLoop();
  for (int n : {0, 3}) {
    ExpectSameAsCpu({{loop, 0}, {loop, 2}}, {{"i0", I32(0)}, {"n", I32(n)}, {"x", Rand({5, 6}, 6)}});
  }
}

TEST(OpenCLControlFlowTest, RnnLoopOverTensorArrays) {
  IR_REQUIRE_OPENCL();
  NodePtr loop = test::RnnLoop();
  for (int steps : {5, 7}) {
    RunStats stats = ExpectSameAsCpu({{loop, 2}, {loop, 4}}, test::RnnFeeds(steps));
    EXPECT_EQ(stats.host_fallbacks, 0u);
  }
}

TEST(OpenCLControlFlowTest, RnnLoopGradient) {
  IR_REQUIRE_OPENCL();
  ExpectSameAsCpu(test::RnnLossGradients(test::RnnLoop()), test::RnnFeeds(6), 1e-4);
}

}  // namespace
}  // namespace ir
