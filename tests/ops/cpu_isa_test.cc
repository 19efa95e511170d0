/*!
 * \file cpu_isa_test.cc
 * \brief The vectorized kernels run the code of MaxCpuIsa(), which IR_MAX_CPU_ISA lowers: an
 * AVX-512 machine run with IR_MAX_CPU_ISA=avx2 computes what an AVX2 machine computes.
 */
#include <gtest/gtest.h>
#include <strings.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ir/cpu_isa.h"
#include "ops/op_harness.h"

namespace ir {
namespace test {
namespace {

TEST(CpuIsaTest, IrMaxCpuIsaCapsTheLevel) {
  const char* cap = std::getenv("IR_MAX_CPU_ISA");
  if (cap != nullptr && strcasecmp(cap, "avx2") == 0) {
    EXPECT_LE(MaxCpuIsa(), CpuIsa::kAvx2);
  }
  if (cap != nullptr && strcasecmp(cap, "baseline") == 0) {
    EXPECT_EQ(MaxCpuIsa(), CpuIsa::kBaseline);
  }
  EXPECT_STREQ(CpuIsaName(CpuIsa::kAvx2), "avx2");
}

TEST(CpuIsaTest, ElementwiseKernelsRunTheCodeOfTheLevel) {
  // tanh_grad is dy (1 - y y). The AVX-512 and AVX2 copies are compiled with FMA, which the
  // compiler contracts y y into: 1 - y y rounds once; the baseline's code (no FMA in SSE2) rounds
  // y y first. Near y = 1 the two differ, and the kernel's result says which code ran.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> near_one(0.999f, 1.0f), dy(0.5f, 1.0f);
  const int n = 4096;
  std::vector<float> y(n), g(n);
  for (int i = 0; i < n; ++i) {
    y[i] = near_one(rng);
    g[i] = dy(rng);
  }
  std::vector<float> got =
      RunOp("tanh_grad", {}, {NDArray::FromVector<float>(Shape{n}, y), NDArray::FromVector<float>(Shape{n}, g)})[0]
          .ToVector<float>();
  int differing = 0, fused_matches = 0, unfused_matches = 0;
  for (int i = 0; i < n; ++i) {
    volatile float square = y[i] * y[i];  // rounded, whatever this file is compiled for
    float unfused = g[i] * (1.0f - square), fused = g[i] * std::fmaf(-y[i], y[i], 1.0f);
    if (fused == unfused) continue;
    ++differing;
    fused_matches += got[i] == fused;
    unfused_matches += got[i] == unfused;
  }
  ASSERT_GT(differing, 100);
  if (MaxCpuIsa() != CpuIsa::kBaseline) {
    EXPECT_EQ(fused_matches, differing) << CpuIsaName(MaxCpuIsa()) << " code fuses y y into 1 - y y";
  } else {
    EXPECT_EQ(unfused_matches, differing) << CpuIsaName(MaxCpuIsa()) << " code rounds y y first";
  }
}

TEST(CpuIsaTest, OneDnnIsCappedWithTheLevel) {
  // A matmul creates oneDNN's engine, which is when the cap is set.
  RunOp("matmul", {},
        {NDArray::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4}), NDArray::FromVector<float>(Shape{2, 2}, {1, 0, 0, 1})});
  if (std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr || std::getenv("DNNL_MAX_CPU_ISA") != nullptr) {
    GTEST_SKIP() << "oneDNN's own ONEDNN_MAX_CPU_ISA decides";
  }
  auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  // oneDNN's ISA values are bit sets, each level a superset of the one below.
  if (MaxCpuIsa() == CpuIsa::kAvx2) {
    EXPECT_EQ(effective & ~static_cast<unsigned>(dnnl::cpu_isa::avx2), 0u) << std::hex << effective;
  }
  if (MaxCpuIsa() == CpuIsa::kBaseline) {
    EXPECT_EQ(effective & ~static_cast<unsigned>(dnnl::cpu_isa::sse41), 0u) << std::hex << effective;
  }
}

}  // namespace
}  // namespace test
}  // namespace ir
