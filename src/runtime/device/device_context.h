/*!
 * \file device_context.h
 * \brief The DeviceKernelContext of a device target: what FDeviceKernel functions run with.
 */
#ifndef IR_RUNTIME_DEVICE_DEVICE_CONTEXT_H_
#define IR_RUNTIME_DEVICE_DEVICE_CONTEXT_H_

#include <string>
#include <vector>

#include "ir/device_kernel.h"
#include "runtime/device/device_target.h"

namespace ir {
namespace device {

/*! \brief Device kernels of one node run on `target` with the run's context. */
class DeviceContext final : public DeviceKernelContext {
 public:
  DeviceContext(const DeviceTarget& target, const OpContext& ctx) : target_(target), ctx_(ctx) {}
  const OpContext& op_context() const override { return ctx_; }
  bool SupportsFloat64() const override { return target_.SupportsFloat64(); }
  int64_t ConcurrentWorkItems() const override { return target_.ConcurrentWorkItems(); }
  void Launch(const DeviceKernelSource& source, DType dtype, const std::string& kernel, const DeviceArgs& args,
              DeviceLaunch launch) override;
  void RunDerived(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<NDArray>& outputs) override;
  void RunNode(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
               const std::vector<NDArray>& outputs) override;
  void RunOnHost(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<NDArray>& outputs) override;
  void Fill(const NDArray& array, double value) override;
  void Copy(const NDArray& src, const NDArray& dst) override;

 private:
  const DeviceTarget& target_;
  const OpContext& ctx_;
};

/*! \brief The inputs an op mutates (FMutateInputs), copied back by host runs. */
std::vector<uint32_t> MutatedInputs(const NodeAttrs& attrs);

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_DEVICE_CONTEXT_H_
