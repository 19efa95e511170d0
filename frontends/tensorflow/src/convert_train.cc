/*!
 * \file convert_train.cc
 * \brief Converters for TensorFlow's optimizer update ops (ApplyGradientDescent, ApplyMomentum,
 * ApplyAdam and their Resource forms). Each becomes the elementwise arithmetic of the update
 * followed by assigns, so fusion can compile the arithmetic into one kernel.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief Builds one update: named nodes "<tf node>/<suffix>". */
struct Update {
  ImportContext& ctx;

  NodeEntry Op(const char* op, std::vector<NodeEntry> inputs, const char* suffix) {
    return ctx.Op(op, std::move(inputs), {}, suffix);
  }
  /*! \brief 1 - x, for a scalar tensor x. */
  NodeEntry OneMinus(const NodeEntry& x, const char* suffix) {
    return ctx.Op("rsubtract_scalar", {x}, {{"scalar", "1"}}, suffix);
  }
  /*! \brief Writes `value` into `var`, after the writes `after` (so running the result runs them all). */
  NodeEntry Assign(const NodeEntry& var, const NodeEntry& value, const std::vector<NodeEntry>& after,
                   const char* suffix) {
    NodeEntry out = ctx.Op("assign", {var, value}, {}, suffix);
    for (const NodeEntry& e : after) out.node->control_deps.push_back(e.node);
    return out;
  }
};

/*! \brief var -= alpha * delta. Inputs: var, alpha, delta. */
Outputs ConvertGradientDescent(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  Update u{ctx};
  NodeEntry var = ctx.VariableInput(0);
  NodeEntry step = u.Op("multiply", {ctx.input(1), ctx.input(2)}, "step");
  return {u.Assign(var, u.Op("subtract", {var, step}, "new_var"), {}, "")};
}

/*!
 * \brief accum = accum * momentum + grad; var -= lr * accum (Nesterov: var -= lr * grad +
 * lr * momentum * accum). Inputs: var, accum, lr, grad, momentum.
 */
Outputs ConvertMomentum(ImportContext& ctx) {
  ctx.ExpectInputs(5);
  Update u{ctx};
  NodeEntry var = ctx.VariableInput(0), accum = ctx.VariableInput(1);
  NodeEntry lr = ctx.input(2), grad = ctx.input(3), momentum = ctx.input(4);
  NodeEntry new_accum = u.Op("add", {u.Op("multiply", {accum, momentum}, "decayed"), grad}, "new_accum");
  NodeEntry step = u.Op("multiply", {lr, new_accum}, "step");
  if (ctx.Bool("use_nesterov", false)) {
    NodeEntry look_ahead = u.Op("multiply", {u.Op("multiply", {lr, momentum}, "lr_momentum"), new_accum}, "look_ahead");
    step = u.Op("add", {u.Op("multiply", {lr, grad}, "lr_grad"), look_ahead}, "nesterov_step");
  }
  NodeEntry accum_out = u.Assign(accum, new_accum, {}, "assign_accum");
  return {u.Assign(var, u.Op("subtract", {var, step}, "new_var"), {accum_out}, "")};
}

/*!
 * \brief Adam: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); m += (grad - m) * (1 - beta1);
 * v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon) (Nesterov uses
 * m * beta1 + (1 - beta1) * grad). Inputs: var, m, v, beta1_power, beta2_power, lr, beta1,
 * beta2, epsilon, grad.
 */
Outputs ConvertAdam(ImportContext& ctx) {
  ctx.ExpectInputs(10);
  Update u{ctx};
  NodeEntry var = ctx.VariableInput(0), m = ctx.VariableInput(1), v = ctx.VariableInput(2);
  NodeEntry beta1_power = ctx.input(3), beta2_power = ctx.input(4), lr = ctx.input(5);
  NodeEntry beta1 = ctx.input(6), beta2 = ctx.input(7), epsilon = ctx.input(8), grad = ctx.input(9);
  NodeEntry correction = u.Op("divide",
                              {u.Op("sqrt", {u.OneMinus(beta2_power, "one_minus_beta2_power")}, "sqrt_bias2"),
                               u.OneMinus(beta1_power, "one_minus_beta1_power")},
                              "correction");
  NodeEntry lr_t = u.Op("multiply", {lr, correction}, "lr_t");
  NodeEntry one_minus_beta1 = u.OneMinus(beta1, "one_minus_beta1");
  NodeEntry new_m =
      u.Op("add", {m, u.Op("multiply", {u.Op("subtract", {grad, m}, "m_delta"), one_minus_beta1}, "m_step")}, "new_m");
  NodeEntry grad_sq = u.Op("square", {grad}, "grad_sq");
  NodeEntry new_v = u.Op(
      "add",
      {v,
       u.Op("multiply", {u.Op("subtract", {grad_sq, v}, "v_delta"), u.OneMinus(beta2, "one_minus_beta2")}, "v_step")},
      "new_v");
  NodeEntry moment = new_m;
  if (ctx.Bool("use_nesterov", false)) {
    moment =
        u.Op("add", {u.Op("multiply", {new_m, beta1}, "m_beta1"), u.Op("multiply", {grad, one_minus_beta1}, "g_beta1")},
             "nesterov_m");
  }
  NodeEntry denom = u.Op("add", {u.Op("sqrt", {new_v}, "sqrt_v"), epsilon}, "denom");
  NodeEntry step = u.Op("divide", {u.Op("multiply", {lr_t, moment}, "scaled_m"), denom}, "step");
  NodeEntry m_out = u.Assign(m, new_m, {}, "assign_m");
  NodeEntry v_out = u.Assign(v, new_v, {}, "assign_v");
  return {u.Assign(var, u.Op("subtract", {var, step}, "new_var"), {m_out, v_out}, "")};
}

}  // namespace

IR_TF_CONVERTER({"ApplyGradientDescent", "ResourceApplyGradientDescent"}, ConvertGradientDescent);
IR_TF_CONVERTER({"ApplyMomentum", "ResourceApplyMomentum"}, ConvertMomentum);
IR_TF_CONVERTER({"ApplyAdam", "ResourceApplyAdam"}, ConvertAdam);

}  // namespace tf
}  // namespace ir
