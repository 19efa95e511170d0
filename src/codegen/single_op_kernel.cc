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

/*! \brief The node as a one-member group over variables in0, in1, ... */
FusedGroup SingleNodeGroup(const NodeAttrs& attrs, size_t num_inputs) {
  std::vector<NodeEntry> inputs;
  for (size_t k = 0; k < num_inputs; ++k) inputs.push_back(NodeEntry{Node::CreateVariable(StrCat("in", k)), 0});
  // A copy of the parsed attrs, not a reparse of dict: some ops hold state only in parsed form.
  NodePtr node = Node::Create();
  node->attrs = attrs;
  node->inputs = std::move(inputs);
  std::vector<NodeEntry> outputs;
  for (uint32_t j = 0; j < node->num_outputs(); ++j) outputs.push_back(NodeEntry{node, j});
  FusedGroup group;
  group.kind = "map";
  group.subgraph = Graph(std::move(outputs));
  return group;
}

SingleOpKernel Generate(const std::string& target, const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const NDArray& in : inputs) {
    shapes.push_back(in.shape());
    dtypes.push_back(in.dtype());
  }
  Kernel kernel;
  try {
    kernel = BuildKernel(SingleNodeGroup(attrs, inputs.size()), shapes, dtypes);
  } catch (const Error&) {
    return SingleOpKernel();  // FCodeGen declines these dtypes or attributes
  }
  std::string source = KernelPrinter::Get(target).Print({kernel});
  return SingleOpKernel{KernelCache::Global().GetOrCompile(target, source), kernel.name};
}

void GeneratedCpuCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                         const std::vector<NDArray>& outputs) {
  const SingleOpKernel& kernel = GetSingleOpKernel("cpu", attrs, inputs);
  IR_CHECK(kernel.module != nullptr) << "op '" << attrs.op->name << "' (node '" << attrs.name
                                     << "') registers no FCompute and its FCodeGen gives no code for these inputs";
  std::vector<NDArray> args = inputs;
  args.insert(args.end(), outputs.begin(), outputs.end());
  kernel.module->Launch(kernel.name, args, ctx);
}

}  // namespace

bool IsGeneratable(const Op* op) {
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  const auto* pattern = Op::FindAttr<TOpPattern>("TOpPattern");
  if (codegen == nullptr || pattern == nullptr || !codegen->count(op)) return false;
  int p = pattern->get(op, kOpaque);
  return p == kElemWise || p == kBroadcast;
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

FCompute CpuKernelOf(const Op* op) {
  const auto* cpu = Op::FindAttr<FCompute>(FComputeKey(DeviceType::kCPU));
  if (cpu != nullptr && cpu->count(op)) return (*cpu)[op];
  return IsGeneratable(op) ? FCompute(GeneratedCpuCompute) : FCompute();
}

}  // namespace codegen
}  // namespace ir
