"""tf.train: optimizers whose updates are graph ops.

Each variable's update is a chain of elementwise ops (hyper-parameters folded in as
`*_scalar` ops) ending in `assign` ops, all grouped into one training op, so the Fusion pass
turns each variable's update into one generated kernel.

In eager mode (tf.enable_eager_execution) the same update expressions are recorded lazily and
apply_gradients assigns every variable's new value in one call (one fused trace); minimize takes
a callable loss and differentiates it with a GradientTape; hyper-parameters (Python numbers,
Adam's bias corrections) enter the trace as 0-d parameters, so a changing learning rate does not
recompile it.
"""
import math

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from ..ops import math_ops as M
from ..framework import Tensor, Variable, apply_op, convert_to_tensor, get_default_graph
from ..ops.gradients import gradients
from ..ops.state_ops import group, trainable_variables

__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer", "get_global_step",
           "get_or_create_global_step", "create_global_step", "global_step"]


def _assign(ref, value, name):
    """An assign op; in eager mode the pair (ref, value) that apply_gradients assigns with the others."""
    if _framework._EAGER is not None:
        return ref, value
    return apply_op("assign", [ref, value], name=name)


def _eager_gradients(loss, var_list, grad_loss):
    """compute_gradients in eager mode: `loss` is a callable, differentiated with a GradientTape."""
    from ..eager.tape import GradientTape
    if not callable(loss):
        raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a function when eager "
                           "execution is enabled.")
    with GradientTape() as tape:
        if var_list is not None:
            tape.watch(list(var_list))
        loss_value = loss()
    var_list = list(var_list) if var_list is not None else tape.watched_variables()
    if not var_list:
        raise ValueError("No variables to optimize.")
    return list(zip(tape.gradient(loss_value, var_list, output_gradients=grad_loss), var_list))


class Optimizer(object):
    def __init__(self, use_locking=False, name="Optimizer"):
        self._name = name
        self._slots = {}

    def compute_gradients(self, loss, var_list=None, gate_gradients=None, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        if _framework._EAGER is not None:
            return _eager_gradients(loss, var_list, grad_loss)
        var_list = list(var_list) if var_list is not None else trainable_variables()
        if not var_list:
            raise ValueError("No variables to optimize.")
        loss = convert_to_tensor(loss)
        if not loss.dtype.is_floating:
            raise ValueError("Invalid type %s for %s, expected: float32, float64." % (loss.dtype.name, loss.name))
        reachable = _reachable_ops(loss)
        connected = [v for v in var_list if reachable is None or v.op.name in reachable]
        grads = gradients(loss, connected, grad_ys=grad_loss, name=self._name + "/gradients") if connected else []
        by_name = dict(zip([v.op.name for v in connected], grads))
        return [(by_name.get(v.op.name), v) for v in var_list]  # None for a variable the loss does not use

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The update of every variable with a gradient (None gradients are skipped); with a
        global_step, an op that increments it after all the updates (as TF's)."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        all_vars = [v for _, v in grads_and_vars]
        grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
        if not grads_and_vars:
            raise ValueError("No gradients provided for any variable: %s." % ([str(v.name) for v in all_vars],))
        if _framework._EAGER is not None:
            _framework._EAGER.assign_all(self._eager_updates(grads_and_vars, global_step))
            return None
        shared = self._prepare()
        updates = []
        for g, v in grads_and_vars:
            updates.extend(self._apply_dense(convert_to_tensor(g), v, shared))
        updates = self._finish(updates)
        if global_step is None:
            return group(*updates, name=name or self._name)
        with get_default_graph().control_dependencies([group(*updates, name=self._name + "/update")]):
            return apply_op("assign_add", [global_step, _one_like(global_step)], name=name or self._name).op

    def _eager_updates(self, grads_and_vars, global_step):
        """The (variable, new value) pairs of an eager apply_gradients. Takes the gradients out of
        `grads_and_vars` (and returns before assign_all) so that, unless the caller holds them too,
        only the new values are alive at the assignment's barrier: a gradient still alive then
        is a live array, computed and written out by the trace as well. (CPython's zip keeps the
        pair it yielded last: with apply_gradients(zip(grads, vars)) the last gradient stays alive.)"""
        shared = self._prepare()
        updates = []
        while grads_and_vars:
            g, v = grads_and_vars.pop(0)
            updates.extend(self._apply_dense(convert_to_tensor(g), v, shared))
        if global_step is not None:
            updates.append((global_step, M.add(global_step, _one_like(global_step))))
        return updates

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=None, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        if not any(g is not None for g, _ in grads_and_vars):
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not support "
                             "gradients, between variables %s and loss %s." % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_name(self):
        return self._name

    def get_slot(self, var, name):
        return self._slots.get((var.op.name, name))

    def get_slot_names(self):
        return sorted({k[1] for k in self._slots})

    def variables(self):
        return list(self._slots.values())

    def _zeros_slot(self, var, slot_name, value=0.0, op_name=None):
        """The slot `slot_name` of `var`, filled with `value` the first time (later updates reuse it, as
        TF does); named as TF names slots: "<var>/<op_name or optimizer name>", then "..._1" and so on."""
        from ..ops.array_ops import zeros
        if (var.op.name, slot_name) in self._slots:
            return self._slots[(var.op.name, slot_name)]
        graph = get_default_graph()
        saved, graph._name_stack = graph._name_stack, []  # named after the variable, outside any name scope
        try:
            with graph.control_dependencies(None):
                init = zeros(var.shape.as_list(), var.dtype)
                slot = Variable(M.add(init, float(value)) if value else init, trainable=False,
                                name="%s/%s" % (var.op.name, op_name or self._name))
        finally:
            graph._name_stack = saved
        self._slots[(var.op.name, slot_name)] = slot
        return slot

    def _prepare(self):
        return None

    def _finish(self, updates):
        """The update ops plus any that must run after them (Adam's beta powers), as TF's _finish."""
        return updates

    def _apply_dense(self, grad, var, shared):
        raise NotImplementedError


# Operations built from the library whose Python inputs do not show what they depend on.
_OPAQUE_OPS = ("Gradient", "pfor", "_Param")


def _reachable_ops(tensor):
    """The names of the operations `tensor` depends on (through data inputs); None when it depends on
    an operation whose inputs are not known here (a gradient, a pfor), so anything may be reachable."""
    seen, stack = set(), [tensor.op]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        if op.type in _OPAQUE_OPS:
            return None
        seen.add(op.name)
        stack.extend(x.op for x in op.inputs if x.op.name not in seen)
    return seen


def _hyper(value):
    """A hyper-parameter: a Python number (folded into *_scalar ops), a scalar tensor (e.g. a placeholder)
    or a callable returning one of these (called at each apply_gradients, as TF does)."""
    return value if isinstance(value, Tensor) or callable(value) else float(value)


def _value(hyper):
    return hyper() if callable(hyper) else hyper


def _one_like(step):
    from ..framework import constant
    return constant(1, dtype=step.dtype)


class GradientDescentOptimizer(Optimizer):
    """var -= lr * grad."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)

    def _apply_dense(self, grad, var, shared):
        step = M.multiply(grad, _value(self.learning_rate), name=var.op.name + "/sgd_step")
        return [_assign(var, M.subtract(var, step, name=var.op.name + "/sgd_new"), var.op.name + "/sgd_assign")]


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + grad; var -= lr * accum (Nesterov: var -= lr * (grad + momentum * accum))."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.momentum = float(momentum)
        self.use_nesterov = use_nesterov

    def _apply_dense(self, grad, var, shared):
        accum = self._zeros_slot(var, "momentum")
        n = var.op.name
        new_accum = M.add(M.multiply(accum, self.momentum), grad, name=n + "/momentum_accum")
        direction = M.add(grad, M.multiply(new_accum, self.momentum)) if self.use_nesterov else new_accum
        new_var = M.subtract(var, M.multiply(direction, _value(self.learning_rate)), name=n + "/momentum_new")
        return [_assign(accum, new_accum, n + "/momentum_assign_accum"), _assign(var, new_var, n + "/momentum_assign")]


class AdamOptimizer(Optimizer):
    """TF's Adam: lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m = b1 m + (1-b1) g;
    v = b2 v + (1-b2) g^2; var -= lr_t * m / (sqrt(v) + epsilon); then beta1_power *= b1 and
    beta2_power *= b2 (once lr_t has read them). As TF's adam.py, the powers are non-slot variables named
    "beta1_power" and "beta2_power" (starting at b1 and b2) and the slots "<var>/Adam", "<var>/Adam_1",
    so checkpoints are interchangeable with TF's; a checkpoint of older tinyflow versions (a step count
    "<name>/step" instead of the powers) restores too (Saver: the powers become b^(step+1))."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        Optimizer.__init__(self, use_locking, name)
        self.learning_rate = _hyper(learning_rate)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)
        self._powers = {}  # graph -> (beta1_power, beta2_power)
        self._eager_steps = 0

    def _get_beta_accumulators(self):
        return self._powers.get(get_default_graph())

    def _power(self, name, beta):
        from ..framework import constant
        graph = get_default_graph()
        saved, graph._name_stack = graph._name_stack, []  # top-level names, as TF's init_scope
        try:
            with graph.control_dependencies(None):
                power = Variable(constant(beta, dtype=_dtypes.float32), trainable=False, name=name)
        finally:
            graph._name_stack = saved
        # what an older tinyflow checkpoint holds instead: the step count t (the power is beta^(t+1))
        power._checkpoint_fallback = (self._name + "/step",
                                      lambda step, beta=beta: np.float32(beta) ** (np.float32(step) + 1))
        return power

    def _prepare(self):
        if _framework._EAGER is not None:  # the bias correction as a Python number (a trace parameter)
            self._eager_steps += 1
            t = self._eager_steps
            return _value(self.learning_rate) * (math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t))
        powers = self._get_beta_accumulators()
        if powers is None:
            powers = self._powers[get_default_graph()] = (self._power("beta1_power", self.beta1),
                                                          self._power("beta2_power", self.beta2))
        beta1_power, beta2_power = powers
        correction2 = M.sqrt(M.subtract(1.0, beta2_power))
        correction1 = M.subtract(1.0, beta1_power)
        self._lr_t = M.divide(M.multiply(correction2, _value(self.learning_rate)), correction1,
                              name=self._name + "/lr_t")
        return self._lr_t

    def _finish(self, updates):
        if _framework._EAGER is not None:
            return updates
        beta1_power, beta2_power = self._get_beta_accumulators()
        # TF multiplies the powers after the updates; after lr_t, which read them, is as exact and lets the
        # variables' updates fuse as before
        with get_default_graph().control_dependencies([self._lr_t.op]):
            return updates + [_assign(beta1_power, M.multiply(beta1_power, self.beta1), self._name + "/update_beta1"),
                    _assign(beta2_power, M.multiply(beta2_power, self.beta2), self._name + "/update_beta2")]

    def _apply_dense(self, grad, var, lr_t):
        m = self._zeros_slot(var, "m")
        v = self._zeros_slot(var, "v")
        n = var.op.name
        new_m = M.add(M.multiply(m, self.beta1), M.multiply(grad, 1.0 - self.beta1), name=n + "/adam_m")
        new_v = M.add(M.multiply(v, self.beta2), M.multiply(M.square(grad), 1.0 - self.beta2), name=n + "/adam_v")
        step = M.divide(M.multiply(new_m, lr_t), M.add(M.sqrt(new_v), self.epsilon))
        new_var = M.subtract(var, step, name=n + "/adam_new")
        return [_assign(m, new_m, n + "/adam_assign_m"), _assign(v, new_v, n + "/adam_assign_v"),
                _assign(var, new_var, n + "/adam_assign")]


def get_global_step(graph=None):
    """The graph's global step: the variable in the GLOBAL_STEP collection (None if there is none)."""
    steps = (graph or get_default_graph()).get_collection("global_step")
    if len(steps) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    return steps[0] if steps else None


def create_global_step(graph=None):
    """A non-trainable int64 scalar variable "global_step" at 0, in GLOBAL_VARIABLES and GLOBAL_STEP."""
    from ..framework import constant
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("\"global_step\" already exists.")
    with graph.as_default(), graph._init_scope():
        return Variable(constant(0, dtype=_dtypes.int64), trainable=False, name="global_step",
                        collections=["variables", "global_step"])


def get_or_create_global_step(graph=None):
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess, global_step_tensor):
    """The global step's value as a Python int."""
    if _framework._EAGER is not None:
        return int(global_step_tensor.numpy())
    return int(sess.run(global_step_tensor))
