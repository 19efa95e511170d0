/*!
 * \file generic_kernels.cc
 * \brief Device kernels derived from what ops already register: generated from FCodeGen for
 * elementwise and broadcast ops, and host-computed uploads for shape-only ops.
 *
 * An elementwise node runs the kernel codegen::GetSingleOpKernel generates for it alone (the
 * kernel builder and the OpenCL printer, as fused kernels), so graphs run on the device with
 * fusion off too. A shape-only op (TShapeOnly: shape, size, rank...) never reads its inputs'
 * values: its CPU kernel runs on uninitialized host arrays of the inputs' shapes and its
 * result is uploaded, so nothing is read back from the device.
 */
#include <atomic>
#include <memory>
#include <mutex>
#include <set>

#include "codegen/single_op_kernel.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "runtime/host_fallback.h"
#include "runtime/opencl/opencl_library.h"
#include "runtime/opencl/opencl_ops.h"

namespace ir {
namespace opencl {
namespace {

std::atomic<int64_t> host_fallbacks{0};

void GenericCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                    const std::vector<NDArray>& outputs) {
  const codegen::SingleOpKernel& generated = codegen::GetSingleOpKernel("opencl", attrs, inputs);
  if (generated.module == nullptr) {
    ++host_fallbacks;
    FCompute cpu = codegen::CpuKernelOf(attrs.op);
    IR_CHECK(cpu) << "op '" << attrs.op->name << "' (node '" << attrs.name << "') has no kernel for these inputs";
    runtime::RunOnHost(cpu, ctx, attrs, inputs, outputs, {});
    return;
  }
  std::vector<NDArray> args = inputs;
  args.insert(args.end(), outputs.begin(), outputs.end());
  generated.module->Launch(generated.name, args, ctx);
}

void ShapeOnlyCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                      const std::vector<NDArray>& outputs) {
  std::vector<NDArray> host_in, host_out;
  for (const NDArray& in : inputs) host_in.emplace_back(in.shape(), in.dtype(), Device::CPU());
  for (const NDArray& out : outputs) host_out.emplace_back(out.shape(), out.dtype(), Device::CPU());
  OpContext host_ctx = ctx;
  host_ctx.device = Device::CPU();
  host_ctx.queue = nullptr;
  Op::GetAttr<FCompute>("FCompute")[attrs.op](host_ctx, attrs, host_in, host_out);
  for (size_t j = 0; j < outputs.size(); ++j) outputs[j].CopyFrom(host_out[j]);
}

bool IsShapeOnly(const Op* op) {
  const auto* shape_only = Op::FindAttr<TShapeOnly>("TShapeOnly");
  const auto* cpu = Op::FindAttr<FCompute>("FCompute");
  return shape_only != nullptr && shape_only->get(op, false) && cpu != nullptr && cpu->count(op);
}

struct RegisterAtLoad {
  RegisterAtLoad() { RegisterDerivedKernels(); }
} register_at_load;

}  // namespace

void RegisterDerivedKernels() {
  static std::mutex mutex;
  static auto* done = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = FComputeKey(DeviceType::kOpenCL);
  for (const std::string& name : Op::ListNames()) {
    if (done->count(name)) continue;
    const Op* op = Op::Get(name);
    FCompute derived;
    if (codegen::IsGeneratable(op)) {
      derived = GenericCompute;
    } else if (IsShapeOnly(op)) {
      derived = ShapeOnlyCompute;
    } else {
      continue;  // looked at again next time: attributes may still be added
    }
    const auto* existing = Op::FindAttr<FCompute>(key);
    // Lowest priority: a hand-written kernel registered later still replaces it.
    if (existing == nullptr || !existing->count(op)) Op::Register(name).set_attr<FCompute>(key, derived, 1);
    done->insert(name);
  }
}

int64_t GenericHostFallbacks() { return host_fallbacks.load(); }

}  // namespace opencl
}  // namespace ir
