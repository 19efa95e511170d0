/*!
 * \file single_op_kernel.cc
 * \brief One node as a one-member fused group, through the kernel builder, a target's printer
 * and the KernelCache: the same path fused kernels take, so what fuses also runs alone.
 */
#include "codegen/single_op_kernel.h"

#include <map>
#include <mutex>
#include <sstream>

#include "codegen/kernel_builder.h"
#include "ir/fusion.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace codegen {
namespace {

std::string KeyOf(const std::string& target, const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  std::ostringstream key;
  key << target << "|" << attrs.op->name << "|";
  for (const auto& kv : attrs.dict) key << kv.first << "=" << kv.second << ";";
  for (const NDArray& in : inputs) key << "|" << DTypeName(in.dtype()) << in.shape();
  return key.str();
}

/*! \brief True when the reduction's axes form one block (what a generated reduction handles). */
bool ContiguousReduction(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  if (inputs.size() != 1) return false;
  std::vector<int> axes = Op::GetAttr<FReduceAxes>("FReduceAxes")[attrs.op](attrs, inputs[0].shape().ndim());
  return !axes.empty() && axes.back() - axes.front() + 1 == static_cast<int>(axes.size());
}

/*!
 * \brief The node as a one-member group over variables in0, in1, ...: mutated inputs and their
 * aliased outputs (FMutateInputs, FInplaceOption) as a fused group records them.
 */
FusedGroup SingleNodeGroup(const NodeAttrs& attrs, size_t num_inputs, bool reduce) {
  FusedGroup group;
  group.kind = reduce ? "reduce" : "map";
  // A copy of the parsed attrs, not a reparse of dict: some ops hold state only in parsed form.
  NodePtr node = Node::Create();
  node->attrs = attrs;
  for (size_t k = 0; k < num_inputs; ++k) node->inputs.push_back(NodeEntry{Node::CreateVariable(StrCat("in", k)), 0});
  std::vector<NodeEntry> outputs;
  for (uint32_t j = 0; j < node->num_outputs(); ++j) outputs.push_back(NodeEntry{node, j});
  group.subgraph = Graph(std::move(outputs));
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  const auto* inplace = Op::FindAttr<FInplaceOption>("FInplaceOption");
  if (mutate != nullptr && mutate->count(attrs.op)) {
    for (uint32_t k : (*mutate)[attrs.op](attrs)) group.mutated_inputs.push_back(static_cast<int>(k));
    if (inplace != nullptr && inplace->count(attrs.op)) group.aliases = (*inplace)[attrs.op](attrs);
  }
  return group;
}

SingleOpKernel Generate(const std::string& target, const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  bool fused = attrs.op->name == "_fused";  // a whole group: its kernel as fusion builds it
  bool reduce = IsGeneratableReduction(attrs.op);
  if (reduce && !ContiguousReduction(attrs, inputs)) return SingleOpKernel();
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const NDArray& in : inputs) {
    shapes.push_back(in.shape());
    dtypes.push_back(in.dtype());
  }
  FusedGroup group = fused ? GetFusedGroup(attrs) : SingleNodeGroup(attrs, inputs.size(), reduce);
  Kernel kernel;
  try {
    kernel = BuildKernel(group, shapes, dtypes);
  } catch (const Error&) {
    return SingleOpKernel();  // FCodeGen declines these dtypes or attributes
  }
  std::string source = KernelPrinter::Get(target).Print({kernel});
  std::shared_ptr<CompiledModule> module = KernelCache::Global().GetOrCompile(target, source);
  CompiledModule::Launcher launch = module->Resolve(kernel.name);
  SingleOpKernel generated;
  generated.module = std::move(module);
  generated.name = kernel.name;
  generated.aliases = group.aliases;
  generated.launch = std::move(launch);
  return generated;
}

bool IsAliased(const SingleOpKernel& kernel, size_t output) {
  for (const auto& alias : kernel.aliases) {
    if (alias.second == static_cast<int>(output)) return true;
  }
  return false;
}

void GeneratedCpuCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                         const std::vector<NDArray>& outputs) {
  IR_CHECK(RunSingleOpKernel("cpu", ctx, attrs, inputs, outputs))
      << "op '" << attrs.op->name << "' (node '" << attrs.name
      << "') registers no FCompute and its FCodeGen gives no code for these inputs";
}

}  // namespace

bool IsGeneratable(const Op* op) {
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  const auto* pattern = Op::FindAttr<TOpPattern>("TOpPattern");
  if (codegen == nullptr || pattern == nullptr || !codegen->count(op)) return false;
  int p = pattern->get(op, kOpaque);
  return p == kElemWise || p == kBroadcast;
}

bool IsGeneratableReduction(const Op* op) {
  const auto* pattern = Op::FindAttr<TOpPattern>("TOpPattern");
  const auto* kinds = Op::FindAttr<TReduceKind>("TReduceKind");
  const auto* axes = Op::FindAttr<FReduceAxes>("FReduceAxes");
  return pattern != nullptr && pattern->get(op, kOpaque) == kCommReduce && kinds != nullptr && kinds->count(op) &&
         axes != nullptr && axes->count(op);
}

const SingleOpKernel& GetSingleOpKernel(const std::string& target, const NodeAttrs& attrs,
                                        const std::vector<NDArray>& inputs) {
  static std::mutex mutex;
  static auto* kernels = new std::map<std::string, SingleOpKernel>();  // never destroyed: used at exit
  std::string key = KeyOf(target, attrs, inputs);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = kernels->find(key);
  if (it == kernels->end()) it = kernels->emplace(key, Generate(target, attrs, inputs)).first;
  return it->second;
}

bool RunSingleOpKernel(const std::string& target, const OpContext& ctx, const NodeAttrs& attrs,
                       const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs) {
  const SingleOpKernel& kernel = GetSingleOpKernel(target, attrs, inputs);
  if (kernel.module == nullptr) return false;
  LaunchGeneratedKernel(kernel, ctx, inputs, outputs);
  return true;
}

bool RunGeneratedKernel(const std::string& target, const OpContext& ctx, const NodeAttrs& attrs,
                        const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs) {
  return RunSingleOpKernel(target, ctx, attrs, inputs, outputs);
}

const SingleOpKernel* FindGeneratedKernel(const std::string& target, const NodeAttrs& attrs,
                                          const std::vector<NDArray>& inputs) {
  const SingleOpKernel& kernel = GetSingleOpKernel(target, attrs, inputs);
  return kernel.module == nullptr ? nullptr : &kernel;
}

void LaunchGeneratedKernel(const SingleOpKernel& kernel, const OpContext& ctx, const std::vector<NDArray>& inputs,
                           const std::vector<NDArray>& outputs) {
  constexpr size_t kInline = 64;  // F_max inputs plus outputs: no allocation per launch
  const NDArray* inline_args[kInline];
  std::vector<const NDArray*> heap_args(inputs.size() + outputs.size() > kInline ? inputs.size() + outputs.size() : 0);
  const NDArray** args = heap_args.empty() ? inline_args : heap_args.data();
  size_t n = 0;
  for (const NDArray& in : inputs) args[n++] = &in;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!IsAliased(kernel, j)) args[n++] = &outputs[j];
  }
  kernel.launch(args, n, ctx);
  for (const auto& alias : kernel.aliases) {
    const NDArray& in = inputs.at(alias.first);
    const NDArray& out = outputs.at(alias.second);
    if (in.storage() != out.storage() || in.byte_offset() != out.byte_offset()) out.CopyFrom(in);
  }
}

void SingleOpKernel::Launch(const OpContext& ctx, const std::vector<NDArray>& inputs,
                            const std::vector<NDArray>& outputs) const {
  LaunchGeneratedKernel(*this, ctx, inputs, outputs);
}

namespace {

// Ops without "FCompute" run their FCodeGen on the CPU, one node per kernel; a node's generated
// kernel is found for core's callers (ir/cpu_kernel.h: CpuKernelOf, FindGeneratedCpuKernel).
const bool kCpuKernelGeneratorRegistered = [] {
  CpuKernelGenerator generator;
  generator.for_op = [](const Op* op) { return IsGeneratable(op) ? FCompute(GeneratedCpuCompute) : FCompute(); };
  generator.for_node = [](const NodeAttrs& attrs, const std::vector<NDArray>& inputs) -> const GeneratedKernel* {
    return FindGeneratedKernel("cpu", attrs, inputs);
  };
  RegisterCpuKernelGenerator(std::move(generator));
  return true;
}();

}  // namespace

}  // namespace codegen
}  // namespace ir
