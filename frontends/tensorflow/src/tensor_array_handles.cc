/*!
 * \file tensor_array_handles.cc
 * \brief What a TensorArray write needs to know of the array it writes, found through its
 * handle before the frames are rebuilt (inside a loop body the handle is a param). The converters
 * carry the array in the flow value and ignore handles (convert_tensor_array.cc), so:
 *  - an array of `dynamic_size` grows when written past its end: its writes are marked kGrowsAttr;
 *  - a gradient array (TensorArrayGradV3, one per forward array and gradient call, shared by every
 *    TensorArrayGradV3 of it) aggregates what is written to it. TensorFlow's gradients write it
 *    (read and gather gradients) with the forward array's flow and read it (write and scatter
 *    gradients) with the gradient flow. A marked write (kGradientArrayAttr) starts from zeros
 *    instead of the flow, so its flow holds what this write added, and the gradients TF adds up
 *    for the flows (AddN, a loop invariant's accumulator) add up the array.
 */

#include "functionalize.h"
#include "graph_importer.h"

namespace ir {
namespace tf {
namespace {

bool IsWrite(const std::string& op) {
  return op == "TensorArrayWriteV3" || op == "TensorArrayScatterV3" || op == "TensorArraySplitV3";
}

bool Grows(const tfproto::NodeDef& n) {
  auto it = n.attr().find("dynamic_size");
  return n.op() == "TensorArrayV3" && it != n.attr().end() && it->second.b();
}

bool IsGradientArray(const tfproto::NodeDef& n) {
  return n.op() == "TensorArrayGradV3" || n.op() == "TensorArrayGradWithShape";
}

}  // namespace

std::vector<tfproto::NodeDef> AnnotateTensorArrays(std::vector<tfproto::NodeDef> nodes) {
  bool any = false;
  for (const auto& n : nodes) any = any || Grows(n) || IsGradientArray(n);
  if (!any) return nodes;
  std::vector<std::pair<size_t, const char*>> marks;
  {
    NodeGraph g(nodes);
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (!IsWrite(nodes[k].op()) || nodes[k].input_size() < 1) continue;
      int array = HandleSource(g, nodes[k].input(0));
      if (array < 0) continue;
      if (Grows(nodes[array])) marks.emplace_back(k, kGrowsAttr);
      if (IsGradientArray(nodes[array])) marks.emplace_back(k, kGradientArrayAttr);
    }
  }
  for (const auto& mark : marks) (*nodes[mark.first].mutable_attr())[mark.second].set_b(true);
  return nodes;
}

}  // namespace tf
}  // namespace ir
