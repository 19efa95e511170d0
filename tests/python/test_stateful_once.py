"""Stateful nodes inside cond branches and loop bodies run exactly once per taken branch / per
iteration in a training step, forward and backward alike (TF semantics): the gradient never runs an
assign, a py_func or a tf.Print of the forward again, and still matches finite differences."""
import numpy as np
import pytest

import tinyflow as tf
from eager_util import needs_tape, run_program


def _finite_difference(loss_at, w0, eps=1e-2):
    grad = np.zeros_like(w0)
    for i in range(w0.size):
        up, down = w0.copy(), w0.copy()
        up.flat[i] += eps
        down.flat[i] -= eps
        grad.flat[i] = (loss_at(up) - loss_at(down)) / (2 * eps)
    return grad


def _check_gradient(sess, loss, grad, w, feeds):
    """grad (of loss with respect to variable w) against central differences of loss in w."""
    w0 = sess.run(w)
    analytic = sess.run(grad, feeds)

    def loss_at(value):
        w.load(value, sess)
        return sess.run(loss, feeds)
    numeric = _finite_difference(loss_at, w0.astype(np.float32))
    w.load(w0, sess)
    np.testing.assert_allclose(analytic, numeric, rtol=2e-2, atol=2e-2)


# ------------------------------------------------------------------ batch norm in a cond, trained with Adam

def _bn_reference(x, steps, lr=0.01, b1=0.9, b2=0.999, eps=1e-8, bn_eps=1e-3):
    """NumPy: w and the moving mean after `steps` Adam steps on sum(y * y * w), y = batch_norm(x * w).

    Per column, loss = w * N v / (v + e) with v = w^2 var(x), so d loss / dw = N vx w^2 (w^2 vx + 3e) / (w^2 vx + e)^2."""
    x = x.astype(np.float64)
    n, vx = x.shape[0], x.var(0)
    w, mm, m, v = np.ones(x.shape[1]), np.zeros(x.shape[1]), np.zeros(x.shape[1]), np.zeros(x.shape[1])
    for t in range(1, steps + 1):
        mm = mm * 0.9 + (x * w).mean(0) * 0.1  # the forward's update, with the w of this step
        q = w * w * vx
        g = n * vx * w * w * (q + 3 * bn_eps) / (q + bn_eps) ** 2
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    return w, mm


def test_moving_average_in_a_training_cond_updates_once_per_adam_step():
    w = tf.Variable(np.ones([3], np.float32))
    mm = tf.Variable(np.zeros([3], np.float32), trainable=False)
    pred = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [4, 3])
    z = x * w

    def train_branch():
        mean, var = tf.nn.moments(z, [0])
        with tf.control_dependencies([tf.assign(mm, mm * 0.9 + mean * 0.1)]):
            return (z - mean) / tf.sqrt(var + 1e-3)
    y = tf.cond(pred, train_branch, lambda: z - mm)
    loss = tf.reduce_sum(y * y * w)
    opt = tf.train.AdamOptimizer(0.01).minimize(loss)
    feed = np.arange(12, dtype=np.float32).reshape(4, 3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for steps in range(1, 11):
            sess.run(opt, {pred: True, x: feed})
            if steps in (1, 10):
                want_w, want_mm = _bn_reference(feed, steps)
                np.testing.assert_allclose(sess.run(mm), want_mm, rtol=1e-6, atol=1e-6)  # float32 to 1e-6
                np.testing.assert_allclose(sess.run(w), want_w, rtol=1e-6, atol=1e-6)
        before = sess.run(mm)
        sess.run(opt, {pred: False, x: feed})  # the branch not taken updates nothing
        np.testing.assert_array_equal(sess.run(mm), before)


# ------------------------------------------------------------------ host callbacks whose values the gradient reads

def test_py_func_in_a_cond_branch_whose_value_the_gradient_reads_runs_once(capsys):
    calls = []

    def doubled(a):
        calls.append(1)
        return (2 * a).astype(np.float32)
    w = tf.Variable(np.array([0.5, -1.0, 2.0], np.float32))
    x = tf.placeholder(tf.float32, [3])
    pred = tf.placeholder(tf.bool, [])

    def branch():
        p = tf.py_func(doubled, [x], tf.float32)
        p.set_shape([3])
        return tf.Print(p * w, [p], message="branch ran: ")
    y = tf.cond(pred, branch, lambda: x * w)
    loss = tf.reduce_sum(y * w)  # d/dw = 2 p w: the gradient reads the py_func's value
    grad = tf.gradients(loss, [w])[0]
    feeds = {x: np.array([1.0, 2.0, 3.0], np.float32), pred: True}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        capsys.readouterr()
        value, g = sess.run([loss, grad], feeds)
        assert len(calls) == 1
        assert capsys.readouterr().err.count("branch ran: ") == 1
        np.testing.assert_allclose(g, 2 * 2 * feeds[x] * sess.run(w), rtol=1e-6)
        _check_gradient(sess, loss, grad, w, feeds)


# ------------------------------------------------------------------ loops

def test_assign_add_counter_in_a_differentiated_loop_runs_once_per_iteration():
    w = tf.Variable(np.array([0.7, -0.4], np.float32))
    counter = tf.Variable(0.0, trainable=False)
    h0 = tf.placeholder(tf.float32, [2])
    n = tf.placeholder(tf.int32, [])

    def body(i, h):
        with tf.control_dependencies([tf.assign_add(counter, 1.0)]):
            return i + 1, tf.tanh(h * w + 0.1)
    _, h = tf.while_loop(lambda i, h: i < n, body, (0, h0))
    loss = tf.reduce_sum(h * h)
    grad = tf.gradients(loss, [w])[0]
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feeds = {h0: np.array([0.3, -0.8], np.float32), n: 4}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, grad], feeds)
        assert sess.run(counter) == 4
        sess.run(train, feeds)
        assert sess.run(counter) == 8
        sess.run(train, {h0: feeds[h0], n: 0})  # zero trips
        assert sess.run(counter) == 8
        _check_gradient(sess, loss, grad, w, feeds)


def test_py_func_in_a_loop_body_whose_value_the_gradient_reads_runs_once_per_iteration():
    calls = []

    def gain(i):  # a value the gradient reads (d tanh(p h w) / dw needs p) that w does not change
        calls.append(1)
        return np.full([3], 1 + 0.5 * i, np.float32)
    w = tf.Variable(np.array([0.9, -0.6, 0.3], np.float32))
    h0 = tf.placeholder(tf.float32, [3])

    def body(i, h):
        p = tf.py_func(gain, [tf.cast(i, tf.float32)], tf.float32)
        p.set_shape([3])
        return i + 1, tf.tanh(p * h * w + 0.2)
    _, h = tf.while_loop(lambda i, h: i < 3, body, (0, h0), maximum_iterations=5)
    loss = tf.reduce_sum(h)
    grad = tf.gradients(loss, [w])[0]
    feeds = {h0: np.array([0.1, 0.2, -0.3], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, grad], feeds)
        assert len(calls) == 3
        _check_gradient(sess, loss, grad, w, feeds)


def test_cond_with_an_assign_nested_in_a_differentiated_loop_body():
    w = tf.Variable(np.array([0.8, -0.5], np.float32))
    counter = tf.Variable(0.0, trainable=False)
    h0 = tf.placeholder(tf.float32, [2])

    def body(i, h):
        def update():
            with tf.control_dependencies([tf.assign_add(counter, 1.0)]):
                return tf.tanh(h * w)
        return i + 1, tf.cond(i < 2, update, lambda: tf.sin(h * w))
    _, h = tf.while_loop(lambda i, h: i < 5, body, (0, h0))
    loss = tf.reduce_sum(h * h)
    grad = tf.gradients(loss, [w])[0]
    feeds = {h0: np.array([0.6, -0.9], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, grad], feeds)
        assert sess.run(counter) == 2  # iterations 0 and 1 take the branch
        _check_gradient(sess, loss, grad, w, feeds)


def test_a_loop_with_an_assign_nested_in_a_differentiated_cond_branch():
    w = tf.Variable(np.array([0.8, -0.5], np.float32))
    counter = tf.Variable(0.0, trainable=False)
    pred = tf.placeholder(tf.bool, [])
    h0 = tf.placeholder(tf.float32, [2])

    def loop():
        def body(i, h):
            with tf.control_dependencies([tf.assign_add(counter, 1.0)]):
                return i + 1, tf.tanh(h * w)
        return tf.while_loop(lambda i, h: i < 3, body, (0, h0))[1]
    y = tf.cond(pred, loop, lambda: h0 * w)
    loss = tf.reduce_sum(y * y)
    grad = tf.gradients(loss, [w])[0]
    feeds = {h0: np.array([0.6, -0.9], np.float32), pred: True}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, grad], feeds)
        assert sess.run(counter) == 3
        _check_gradient(sess, loss, grad, w, feeds)


def test_loops_nested_two_deep_with_a_py_func_inside_run_it_once_per_inner_iteration():
    calls = []

    def gain(i):
        calls.append(1)
        return np.full([2], 1 + 0.25 * i, np.float32)
    w = tf.Variable(np.array([0.7, -0.6], np.float32))
    h0 = tf.placeholder(tf.float32, [2])

    def outer(j, h):
        def inner(i, g):
            p = tf.py_func(gain, [tf.cast(i + j, tf.float32)], tf.float32)
            p.set_shape([2])
            return i + 1, tf.tanh(p * g * w)
        return j + 1, tf.while_loop(lambda i, g: i < 2, inner, (0, h))[1]
    _, h = tf.while_loop(lambda j, h: j < 3, outer, (0, h0))
    loss = tf.reduce_sum(h * h)
    grad = tf.gradients(loss, [w])[0]
    feeds = {h0: np.array([0.5, -0.8], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, grad], feeds)
        assert len(calls) == 6
        _check_gradient(sess, loss, grad, w, feeds)


def test_dropout_in_a_loop_body_is_recomputed_with_the_mask_the_forward_drew():
    """Random ops are replayable: the gradient recomputes the mask from the same key, not a new one."""
    w = tf.Variable(np.full([64], 1.5, np.float32))
    x = tf.placeholder(tf.float32, [64])
    _, y = tf.while_loop(lambda i, h: i < 1, lambda i, h: (i + 1, tf.nn.dropout(h * w, keep_prob=0.5)), (0, x))
    grad = tf.gradients(tf.reduce_sum(y), [w])[0]
    xv = np.linspace(1, 2, 64).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):  # a new mask each run, the same in forward and gradient
            yv, g = sess.run([y, grad], {x: xv})
            kept = yv != 0
            assert 0 < kept.sum() < 64
            np.testing.assert_allclose(g, kept * xv / 0.5, rtol=1e-6)


# ------------------------------------------------------------------ eager: the tape replays only backward ops

@needs_tape
def test_eager_tape_never_runs_a_recorded_py_func_again():
    out = run_program("""
        import numpy as np, tinyflow as tf
        tf.enable_eager_execution()
        calls = []
        def doubled(a):
            calls.append(1)
            return (2 * a).astype(np.float32)
        w = tf.Variable(np.array([1.0, 2.0], np.float32))
        x = tf.constant(np.array([3.0, 4.0], np.float32))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.py_func(doubled, [x], tf.float32) * w * w)
        grad = list(np.asarray(tape.gradient(loss, [w])[0]))  # lazy: the trace runs here
        print(len(calls), grad)
    """)
    assert out.split() == ["1", "[12.0,", "32.0]"], out


# ------------------------------------------------------------------ outside control flow

def test_py_func_outside_control_flow_runs_once_in_a_differentiated_graph():
    # Gradients built with the rewrite rules once copied the forward (x * 1.0 -> x rewrote the
    # py_func's input), so a run of loss and its gradient held the py_func twice.
    calls = []

    def double(a):
        calls.append(1)
        return a * 2
    x = tf.placeholder(tf.float32, [3])
    w = tf.Variable(np.ones([3], np.float32))
    y = tf.py_func(double, [x * 1.0], tf.float32)
    y.set_shape([3])
    loss = tf.reduce_sum(y * w)
    grad = tf.gradients(loss, [w])[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value, g = sess.run([loss, grad], {x: np.arange(3, dtype=np.float32)})
    assert len(calls) == 1
    assert value == 6.0
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])


# ------------------------------------------------------------------ variable reads after an assign in a body

def test_a_read_after_an_assign_in_a_loop_body_sees_the_update():
    # TF: the body reads the variable when the read runs; the loop does not copy a variable that
    # passes through it, so a read ordered after the body's assign sees each iteration's update.
    v = tf.Variable(0.0)

    def body(i, acc):
        with tf.control_dependencies([tf.assign_add(v, 2.0)]):
            read = tf.identity(v)
        return i + 1, acc + read
    _, total = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), tf.constant(0.0)])
    pred = tf.placeholder(tf.bool, [])

    def branch():
        with tf.control_dependencies([tf.assign_add(v, 5.0)]):
            return tf.identity(v)
    taken = tf.cond(pred, branch, lambda: tf.identity(v))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(total) == 2.0 + 4.0 + 6.0
        assert sess.run(v) == 6.0
        assert sess.run(taken, {pred: True}) == 11.0


def test_differentiating_through_a_read_of_a_variable_the_loop_body_assigns_is_an_error():
    v = tf.Variable(1.0)
    w = tf.Variable(3.0)

    def body(i, acc):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            read = tf.identity(v)
        return i + 1, acc + read * w
    _, total = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), tf.constant(0.0)])
    with pytest.raises(Exception, match="assigns variable 'Variable' and reads it"):
        tf.gradients(total, [w])
