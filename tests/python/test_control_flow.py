"""tf.cond / tf.case / tf.while_loop / tf.TensorArray / map_fn / scan / fold: results against NumPy,
gradients against finite differences and the unrolled graph, captures, structures, errors."""
import collections

import numpy as np
import pytest

import tinyflow as tf


def _run(fetches, feeds=None, fusion=True):
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feeds)


def test_cond_runs_only_the_taken_branch(fusion):
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * 2.0, lambda: tf.log(x) + 1.0)
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Session(fusion=fusion) as sess:
        np.testing.assert_allclose(sess.run(y, {x: xv, p: True}), xv * 2)
        np.testing.assert_allclose(sess.run(y, {x: xv, p: False}), np.log(xv) + 1, rtol=1e-6)
        # x * 2 of a negative number is fine; the log branch (NaN) is never computed
        np.testing.assert_allclose(sess.run(y, {x: -xv, p: True}), -2 * xv)


def test_untaken_branch_error_has_no_effect():
    a = tf.placeholder(tf.int32, [])
    b = tf.placeholder(tf.int32, [])
    y = tf.cond(tf.not_equal(b, 0), lambda: a // b, lambda: a - 100)
    with tf.Session() as sess:
        assert sess.run(y, {a: 7, b: 2}) == 3
        assert sess.run(y, {a: 7, b: 0}) == -93


def test_cond_nested_structures_and_mismatch():
    x = tf.placeholder(tf.float32, [2])
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: {"a": x + 1.0, "b": (x, x * 3.0)}, lambda: {"a": x - 1.0, "b": (x * 0.0, x)})
    xv = np.array([1.0, 2.0], np.float32)
    got = _run(out, {x: xv, p: False})
    np.testing.assert_allclose(got["a"], xv - 1)
    np.testing.assert_allclose(got["b"][0], 0 * xv)
    single = tf.cond(p, lambda: [x], lambda: [x * 2.0])  # TF1 unpacks a singleton list
    assert isinstance(single, tf.Tensor)
    with pytest.raises(ValueError):
        tf.cond(p, lambda: (x, x), lambda: x)
    with pytest.raises(ValueError):
        tf.cond(p, lambda: x, lambda: tf.cast(x, tf.int32))


def test_case_picks_the_first_true_predicate():
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.equal(x, 0), lambda: tf.constant(0))],
                default=lambda: tf.constant(1))
    with tf.Session() as sess:
        assert [sess.run(y, {x: v}) for v in (-5, 0, 9)] == [-1, 0, 1]


def test_moving_average_updates_only_when_training():
    is_training = tf.placeholder_with_default(False, [])
    batch = tf.placeholder(tf.float32, [2])
    avg = tf.Variable(np.zeros(2, np.float32))

    def train():
        with tf.control_dependencies([tf.assign(avg, avg * 0.5 + batch * 0.5)]):
            return tf.identity(batch)
    out = tf.cond(is_training, train, lambda: tf.identity(avg))
    bv = np.array([4.0, 8.0], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out, {batch: bv}), [0, 0])  # default: not training
        assert np.all(sess.get_variable(avg.op.name) == 0)
        sess.run(out, {batch: bv, is_training: True})
        np.testing.assert_allclose(sess.get_variable(avg.op.name), bv * 0.5)


def test_branch_returning_an_operation_runs_its_effect():
    v = tf.Variable(1.0)
    p = tf.placeholder(tf.bool, [])
    op = tf.cond(p, lambda: tf.group(tf.assign_add(v, 10.0)), lambda: tf.no_op())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op, {p: False})
        assert sess.get_variable(v.op.name) == 1.0
        sess.run(op, {p: True})
        assert sess.get_variable(v.op.name) == 11.0


def test_while_loop_data_dependent_zero_trip_and_maximum_iterations(fusion):
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float32, [2])
    i, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * y * 0.5 + y), [0, x])
    _, capped = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y + 1.0), [0, x], maximum_iterations=3)
    _, capped_t = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y + 1.0), [0, x],
                                maximum_iterations=tf.constant(2))
    xv = np.array([0.5, -0.25], np.float32)
    with tf.Session(fusion=fusion) as sess:
        for trips in (0, 1, 4):
            got_i, got_y, got_c, got_ct = sess.run([i, y, capped, capped_t], {n: trips, x: xv})
            ref = xv.copy()
            for _ in range(trips):
                ref = ref * ref * 0.5 + ref
            assert got_i == trips
            np.testing.assert_allclose(got_y, ref, rtol=1e-5)
            np.testing.assert_allclose(got_c, xv + min(trips, 3))
            np.testing.assert_allclose(got_ct, xv + min(trips, 2))


def test_while_loop_captures_outer_tensors_and_nests_with_cond():
    x = tf.placeholder(tf.float32, [3])
    w = tf.Variable(np.array([1.0, 2.0, 3.0], np.float32))

    def body(i, acc):  # reads x and w from outside; a cond inside; a while inside the cond
        inner = tf.cond(tf.equal(i % 2, 0), lambda: acc + x * w,
                        lambda: tf.while_loop(lambda k, a: k < 2, lambda k, a: (k + 1, a - 1.0), [0, acc])[1])
        return i + 1, inner
    _, y = tf.while_loop(lambda i, acc: i < 5, body, [0, tf.zeros([3])])
    xv = np.array([1.0, -1.0, 0.5], np.float32)
    ref = np.zeros(3, np.float32)
    for i in range(5):
        ref = ref + xv * [1, 2, 3] if i % 2 == 0 else ref - 2
    np.testing.assert_allclose(_run(y, {x: xv}), ref, rtol=1e-6)


LoopState = collections.namedtuple("LoopState", ["step", "value"])


def test_while_loop_nested_structures():
    x = tf.placeholder(tf.float32, [2])
    init = {"s": LoopState(tf.constant(0), x), "t": (x * 0.0, [tf.constant(1.0)])}
    out = tf.while_loop(lambda v: v["s"].step < 3,
                        lambda v: {"s": LoopState(v["s"].step + 1, v["s"].value * 2.0),
                                   "t": (v["t"][0] + v["s"].value, [v["t"][1][0] * 3.0])}, init)
    assert isinstance(out["s"], LoopState)
    single = tf.while_loop(lambda v: tf.reduce_sum(v) < 100.0, lambda v: v * 2.0, [x])
    assert isinstance(single, tf.Tensor)
    got, got_single = _run([out, single], {x: [1.0, 2.0]})
    assert got["s"].step == 3
    np.testing.assert_allclose(got["s"].value, [8.0, 16.0])
    np.testing.assert_allclose(got["t"][0], [7.0, 14.0])
    np.testing.assert_allclose(got["t"][1][0], 27.0)
    np.testing.assert_allclose(got_single, [64.0, 128.0])


def test_shape_invariants():
    x = tf.constant(np.ones((1, 2), np.float32))
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda v: tf.size(v) < 8, lambda v: tf.concat([v, v], 0), [x])
    grown = tf.while_loop(lambda v: tf.size(v) < 8, lambda v: tf.concat([v, v], 0), [x],
                          shape_invariants=[tf.TensorShape([None, 2])])
    assert grown.shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="invariant"):
        tf.while_loop(lambda v: tf.size(v) < 8, lambda v: tf.concat([v, v], 1), [x],
                      shape_invariants=[tf.TensorShape([None, 2])])


def _finite_difference(f, x0, eps=1e-3):
    grad = np.zeros_like(x0)
    for k in range(x0.size):
        d = np.zeros_like(x0)
        d.flat[k] = eps
        grad.flat[k] = (f(x0 + d) - f(x0 - d)) / (2 * eps)
    return grad


def test_gradients_through_cond_and_while_match_finite_differences_and_unrolled():
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    w = tf.Variable(np.array([0.3, -0.2, 0.5], np.float32))
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(y * w + x)), [0, x])
    z = tf.cond(p, lambda: tf.reduce_sum(y * y), lambda: tf.reduce_sum(tf.sin(y)))
    gx, gw = tf.gradients(z, [x, w])
    unrolled = x
    for _ in range(3):
        unrolled = tf.tanh(unrolled * w + x)
    uz = tf.reduce_sum(unrolled * unrolled)
    ugx, ugw = tf.gradients(uz, [x, w])
    xv = np.array([0.1, -0.4, 0.7], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for pv in (True, False):
            got_x, got_w = sess.run([gx, gw], {x: xv, p: pv})
            fd = _finite_difference(lambda v: float(sess.run(z, {x: v, p: pv})), xv.astype(np.float64))
            np.testing.assert_allclose(got_x, fd, rtol=2e-2, atol=1e-3)
        np.testing.assert_allclose(sess.run([gx, gw], {x: xv, p: True}), sess.run([ugx, ugw], {x: xv}), rtol=1e-5)


def test_tensor_array_ops():
    x = tf.placeholder(tf.float32, [4, 2])
    ta = tf.TensorArray(tf.float32, size=4).unstack(x)
    w = tf.TensorArray(tf.float32, size=3, element_shape=[2]).write(1, x[0]).write(2, x[3])
    s = tf.TensorArray(tf.float32, size=4).scatter([3, 0], x[:2] * 10.0)
    lazy = tf.TensorArray(tf.float32, size=2).write(0, x[1])
    xv = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = _run([ta.read(2), ta.gather([3, 1]), w.stack(), s.stack(), ta.size(), lazy.stack(), ta.concat()],
               {x: xv})
    np.testing.assert_allclose(got[0], xv[2])
    np.testing.assert_allclose(got[1], xv[[3, 1]])
    np.testing.assert_allclose(got[2], [[0, 0], xv[0], xv[3]])
    np.testing.assert_allclose(got[3], [xv[1] * 10, [0, 0], [0, 0], xv[0] * 10])
    assert got[4] == 4
    np.testing.assert_allclose(got[5], [xv[1], [0, 0]])
    np.testing.assert_allclose(got[6], xv.reshape(-1))


def test_tensor_array_as_loop_variable():
    x = tf.placeholder(tf.float32, [5])
    ta = tf.TensorArray(tf.float32, size=5, element_shape=[])
    _, ta = tf.while_loop(lambda i, ta: i < 5, lambda i, ta: (i + 1, ta.write(i, tf.gather(x, i) * tf.cast(i, tf.float32))),
                          [0, ta])
    xv = np.arange(5, dtype=np.float32) + 1
    np.testing.assert_allclose(_run(ta.stack(), {x: xv}), xv * np.arange(5))
    with pytest.raises(ValueError, match="element_shape"):
        tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, t), [0, tf.TensorArray(tf.float32, size=2)])


def test_map_fn_scan_fold_against_numpy(fusion):
    x = tf.placeholder(tf.float32, [4, 3])
    xv = np.random.RandomState(0).rand(4, 3).astype(np.float32)
    fetches = [tf.map_fn(lambda r: r * 2.0 + 1.0, x),
               tf.map_fn(lambda pair: pair[0] * pair[1], (x, x + 1.0)),
               tf.scan(lambda a, r: a + r, x),
               tf.scan(lambda a, r: a * 0.5 + r, x, initializer=tf.ones([3]), reverse=True),
               tf.foldl(lambda a, r: a * r, x),
               tf.foldr(lambda a, r: a * 2.0 - r, x, initializer=tf.zeros([3]))]
    got = _run(fetches, {x: xv}, fusion)
    np.testing.assert_allclose(got[0], xv * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], xv * (xv + 1), rtol=1e-6)
    np.testing.assert_allclose(got[2], np.cumsum(xv, 0), rtol=1e-6)
    ref, acc = np.zeros_like(xv), np.ones(3, np.float32)
    for k in reversed(range(4)):
        acc = acc * 0.5 + xv[k]
        ref[k] = acc
    np.testing.assert_allclose(got[3], ref, rtol=1e-6)
    np.testing.assert_allclose(got[4], np.prod(xv, 0), rtol=1e-6)
    acc = np.zeros(3, np.float32)
    for k in reversed(range(4)):
        acc = acc * 2 - xv[k]
    np.testing.assert_allclose(got[5], acc, rtol=1e-6)


def test_scan_gradient_matches_numpy():
    x = tf.placeholder(tf.float32, [4, 3])
    s = tf.scan(lambda a, r: a + r, x)
    g = tf.gradients(tf.reduce_sum(s * s), [x])[0]
    xv = np.random.RandomState(1).rand(4, 3).astype(np.float32)
    cs = np.cumsum(xv, 0)
    np.testing.assert_allclose(_run(g, {x: xv}), np.cumsum((2 * cs)[::-1], 0)[::-1], rtol=1e-5)


def test_placeholder_with_default():
    d = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [2])
    y = d * 3.0
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y), [3.0, 6.0])
        np.testing.assert_allclose(sess.run(y, {d: [5.0, 5.0]}), [15.0, 15.0])
    with pytest.raises(ValueError):
        tf.placeholder_with_default(tf.constant([1.0, 2.0]), [3])


def test_feeding_any_single_output_tensor_replaces_it():
    x = tf.placeholder(tf.float32, [2])
    hidden = x * 2.0
    d = tf.placeholder_with_default(hidden + 1.0, [2])
    y = d * 3.0
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [9.0, 15.0])
        np.testing.assert_allclose(sess.run(y, {hidden: [0.0, 1.0]}), [3.0, 6.0])  # x not needed
        np.testing.assert_allclose(sess.run(y, {d: [1.0, 1.0]}), [3.0, 3.0])
        with pytest.raises(tf.errors.OpError):
            sess.run(y)  # the default needs x


def test_shapes_given_as_tensors_are_found_when_the_graph_runs():
    x = tf.placeholder(tf.float32, [None, 3])
    z = tf.zeros(tf.shape(x)) + 1.0
    f = tf.fill([tf.shape(x)[0], 2], 7.0)
    n = tf.placeholder(tf.int32, [])
    ta = tf.TensorArray(tf.float32, size=n, element_shape=[2])
    _, ta = tf.while_loop(lambda i, ta: i < n,
                          lambda i, ta: (i + 1, ta.write(i, tf.fill([2], tf.cast(i, tf.float32)))), [0, ta])
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    state = cell.zero_state(tf.shape(x)[0], tf.float32)
    with tf.Session() as sess:
        for rows in (2, 5):
            xv = np.zeros((rows, 3), np.float32)
            zv, fv, hv = sess.run([z, f, state.h], {x: xv})
            np.testing.assert_array_equal(zv, np.ones((rows, 3)))
            np.testing.assert_array_equal(fv, np.full((rows, 2), 7.0))
            assert hv.shape == (rows, 4) and not hv.any()
        np.testing.assert_array_equal(sess.run(ta.stack(), {n: 3}), [[0, 0], [1, 1], [2, 2]])
        with pytest.raises(tf.errors.OpError, match="negative"):
            sess.run(tf.zeros(tf.stack([n, 2])), {n: -1})


def test_tensor_array_enters_a_loop_before_its_element_shape_is_known():
    # TF1 habit: TensorArray(size=...) with no (or a partial) element_shape, written in the loop at a
    # tensor index x[:, t]; the element's batch dimension is known only when the graph runs.
    x = tf.placeholder(tf.float32, [None, 5, 3])
    n = tf.shape(x)[1]
    results = []
    for element_shape in (None, [None, 3]):
        ta = tf.TensorArray(tf.float32, size=n, element_shape=element_shape)
        _, ta = tf.while_loop(lambda t, ta: t < n, lambda t, ta: (t + 1, ta.write(t, x[:, t, :] * 2.0)), [0, ta])
        out = tf.transpose(ta.stack(), [1, 0, 2])
        results.append((out, tf.gradients(tf.reduce_sum(out * out), x)[0]))
    xs = np.random.RandomState(0).randn(4, 5, 3).astype(np.float32)
    with tf.Session() as sess:
        for out, grad in results:
            o, g = sess.run([out, grad], {x: xs})
            np.testing.assert_allclose(o, 2 * xs, rtol=1e-6)
            np.testing.assert_allclose(g, 8 * xs, rtol=1e-5)
