"""tf.nn.rnn_cell cells and tf.nn.static_rnn / static_bidirectional_rnn against NumPy references
computed from the variables' values fetched from the session."""
import numpy as np
import pytest

import tinyflow as tf

rnn_cell = tf.nn.rnn_cell
BATCH, DEPTH, STEPS, UNITS = 3, 4, 5, 6
LENGTHS = [5, 2, 0]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_basic_rnn(v, x, h):
    h = np.tanh(np.concatenate([x, h], 1) @ v["kernel"] + v["bias"])
    return h, h


def _np_lstm(v, x, state, forget_bias=1.0, peepholes=False, cell_clip=None, proj=False):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ v["kernel"] + v["bias"], 4, axis=1)
    if peepholes:
        f, i = f + v["w_f_diag"] * c, i + v["w_i_diag"] * c
    c = _sigmoid(f + forget_bias) * c + _sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        c = np.clip(c, -cell_clip, cell_clip)
    if peepholes:
        o = o + v["w_o_diag"] * c
    h = _sigmoid(o) * np.tanh(c)
    if proj:
        h = h @ v["projection/kernel"]
    return h, (c, h)


def _np_gru(v, x, h):
    r, u = np.split(_sigmoid(np.concatenate([x, h], 1) @ v["gates/kernel"] + v["gates/bias"]), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ v["candidate/kernel"] + v["candidate/bias"])
    h = u * h + (1 - u) * c
    return h, h


def _np_static_rnn(step, state, xs, lengths=None):
    """The reference unrolled loop: rows past their length output zeros and keep their state."""
    outputs = []
    for t, x in enumerate(xs):
        out, new_state = step(x, state)
        if lengths is not None:
            done = (np.asarray(lengths) <= t)[:, None]
            out = np.where(done, 0.0, out)
            new_state = _np_map(lambda old, new: np.where(done, old, new), state, new_state)
        outputs.append(out)
        state = new_state
    return outputs, state


def _np_map(fn, a, b):
    if isinstance(a, (tuple, list)):
        return type(a)(_np_map(fn, x, y) for x, y in zip(a, b))
    return fn(a, b)


def _run_rnn(cell, lengths=None, initial_state=None, seed=0):
    """Builds static_rnn over placeholders, runs it on random inputs; returns inputs, outputs, state
    and the variables' values keyed by their names relative to the cell's scope."""
    xs = [tf.placeholder(tf.float32, [None, DEPTH]) for _ in range(STEPS)]
    outputs, state = tf.nn.static_rnn(cell, xs, initial_state=initial_state, dtype=tf.float32,
                                      sequence_length=lengths)
    data = [np.random.RandomState(seed + t).randn(BATCH, DEPTH).astype(np.float32) for t in range(STEPS)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, state_v = sess.run([outputs, state], {x: d for x, d in zip(xs, data)})
        var_v = {v.op.name: sess.run(v) for v in tf.trainable_variables()}
    return data, out_v, state_v, var_v


def _relative(var_v, prefix):
    return {name[len(prefix):]: value for name, value in var_v.items() if name.startswith(prefix)}


def _close(actual, expected):
    for a, e in zip(tf.nest.flatten(actual), tf.nest.flatten(expected)):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)


CELLS = {
    "basic_rnn": (lambda: rnn_cell.BasicRNNCell(UNITS), "rnn/basic_rnn_cell/", _np_basic_rnn,
                  lambda: np.zeros((BATCH, UNITS))),
    "basic_lstm": (lambda: rnn_cell.BasicLSTMCell(UNITS, forget_bias=0.5), "rnn/basic_lstm_cell/",
                   lambda v, x, s: _np_lstm(v, x, s, forget_bias=0.5),
                   lambda: (np.zeros((BATCH, UNITS)), np.zeros((BATCH, UNITS)))),
    "lstm": (lambda: rnn_cell.LSTMCell(UNITS), "rnn/lstm_cell/", _np_lstm,
             lambda: (np.zeros((BATCH, UNITS)), np.zeros((BATCH, UNITS)))),
    "lstm_peephole_proj": (lambda: rnn_cell.LSTMCell(UNITS, use_peepholes=True, cell_clip=0.3, num_proj=2),
                           "rnn/lstm_cell/",
                           lambda v, x, s: _np_lstm(v, x, s, peepholes=True, cell_clip=0.3, proj=True),
                           lambda: (np.zeros((BATCH, UNITS)), np.zeros((BATCH, 2)))),
    "gru": (lambda: rnn_cell.GRUCell(UNITS), "rnn/gru_cell/", _np_gru, lambda: np.zeros((BATCH, UNITS))),
}


@pytest.mark.parametrize("lengths", [None, LENGTHS], ids=["full", "sequence_length"])
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_matches_numpy(kind, lengths):
    make, prefix, np_step, np_zero = CELLS[kind]
    data, outputs, state, var_v = _run_rnn(make(), lengths)
    v = _relative(var_v, prefix)
    expected_outputs, expected_state = _np_static_rnn(lambda x, s: np_step(v, x, s), np_zero(), data, lengths)
    _close(outputs, expected_outputs)
    _close(state, expected_state)
    if lengths is not None:  # rows past their length: zero outputs, state of their last step
        assert np.all(outputs[2][1] == 0) and np.all(outputs[0][2] == 0)
        _close(tf.nest.flatten(state)[0][2], tf.nest.flatten(np_zero())[0][2])


def test_variable_names_and_initial_biases_are_tfs():
    _, _, _, var_v = _run_rnn(rnn_cell.GRUCell(UNITS))
    assert sorted(var_v) == ["rnn/gru_cell/candidate/bias", "rnn/gru_cell/candidate/kernel",
                             "rnn/gru_cell/gates/bias", "rnn/gru_cell/gates/kernel"]
    assert var_v["rnn/gru_cell/gates/kernel"].shape == (DEPTH + UNITS, 2 * UNITS)
    assert np.all(var_v["rnn/gru_cell/gates/bias"] == 1.0) and np.all(var_v["rnn/gru_cell/candidate/bias"] == 0.0)
    tf.reset_default_graph()
    _, _, _, var_v = _run_rnn(rnn_cell.BasicLSTMCell(UNITS))
    assert var_v["rnn/basic_lstm_cell/kernel"].shape == (DEPTH + UNITS, 4 * UNITS)
    assert np.all(var_v["rnn/basic_lstm_cell/bias"] == 0.0)
    tf.reset_default_graph()
    _run_rnn(rnn_cell.LSTMCell(UNITS, use_peepholes=True, num_proj=3))
    assert [v.name for v in tf.trainable_variables()] == [
        "rnn/lstm_cell/kernel:0", "rnn/lstm_cell/bias:0", "rnn/lstm_cell/w_f_diag:0", "rnn/lstm_cell/w_i_diag:0",
        "rnn/lstm_cell/w_o_diag:0", "rnn/lstm_cell/projection/kernel:0"]


def test_multi_rnn_cell_matches_numpy_and_names():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(UNITS), rnn_cell.GRUCell(3)])
    data, outputs, state, var_v = _run_rnn(cell, LENGTHS)
    assert sorted(var_v) == sorted(["rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
                                    "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
                                    "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel",
                                    "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias",
                                    "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel",
                                    "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias"])
    v0 = _relative(var_v, "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/")
    v1 = _relative(var_v, "rnn/multi_rnn_cell/cell_1/gru_cell/")

    def step(x, s):
        h0, s0 = _np_lstm(v0, x, s[0])
        h1, s1 = _np_gru(v1, h0, s[1])
        return h1, (s0, s1)
    zero = ((np.zeros((BATCH, UNITS)), np.zeros((BATCH, UNITS))), np.zeros((BATCH, 3)))
    expected_outputs, expected_state = _np_static_rnn(step, zero, data, LENGTHS)
    _close(outputs, expected_outputs)
    _close(state, expected_state)


def test_non_tuple_states():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(UNITS, state_is_tuple=False), rnn_cell.BasicRNNCell(2)],
                                 state_is_tuple=False)
    assert cell.state_size == 2 * UNITS + 2
    data, outputs, state, var_v = _run_rnn(cell)
    v0 = _relative(var_v, "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/")
    v1 = _relative(var_v, "rnn/multi_rnn_cell/cell_1/basic_rnn_cell/")

    def step(x, s):
        h0, (c0, _) = _np_lstm(v0, x, (s[:, :UNITS], s[:, UNITS:2 * UNITS]))
        h1, _ = _np_basic_rnn(v1, h0, s[:, 2 * UNITS:])
        return h1, np.concatenate([c0, h0, h1], 1)
    expected_outputs, expected_state = _np_static_rnn(step, np.zeros((BATCH, 2 * UNITS + 2)), data)
    _close(outputs, expected_outputs)
    _close(state, expected_state)


def test_initial_state_and_static_batch_zero_state():
    cell = rnn_cell.BasicLSTMCell(UNITS)
    zero = cell.zero_state(BATCH, tf.float32)
    assert isinstance(zero, rnn_cell.LSTMStateTuple) and zero.c.shape.as_list() == [BATCH, UNITS]
    init = rnn_cell.LSTMStateTuple(tf.constant(np.full((BATCH, UNITS), 0.5, np.float32)), zero.h)
    data, outputs, state, var_v = _run_rnn(cell, initial_state=init)
    v = _relative(var_v, "rnn/basic_lstm_cell/")
    expected_outputs, expected_state = _np_static_rnn(lambda x, s: _np_lstm(v, x, s),
                                                      (np.full((BATCH, UNITS), 0.5), np.zeros((BATCH, UNITS))), data)
    _close(outputs, expected_outputs)
    _close(state, expected_state)


def test_cell_called_directly_reuses_its_variables_and_scope_argument():
    cell = rnn_cell.GRUCell(2)
    x = tf.placeholder(tf.float32, [1, 3])
    h = cell.zero_state(1, tf.float32)
    with tf.variable_scope("outer"):
        h1, _ = cell(x, h)
    h2, _ = cell(x, h1)  # the same variables, in the scope captured at the first call
    assert [v.op.name for v in cell.variables] == ["outer/gru_cell/gates/kernel", "outer/gru_cell/gates/bias",
                                                   "outer/gru_cell/candidate/kernel", "outer/gru_cell/candidate/bias"]
    assert len(tf.trainable_variables()) == 4
    named, _ = rnn_cell.BasicRNNCell(2)(x, h, scope="my_rnn")
    assert tf.trainable_variables()[-2].op.name == "my_rnn/kernel"
    with pytest.raises(ValueError, match="already exists"):  # a second cell in the same scope, without reuse
        with tf.variable_scope("outer"):
            rnn_cell.GRUCell(2)(x, h, scope="gru_cell")


def test_two_cells_in_one_scope():
    """Within one scope a second cell gets basic_rnn_cell_1; called in a scope entered again (as
    each cell call enters the scope it captured) the count restarts and the names clash, as in TF."""
    x = tf.placeholder(tf.float32, [1, 3])
    first, second, third = rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(2)
    with tf.variable_scope("layer"):
        first(x, first.zero_state(1, tf.float32))
        with tf.variable_scope(None, default_name="basic_rnn_cell"):  # taken after first's scope
            pass
        second(x, second.zero_state(1, tf.float32))
    assert [v.op.name for v in first.variables] == ["layer/basic_rnn_cell/kernel", "layer/basic_rnn_cell/bias"]
    assert [v.op.name for v in second.variables] == ["layer/basic_rnn_cell_1/kernel", "layer/basic_rnn_cell_1/bias"]
    with pytest.raises(ValueError, match="Variable layer/basic_rnn_cell/kernel already exists"):
        with tf.variable_scope("layer"):
            third(x, third.zero_state(1, tf.float32))


def test_second_static_rnn_in_the_same_scope_needs_reuse():
    xs = [tf.placeholder(tf.float32, [2, 3]) for _ in range(2)]
    tf.nn.static_rnn(rnn_cell.BasicLSTMCell(4), xs, dtype=tf.float32)
    with pytest.raises(ValueError, match="Variable rnn/basic_lstm_cell/kernel already exists"):
        tf.nn.static_rnn(rnn_cell.BasicLSTMCell(4), xs, dtype=tf.float32)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        tf.nn.static_rnn(rnn_cell.BasicLSTMCell(4), xs, dtype=tf.float32)
    assert len(tf.trainable_variables()) == 2


def test_static_rnn_errors():
    cell = rnn_cell.BasicRNNCell(2)
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tf.nn.static_rnn(cell, tf.placeholder(tf.float32, [2, 3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="inputs must not be empty"):
        tf.nn.static_rnn(cell, [], dtype=tf.float32)
    with pytest.raises(ValueError, match="dtype must be specified"):
        tf.nn.static_rnn(cell, [tf.placeholder(tf.float32, [2, 3])])
    with pytest.raises(ValueError, match="must be accessible via shape inference"):
        tf.nn.static_rnn(cell, [tf.placeholder(tf.float32, [2, None])], dtype=tf.float32)


def _reverse_rows(steps, lengths):
    """NumPy reverse_sequence over a list of [batch, depth] steps."""
    stacked = np.stack(steps)
    out = stacked.copy()
    for b, n in enumerate(lengths):
        out[:n, b] = stacked[:n, b][::-1]
    return list(out)


@pytest.mark.parametrize("lengths", [None, LENGTHS], ids=["full", "sequence_length"])
def test_static_bidirectional_rnn_matches_numpy(lengths):
    xs = [tf.placeholder(tf.float32, [None, DEPTH]) for _ in range(STEPS)]
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
        rnn_cell.GRUCell(UNITS), rnn_cell.BasicLSTMCell(2), xs, dtype=tf.float32, sequence_length=lengths)
    data = [np.random.RandomState(t).randn(BATCH, DEPTH).astype(np.float32) for t in range(STEPS)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, fw_v, bw_v = sess.run([outputs, state_fw, state_bw], {x: d for x, d in zip(xs, data)})
        var_v = {v.op.name: sess.run(v) for v in tf.trainable_variables()}
    assert sorted(var_v) == sorted(["bidirectional_rnn/fw/gru_cell/gates/kernel",
                                    "bidirectional_rnn/fw/gru_cell/gates/bias",
                                    "bidirectional_rnn/fw/gru_cell/candidate/kernel",
                                    "bidirectional_rnn/fw/gru_cell/candidate/bias",
                                    "bidirectional_rnn/bw/basic_lstm_cell/kernel",
                                    "bidirectional_rnn/bw/basic_lstm_cell/bias"])
    vf = _relative(var_v, "bidirectional_rnn/fw/gru_cell/")
    vb = _relative(var_v, "bidirectional_rnn/bw/basic_lstm_cell/")
    full = lengths or [STEPS] * BATCH
    fw_out, fw_state = _np_static_rnn(lambda x, s: _np_gru(vf, x, s), np.zeros((BATCH, UNITS)), data, lengths)
    bw_out, bw_state = _np_static_rnn(lambda x, s: _np_lstm(vb, x, s), (np.zeros((BATCH, 2)),) * 2,
                                      _reverse_rows(data, full), lengths)
    expected = [np.concatenate([f, b], 1) for f, b in zip(fw_out, _reverse_rows(bw_out, full))]
    _close(out_v, expected)
    _close(fw_v, fw_state)
    _close(bw_v, bw_state)


def _dropout_run(keep):
    xs = [tf.placeholder(tf.float32, [BATCH, DEPTH]) for _ in range(2)]
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(UNITS), output_keep_prob=keep)
    outputs, _ = tf.nn.static_rnn(cell, xs, dtype=tf.float32)
    data = [np.ones((BATCH, DEPTH), np.float32)] * 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v = sess.run(outputs, {x: d for x, d in zip(xs, data)})
        var_v = _relative({v.op.name: sess.run(v) for v in tf.trainable_variables()}, "rnn/basic_rnn_cell/")
    return data, out_v, var_v


def test_dropout_wrapper_keeps_the_cell_names_and_scales_kept_outputs():
    data, out_v, v = _dropout_run(0.5)
    assert sorted(v) == ["bias", "kernel"]  # rnn/basic_rnn_cell/..., no wrapper scope
    expected, _ = _np_static_rnn(lambda x, s: _np_basic_rnn(v, x, s), np.zeros((BATCH, UNITS)), data)
    values = np.stack(out_v)
    dropped = values == 0
    assert 0 < dropped.mean() < 1
    np.testing.assert_allclose(values[~dropped], 2 * np.stack(expected)[~dropped], rtol=1e-4, atol=1e-5)
    # the state is not dropped: step 1 sees the full step-0 output
    np.testing.assert_allclose(values[1][~dropped[1]], 2 * expected[1][~dropped[1]], rtol=1e-4, atol=1e-5)


def test_dropout_wrapper_state_filter_keeps_the_lstm_memory():
    x = tf.placeholder(tf.float32, [BATCH, DEPTH])
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(UNITS), state_keep_prob=0.5, seed=3)
    plain = rnn_cell.BasicLSTMCell(UNITS, reuse=True)
    zero = cell.zero_state(BATCH, tf.float32)
    _, (c, h) = cell(x, zero, scope="lstm")
    _, (c_ref, h_ref) = plain(x, zero, scope="lstm")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        cv, hv, c_refv, h_refv = sess.run([c, h, c_ref, h_ref], {x: np.ones((BATCH, DEPTH))})
    np.testing.assert_allclose(cv, c_refv, rtol=1e-5)
    kept = hv != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(hv[kept], 2 * h_refv[kept], rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="between 0 and 1"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), input_keep_prob=1.5)


def test_static_rnn_trains():
    xs = [tf.placeholder(tf.float32, [None, DEPTH]) for _ in range(STEPS)]
    target = tf.placeholder(tf.float32, [None, 1])
    cell = rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(8), rnn_cell.GRUCell(8)])
    outputs, _ = tf.nn.static_rnn(cell, xs, dtype=tf.float32, sequence_length=[STEPS, 3, 4, 2])
    w = tf.get_variable("w", [8, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(outputs[-1] + outputs[1], w) - target))
    train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {x: rng.randn(4, DEPTH).astype(np.float32) for x in xs}
    feed[target] = rng.randn(4, 1).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([loss, train], feed)[0] for _ in range(60)]
    assert losses[-1] < 0.5 * losses[0]


def test_contrib_rnn_aliases():
    assert tf.contrib.rnn.BasicLSTMCell is rnn_cell.BasicLSTMCell
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn
    assert tf.contrib.rnn.LSTMStateTuple is rnn_cell.LSTMStateTuple
