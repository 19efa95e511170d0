"""tf.nn.dynamic_rnn / bidirectional_dynamic_rnn against the statically unrolled RNN over the same
variables (values and gradients), against NumPy for sequence_length masking, and training."""
import numpy as np
import pytest

import tinyflow as tf

BATCH, STEPS, DEPTH, UNITS = 3, 5, 4, 6
LENGTHS = np.array([5, 2, 0], np.int32)


def _inputs():
    return np.random.RandomState(0).randn(BATCH, STEPS, DEPTH).astype(np.float32)


@pytest.mark.parametrize("make_cell", [lambda: tf.nn.rnn_cell.BasicLSTMCell(UNITS),
                                       lambda: tf.nn.rnn_cell.GRUCell(UNITS)], ids=["lstm", "gru"])
def test_dynamic_rnn_equals_static_rnn_values_and_gradients(make_cell, fusion):
    x = tf.placeholder(tf.float32, [BATCH, STEPS, DEPTH])
    lengths = tf.placeholder(tf.int32, [BATCH])
    cell = make_cell()
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    variables = tf.trainable_variables()
    assert all(v.op.name.startswith("rnn/") for v in variables) and variables
    with tf.variable_scope("rnn", reuse=True):
        static_out, static_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=lengths,
                                                    dtype=tf.float32, scope="rnn")
    assert tf.trainable_variables() == variables  # the same variables
    static_out = tf.stack(static_out, axis=1)
    grads = tf.gradients(tf.reduce_sum(out * out), variables + [x])
    static_grads = tf.gradients(tf.reduce_sum(static_out * static_out), variables + [x])
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        feeds = {x: _inputs(), lengths: LENGTHS}
        got = sess.run([out, tf.nest.flatten(state), grads], feeds)
        ref = sess.run([static_out, tf.nest.flatten(static_state), static_grads], feeds)
    assert got[0].shape == (BATCH, STEPS, UNITS)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-6)
    for a, b in zip(got[1] + got[2], ref[1] + ref[2]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    for row, n in enumerate(LENGTHS):  # outputs past each length are zero
        assert np.all(got[0][row, n:] == 0)


def _np_basic_rnn(x, kernel, bias, lengths):
    h = np.zeros((x.shape[0], kernel.shape[1]), np.float32)
    outs = np.zeros((x.shape[0], x.shape[1], kernel.shape[1]), np.float32)
    for t in range(x.shape[1]):
        new = np.tanh(np.concatenate([x[:, t], h], 1) @ kernel + bias)
        live = (t < lengths)[:, None]
        h = np.where(live, new, h)
        outs[:, t] = np.where(live, new, 0)
    return outs, h


def test_dynamic_rnn_time_major_and_unknown_batch_against_numpy():
    x = tf.placeholder(tf.float32, [STEPS, None, DEPTH])
    cell = tf.nn.rnn_cell.BasicRNNCell(UNITS)
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=LENGTHS, dtype=tf.float32, time_major=True)
    xv = _inputs()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_out, got_state = sess.run([out, state], {x: xv.transpose(1, 0, 2)})
        kernel, bias = (sess.get_variable("rnn/basic_rnn_cell/" + n) for n in ("kernel", "bias"))
    ref_out, ref_state = _np_basic_rnn(xv, kernel, bias, LENGTHS)
    np.testing.assert_allclose(got_out.transpose(1, 0, 2), ref_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, ref_state, rtol=1e-5, atol=1e-6)


def test_bidirectional_dynamic_rnn_against_numpy():
    x = tf.placeholder(tf.float32, [BATCH, STEPS, DEPTH])
    fw, bw = tf.nn.rnn_cell.BasicRNNCell(UNITS), tf.nn.rnn_cell.BasicRNNCell(UNITS)
    (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=LENGTHS,
                                                                        dtype=tf.float32)
    names = sorted(v.op.name for v in tf.trainable_variables())
    assert names[0].startswith("bidirectional_rnn/bw/") and names[-1].startswith("bidirectional_rnn/fw/")
    xv = _inputs()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([out_fw, out_bw, st_fw, st_bw], {x: xv})
        weights = {d: [sess.get_variable("bidirectional_rnn/%s/basic_rnn_cell/%s" % (d, n))
                       for n in ("kernel", "bias")] for d in ("fw", "bw")}
    ref_fw, ref_st_fw = _np_basic_rnn(xv, *weights["fw"], LENGTHS)
    rev = np.stack([np.concatenate([xv[b, :n][::-1], xv[b, n:]]) for b, n in enumerate(LENGTHS)])
    tmp, ref_st_bw = _np_basic_rnn(rev, *weights["bw"], LENGTHS)
    ref_bw = np.stack([np.concatenate([tmp[b, :n][::-1], tmp[b, n:]]) for b, n in enumerate(LENGTHS)])
    for a, b in zip(got, [ref_fw, ref_bw, ref_st_fw, ref_st_bw]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("optimizer", [lambda: tf.train.GradientDescentOptimizer(0.5),
                                       lambda: tf.train.AdamOptimizer(0.05)], ids=["sgd", "adam"])
def test_dynamic_rnn_model_trains(optimizer):
    rng = np.random.RandomState(3)
    xv = rng.randn(16, STEPS, 2).astype(np.float32)
    yv = (xv[:, :, 0].sum(1) > 0).astype(np.int32)
    x = tf.placeholder(tf.float32, [16, STEPS, 2])
    y = tf.placeholder(tf.int32, [16])
    _, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(8), x, dtype=tf.float32)
    w = tf.Variable(np.zeros((8, 2), np.float32))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(state.h, w)))
    train = optimizer().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xv, y: yv})
        for _ in range(40):
            sess.run(train, {x: xv, y: yv})
        assert sess.run(loss, {x: xv, y: yv}) < 0.7 * first
