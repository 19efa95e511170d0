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
  // floor_mod is a - floor(a / b) b. AVX-512 has FMA, which the compiler contracts the product
  // into: a - q b rounds once; AVX2's and the baseline's code (no FMA in those instruction sets)
  // round q b first. The result says which code ran. (Not a kernel of src/ops/elemwise.cc, which
  // is compiled without contraction, as the generated kernels are: CMakeLists.txt.)
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> lhs(1.0f, 100.0f);
  const int n = 4096;
  std::vector<float> a(n), b(n, 0.7f);
  for (int i = 0; i < n; ++i) a[i] = lhs(rng);
  std::vector<float> got =
      RunOp("floor_mod", {}, {NDArray::FromVector<float>(Shape{n}, a), NDArray::FromVector<float>(Shape{n}, b)})[0]
          .ToVector<float>();
  int differing = 0, fused_matches = 0, unfused_matches = 0;
  for (int i = 0; i < n; ++i) {
    const float q = std::floor(a[i] / b[i]);
    volatile float product = q * b[i];  // rounded, whatever this file is compiled for
    float unfused = a[i] - product, fused = std::fmaf(-q, b[i], a[i]);
    if (fused == unfused) continue;
    ++differing;
    fused_matches += got[i] == fused;
    unfused_matches += got[i] == unfused;
  }
  ASSERT_GT(differing, 100);
  if (MaxCpuIsa() == CpuIsa::kAvx512) {
    EXPECT_EQ(fused_matches, differing) << "AVX-512 code fuses q b into a - q b";
  } else {
    EXPECT_EQ(unfused_matches, differing) << CpuIsaName(MaxCpuIsa()) << " code rounds q b first";
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
