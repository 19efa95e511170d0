// The attention device kernels (src/ops/attention/attention.cc: one work-item per query or key
// row, the dense formulas) against the CPU's tiled and dense kernels: forward, gradient and
// v's gradient alone, causal and not, T != S, a weighted mask, special values, empty tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ir/op.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::Attrs;
using opencl_test::ExpectSameOnDevice;
using test::RandomArray;

/*! \brief fused_attention, fused_attention_grad and _fused_attention_dv of q, k, v on OpenCL against the CPU. */
void ExpectAttentionSame(const Attrs& attrs, const NDArray& q, const NDArray& k, const NDArray& v, double tol) {
  ExpectSameOnDevice("fused_attention", attrs, {q, k, v}, tol, tol);
  std::vector<NDArray> fwd = test::RunOp("fused_attention", attrs, {q, k, v});
  NDArray w = RandomArray(fwd[0].shape(), q.dtype(), 9);
  ExpectSameOnDevice("fused_attention_grad", attrs, {w, q, k, v, fwd[0], fwd[1]}, tol, tol);
  ExpectSameOnDevice("_fused_attention_dv", attrs, {w, q, k}, tol, tol);
  Attrs without = attrs;
  without["with_dv"] = "false";
  ExpectSameOnDevice("fused_attention_grad", without, {w, q, k, v, fwd[0], fwd[1]}, tol, tol);
}

TEST(OpenCLAttentionTest, ForwardAndGradientsMatchTheCpu) {
  IR_REQUIRE_OPENCL();
  struct Sizes {
    int64_t t, s, d, e;
  };
  for (const Sizes& z : {Sizes{1, 1, 1, 1}, Sizes{33, 33, 8, 8}, Sizes{37, 70, 16, 5}, Sizes{9, 4, 4, 3}}) {
    for (bool causal : {false, true}) {
      for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
        SCOPED_TRACE(StrCat("T ", z.t, " S ", z.s, " D ", z.d, " E ", z.e, " causal ", causal, " ", DTypeName(dtype)));
        Attrs attrs = {{"scale", "0.3"}, {"causal", causal ? "true" : "false"}};
        NDArray q = RandomArray({2, 2, z.t, z.d}, dtype, 1, -2, 2);
        NDArray k = RandomArray({2, 2, z.s, z.d}, dtype, 2, -2, 2);
        NDArray v = RandomArray({2, 2, z.s, z.e}, dtype, 3);
        ExpectAttentionSame(attrs, q, k, v, dtype == DType::kFloat32 ? 2e-5 : 1e-11);
      }
    }
  }
}

TEST(OpenCLAttentionTest, EveryMaskFormWithAWeightedMask) {
  IR_REQUIRE_OPENCL();
  for (const char* form : {"select", "add", "multiply"}) {
    SCOPED_TRACE(form);
    Attrs attrs = {{"causal", "true"}, {"mask_value", "-2"}, {"mask_form", form}};
    ExpectAttentionSame(attrs, RandomArray({2, 9, 4}, DType::kFloat64, 4, -2, 2),
                        RandomArray({2, 12, 4}, DType::kFloat64, 5, -2, 2), RandomArray({2, 12, 3}, DType::kFloat64, 6),
                        1e-11);
  }
}

TEST(OpenCLAttentionTest, SpecialValuesAsTheCpu) {
  IR_REQUIRE_OPENCL();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const char* form : {"select", "add", "multiply"}) {
    SCOPED_TRACE(form);
    NDArray q = RandomArray({2, 20, 8}, DType::kFloat32, 7, -2, 2);
    NDArray k = RandomArray({2, 20, 8}, DType::kFloat32, 8, -2, 2);
    NDArray v = RandomArray({2, 20, 4}, DType::kFloat32, 9);
    q.data<float>()[20 * 8 + 3 * 8] = nan;
    k.data<float>()[20 * 8 + 5 * 8 + 1] = -inf;
    v.data<float>()[20 * 4 + 19 * 4] = inf;
    ExpectAttentionSame({{"causal", "true"}, {"mask_form", form}}, q, k, v, 2e-5);
  }
}

TEST(OpenCLAttentionTest, EmptyTensors) {
  IR_REQUIRE_OPENCL();
  for (auto ts : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 0}, {0, 0}}) {
    SCOPED_TRACE(StrCat("T ", ts.first, " S ", ts.second));
    ExpectAttentionSame({{"causal", "true"}}, RandomArray({2, ts.first, 4}, DType::kFloat32, 1),
                        RandomArray({2, ts.second, 4}, DType::kFloat32, 2),
                        RandomArray({2, ts.second, 3}, DType::kFloat32, 3), 1e-6);
  }
  ExpectAttentionSame({}, RandomArray({0, 3, 4}, DType::kFloat32, 1), RandomArray({0, 3, 4}, DType::kFloat32, 2),
                      RandomArray({0, 3, 3}, DType::kFloat32, 3), 1e-6);
}

}  // namespace
}  // namespace ir
