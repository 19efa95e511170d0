// Row kernels on the OpenCL device (one work-group per row, shared-memory combines): the row
// computations of tests/ops/row_graphs.h, fused, against the CPU's unfused results.
#include <gtest/gtest.h>

#include <limits>

#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "ops/row_graphs.h"
#include "test_util.h"

namespace ir {
namespace {

using row_graphs::RowGraph;

SessionOptions Options(const std::string& target, bool fusion) {
  SessionOptions options;
  options.simplify = false;  // these rows are written out by hand to test row fusion, not the rules
  options.target = target;
  options.fusion = fusion;
  return options;
}

// Runs `g` fused on OpenCL and unfused on the CPU; returns the device run's kernel count.
size_t ExpectSameAsCpu(const RowGraph& g, double tol = 1e-5) {
  SCOPED_TRACE(g.name);
  Session cpu(Options("cpu", false)), device(Options("opencl", true));
  std::vector<NDArray> expected = cpu.Run(g.fetches, g.feeds);
  std::vector<NDArray> got = device.Run(g.fetches, g.feeds);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i].device().type, DeviceType::kOpenCL);
    test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], tol, tol);
  }
  EXPECT_EQ(device.last_stats().host_fallbacks, 0u);
  return device.last_stats().kernels_launched;
}

TEST(OpenCLRowTest, RowComputationsRunAsOneKernel) {
  IR_REQUIRE_OPENCL();
  for (auto shape : std::vector<std::pair<int64_t, int64_t>>{{16, 10}, {7, 33}, {5, 1}, {3, 5000}}) {
    SCOPED_TRACE(StrCat(shape.first, "x", shape.second));
    for (const RowGraph& g : row_graphs::AllRowGraphs(shape.first, shape.second, 4)) {
      EXPECT_EQ(ExpectSameAsCpu(g, 1e-4), 1u);
    }
  }
}

TEST(OpenCLRowTest, NanAndInfinityPropagateAsOnTheCpu) {
  IR_REQUIRE_OPENCL();
  for (RowGraph g : row_graphs::AllRowGraphs(4, 300, 5)) {
    float* x = g.feeds.at("x").data<float>();
    x[7] = std::numeric_limits<float>::quiet_NaN();
    x[300 + 200] = std::numeric_limits<float>::infinity();
    for (int c = 0; c < 300; ++c) x[600 + c] = -std::numeric_limits<float>::infinity();
    EXPECT_EQ(ExpectSameAsCpu(g), 1u);
  }
}

}  // namespace
}  // namespace ir
