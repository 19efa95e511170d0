// The attention device kernels (src/ops/attention/attention.cc) as CUDA C run by the emulator,
// against the CPU's tiled and dense kernels: fused_attention, fused_attention_grad and
// _fused_attention_dv, causal and not, T != S, float32 and float64, none on the host.
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

class CUDAEmulatedAttentionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::InstallCUDAEmulator(); }
};

/*! \brief The fetches of one unfused run on `target`, on the host; on CUDA no kernel runs on the host. */
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

TEST_F(CUDAEmulatedAttentionTest, ForwardAndGradientsMatchTheCpu) {
  struct Sizes {
    int64_t t, s, d, e;
  };
  for (const Sizes& z : {Sizes{33, 33, 8, 8}, Sizes{37, 70, 16, 5}, Sizes{9, 4, 4, 3}}) {
    for (bool causal : {false, true}) {
      for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
        SCOPED_TRACE(StrCat("T ", z.t, " S ", z.s, " causal ", causal, " ", DTypeName(dtype)));
        std::map<std::string, std::string> attrs = {{"scale", "0.3"}, {"causal", causal ? "true" : "false"}};
        NodeEntry q = Var("q"), k = Var("k"), v = Var("v"), w = Var("w");
        NodeEntry att = Apply("fused_attention", "att", {q, k, v}, attrs);
        NodeEntry lse{att.node, 1};
        NodeEntry grad = Apply("fused_attention_grad", "grad", {w, q, k, v, att, lse}, attrs);
        NodeEntry dv = Apply("_fused_attention_dv", "dv", {w, q, k}, attrs);
        std::vector<NodeEntry> fetches = {att, lse, grad, NodeEntry{grad.node, 1}, NodeEntry{grad.node, 2}, dv};
        std::unordered_map<std::string, NDArray> feeds = {{"q", test::RandomArray({2, 3, z.t, z.d}, dtype, 1, -2, 2)},
                                                          {"k", test::RandomArray({2, 3, z.s, z.d}, dtype, 2, -2, 2)},
                                                          {"v", test::RandomArray({2, 3, z.s, z.e}, dtype, 3)},
                                                          {"w", test::RandomArray({2, 3, z.t, z.e}, dtype, 4)}};
        std::vector<NDArray> expected = Fetch("cpu", fetches, feeds), got = Fetch("cuda", fetches, feeds);
        ASSERT_EQ(got.size(), expected.size());
        const double tol = dtype == DType::kFloat32 ? 2e-5 : 1e-11;
        for (size_t i = 0; i < got.size(); ++i) {
          SCOPED_TRACE(StrCat("fetch ", i));
          test::ExpectNear(got[i], expected[i], tol, tol);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ir
