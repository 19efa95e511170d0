"""tf.train's other optimizers: RMSProp, Adagrad, Adadelta, Ftrl, ProximalGradientDescent, ProximalAdagrad.

Each update is TF's training_ops kernel (ApplyRMSProp, ApplyAdagrad, ...) written as elementwise math
over the variable and its slots, ending in assign ops, so the Fusion pass makes one kernel of each
variable's update (as Adam's). Slots are named as TF names them: "<var>/<optimizer name>", "..._1".
"""
from ..ops import math_ops as M
from ..ops.array_ops import where
from .optimizer import Optimizer, _assign, _hyper, _value

__all__ = ["RMSPropOptimizer", "AdagradOptimizer", "AdadeltaOptimizer", "FtrlOptimizer",
           "ProximalGradientDescentOptimizer", "ProximalAdagradOptimizer"]


def _check_non_negative(**values):
    for key, value in values.items():
        if value < 0.0:
            raise ValueError("%s %f needs to be positive or zero" % (key, value))


def _times(a, b):
    """a * b, in Python when both are numbers (a hyper-parameter may be a tensor)."""
    return a * b if isinstance(a, float) and isinstance(b, float) else M.multiply(a, b)


def _proximal(prox_v, lr, l1, l2):
    """TF's proximal step: sign(v) max(|v| - lr l1, 0) / (1 + lr l2) (without the shrinkage when l1 == 0)."""
    if l1 > 0:
        prox_v = M.multiply(M.sign(prox_v), M.maximum(M.subtract(M.abs(prox_v), _times(lr, l1)), 0.0))
    return M.divide(prox_v, M.add(_times(lr, l2), 1.0)) if l2 else prox_v


class RMSPropOptimizer(Optimizer):
    """ms = decay ms + (1-decay) g^2; mom = momentum mom + lr g / sqrt(ms + eps); var -= mom. Centered:
    mg = decay mg + (1-decay) g and the denominator is sqrt(ms - mg^2 + eps). Slot "rms" starts at ones."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.decay, self.momentum, self.epsilon = float(decay), float(momentum), float(epsilon)
        self.centered = centered

    def _apply_dense(self, grad, var, shared):
        n = var.op.name
        rms = self._zeros_slot(var, "rms", 1.0)
        mg = self._zeros_slot(var, "mg") if self.centered else None
        mom = self._zeros_slot(var, "momentum")
        new_rms = M.add(M.multiply(rms, self.decay), M.multiply(M.square(grad), 1.0 - self.decay), name=n + "/rms_ms")
        denom = new_rms
        updates = [_assign(rms, new_rms, n + "/rms_assign_ms")]
        if self.centered:
            new_mg = M.add(M.multiply(mg, self.decay), M.multiply(grad, 1.0 - self.decay), name=n + "/rms_mg")
            denom = M.subtract(new_rms, M.square(new_mg))
            updates.append(_assign(mg, new_mg, n + "/rms_assign_mg"))
        step = M.divide(M.multiply(grad, _value(self.learning_rate)), M.sqrt(M.add(denom, self.epsilon)))
        new_mom = M.add(M.multiply(mom, self.momentum), step, name=n + "/rms_mom")
        return updates + [_assign(mom, new_mom, n + "/rms_assign_mom"),
                          _assign(var, M.subtract(var, new_mom, name=n + "/rms_new"), n + "/rms_assign")]


class AdagradOptimizer(Optimizer):
    """accum += g^2; var -= lr g / sqrt(accum). Slot "accumulator" starts at initial_accumulator_value."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % initial_accumulator_value)
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.initial_accumulator_value = float(initial_accumulator_value)

    def _apply_dense(self, grad, var, shared):
        n = var.op.name
        accum = self._zeros_slot(var, "accumulator", self.initial_accumulator_value)
        new_accum = M.add(accum, M.square(grad), name=n + "/adagrad_accum")
        step = M.multiply(M.multiply(grad, _value(self.learning_rate)), M.rsqrt(new_accum))
        return [_assign(accum, new_accum, n + "/adagrad_assign_accum"),
                _assign(var, M.subtract(var, step, name=n + "/adagrad_new"), n + "/adagrad_assign")]


class AdadeltaOptimizer(Optimizer):
    """accum = rho accum + (1-rho) g^2; update = sqrt(accum_update + eps) / sqrt(accum + eps) g;
    accum_update = rho accum_update + (1-rho) update^2; var -= lr update."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.rho, self.epsilon = float(rho), float(epsilon)

    def _apply_dense(self, grad, var, shared):
        n = var.op.name
        accum = self._zeros_slot(var, "accum")
        accum_update = self._zeros_slot(var, "accum_update")
        new_accum = M.add(M.multiply(accum, self.rho), M.multiply(M.square(grad), 1.0 - self.rho),
                          name=n + "/adadelta_accum")
        update = M.multiply(M.divide(M.sqrt(M.add(accum_update, self.epsilon)), M.sqrt(M.add(new_accum, self.epsilon))),
                            grad)
        new_update = M.add(M.multiply(accum_update, self.rho), M.multiply(M.square(update), 1.0 - self.rho),
                           name=n + "/adadelta_accum_update")
        new_var = M.subtract(var, M.multiply(update, _value(self.learning_rate)), name=n + "/adadelta_new")
        return [_assign(accum, new_accum, n + "/adadelta_assign_accum"),
                _assign(accum_update, new_update, n + "/adadelta_assign_update"),
                _assign(var, new_var, n + "/adadelta_assign")]


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (TF's ApplyFtrl / ApplyFtrlV2): with p = -learning_rate_power,
    accum_new = accum + g^2; linear += g' - (accum_new^p - accum^p) / lr var (g' = g + 2 l2_shrinkage var);
    var = (sign(linear) l1 - linear) / (accum_new^p / lr + 2 l2) where |linear| > l1, else 0."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0):
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero" % learning_rate_power)
        _check_non_negative(initial_accumulator_value=initial_accumulator_value,
                            l1_regularization_strength=l1_regularization_strength,
                            l2_regularization_strength=l2_regularization_strength,
                            l2_shrinkage_regularization_strength=l2_shrinkage_regularization_strength)
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1, self.l2 = float(l1_regularization_strength), float(l2_regularization_strength)
        self.l2_shrinkage = float(l2_shrinkage_regularization_strength)
        self._accum_name, self._linear_name = accum_name or name, linear_name or name

    def _apply_dense(self, grad, var, shared):
        n, lr, p = var.op.name, _value(self.learning_rate), -self.learning_rate_power
        accum = self._zeros_slot(var, "accum", self.initial_accumulator_value, op_name=self._accum_name)
        linear = self._zeros_slot(var, "linear", op_name=self._linear_name)
        new_accum = M.add(accum, M.square(grad), name=n + "/ftrl_accum")
        shrunk = M.add(grad, M.multiply(var, 2.0 * self.l2_shrinkage)) if self.l2_shrinkage else grad
        new_accum_p = M.pow(new_accum, p)
        sigma = M.divide(M.subtract(new_accum_p, M.pow(accum, p)), lr)
        new_linear = M.add(linear, M.subtract(shrunk, M.multiply(sigma, var)), name=n + "/ftrl_linear")
        quadratic = M.add(M.divide(new_accum_p, lr), 2.0 * self.l2)
        shrink = M.subtract(M.multiply(M.sign(new_linear), self.l1), new_linear)
        new_var = where(M.greater(M.abs(new_linear), self.l1), M.divide(shrink, quadratic), M.multiply(var, 0.0),
                        name=n + "/ftrl_new")
        return [_assign(accum, new_accum, n + "/ftrl_assign_accum"),
                _assign(linear, new_linear, n + "/ftrl_assign_linear"), _assign(var, new_var, n + "/ftrl_assign")]


class ProximalGradientDescentOptimizer(Optimizer):
    """prox_v = var - lr g; var = sign(prox_v) max(|prox_v| - lr l1, 0) / (1 + lr l2)."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.l1, self.l2 = float(l1_regularization_strength), float(l2_regularization_strength)

    def _apply_dense(self, grad, var, shared):
        n, lr = var.op.name, _value(self.learning_rate)
        prox_v = M.subtract(var, M.multiply(grad, lr))
        return [_assign(var, _proximal(prox_v, lr, self.l1, self.l2), n + "/proximal_assign")]


class ProximalAdagradOptimizer(Optimizer):
    """accum += g^2; lr_t = lr / sqrt(accum); then the proximal step of ProximalGradientDescent with lr_t."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % initial_accumulator_value)
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1, self.l2 = float(l1_regularization_strength), float(l2_regularization_strength)

    def _apply_dense(self, grad, var, shared):
        n = var.op.name
        accum = self._zeros_slot(var, "accumulator", self.initial_accumulator_value)
        new_accum = M.add(accum, M.square(grad), name=n + "/proximal_adagrad_accum")
        lr_t = M.multiply(M.rsqrt(new_accum), _value(self.learning_rate))
        prox_v = M.subtract(var, M.multiply(grad, lr_t))
        return [_assign(accum, new_accum, n + "/proximal_adagrad_assign_accum"),
                _assign(var, _proximal(prox_v, lr_t, self.l1, self.l2), n + "/proximal_adagrad_assign")]
