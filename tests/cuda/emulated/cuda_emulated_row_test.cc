// Row kernels on the emulated CUDA device (one block per row), against the CPU's unfused runs.
#include <gtest/gtest.h>

#include <limits>

#include "cuda/cuda_test_util.h"
#include "cuda_emulator.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "ops/row_graphs.h"

namespace ir {
namespace {

class CUDAEmulatedRowTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::InstallCUDAEmulator(); }
};

std::vector<NDArray> RunOn(const row_graphs::RowGraph& g, const std::string& target, bool fusion, RunStats* stats) {
  SessionOptions options;
  options.simplify = false;  // these rows are written out by hand to test row fusion, not the rules
  options.target = target;
  options.fusion = fusion;
  Session session(options);
  std::vector<NDArray> results = session.Run(g.fetches, g.feeds);
  for (NDArray& r : results) r = r.CopyTo(Device::CPU());
  *stats = session.last_stats();
  return results;
}

TEST_F(CUDAEmulatedRowTest, RowComputationsMatchTheCpu) {
  for (auto shape : std::vector<std::pair<int64_t, int64_t>>{{6, 10}, {3, 1}, {2, 1500}}) {
    for (row_graphs::RowGraph g : row_graphs::AllRowGraphs(shape.first, shape.second, 6)) {
      SCOPED_TRACE(StrCat(g.name, " ", shape.first, "x", shape.second));
      g.feeds.at("x").data<float>()[0] = std::numeric_limits<float>::infinity();
      RunStats cpu_stats, cuda_stats;
      std::vector<NDArray> expected = RunOn(g, "cpu", false, &cpu_stats);
      std::vector<NDArray> got = RunOn(g, "cuda", true, &cuda_stats);
      for (size_t i = 0; i < got.size(); ++i) test::ExpectNear(got[i], expected[i], 1e-4, 1e-4);
      EXPECT_EQ(cuda_stats.kernels_launched, 1u);
      EXPECT_EQ(cuda_stats.host_fallbacks, 0u);
    }
  }
}

}  // namespace
}  // namespace ir
