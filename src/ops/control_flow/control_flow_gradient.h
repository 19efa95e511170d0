/*!
 * \file control_flow_gradient.h
 * \brief The gradient of a control-flow body (cond branch, loop body, pfor body) that runs
 * nothing of the body with effects again.
 *
 * A body's gradient recomputes from the body's params the values it needs. Nodes with effects
 * (HasEffects: an assign, a host callback, a collective, a control-flow node whose bodies hold
 * one) must run once per run of the body, so the gradient never holds them: a wait on one is
 * dropped (the forward run did the work) and a value of one is a param of the gradient, which
 * the forward node saves when it runs the body (its gradient node's `forward` body: the body
 * returning those values after its own).
 */
#ifndef IR_OPS_CONTROL_FLOW_CONTROL_FLOW_GRADIENT_H_
#define IR_OPS_CONTROL_FLOW_CONTROL_FLOW_GRADIENT_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_kernel.h"

namespace ir {
namespace op {

/*!
 * \brief Whether running `node` again would be observed: it mutates an input, is stateful and
 * not replayable (TReplayable: random ops draw the same values again), or a body holds such a node.
 */
bool HasEffects(const Node& node);

/*! \brief Whether some node of `body` HasEffects. */
bool BodyHasEffects(const Subgraph& body);

/*! \brief The names of the variables that nodes of `body` (nested bodies included) write. */
std::set<std::string> WrittenVariables(const Subgraph& body);

/*! \brief A body's gradient and, when it reads values with effects, the body that saves them. */
struct BodyGradient {
  /*!
   * \brief Params: the body's params, one head gradient per output, then one per saved value;
   * returns the gradient of each param from `first_x` on.
   */
  std::shared_ptr<const Subgraph> gradient;
  /*! \brief The body with the saved values as outputs after its own; null when none are saved. */
  std::shared_ptr<const Subgraph> forward;
};

/*!
 * \brief What a forward node keeps for its gradient node in one run (a ForwardRecord): per body
 * run (a taken branch, an iteration), the values its gradient reads that must not be computed
 * again, and for a loop the variables entering each iteration that the gradient reads.
 */
struct SavedRuns : public ForwardRecord {
  /*! \brief Per body run: which body ran (cond: the branch taken). */
  std::vector<size_t> bodies;
  /*! \brief Per body run: the saved values, with the records travelling with them. */
  std::vector<BodyResult> saved;
  /*! \brief Per iteration of a loop: the variables entering it that the gradient reads (others undefined). */
  std::vector<std::vector<NDArray>> history;
};

/*! \brief Moves the outputs (and their records) of `result` from `n` on into the result: the saved values. */
BodyResult SplitSaved(BodyResult* result, size_t n);

/*!
 * \brief The record the forward node of gradient node `attrs` left (OpContext::forward), or null
 * when none reached it; a record of another kind is an error naming the node.
 */
SavedRuns* ForwardRuns(const OpContext& ctx, const NodeAttrs& attrs);

/*!
 * \brief Per output of `saving` (a saving body whose first `n` outputs are the body's own): null for
 * those, then per saved value the node of `gradient` (its saved params last) reading it as its
 * FForwardInput, or null. The forward node passes them as BodyCall::output_gradients, so a nested
 * forward node keeps its record for a gradient node outside its body.
 */
std::vector<const NodeAttrs*> SavedValueReaders(const Subgraph& gradient, const Subgraph& saving, size_t n);

/*!
 * \brief The gradient of `body`'s outputs (head gradients `heads`, each computed from the param
 * in `head_params` of the same position) with respect to its params from `first_x` on. Params
 * it adds are named under `name`. A body with effects is differentiated as it is (not
 * simplified first), so the gradient reads the body's own nodes and can tell those with effects.
 */
BodyGradient DifferentiateBody(const Subgraph& body, const std::string& name, size_t first_x,
                               std::vector<NodePtr> head_params, const std::vector<NodeEntry>& heads);

/*!
 * \brief DifferentiateBody with respect to every param of `body`, its head gradients params
 * named `name`/head_grad_<j> (the gradient of a cond branch or a loop body).
 */
BodyGradient GradientBody(const Subgraph& body, const std::string& name);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_CONTROL_FLOW_CONTROL_FLOW_GRADIENT_H_
