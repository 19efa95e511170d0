/*!
 * \file kernel_selection.cc
 * \brief The kernel of a node on a device target, chosen from what its op registers.
 */
#include "runtime/device/kernel_selection.h"

#include <atomic>

#include "codegen/single_op_kernel.h"
#include "ir/cpu_kernel.h"
#include "ir/device_kernel.h"
#include "ir/op_attr_types.h"
#include "runtime/device/device_context.h"
#include "runtime/executor/host_fallback.h"

namespace ir {
namespace device {
namespace {

std::atomic<int64_t> host_fallbacks{0};

/*! \brief The op's FCompute registered under `key`, or an empty one. */
FCompute Registered(const std::string& key, const Op* op) {
  const auto* map = Op::FindAttr<FCompute>(key);
  return map != nullptr && map->count(op) ? (*map)[op] : FCompute();
}

bool IsShapeOnly(const Op* op) {
  const auto* shape_only = Op::FindAttr<TShapeOnly>("TShapeOnly");
  return shape_only != nullptr && shape_only->get(op, false) && Registered("FCompute", op);
}

/*!
 * \brief A shape-only op (shape, size, rank) never reads its inputs' values: its CPU kernel runs
 * on uninitialized host arrays of the inputs' shapes and the outputs are uploaded.
 */
void ShapeOnlyCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                      const std::vector<NDArray>& outputs) {
  std::vector<NDArray> host_in, host_out;
  for (const NDArray& in : inputs) host_in.emplace_back(in.shape(), in.dtype(), Device::CPU());
  for (const NDArray& out : outputs) host_out.emplace_back(out.shape(), out.dtype(), Device::CPU());
  OpContext host_ctx = ctx;
  host_ctx.device = Device::CPU();
  host_ctx.queue = nullptr;
  Registered("FCompute", attrs.op)(host_ctx, attrs, host_in, host_out);
  for (size_t j = 0; j < outputs.size(); ++j) outputs[j].CopyFrom(host_out[j]);
}

}  // namespace

bool HasDerivedKernel(const Op* op) {
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  return (codegen != nullptr && codegen->count(op)) || codegen::IsGeneratableReduction(op);
}

void RunDerivedKernel(const DeviceTarget& target, const OpContext& ctx, const NodeAttrs& attrs,
                      const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs) {
  if (codegen::RunSingleOpKernel(target.dialect().target, ctx, attrs, inputs, outputs)) return;
  ++host_fallbacks;
  FCompute cpu = CpuKernelOf(attrs.op);
  IR_CHECK(cpu) << "op '" << attrs.op->name << "' (node '" << attrs.name << "') has no kernel for these inputs";
  runtime::RunOnHost(cpu, ctx, attrs, inputs, outputs, MutatedInputs(attrs));
}

runtime::NodeKernel SelectKernel(const DeviceTarget& target, const Op* op) {
  const Dialect& d = target.dialect();
  if (FCompute explicit_kernel = Registered(FComputeKey(d.device_type), op)) return {explicit_kernel, false};
  const auto* device_kernels = Op::FindAttr<FDeviceKernel>("FDeviceKernel");
  std::string name = d.target;
  if (device_kernels != nullptr && device_kernels->count(op)) {
    FDeviceKernel kernel = (*device_kernels)[op];
    return {[name, kernel](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                           const std::vector<NDArray>& outputs) {
              DeviceContext dev(GetDeviceTarget(name), ctx);
              kernel(dev, attrs, inputs, outputs);
            },
            false};
  }
  if (HasDerivedKernel(op)) {
    return {[name](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                   const std::vector<NDArray>& outputs) {
              RunDerivedKernel(GetDeviceTarget(name), ctx, attrs, inputs, outputs);
            },
            false};
  }
  if (IsShapeOnly(op)) return {ShapeOnlyCompute, false};
  return {CpuKernelOf(op), true};
}

int64_t DerivedHostFallbacks() { return host_fallbacks.load(); }

}  // namespace device
}  // namespace ir
