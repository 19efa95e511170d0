// The random ops' device kernels draw in double, as their CPU kernels do, so that every target
// gives the CPU's numbers. On a device without double precision (some OpenCL devices) they run
// the CPU kernel on the host instead of failing to compile.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ir/device_kernel.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace {

/*! \brief A device context that records launches and runs host fallbacks with the CPU kernel. */
class RecordingDevice final : public DeviceKernelContext {
 public:
  explicit RecordingDevice(bool fp64) : fp64_(fp64) { ctx_.seed = 1234; }
  const OpContext& op_context() const override { return ctx_; }
  bool SupportsFloat64() const override { return fp64_; }
  int64_t ConcurrentWorkItems() const override { return 1024; }
  void Launch(const DeviceKernelSource& source, DType, const std::string& kernel, const DeviceArgs&,
              DeviceLaunch) override {
    launches.push_back(source.name + "/" + kernel);
  }
  void RunDerived(const NodeAttrs& attrs, const std::vector<NDArray>&, const std::vector<NDArray>&) override {
    throw Error("unexpected RunDerived of " + attrs.name);
  }
  void RunNode(const NodeAttrs& attrs, const std::vector<NDArray>&, const std::vector<NDArray>&) override {
    throw Error("unexpected RunNode of " + attrs.name);
  }
  void RunOnHost(const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<NDArray>& out) override {
    ++host_runs;
    Op::GetAttr<FCompute>("FCompute")[attrs.op](ctx_, attrs, in, out);
  }
  void Fill(const NDArray&, double) override { throw Error("unexpected Fill"); }
  void Copy(const NDArray&, const NDArray&) override { throw Error("unexpected Copy"); }

  std::vector<std::string> launches;
  int host_runs = 0;

 private:
  bool fp64_;
  OpContext ctx_;
};

struct Case {
  std::string op;
  std::map<std::string, std::string> attrs;
  int num_inputs;
};

std::vector<NDArray> Outputs(const Case& c, DType dtype) {
  std::vector<NDArray> out{NDArray(Shape{3, 5}, dtype)};
  if (c.op == "dropout") out.emplace_back(Shape{3, 5}, dtype);
  return out;
}

bool SameBytes(const NDArray& a, const NDArray& b) { return std::memcmp(a.data(), b.data(), a.nbytes()) == 0; }

TEST(RandomDeviceKernelTest, RunsTheCpuKernelOnDevicesWithoutFloat64AndLaunchesOtherwise) {
  std::vector<Case> cases = {{"random_uniform", {{"shape", "(3, 5)"}, {"minval", "-2"}, {"maxval", "3"}}, 0},
                             {"random_normal", {{"shape", "(3, 5)"}, {"stddev", "2"}}, 0},
                             {"truncated_normal", {{"shape", "(3, 5)"}}, 0},
                             {"dropout", {{"keep_prob", "0.6"}}, 1},
                             {"random_uniform_like", {{"minval", "-2"}, {"maxval", "3"}}, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<NodeEntry> inputs;
    for (int i = 0; i < c.num_inputs; ++i) inputs.push_back(NodeEntry{Node::CreateVariable("x"), 0});
    NodeAttrs attrs = Node::Create(Op::Get(c.op), "r", c.attrs, inputs)->attrs;
    std::vector<NDArray> in;
    if (c.num_inputs) {
      in.emplace_back(Shape{3, 5}, DType::kFloat32);
      for (int64_t i = 0; i < 15; ++i) static_cast<float*>(in[0].data())[i] = 0.5f + static_cast<float>(i);
    }
    FDeviceKernel kernel = Op::GetAttr<FDeviceKernel>("FDeviceKernel")[attrs.op];
    ASSERT_TRUE(kernel) << c.op << " has no FDeviceKernel";

    RecordingDevice without(false);
    std::vector<NDArray> host = Outputs(c, DType::kFloat32), cpu = Outputs(c, DType::kFloat32);
    kernel(without, attrs, in, host);
    EXPECT_EQ(without.host_runs, 1);
    EXPECT_TRUE(without.launches.empty());
    Op::GetAttr<FCompute>("FCompute")[attrs.op](without.op_context(), attrs, in, cpu);
    for (size_t j = 0; j < cpu.size(); ++j) EXPECT_TRUE(SameBytes(host[j], cpu[j])) << "output " << j;

    RecordingDevice with(true);
    std::vector<NDArray> device = Outputs(c, DType::kFloat32);
    kernel(with, attrs, in, device);
    EXPECT_EQ(with.host_runs, 0);
    ASSERT_EQ(with.launches.size(), 1u);
    EXPECT_EQ(with.launches[0].rfind("random/", 0), 0u) << with.launches[0];
  }
}

}  // namespace
}  // namespace ir
