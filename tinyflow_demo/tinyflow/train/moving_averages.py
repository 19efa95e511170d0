"""tf.train.ExponentialMovingAverage: shadow variables updated as shadow -= (1 - decay) * (shadow - value)."""
from .. import dtypes as _dtypes
from ..ops import math_ops as M
from ..ops.array_ops import zeros
from ..framework import Variable, convert_to_tensor, get_default_graph
from ..ops.state_ops import GraphKeys, add_to_collection, assign, assign_add, assign_sub, global_variables, group, \
    moving_average_variables, trainable_variables

__all__ = ["ExponentialMovingAverage"]


class ExponentialMovingAverage(object):
    """Keeps a moving average of variables (or tensors). With num_updates the decay is
    min(decay, (1 + num_updates) / (10 + num_updates)); with zero_debias (always for tensors) the
    average is divided by 1 - decay^t, t the number of updates, as TF's assign_moving_average does."""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}  # source op name -> shadow variable
        self._debias = {}  # shadow op name -> (biased, local_step) variables of zero_debias

    @property
    def name(self):
        return self._name

    def _decay_value(self):
        decay = convert_to_tensor(self._decay, dtype=_dtypes.float32) if not isinstance(self._decay, (int, float)) \
            else float(self._decay)
        if self._num_updates is None:
            return decay
        n = M.cast(convert_to_tensor(self._num_updates), _dtypes.float32)
        return M.minimum(M.divide(M.add(n, 1.0), M.add(n, 10.0)), decay)

    def apply(self, var_list=None):
        """Creates the shadow variables (initialized to each variable's initial value, to zeros for a
        tensor) of the variables not averaged yet, and returns the op that updates them all (TF 1.15:
        applying again reuses the shadows)."""
        var_list = trainable_variables() if var_list is None else list(var_list)
        graph = get_default_graph()
        for var in var_list:
            if not var.dtype.is_floating:
                raise TypeError("The variables must be half, float, or double: %s" % var.name)
            if var.op.name in self._averages:  # applied again (e.g. each eager step): the same shadow
                continue
            is_variable = isinstance(var, Variable)
            with graph._init_scope():
                init = var.initial_value if is_variable else zeros(var.shape.as_list(), var.dtype)
                self._averages[var.op.name] = Variable(init, trainable=False, name=self.average_name(var))
            add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
        decay = self._decay_value()
        one_minus_decay = 1.0 - decay if isinstance(decay, float) else M.subtract(1.0, decay)
        updates = []
        for var in var_list:
            shadow = self._averages[var.op.name]
            if self._zero_debias or not isinstance(var, Variable):
                updates.append(self._zero_debias_update(shadow, var, decay, one_minus_decay))
            else:
                delta = M.multiply(M.subtract(shadow, var), one_minus_decay)
                updates.append(assign_sub(shadow, delta, name=shadow.op.name + "/AssignMovingAvg"))
        return group(*updates, name=self._name)

    def _zero_debias_update(self, shadow, value, decay, one_minus_decay):
        """biased -= (biased - value) * (1 - decay); t += 1; shadow = biased / (1 - decay^t)."""
        if shadow.op.name not in self._debias:
            with get_default_graph()._init_scope():
                self._debias[shadow.op.name] = (
                    Variable(zeros(shadow.shape.as_list(), shadow.dtype), trainable=False,
                             name=shadow.op.name + "/biased"),
                    Variable(zeros([], shadow.dtype), trainable=False, name=shadow.op.name + "/local_step"))
        biased, local_step = self._debias[shadow.op.name]
        new_biased = assign_sub(biased, M.multiply(M.subtract(biased, value), one_minus_decay))
        factor = M.subtract(1.0, M.pow(decay, assign_add(local_step, 1.0)))
        return assign(shadow, M.divide(new_biased, factor), name=shadow.op.name + "/AssignMovingAvg")

    def average(self, var):
        """The shadow variable of `var` (None if apply did not average it)."""
        return self._averages.get(var.op.name)

    def average_name(self, var):
        """"<var's op name>/<name>", the shadow variable's name (also in checkpoints)."""
        return var.op.name + "/" + self._name

    def variables_to_restore(self, moving_avg_variables=None):
        """{checkpoint name: variable} restoring each averaged variable from its shadow's name and every
        other global variable from its own name."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        averaged = {v.op.name: v for v in moving_avg_variables}
        name_map = {self.average_name(v): v for v in averaged.values()}
        for v in global_variables():
            if v.op.name not in averaged and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
