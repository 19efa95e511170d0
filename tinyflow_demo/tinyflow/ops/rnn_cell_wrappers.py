"""tf.nn.rnn_cell.MultiRNNCell and DropoutWrapper: cells made of cells.

MultiRNNCell calls its cells in scopes cell_0, cell_1, ... inside its own (multi_rnn_cell), so
their variables are rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel, ... as in TF.
DropoutWrapper calls the wrapped cell directly (its variables keep the cell's names).
"""
import zlib

from . import array_ops, nn
from .. import nest
from ..framework import Tensor
from .rnn_cell import LSTMStateTuple, RNNCell
from .variable_scope import variable_scope

__all__ = ["MultiRNNCell", "DropoutWrapper"]


class MultiRNNCell(RNNCell):
    """Stacked cells: each one's output is the next one's input; the state is the tuple of theirs
    (or, with state_is_tuple=False, their concatenation along axis 1)."""
    _base_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        RNNCell.__init__(self)
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError("cells must be a list or tuple, but saw: %s." % (cells,))
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is not set. "
                             "State sizes are: %s" % ([c.state_size for c in self._cells],))

    @property
    def state_size(self):
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    @property
    def variables(self):
        return [v for cell in self._cells for v in cell.variables]

    weights = trainable_variables = trainable_weights = variables

    def zero_state(self, batch_size, dtype):
        if self._state_is_tuple:
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
        return RNNCell.zero_state(self, batch_size, dtype)

    def call(self, inputs, state):
        if self._state_is_tuple:
            states = list(state)
        else:
            states = array_ops.split(state, [cell.state_size for cell in self._cells], axis=1)
        new_states = []
        for i, cell in enumerate(self._cells):
            with variable_scope("cell_%d" % i):
                inputs, new_state = cell(inputs, states[i])
            new_states.append(new_state)
        return inputs, (tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1))


def _default_state_filter(substate):
    """Drop out every part of the state except an LSTM's memory c."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _filtered_map(fn, visitor, value):
    """fn on the leaves of value that visitor selects (True: this part, recursively; a structure of
    bools: the parts it marks), as TF's dropout_state_filter_visitor."""
    verdict = visitor(value)
    if verdict is False:
        return value
    if verdict is True:
        if not nest.is_nested(value):
            return fn(value)
        return nest.pack_sequence_as(value, nest.flatten(
            [_filtered_map(fn, visitor, child) for child in _children(value)]))
    children = [fn(child) if keep else child for child, keep in zip(_children(value), _children(verdict))]
    return nest.pack_sequence_as(value, nest.flatten(children))


def _children(value):
    return [value[k] for k in sorted(value)] if isinstance(value, dict) else list(value)


def _check_keep_prob(name, value):
    if isinstance(value, Tensor):
        raise NotImplementedError("DropoutWrapper: %s must be a Python number in tinyflow (use a session with "
                                  "is_train=False to evaluate without dropout)" % name)
    if not 0.0 < float(value) <= 1.0:
        raise ValueError("Parameter %s must be between 0 and 1: %s" % (name, value))
    return float(value)


class DropoutWrapper(RNNCell):
    """Dropout on a cell's inputs, outputs and new state (keep probabilities in (0, 1]; 1 = none).

    Dropout is active in training sessions (Session(is_train=True), the default). With a seed,
    each of the input/state/output dropouts gets its own fixed seed (the same mask every step, as
    TF's op seeds); without, every dropout op draws its own mask.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        RNNCell.__init__(self)
        if variational_recurrent:
            raise NotImplementedError("DropoutWrapper: variational_recurrent")
        self._cell = cell
        self._input_keep_prob = _check_keep_prob("input_keep_prob", input_keep_prob)
        self._output_keep_prob = _check_keep_prob("output_keep_prob", output_keep_prob)
        self._state_keep_prob = _check_keep_prob("state_keep_prob", state_keep_prob)
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_state_filter

    cell = property(lambda self: self._cell)
    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)
    variables = property(lambda self: self._cell.variables)
    weights = trainable_variables = trainable_weights = variables

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)

    def _dropout(self, values, salt, keep_prob):
        def drop(index, x):
            seed = None if self._seed is None else \
                (self._seed * 1000003 + zlib.crc32(("%s_%d" % (salt, index)).encode())) % (2 ** 31)
            return nn.dropout(x, keep_prob, seed=array_ops._op_seed(seed))
        flat = nest.flatten(values)
        return nest.pack_sequence_as(values, [drop(i, x) for i, x in enumerate(flat)])

    def __call__(self, inputs, state, scope=None):
        if self._input_keep_prob < 1:
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._state_keep_prob < 1:
            counter = iter(range(len(nest.flatten(new_state))))
            new_state = _filtered_map(lambda x: self._dropout(x, "state%d" % next(counter), self._state_keep_prob),
                                      self._state_filter, new_state)
        if self._output_keep_prob < 1:
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state
