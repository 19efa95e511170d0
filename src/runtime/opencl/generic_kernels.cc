/*!
 * \file generic_kernels.cc
 * \brief Device kernels derived from what ops already register: generated from FCodeGen for
 * elementwise and broadcast ops, and host-computed uploads for shape-only ops.
 *
 * An elementwise node is made a one-member fused group and goes through the same kernel
 * builder and OpenCL printer as fused kernels, so graphs run on the device with fusion off
 * too. Kernels are keyed by op, attributes, input shapes and dtypes, and compiled through the
 * KernelCache. A shape-only op (TShapeOnly: shape, size, rank...) never reads its inputs'
 * values: its CPU kernel runs on uninitialized host arrays of the inputs' shapes and its
 * result is uploaded, so nothing is read back from the device.
 */
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "codegen/kernel_builder.h"
#include "ir/fusion.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "runtime/host_fallback.h"
#include "runtime/opencl/opencl_library.h"
#include "runtime/opencl/opencl_ops.h"

namespace ir {
namespace opencl {
namespace {

std::atomic<int64_t> host_fallbacks{0};

/*! \brief A generated kernel, or none when the op's FCodeGen has no code for the inputs. */
struct Generated {
  std::shared_ptr<CompiledModule> module;
  std::string name;
};

std::string KeyOf(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  std::ostringstream key;
  key << attrs.op->name << "|";
  for (const auto& kv : attrs.dict) key << kv.first << "=" << kv.second << ";";
  for (const NDArray& in : inputs) key << "|" << DTypeName(in.dtype()) << in.shape();
  return key.str();
}

/*! \brief The node as a one-member group over variables in0, in1, ... */
FusedGroup SingleNodeGroup(const NodeAttrs& attrs, size_t num_inputs) {
  std::vector<NodeEntry> inputs;
  for (size_t k = 0; k < num_inputs; ++k) inputs.push_back(NodeEntry{Node::CreateVariable(StrCat("in", k)), 0});
  NodePtr node = Node::Create(attrs.op, attrs.name, attrs.dict, std::move(inputs));
  std::vector<NodeEntry> outputs;
  for (uint32_t j = 0; j < node->num_outputs(); ++j) outputs.push_back(NodeEntry{node, j});
  FusedGroup group;
  group.kind = "map";
  group.subgraph = Graph(std::move(outputs));
  return group;
}

Generated Generate(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const NDArray& in : inputs) {
    shapes.push_back(in.shape());
    dtypes.push_back(in.dtype());
  }
  Kernel kernel;
  try {
    kernel = codegen::BuildKernel(SingleNodeGroup(attrs, inputs.size()), shapes, dtypes);
  } catch (const Error&) {
    return Generated();
  }
  std::string source = KernelPrinter::Get("opencl").Print({kernel});
  return Generated{KernelCache::Global().GetOrCompile("opencl", source), kernel.name};
}

const Generated& Lookup(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  static std::mutex mutex;
  static auto* kernels = new std::map<std::string, Generated>();
  std::string key = KeyOf(attrs, inputs);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = kernels->find(key);
  if (it == kernels->end()) it = kernels->emplace(key, Generate(attrs, inputs)).first;
  return it->second;
}

void GenericCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                    const std::vector<NDArray>& outputs) {
  const Generated& generated = Lookup(attrs, inputs);
  if (generated.module == nullptr) {
    ++host_fallbacks;
    runtime::RunOnHost(Op::GetAttr<FCompute>("FCompute")[attrs.op], ctx, attrs, inputs, outputs, {});
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

bool IsGeneratable(const Op* op) {
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  const auto* pattern = Op::FindAttr<TOpPattern>("TOpPattern");
  if (codegen == nullptr || pattern == nullptr || !codegen->count(op)) return false;
  int p = pattern->get(op, kOpaque);
  return p == kElemWise || p == kBroadcast;
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
    if (IsGeneratable(op)) {
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
