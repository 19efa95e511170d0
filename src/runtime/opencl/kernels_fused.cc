/*!
 * \file kernels_fused.cc
 * \brief "_fused" nodes without a generated kernel (CodeGen logged why) run member by member
 * with each member's OpenCL kernel, intermediate values in device memory: the device
 * counterpart of the op's CPU kernel (src/ops/fused.cc).
 */
#include "ir/fusion.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

void FusedCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<NDArray>& outputs) {
  const FusedGroup& group = GetFusedGroup(attrs);
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  const auto& kernels = Op::GetAttr<FCompute>(FComputeKey(DeviceType::kOpenCL));
  std::vector<std::vector<NDArray>> values(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      values[nid] = {inputs.at(std::stoi(node->attrs.name.substr(2)))};  // group input k is "in<k>"
      continue;
    }
    IR_CHECK(kernels.count(node->op())) << "fused node '" << attrs.name << "': member '" << node->attrs.name << "' (op "
                                        << node->op()->name << ") has no OpenCL kernel";
    std::vector<NDArray> in;
    std::vector<Shape> in_shapes, out_shapes(node->num_outputs());
    std::vector<DType> in_types, out_types(node->num_outputs(), DType::kUnknown);
    for (const auto& e : idx[nid].inputs) {
      in.push_back(values[e.node_id][e.index]);
      in_shapes.push_back(in.back().shape());
      in_types.push_back(in.back().dtype());
    }
    Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in_shapes, &out_shapes);
    Op::GetAttr<FInferType>("FInferType")[node->op()](node->attrs, &in_types, &out_types);
    for (uint32_t j = 0; j < node->num_outputs(); ++j) {
      values[nid].emplace_back(out_shapes[j], out_types[j], ctx.device);
    }
    kernels[node->op()](ctx, node->attrs, in, values[nid]);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (group.IsAliasedOutput(static_cast<int>(j))) continue;
    const auto& e = idx.outputs()[j];
    CopyUnlessAliased(values[e.node_id][e.index], outputs[j]);
  }
}

}  // namespace

IR_REGISTER_OP(_fused).set_attr<FCompute>(FComputeKey(DeviceType::kOpenCL), FusedCompute);

}  // namespace opencl
}  // namespace ir
