/*!
 * \file device_context.cc
 * \brief Launching portable kernels (compiled once per target, source and dtype), and the other
 * services device kernels use: derived kernels, any node, host runs, fill and copy.
 */
#include "runtime/device/device_context.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "codegen/single_op_kernel.h"
#include "ir/cpu_kernel.h"
#include "ir/op_attr_types.h"
#include "runtime/device/device_module.h"
#include "runtime/device/device_source.h"
#include "runtime/device/kernel_selection.h"
#include "runtime/executor/host_fallback.h"

namespace ir {
namespace device {
namespace {

const DeviceKernelSource& FillSource() {
  static const DeviceKernelSource& source = RegisterDeviceKernelSource(
      DeviceKernelSource{"ir_fill",
                         "IR_KERNEL void ir_fill(IR_ARRAY(T, y), const long n, const T value) {\n"
                         "  IR_OFFSET(y);\n"
                         "  IR_THREAD_LOOP(i, n) y[i] = value;\n"
                         "}\n",
                         {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}});
  return source;
}

// Registered at load time too, so the sources list holds it before any fill runs.
const DeviceKernelSource& fill_source = FillSource();

/*! \brief The program of `source` for `dtype` on `target`, compiled once per process. */
DeviceProgram& ProgramOf(const DeviceTarget& target, const DeviceKernelSource& source, DType dtype) {
  static std::mutex mutex;
  static auto* modules =
      new std::map<std::tuple<const DeviceTarget*, std::string, DType>, std::shared_ptr<DeviceModule>>();
  auto key = std::make_tuple(&target, source.name, dtype);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = modules->find(key);
    if (it != modules->end()) return it->second->program();
  }
  std::shared_ptr<DeviceModule> module =
      GetModule(target.dialect().target, RenderKernelSource(target.dialect(), source, dtype));
  std::lock_guard<std::mutex> lock(mutex);
  return modules->emplace(key, module).first->second->program();
}

}  // namespace

std::vector<uint32_t> MutatedInputs(const NodeAttrs& attrs) {
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  if (mutate == nullptr || !mutate->count(attrs.op)) return {};
  return (*mutate)[attrs.op](attrs);
}

void DeviceContext::Launch(const DeviceKernelSource& source, DType dtype, const std::string& kernel,
                           const DeviceArgs& args, DeviceLaunch launch) {
  if (launch.work <= 0) return;
  const Dialect& d = target_.dialect();
  int64_t groups = launch.groups ? launch.work : (launch.work + d.group_size - 1) / d.group_size;
  ProgramOf(target_, source, dtype).Launch(kernel, args.values(), std::min(groups, d.max_groups), d.group_size, ctx_);
}

void DeviceContext::RunDerived(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                               const std::vector<NDArray>& outputs) {
  RunDerivedKernel(target_, ctx_, attrs, inputs, outputs);
}

void DeviceContext::RunNode(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                            const std::vector<NDArray>& outputs) {
  runtime::NodeKernel chosen = SelectKernel(target_, attrs.op);
  IR_CHECK(chosen.kernel) << "node '" << attrs.name << "' (op " << attrs.op->name << ") has no kernel on "
                          << ctx_.device.ToString();
  if (chosen.on_host) {
    runtime::RunOnHost(chosen.kernel, ctx_, attrs, inputs, outputs, MutatedInputs(attrs));
  } else {
    chosen.kernel(ctx_, attrs, inputs, outputs);
  }
}

void DeviceContext::RunOnHost(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                              const std::vector<NDArray>& outputs) {
  FCompute cpu = CpuKernelOf(attrs.op);
  IR_CHECK(cpu) << "node '" << attrs.name << "' (op " << attrs.op->name << ") has no CPU kernel to run on the host";
  runtime::RunOnHost(cpu, ctx_, attrs, inputs, outputs, MutatedInputs(attrs));
}

void DeviceContext::Fill(const NDArray& array, double value) {
  int64_t n = array.Size();
  Launch(FillSource(), array.dtype(), "ir_fill", DeviceArgs().Array(array).Value(n).Scalar(array.dtype(), value),
         DeviceLaunch::Threads(n));
}

void DeviceContext::Copy(const NDArray& src, const NDArray& dst) {
  if (src.storage() == dst.storage() && src.byte_offset() == dst.byte_offset()) return;
  dst.CopyFrom(src.Reshape(dst.shape()));
}

}  // namespace device
}  // namespace ir
