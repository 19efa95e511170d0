/*!
 * \file convert_optimizers.cc
 * \brief Converters for the optimizer updates of tf.train.RMSPropOptimizer and
 * AdagradOptimizer (and their Resource forms, and Keras' AdagradV2): the update's elementwise
 * arithmetic followed by assigns, as convert_train.cc does for the others.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief `var` := `value`, after the assigns in `after`. */
NodeEntry AssignAfter(ImportContext& ctx, const NodeEntry& var, const NodeEntry& value,
                      const std::vector<NodeEntry>& after, const char* suffix) {
  NodeEntry out = ctx.Op("assign", {var, value}, {}, suffix);
  for (const NodeEntry& e : after) out.node->control_deps.push_back(e.node);
  return out;
}

/*!
 * \brief ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / sqrt(ms + epsilon);
 * var -= mom. Inputs: var, ms, mom, lr, rho, momentum, epsilon, grad.
 */
Outputs ConvertRMSProp(ImportContext& ctx) {
  ctx.ExpectInputs(8);
  NodeEntry var = ctx.VariableInput(0), ms = ctx.VariableInput(1), mom = ctx.VariableInput(2);
  NodeEntry lr = ctx.input(3), rho = ctx.input(4), momentum = ctx.input(5), epsilon = ctx.input(6);
  NodeEntry grad = ctx.input(7);
  NodeEntry one_minus_rho = ctx.Op("rsubtract_scalar", {rho}, {{"scalar", "1"}}, "one_minus_rho");
  NodeEntry new_ms =
      ctx.Op("add",
             {ctx.Op("multiply", {rho, ms}, {}, "decayed_ms"),
              ctx.Op("multiply", {one_minus_rho, ctx.Op("square", {grad}, {}, "grad_sq")}, {}, "ms_step")},
             {}, "new_ms");
  NodeEntry scaled = ctx.Op("divide",
                            {ctx.Op("multiply", {lr, grad}, {}, "lr_grad"),
                             ctx.Op("sqrt", {ctx.Op("add", {new_ms, epsilon}, {}, "ms_eps")}, {}, "rms")},
                            {}, "scaled_grad");
  NodeEntry new_mom = ctx.Op("add", {ctx.Op("multiply", {momentum, mom}, {}, "decayed_mom"), scaled}, {}, "new_mom");
  NodeEntry ms_out = AssignAfter(ctx, ms, new_ms, {}, "assign_ms");
  NodeEntry mom_out = AssignAfter(ctx, mom, new_mom, {}, "assign_mom");
  return {AssignAfter(ctx, var, ctx.Op("subtract", {var, new_mom}, {}, "new_var"), {ms_out, mom_out}, "")};
}

/*!
 * \brief Adagrad: accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum), or
 * / (sqrt(accum) + epsilon) for AdagradV2. Inputs: var, accum, lr, [epsilon,] grad.
 */
Outputs ConvertAdagrad(ImportContext& ctx) {
  bool v2 = ctx.op().find("V2") != std::string::npos;
  ctx.ExpectInputs(v2 ? 5 : 4);
  NodeEntry var = ctx.VariableInput(0), accum = ctx.VariableInput(1), lr = ctx.input(2);
  NodeEntry grad = ctx.input(v2 ? 4 : 3);
  NodeEntry new_accum = accum;
  std::vector<NodeEntry> after;
  if (ctx.Bool("update_slots", true)) {
    new_accum = ctx.Op("add", {accum, ctx.Op("square", {grad}, {}, "grad_sq")}, {}, "new_accum");
    after.push_back(AssignAfter(ctx, accum, new_accum, {}, "assign_accum"));
  }
  NodeEntry den = ctx.Op("sqrt", {new_accum}, {}, "sqrt_accum");
  if (v2) den = ctx.Op("add", {den, ctx.input(3)}, {}, "den");
  NodeEntry step = ctx.Op("divide", {ctx.Op("multiply", {lr, grad}, {}, "lr_grad"), den}, {}, "step");
  return {AssignAfter(ctx, var, ctx.Op("subtract", {var, step}, {}, "new_var"), after, "")};
}

}  // namespace

IR_TF_CONVERTER({"ApplyRMSProp", "ResourceApplyRMSProp"}, ConvertRMSProp);
IR_TF_CONVERTER({"ApplyAdagrad", "ResourceApplyAdagrad", "ApplyAdagradV2", "ResourceApplyAdagradV2"}, ConvertAdagrad);

}  // namespace tf
}  // namespace ir
