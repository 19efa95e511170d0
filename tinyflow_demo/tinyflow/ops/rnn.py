"""tf.nn.static_rnn and tf.nn.static_bidirectional_rnn (the cell unrolled over a Python list of steps).

rnn_step (one cell call with TF's sequence_length masking) and zero_state_like (a zero state for a
batch known only at run time) are the per-step pieces a loop-based dynamic_rnn reuses.
"""
from . import array_ops, math_ops
from .. import nest
from .. import dtypes as _dtypes
from ..framework import convert_to_tensor
from .variable_scope import variable_scope

__all__ = ["static_rnn", "static_bidirectional_rnn", "rnn_step", "zero_state_like"]


def _broadcastable(mask, like):
    """mask [batch] as [batch, 1, ...] of like's rank."""
    for _ in range(max(1, like.shape.ndims or 2) - 1):
        mask = array_ops.expand_dims(mask, -1)
    return mask


def rnn_step(time, sequence_length, state, call_cell):
    """One RNN step over a batch: call_cell() -> (output, new_state), then, where a row's sequence has
    ended (time >= sequence_length), a zero output and the old state carried through (TF's
    semantics). time: a Python int or an int32 scalar tensor (a loop counter); sequence_length: an
    int32 vector [batch] or None (no masking)."""
    output, new_state = call_cell()
    if sequence_length is None:
        return output, new_state
    done = math_ops.less_equal(sequence_length, time)
    output = nest.map_structure(
        lambda out: array_ops.where(_broadcastable(done, out), array_ops.zeros_like(out), out), output)
    new_state = nest.map_structure(
        lambda old, new: array_ops.where(_broadcastable(done, new), old, new), state, new_state)
    return output, new_state


def zero_state_like(cell, first_input, dtype):
    """cell's zero state for first_input's batch: cell.zero_state when the batch size is static,
    else zeros built from first_input's rows (zeros_like of a column, broadcast to each size)."""
    batch = first_input.shape.dims[0] if first_input.shape.dims else None
    if batch is not None:
        return cell.zero_state(batch, dtype)
    column = array_ops.zeros_like(first_input[:, :1])
    if column.dtype != _dtypes.as_dtype(dtype):
        column = math_ops.cast(column, dtype)
    return nest.map_structure(lambda size: column + array_ops.zeros([int(size)], dtype), cell.state_size)


def initial_state_of(cell, initial_state, first_input, dtype,
                     missing="If no initial_state is provided, dtype must be specified"):
    """The state an RNN starts from: `initial_state`, else the cell's zero state of `dtype` (a
    ValueError with TF's message `missing` when neither is given)."""
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError(missing)
    return zero_state_like(cell, first_input, dtype)


def _check_inputs(inputs):
    if not nest.is_nested(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    for x in nest.flatten(inputs):
        dims = x.shape.dims
        if dims is None or len(dims) < 2:
            raise ValueError("static_rnn: each input must be [batch, depth, ...], got %s with shape %s"
                             % (x.name, x.shape))
        if any(d is None for d in dims[1:]):
            raise ValueError("Input size (dimension 1 of inputs) must be accessible via shape inference, but saw "
                             "value None (input %s, shape %s)." % (x.name, x.shape))
    return nest.flatten(inputs[0])[0]


def _as_lengths(sequence_length):
    if sequence_length is None:
        return None
    sequence_length = convert_to_tensor(sequence_length)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError("sequence_length must be a vector of length batch_size")
    return math_ops.cast(sequence_length, _dtypes.int32) if sequence_length.dtype != _dtypes.int32 \
        else sequence_length


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """(outputs, state) of cell over the list of inputs [batch, depth], in variable scope "rnn".

    With sequence_length, the outputs of a row from its length on are zeros and its state is the
    one at its last step. initial_state defaults to the cell's zero state (then dtype is needed).
    """
    first_input = _check_inputs(inputs)
    with variable_scope(scope or "rnn") as varscope:
        state = initial_state_of(cell, initial_state, first_input, dtype)
        lengths = _as_lengths(sequence_length)
        outputs = []
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, state = rnn_step(time, lengths, state, lambda: cell(input_, state))  # noqa: B023
            outputs.append(output)
        return outputs, state


def _reverse_seq(input_seq, lengths):
    """The list of steps reversed, each row only within its first lengths[row] steps (as
    reverse_sequence): one-hot permutations [batch, T, T] applied by a batched matmul."""
    if lengths is None:
        return list(reversed(input_seq))
    steps = len(input_seq)
    t = array_ops.range(steps)
    rows = array_ops.expand_dims(lengths, 1)
    source = array_ops.where(math_ops.less(t, rows), math_ops.subtract(rows - 1, t), t)
    flat = [nest.flatten(x) for x in input_seq]
    reversed_parts = []
    for part in zip(*flat):
        joined = array_ops.stack(part, axis=1)  # [batch, T, depth]
        perm = array_ops.one_hot(source, steps, dtype=joined.dtype)
        reversed_parts.append(array_ops.unstack(math_ops.matmul(perm, joined), num=steps, axis=1))
    return [nest.pack_sequence_as(input_seq[i], [r[i] for r in reversed_parts]) for i in range(steps)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """(outputs, state_fw, state_bw): cell_fw over inputs, cell_bw over them reversed (within each
    row's length), outputs concatenated [fw, bw] on axis 1; scopes bidirectional_rnn/fw and /bw."""
    _check_inputs(inputs)
    if not hasattr(cell_fw, "state_size") or not hasattr(cell_bw, "state_size"):
        raise TypeError("cell_fw and cell_bw must be RNN cells")
    lengths = _as_lengths(sequence_length)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, lengths, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, lengths)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, lengths, scope=bw_scope)
    output_bw = _reverse_seq(tmp, lengths)
    outputs = [nest.pack_sequence_as(fw, [array_ops.concat([a, b], 1) for a, b in
                                          zip(nest.flatten(fw), nest.flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw

