/*!
 * \file convert_optimizers.cc
 * \brief Converters for the optimizer updates of RMSProp, Adagrad (and Keras' AdagradV2),
 * Adadelta, AdaMax and Keras' SGD momentum (and their Resource forms): the update's elementwise
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

/*!
 * \brief Keras SGD: accum = accum * momentum - lr * grad; var += accum (Nesterov: var += accum *
 * momentum - lr * grad). Inputs: var, accum, lr, grad, momentum.
 */
Outputs ConvertKerasMomentum(ImportContext& ctx) {
  ctx.ExpectInputs(5);
  NodeEntry var = ctx.VariableInput(0), accum = ctx.VariableInput(1);
  NodeEntry lr = ctx.input(2), grad = ctx.input(3), momentum = ctx.input(4);
  NodeEntry lr_grad = ctx.Op("multiply", {lr, grad}, {}, "lr_grad");
  NodeEntry new_accum =
      ctx.Op("subtract", {ctx.Op("multiply", {accum, momentum}, {}, "decayed"), lr_grad}, {}, "new_accum");
  NodeEntry step = new_accum;
  if (ctx.Bool("use_nesterov", false)) {
    step = ctx.Op("subtract", {ctx.Op("multiply", {new_accum, momentum}, {}, "look_ahead"), lr_grad}, {}, "step");
  }
  NodeEntry accum_out = AssignAfter(ctx, accum, new_accum, {}, "assign_accum");
  return {AssignAfter(ctx, var, ctx.Op("add", {var, step}, {}, "new_var"), {accum_out}, "")};
}

/*!
 * \brief Adadelta: accum = rho * accum + (1 - rho) * grad^2; update = sqrt(accum_update + eps) /
 * sqrt(accum + eps) * grad; accum_update = rho * accum_update + (1 - rho) * update^2; var -= lr *
 * update. Inputs: var, accum, accum_update, lr, rho, epsilon, grad.
 */
Outputs ConvertAdadelta(ImportContext& ctx) {
  ctx.ExpectInputs(7);
  NodeEntry var = ctx.VariableInput(0), accum = ctx.VariableInput(1), accum_update = ctx.VariableInput(2);
  NodeEntry lr = ctx.input(3), rho = ctx.input(4), eps = ctx.input(5), grad = ctx.input(6);
  NodeEntry one_minus_rho = ctx.Op("rsubtract_scalar", {rho}, {{"scalar", "1"}}, "one_minus_rho");
  auto decay = [&](const NodeEntry& old, const NodeEntry& value, const std::string& suffix) {
    NodeEntry fresh =
        ctx.Op("multiply", {one_minus_rho, ctx.Op("square", {value}, {}, suffix + "/square")}, {}, suffix + "/fresh");
    return ctx.Op("add", {ctx.Op("multiply", {rho, old}, {}, suffix + "/decayed"), fresh}, {}, suffix);
  };
  NodeEntry new_accum = decay(accum, grad, "new_accum");
  auto root = [&](const NodeEntry& x, const std::string& suffix) {
    return ctx.Op("sqrt", {ctx.Op("add", {x, eps}, {}, suffix + "/plus_eps")}, {}, suffix);
  };
  NodeEntry ratio = ctx.Op("divide", {root(accum_update, "rms_update"), root(new_accum, "rms_grad")}, {}, "ratio");
  NodeEntry update = ctx.Op("multiply", {ratio, grad}, {}, "update");
  NodeEntry new_accum_update = decay(accum_update, update, "new_accum_update");
  NodeEntry accum_out = AssignAfter(ctx, accum, new_accum, {}, "assign_accum");
  NodeEntry update_out = AssignAfter(ctx, accum_update, new_accum_update, {}, "assign_accum_update");
  NodeEntry step = ctx.Op("multiply", {lr, update}, {}, "step");
  return {AssignAfter(ctx, var, ctx.Op("subtract", {var, step}, {}, "new_var"), {accum_out, update_out}, "")};
}

/*!
 * \brief AdaMax: m = beta1 * m + (1 - beta1) * grad; v = max(beta2 * v, |grad|); var -= lr /
 * (1 - beta1_power) * m / (v + epsilon). Inputs: var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad.
 */
Outputs ConvertAdaMax(ImportContext& ctx) {
  ctx.ExpectInputs(9);
  NodeEntry var = ctx.VariableInput(0), m = ctx.VariableInput(1), v = ctx.VariableInput(2);
  NodeEntry beta1_power = ctx.input(3), lr = ctx.input(4), beta1 = ctx.input(5), beta2 = ctx.input(6);
  NodeEntry eps = ctx.input(7), grad = ctx.input(8);
  NodeEntry one_minus_beta1 = ctx.Op("rsubtract_scalar", {beta1}, {{"scalar", "1"}}, "one_minus_beta1");
  NodeEntry new_m = ctx.Op(
      "add",
      {ctx.Op("multiply", {beta1, m}, {}, "decayed_m"), ctx.Op("multiply", {one_minus_beta1, grad}, {}, "m_step")}, {},
      "new_m");
  NodeEntry new_v = ctx.Op(
      "maximum", {ctx.Op("multiply", {beta2, v}, {}, "decayed_v"), ctx.Op("abs", {grad}, {}, "abs_grad")}, {}, "new_v");
  NodeEntry lr_t =
      ctx.Op("divide", {lr, ctx.Op("rsubtract_scalar", {beta1_power}, {{"scalar", "1"}}, "one_minus_beta1_power")}, {},
             "lr_t");
  NodeEntry step =
      ctx.Op("divide", {ctx.Op("multiply", {lr_t, new_m}, {}, "scaled_m"), ctx.Op("add", {new_v, eps}, {}, "den")}, {},
             "step");
  NodeEntry m_out = AssignAfter(ctx, m, new_m, {}, "assign_m");
  NodeEntry v_out = AssignAfter(ctx, v, new_v, {}, "assign_v");
  return {AssignAfter(ctx, var, ctx.Op("subtract", {var, step}, {}, "new_var"), {m_out, v_out}, "")};
}

}  // namespace

IR_TF_CONVERTER({"ApplyRMSProp", "ResourceApplyRMSProp"}, ConvertRMSProp);
IR_TF_CONVERTER({"ResourceApplyKerasMomentum"}, ConvertKerasMomentum);
IR_TF_CONVERTER({"ApplyAdadelta", "ResourceApplyAdadelta"}, ConvertAdadelta);
IR_TF_CONVERTER({"ApplyAdaMax", "ResourceApplyAdaMax"}, ConvertAdaMax);
IR_TF_CONVERTER({"ApplyAdagrad", "ResourceApplyAdagrad", "ApplyAdagradV2", "ResourceApplyAdagradV2"}, ConvertAdagrad);

}  // namespace tf
}  // namespace ir
