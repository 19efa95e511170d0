"""tf.nn.dynamic_rnn and tf.nn.bidirectional_dynamic_rnn: a tf.while_loop over time, as TF builds them.

The inputs (time major) are unstacked into TensorArrays; the loop body reads step t, calls the
cell (rnn.rnn_step: with sequence_length, outputs past a row's length are zero and its state is
carried through) and writes the output to a TensorArray, stacked after the loop. The cell builds
its variables at the body's (single) trace; they live outside the loop and are read inside it as
captured tensors, so gradients reach them.
"""
from . import array_ops, math_ops
from .. import nest
from .. import dtypes as _dtypes
from .control_flow_ops import while_loop
from ..framework import convert_to_tensor
from .functional_ops import _accumulators
from .rnn import _as_lengths, initial_state_of, rnn_step
from .tensor_array_ops import TensorArray
from .variable_scope import variable_scope

__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn"]


def _swap_batch_time(x):
    rank = x.shape.ndims
    if rank is None or rank < 2:
        raise ValueError("dynamic_rnn: inputs must be at least [batch, time], got %s with shape %s" % (x.name, x.shape))
    return array_ops.transpose(x, [1, 0] + list(range(2, rank)))


def _zero_outputs(cell, first_step, dtype):
    """Zeros [batch, size] for each part of cell.output_size (the batch may be known only at run time)."""
    batch = first_step.shape.dims[0] if first_step.shape.dims else None
    if batch is not None:
        return [array_ops.zeros([batch, int(size)], dtype) for size in nest.flatten(cell.output_size)]
    column = math_ops.cast(array_ops.zeros_like(first_step[:, :1]), dtype)
    return [column + array_ops.zeros([int(size)], dtype) for size in nest.flatten(cell.output_size)]


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """(outputs, state): outputs [batch, time, output_size] ([time, batch, ...] when time_major),
    state the final state (with sequence_length: the state at each row's last step)."""
    with variable_scope(scope or "rnn"):
        flat = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat = [_swap_batch_time(x) for x in flat]
        steps = flat[0].shape.dims[0] if flat[0].shape.dims else None
        n = convert_to_tensor(steps, dtype=_dtypes.int32) if steps is not None else array_ops.shape(flat[0])[0]
        first_step = flat[0][0]
        state = initial_state_of(cell, initial_state, first_step, dtype,
                                 "If there is no initial_state, you must give a dtype.")
        out_dtype = dtype or nest.flatten(state)[0].dtype
        lengths = _as_lengths(sequence_length)
        input_tas = [TensorArray(x.dtype, size=steps if steps is not None else n).unstack(x) for x in flat]
        output_tas = _accumulators(flat, _zero_outputs(cell, first_step, out_dtype), n)

        def body(time, outs, state):
            step = nest.pack_sequence_as(inputs, [ta.read(time) for ta in input_tas])
            output, new_state = rnn_step(time, lengths, state, lambda: cell(step, state))
            return time + 1, [ta.write(time, o) for ta, o in zip(outs, nest.flatten(output))], new_state
        _, output_tas, state = while_loop(lambda time, outs, state: time < n, body, (0, output_tas, state),
                                          name="while")
        outputs = [ta.stack() for ta in output_tas]
        if not time_major:
            outputs = [_swap_batch_time(o) for o in outputs]
        return nest.pack_sequence_as(cell.output_size, outputs), state


def _reverse_time(x, lengths, time_major):
    """x reversed along time, each row only within its first lengths[row] steps (reverse_sequence):
    a one-hot permutation [batch, time, time] applied by a batched matmul (time must be static)."""
    batch_major = _swap_batch_time(x) if time_major else x
    steps = batch_major.shape.dims[1]
    if steps is None:
        raise ValueError("bidirectional_dynamic_rnn: tinyflow needs the number of time steps statically")
    if lengths is None:
        lengths = math_ops.cast(array_ops.zeros_like(batch_major[:, 0, 0]), _dtypes.int32) + steps
    t = array_ops.range(steps)
    rows = array_ops.expand_dims(lengths, 1)
    source = array_ops.where(math_ops.less(t, rows), math_ops.subtract(rows - 1, t), t + array_ops.zeros_like(rows))
    reversed_x = math_ops.matmul(array_ops.one_hot(source, steps, dtype=x.dtype), batch_major)
    return _swap_batch_time(reversed_x) if time_major else reversed_x


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """((output_fw, output_bw), (state_fw, state_bw)): cell_fw over inputs, cell_bw over inputs
    reversed within each row's length (its outputs reversed back); scopes bidirectional_rnn/fw, /bw."""
    lengths = _as_lengths(sequence_length)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, lengths, initial_state_fw, dtype,
                                              time_major=time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_time(convert_to_tensor(inputs), lengths, time_major)
            tmp, state_bw = dynamic_rnn(cell_bw, reversed_inputs, lengths, initial_state_bw, dtype,
                                        time_major=time_major, scope=bw_scope)
    output_bw = _reverse_time(tmp, lengths, time_major)
    return (output_fw, output_bw), (state_fw, state_bw)
