/*!
 * \file autodiff.cc
 * \brief Gradients() and IsUnreachedGradient() (ir/autodiff.h): the Gradient pass, run by name.
 *
 * The pass itself is in the passes layer (src/passes/gradient.cc), registered at static
 * initialization; core reaches it only through the pass registry, so any layer (a control-flow
 * op differentiating its body) may call Gradients.
 */
#include "ir/autodiff.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/pass.h"

namespace ir {

namespace {

constexpr const char* kGradientPass = "Gradient";

/*! \brief "name" for a single-output node, else "name_output<i>" (as Symbol names outputs). */
std::string EntryName(const NodeEntry& e) {
  if (e.node->num_outputs() == 1) return e.node->attrs.name;
  return StrCat(e.node->attrs.name, "_output", e.index);
}

}  // namespace

std::vector<NodeEntry> Gradients(const std::vector<NodeEntry>& ys, const std::vector<NodeEntry>& xs,
                                 const std::vector<NodeEntry>& grad_ys, const GradientOptions& options) {
  const std::vector<std::string> passes = PassReg::ListNames();
  IR_CHECK(std::find(passes.begin(), passes.end(), kGradientPass) != passes.end())
      << "Gradients: the '" << kGradientPass
      << "' pass is not registered (it is defined in the passes layer, src/passes/gradient.cc: link the "
         "library's passes)";
  Graph graph(ys);
  graph.SetAttr("grad_xs", xs);
  if (!grad_ys.empty()) graph.SetAttr("grad_ys_out_grad", grad_ys);
  graph.SetAttr("grad.aggregate_op", options.aggregate_op);
  graph.SetAttr("grad.zero_op", options.zero_op);
  graph.SetAttr("grad.ones_op", options.ones_op);
  return ApplyPass(std::move(graph), kGradientPass).outputs;
}

bool IsUnreachedGradient(const NodeEntry& grad, const NodeEntry& x) {
  return grad.node != nullptr && !grad.node->is_variable() && grad.node->inputs.size() == 1 &&
         grad.node->inputs[0].node == x.node && grad.node->inputs[0].index == x.index &&
         grad.node->attrs.name == EntryName(x) + "_zero_grad";
}

}  // namespace ir
