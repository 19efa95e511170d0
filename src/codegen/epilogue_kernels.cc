/*!
 * \file epilogue_kernels.cc
 * \brief Building the epilogue kernels of a fused graph through the kernel builder.
 */
#include "codegen/epilogue_kernels.h"

#include <set>

#include "codegen/kernel_builder.h"
#include "ir/fusion.h"
#include "ir/op.h"

namespace ir {
namespace codegen {

std::vector<Kernel> EpilogueKernels(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  const auto& shapes = graph.GetAttr<ShapeVector>("shape");
  const auto& dtypes = graph.GetAttr<DTypeVector>("dtype");
  const Op* fused = Op::Get("_fused");
  std::vector<Kernel> kernels;
  std::set<std::string> names;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->op() != fused || !GetFusedGroup(node->attrs).epilogue) continue;
    const FusedEpilogue& e = *GetFusedGroup(node->attrs).epilogue;
    // The anchor's value lives in the group output it is computed into.
    uint32_t acc = idx.entry_id(nid, static_cast<uint32_t>(e.anchor_output >= 0 ? e.anchor_output : e.in_place_output));
    std::vector<Shape> in_shapes = {shapes[acc]};
    std::vector<DType> in_types = {dtypes[acc]};
    for (int k : e.extra_inputs) {
      in_shapes.push_back(shapes[idx.entry_id(idx[nid].inputs.at(k))]);
      in_types.push_back(dtypes[idx.entry_id(idx[nid].inputs.at(k))]);
    }
    Kernel kernel = BuildKernel(GetFusedGroup(e.epilogue), in_shapes, in_types);
    if (names.insert(kernel.name).second) kernels.push_back(std::move(kernel));
  }
  return kernels;
}

}  // namespace codegen
}  // namespace ir
