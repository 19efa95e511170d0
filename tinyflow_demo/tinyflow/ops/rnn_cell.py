"""tf.nn.rnn_cell: the RNNCell base and TF1's BasicRNNCell, BasicLSTMCell, LSTMCell and GRUCell.

A cell behaves as TF1's Layer-based cells: its first call captures the current variable scope,
opens "<that scope>/<cell name>" (basic_lstm_cell, made unique with _1, _2, ... as TF does) and
creates its variables there with tf.get_variable; later calls reuse them. So static_rnn's cell
variables are named rnn/basic_lstm_cell/kernel, rnn/gru_cell/gates/bias, ... exactly as in TF.
"""
import collections

from . import array_ops, math_ops
from .. import nest
from ..framework import Tensor, name_scope
from .init_ops import constant_initializer, zeros_initializer
from .variable_scope import absolute_name_scope, get_variable, get_variable_scope, variable_scope

__all__ = ["RNNCell", "LSTMStateTuple", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell"]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM state: the cell state c and the output h."""
    __slots__ = ()

    @property
    def dtype(self):
        if self.c.dtype != self.h.dtype:
            raise TypeError("Inconsistent internal state: %s vs %s" % (self.c.dtype, self.h.dtype))
        return self.c.dtype


class RNNCell(object):
    """An RNN cell: (output, new_state) = cell(inputs, state), variables made on the first call.

    Subclasses define state_size, output_size, build(input_depth, dtype) (creating variables with
    add_variable) and call(inputs, state).
    """
    _base_name = "rnn_cell"

    def __init__(self, reuse=None, name=None, dtype=None):
        self._reuse = reuse
        self._name = name
        self._dtype = dtype
        self._outer_scope = None  # the variable scope current at the first call (scope=None)
        self._scope = None  # the cell's own variable scope
        self._variables = []
        self.built = False

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def name(self):
        return self._scope.name if self._scope is not None else (self._name or self._base_name)

    @property
    def variables(self):
        return list(self._variables)

    weights = trainable_variables = trainable_weights = variables

    def build(self, input_depth, dtype):
        """Creates the cell's variables (none by default)."""

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    def add_variable(self, name, shape, dtype=None, initializer=None):
        """A variable of this cell (in the cell's scope), created by tf.get_variable."""
        var = get_variable(name, shape, dtype=dtype or self._dtype, initializer=initializer)
        self._variables.append(var)
        return var

    add_weight = add_variable

    def __call__(self, inputs, state, scope=None):
        """(output, new_state); scope (a name or VariableScope) overrides the captured scope."""
        if scope is not None:
            with variable_scope(scope) as outer:
                return self._layer_call(inputs, state, outer)
        if self._outer_scope is None:
            self._outer_scope = get_variable_scope()
        with variable_scope(self._outer_scope):
            return self._layer_call(inputs, state, None)

    def _layer_call(self, inputs, state, scope):
        if self._scope is None:
            base = self._name or self._base_name
            opened = variable_scope(scope if scope is not None else base) if self._reuse else \
                variable_scope(scope, default_name=base)
            with opened as self._scope:
                pass
        with variable_scope(self._scope, reuse=True if self.built else self._reuse, auxiliary_name_scope=False), \
                absolute_name_scope(self._scope.original_name_scope):
            if not self.built:
                self._build_for(inputs)
            return self.call(inputs, state)

    def _build_for(self, inputs):
        first = nest.flatten(inputs)[0]
        dims = first.shape.dims
        if not dims or dims[-1] is None:
            raise ValueError("Expected inputs.shape[-1] to be known, saw shape: %s" % (first.shape,))
        if self._dtype is None:
            self._dtype = first.dtype
        self.build(dims[-1], self._dtype)
        self.built = True

    def zero_state(self, batch_size, dtype):
        """Zeros of shape [batch_size, size] for each part of state_size (batch_size: an int, or a
        scalar tensor such as tf.shape(x)[0]: the zeros' shape is then found when the graph runs)."""
        batch = batch_size if isinstance(batch_size, Tensor) else int(batch_size)
        with name_scope(type(self).__name__ + "ZeroState"):
            return nest.map_structure(lambda size: array_ops.zeros([batch, int(size)], dtype), self.state_size)


def _linear(args, kernel, bias):
    """concat(args, 1) @ kernel + bias."""
    return math_ops.add(math_ops.matmul(array_ops.concat(args, 1), kernel), bias)


class BasicRNNCell(RNNCell):
    """output = new_state = activation([inputs, state] @ kernel + bias) (activation: tanh)."""
    _base_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        RNNCell.__init__(self, reuse, name, dtype)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    state_size = output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        self._kernel = self.add_variable("kernel", [input_depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units], initializer=zeros_initializer(dtype=dtype))

    def call(self, inputs, state):
        output = self._activation(_linear([inputs, state], self._kernel, self._bias))
        return output, output


class BasicLSTMCell(RNNCell):
    """TF1's BasicLSTMCell: kernel [input + units, 4 * units] with gates in the order i, j, f, o,
    forget_bias added to f, no peepholes or projection."""
    _base_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None):
        RNNCell.__init__(self, reuse, name, dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_depth, dtype):
        self._kernel = self.add_variable("kernel", [input_depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_variable("bias", [4 * self._num_units], initializer=zeros_initializer(dtype=dtype))

    def call(self, inputs, state):
        c, h = state if self._state_is_tuple else array_ops.split(state, 2, axis=1)
        i, j, f, o = array_ops.split(_linear([inputs, h], self._kernel, self._bias), 4, axis=1)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + math_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """TF1's LSTMCell: BasicLSTMCell's gates plus optional peepholes (w_f_diag, w_i_diag, w_o_diag),
    cell_clip, and a projection of the output (projection/kernel [units, num_proj], proj_clip)."""
    _base_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None):
        RNNCell.__init__(self, reuse, name, dtype)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: sharded variables (num_unit_shards, num_proj_shards)")
        self._num_units, self._use_peepholes, self._cell_clip = num_units, use_peepholes, cell_clip
        self._initializer, self._num_proj, self._proj_clip = initializer, num_proj, proj_clip
        self._forget_bias, self._state_is_tuple = forget_bias, state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        h = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, h) if self._state_is_tuple else self._num_units + h

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, input_depth, dtype):
        n, init = self._num_units, self._initializer
        self._kernel = self.add_variable("kernel", [input_depth + (self._num_proj or n), 4 * n], initializer=init)
        self._bias = self.add_variable("bias", [4 * n], initializer=zeros_initializer(dtype=dtype))
        if self._use_peepholes:
            self._w_f_diag, self._w_i_diag, self._w_o_diag = [
                self.add_variable(gate, [n], initializer=init) for gate in ("w_f_diag", "w_i_diag", "w_o_diag")]
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", [n, self._num_proj], initializer=init)

    def call(self, inputs, state):
        sigmoid, n = math_ops.sigmoid, self._num_units
        c_prev, m_prev = state if self._state_is_tuple else \
            array_ops.split(state, [n, self._num_proj or n], axis=1)
        i, j, f, o = array_ops.split(_linear([inputs, m_prev], self._kernel, self._bias), 4, axis=1)
        if self._use_peepholes:
            f = f + self._w_f_diag * c_prev
            i = i + self._w_i_diag * c_prev
        c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            o = o + self._w_o_diag * c
        m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(RNNCell):
    """TF1's GRUCell: r, u = split(sigmoid([x, h] @ gates/kernel + gates/bias)) (gate bias 1.0),
    c = tanh([x, r * h] @ candidate/kernel + candidate/bias), new_h = u * h + (1 - u) * c."""
    _base_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None):
        RNNCell.__init__(self, reuse, name, dtype)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh
        self._kernel_initializer, self._bias_initializer = kernel_initializer, bias_initializer

    state_size = output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n, k_init, b_init = self._num_units, self._kernel_initializer, self._bias_initializer
        self._gate_kernel = self.add_variable("gates/kernel", [input_depth + n, 2 * n], initializer=k_init)
        self._gate_bias = self.add_variable("gates/bias", [2 * n],
                                            initializer=b_init or constant_initializer(1.0, dtype=dtype))
        self._candidate_kernel = self.add_variable("candidate/kernel", [input_depth + n, n], initializer=k_init)
        self._candidate_bias = self.add_variable("candidate/bias", [n],
                                                 initializer=b_init or zeros_initializer(dtype=dtype))

    def call(self, inputs, state):
        r, u = array_ops.split(math_ops.sigmoid(_linear([inputs, state], self._gate_kernel, self._gate_bias)),
                               2, axis=1)
        c = self._activation(_linear([inputs, r * state], self._candidate_kernel, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h
