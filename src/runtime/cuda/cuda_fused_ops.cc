/*!
 * \file cuda_fused_ops.cc
 * \brief "_fused" nodes without a generated kernel (CodeGen logged why) run member by member
 * on the device, intermediate values in device memory: the CUDA counterpart of the op's CPU
 * kernel (src/ops/fused.cc). A member without a CUDA kernel runs its CPU kernel on host copies.
 */
#include "ir/fusion.h"
#include "runtime/cuda/cuda_ops.h"

namespace ir {
namespace cuda {
namespace {

/*! \brief Allocates the outputs of member `node` on the device and runs its kernel. */
std::vector<NDArray> RunMember(const OpContext& ctx, const Node* node, const std::vector<NDArray>& in) {
  std::vector<Shape> in_shapes, out_shapes(node->num_outputs());
  std::vector<DType> in_types, out_types(node->num_outputs(), DType::kUnknown);
  for (const NDArray& a : in) {
    in_shapes.push_back(a.shape());
    in_types.push_back(a.dtype());
  }
  Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in_shapes, &out_shapes);
  Op::GetAttr<FInferType>("FInferType")[node->op()](node->attrs, &in_types, &out_types);
  std::vector<NDArray> out;
  for (uint32_t j = 0; j < node->num_outputs(); ++j) out.emplace_back(out_shapes[j], out_types[j], ctx.device);
  const auto* kernels = Op::FindAttr<FCompute>(FComputeKey(DeviceType::kCUDA));
  if (kernels != nullptr && kernels->count(node->op())) {
    (*kernels)[node->op()](ctx, node->attrs, in, out);
  } else {
    RunCPUKernel(ctx, node->attrs, in, out);
  }
  return out;
}

void FusedCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<NDArray>& outputs) {
  const FusedGroup& group = GetFusedGroup(attrs);
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  std::vector<std::vector<NDArray>> values(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      values[nid] = {inputs.at(std::stoi(node->attrs.name.substr(2)))};  // group input k is "in<k>"
      continue;
    }
    std::vector<NDArray> in;
    for (const auto& e : idx[nid].inputs) in.push_back(values[e.node_id][e.index]);
    values[nid] = RunMember(ctx, node, in);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (group.IsAliasedOutput(static_cast<int>(j))) continue;
    const auto& e = idx.outputs()[j];
    CopyArray(values[e.node_id][e.index], outputs[j]);
  }
}

}  // namespace

IR_REGISTER_OP(_fused).set_attr<FCompute>("FCompute<cuda>", FusedCompute);

}  // namespace cuda
}  // namespace ir
