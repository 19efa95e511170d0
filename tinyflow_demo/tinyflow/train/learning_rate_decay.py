"""tf.train's learning-rate schedules: TF 1.x's formulas as graph math over the global step (cast to
float32). In graph mode each returns the decayed rate as a scalar tensor; in eager mode (as TF 1.x) a
callable computing it from the step's current value, which the optimizers call at each update."""
import math

from .. import dtypes as _dtypes
from .. import framework as _framework
from ..ops import math_ops as M
from ..ops.array_ops import identity, where
from ..framework import convert_to_tensor

__all__ = ["exponential_decay", "piecewise_constant", "polynomial_decay", "cosine_decay", "cosine_decay_restarts",
           "inverse_time_decay", "natural_exp_decay", "linear_cosine_decay"]


def _schedule(name, global_step, compute):
    """compute(step as float32) now (graph mode) or as a callable (eager mode)."""
    if global_step is None:
        raise ValueError("global_step is required for %s." % name)

    def decayed():
        step = convert_to_tensor(global_step)
        return compute(M.cast(step, _dtypes.float32) if step.dtype != _dtypes.float32 else step)
    return decayed if _framework._EAGER is not None else decayed()


def _progress(step, decay_steps, staircase):
    p = M.divide(step, decay_steps)
    return M.floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr * decay_rate ^ (step / decay_steps) (the exponent floored when staircase)."""
    return _schedule("exponential_decay", global_step, lambda step: M.multiply(
        learning_rate, M.pow(decay_rate, _progress(step, decay_steps, staircase)), name=name))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr * exp(-decay_rate * step / decay_steps) (the ratio floored when staircase)."""
    return _schedule("natural_exp_decay", global_step, lambda step: M.multiply(
        learning_rate, M.exp(M.multiply(_progress(step, decay_steps, staircase), -decay_rate)), name=name))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr / (1 + decay_rate * step / decay_steps) (the ratio floored when staircase)."""
    return _schedule("inverse_time_decay", global_step, lambda step: M.divide(
        learning_rate, M.add(M.multiply(_progress(step, decay_steps, staircase), decay_rate), 1.0), name=name))


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """(lr - end) * (1 - step / decay_steps) ^ power + end, the step capped at decay_steps; with cycle,
    decay_steps grows to the next multiple of itself past the step instead (at least once)."""
    def compute(step):
        if cycle:
            steps = M.multiply(M.maximum(M.ceil(M.divide(step, decay_steps)), 1.0), decay_steps)
        else:
            steps, step = decay_steps, M.minimum(step, decay_steps)
        frac = M.pow(M.subtract(1.0, M.divide(step, steps)), power)
        return M.add(M.multiply(M.subtract(learning_rate, end_learning_rate), frac), end_learning_rate, name=name)
    return _schedule("polynomial_decay", global_step, compute)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""
    def compute(step):
        fraction = M.divide(M.minimum(step, decay_steps), decay_steps)
        cosine = M.multiply(M.add(M.cos(M.multiply(fraction, math.pi)), 1.0), 0.5)
        return M.multiply(learning_rate, M.add(M.multiply(cosine, 1.0 - alpha), alpha), name=name)
    return _schedule("cosine_decay", global_step, compute)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                          name=None):
    """SGDR: cosine decay restarted after first_decay_steps, each period t_mul times longer and each
    restart's peak m_mul times lower."""
    t_mul, m_mul = float(t_mul), float(m_mul)

    def compute(step):
        fraction = M.divide(step, first_decay_steps)
        if t_mul == 1.0:
            i_restart = M.floor(fraction)
            fraction = M.subtract(fraction, i_restart)
        else:
            i_restart = M.floor(M.divide(M.log(M.subtract(1.0, M.multiply(fraction, 1.0 - t_mul))), math.log(t_mul)))
            sum_r = M.divide(M.subtract(1.0, M.pow(t_mul, i_restart)), 1.0 - t_mul)
            fraction = M.divide(M.subtract(fraction, sum_r), M.pow(t_mul, i_restart))
        cosine = M.multiply(M.multiply(M.pow(m_mul, i_restart), 0.5), M.add(M.cos(M.multiply(fraction, math.pi)), 1.0))
        return M.multiply(learning_rate, M.add(M.multiply(cosine, 1.0 - alpha), alpha), name=name)
    return _schedule("cosine_decay_restarts", global_step, compute)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001,
                        name=None):
    """lr * ((alpha + linear) * cosine + beta), linear = (decay_steps - step) / decay_steps and cosine =
    0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps)), the step capped at decay_steps."""
    def compute(step):
        step = M.minimum(step, decay_steps)
        linear = M.divide(M.subtract(decay_steps, step), decay_steps)
        fraction = M.multiply(M.divide(step, decay_steps), 2.0 * num_periods)
        cosine = M.multiply(M.add(M.cos(M.multiply(fraction, math.pi)), 1.0), 0.5)
        return M.multiply(learning_rate, M.add(M.multiply(M.add(linear, alpha), cosine), beta), name=name)
    return _schedule("linear_cosine_decay", global_step, compute)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i], values[-1]
    past the last boundary."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")

    def compute():
        step = convert_to_tensor(x)
        dtype = convert_to_tensor(values[0]).dtype if not isinstance(values[0], float) else _dtypes.float32
        result = convert_to_tensor(values[-1], dtype=dtype)
        for boundary, value in reversed(list(zip(boundaries, values[:-1]))):
            result = where(M.less_equal(step, boundary), convert_to_tensor(value, dtype=dtype), result)
        return identity(result, name=name) if name else result
    return compute if _framework._EAGER is not None else compute()
