#include <gtest/gtest.h>

#include "ir/op.h"
#include "runtime/executor/host_fallback.h"
#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Filled;

TEST(HostFallbackTest, KernelSeesHostCopiesAndOutputsAreCopiedBack) {
  NDArray in = Filled({3}, 2), out(Shape({3}), DType::kFloat32);
  FCompute kernel = [&](const OpContext& ctx, const NodeAttrs&, const std::vector<NDArray>& i,
                        const std::vector<NDArray>& o) {
    EXPECT_EQ(ctx.device, Device::CPU());
    EXPECT_NE(i[0].storage(), in.storage()) << "the kernel works on a copy";
    EXPECT_NE(o[0].storage(), out.storage());
    for (int k = 0; k < 3; ++k) o[0].data<float>()[k] = i[0].data<float>()[k] * 10;
    i[0].data<float>()[0] = -1;  // not declared mutated: must not leak back
  };
  runtime::RunOnHost(kernel, OpContext(), NodeAttrs(), {in}, {out}, {});
  EXPECT_EQ(out.ToVector<float>(), std::vector<float>({20, 20, 20}));
  EXPECT_EQ(in.ToVector<float>(), std::vector<float>({2, 2, 2}));
}

TEST(HostFallbackTest, MutatedInputAndItsAliasShareOneHostArray) {
  NDArray ref = Filled({2}, 1), value = Filled({2}, 4);
  FCompute kernel = [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& i,
                       const std::vector<NDArray>& o) {
    EXPECT_EQ(o[0].storage(), i[0].storage()) << "the output aliases the mutated input on the host too";
    for (int k = 0; k < 2; ++k) i[0].data<float>()[k] += i[1].data<float>()[k];
  };
  runtime::RunOnHost(kernel, OpContext(), NodeAttrs(), {ref, value}, {ref}, {0});
  EXPECT_EQ(ref.ToVector<float>(), std::vector<float>({5, 5}));
}

TEST(HostFallbackTest, ExecutorCountsFallbacksOnAnotherDevice) {
  bool opencl_available = true;
  try {
    DeviceAPI::Get(Device{DeviceType::kOpenCL, 0});
  } catch (const Error&) {
    opencl_available = false;
  }
  if (!opencl_available) GTEST_SKIP() << "no OpenCL device in this build";
  SessionOptions options = runtime_test::UnfusedOptions();
  options.target = "opencl";
  Session sess(options);
  NodeEntry y = runtime_test::Op("runtime_test_scale", "y", {runtime_test::Var("x")});
  std::vector<NDArray> out = sess.Run({y}, {{"x", Filled({4}, 3)}});
  EXPECT_EQ(out[0].ToVector<float>(), std::vector<float>({6, 6, 6, 6}));
  EXPECT_EQ(sess.last_stats().host_fallbacks, 1u);
}

}  // namespace
}  // namespace ir
