/*!
 * \file cuda_generated_ops.cc
 * \brief FCompute<cuda> for ops with FCodeGen (and contiguous reductions): the node is made
 * a one-member fused group, built into a Kernel, printed as CUDA C and compiled through the
 * kernel cache, exactly as a fused group would be.
 */
#include <map>
#include <mutex>
#include <sstream>

#include "codegen/kernel_builder.h"
#include "runtime/cuda/cuda_ops.h"

namespace ir {
namespace cuda {

/*! \brief The strided reduction of the hand-written kernels (cuda_reduce_ops.cc). */
void StridedReduce(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out);

namespace {

/*! \brief A compiled one-node kernel, and which outputs alias inputs (not kernel arguments). */
struct Generated {
  std::shared_ptr<CompiledModule> module;
  std::string name;
  FusedGroup group;
};

std::string SignatureOf(const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  std::ostringstream os;
  os << attrs.op->name;
  for (const auto& kv : attrs.dict) os << ";" << kv.first << "=" << kv.second;
  for (const NDArray& a : in) os << "|" << DTypeName(a.dtype()) << a.shape();
  return os.str();
}

/*! \brief The kernel of this node for these inputs, built and compiled on first use. */
std::shared_ptr<const Generated> GeneratedFor(const NodeAttrs& attrs, const std::vector<NDArray>& in, bool reduce) {
  static std::mutex mutex;
  static auto* cache = new std::map<std::string, std::shared_ptr<const Generated>>();
  std::string key = SignatureOf(attrs, in);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  auto generated = std::make_shared<Generated>();
  generated->group = SingleNodeGroup(attrs, in.size(), reduce);
  std::vector<Shape> shapes;
  std::vector<DType> types;
  for (const NDArray& a : in) {
    shapes.push_back(a.shape());
    types.push_back(a.dtype());
  }
  Kernel kernel = codegen::BuildKernel(generated->group, shapes, types);
  generated->name = kernel.name;
  generated->module = KernelCache::Global().GetOrCompile("cuda", KernelPrinter::Get("cuda").Print({kernel}));
  std::lock_guard<std::mutex> lock(mutex);
  return cache->emplace(key, generated).first->second;
}

/*! \brief True when the reduction's axes form one block (what the printed reduction handles). */
bool ContiguousReduction(const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  if (in.size() != 1) return false;
  std::vector<int> axes = Op::GetAttr<FReduceAxes>("FReduceAxes")[attrs.op](attrs, in[0].shape().ndim());
  return !axes.empty() && axes.back() - axes.front() + 1 == static_cast<int>(axes.size());
}

void LaunchGenerated(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out, bool reduce) {
  std::shared_ptr<const Generated> generated;
  try {
    generated = GeneratedFor(attrs, in, reduce);
  } catch (const Error& err) {
    // FCodeGen declines some dtypes (e.g. integer power): the CPU kernel covers them.
    if (std::string(err.what()).find("codegen:") == std::string::npos) throw;
    RunCPUKernel(ctx, attrs, in, out);
    return;
  }
  std::vector<NDArray> args = in;
  for (size_t j = 0; j < out.size(); ++j) {
    if (!generated->group.IsAliasedOutput(static_cast<int>(j))) args.push_back(out[j]);
  }
  generated->module->Launch(generated->name, args, ctx);
  for (const auto& alias : generated->group.aliases) CopyArray(in[alias.first], out[alias.second]);
}

/*!
 * \brief Ops whose outputs depend only on their inputs' shapes (TShapeOnly: shape, size, rank):
 * the CPU kernel runs on uninitialized host arrays of those shapes and the outputs are uploaded,
 * so no input is read back from the device.
 */
void ShapeOnlyCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  std::vector<NDArray> host_in, host_out;
  for (const NDArray& a : in) host_in.emplace_back(a.shape(), a.dtype());
  for (const NDArray& a : out) host_out.emplace_back(a.shape(), a.dtype());
  OpContext host_ctx = ctx;
  host_ctx.device = ::ir::Device::CPU();
  host_ctx.queue = nullptr;
  Op::GetAttr<FCompute>("FCompute")[attrs.op](host_ctx, attrs, host_in, host_out);
  for (size_t j = 0; j < out.size(); ++j) out[j].CopyFrom(host_out[j]);
}

void MapCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  LaunchGenerated(ctx, attrs, in, out, false);
}

void ReduceCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  if (ContiguousReduction(attrs, in)) {
    LaunchGenerated(ctx, attrs, in, out, true);
  } else {
    StridedReduce(ctx, attrs, in, out);
  }
}

/*! \brief Static registration, for the ops of this library registered before this file. */
struct RegisterAtLoad {
  RegisterAtLoad() { RegisterGeneratedKernels(); }
} register_at_load;

}  // namespace

FusedGroup SingleNodeGroup(const NodeAttrs& attrs, size_t num_inputs, bool reduce) {
  FusedGroup group;
  group.kind = reduce ? "reduce" : "map";
  NodePtr node = Node::Create();
  node->attrs = attrs;
  for (size_t k = 0; k < num_inputs; ++k) node->inputs.push_back(NodeEntry{Node::CreateVariable(StrCat("in", k)), 0});
  for (uint32_t i = 0; i < node->num_outputs(); ++i) group.subgraph.outputs.push_back(NodeEntry{node, i});
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  const auto* inplace = Op::FindAttr<FInplaceOption>("FInplaceOption");
  if (mutate != nullptr && mutate->count(attrs.op)) {
    for (uint32_t k : (*mutate)[attrs.op](attrs)) group.mutated_inputs.push_back(static_cast<int>(k));
    if (inplace != nullptr && inplace->count(attrs.op)) group.aliases = (*inplace)[attrs.op](attrs);
  }
  return group;
}

void RegisterGeneratedKernels() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = FComputeKey(DeviceType::kCUDA);
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  const auto* pattern = Op::FindAttr<TOpPattern>("TOpPattern");
  const auto* kinds = Op::FindAttr<TReduceKind>("TReduceKind");
  const auto* axes = Op::FindAttr<FReduceAxes>("FReduceAxes");
  const auto* shape_only = Op::FindAttr<TShapeOnly>("TShapeOnly");
  const auto* cpu = Op::FindAttr<FCompute>("FCompute");
  for (const std::string& name : Op::ListNames()) {
    const Op* op = Op::Get(name);
    const auto* existing = Op::FindAttr<FCompute>(key);
    if (existing != nullptr && existing->count(op)) continue;
    bool reduction = pattern != nullptr && pattern->get(op, kOpaque) == kCommReduce && kinds != nullptr &&
                     kinds->count(op) && axes != nullptr && axes->count(op);
    if (reduction) {
      Op::Register(name).set_attr<FCompute>(key, ReduceCompute, 1);
    } else if (codegen != nullptr && codegen->count(op)) {
      Op::Register(name).set_attr<FCompute>(key, MapCompute, 1);
    } else if (shape_only != nullptr && shape_only->get(op, false) && cpu != nullptr && cpu->count(op)) {
      Op::Register(name).set_attr<FCompute>(key, ShapeOnlyCompute, 1);
    }
  }
}

}  // namespace cuda
}  // namespace ir
