"""TF 1.x Session/Graph behaviour: feeds (unused, intermediate, by name), feed and fetch errors as TF
raises them, fetch structures, static shapes (set_shape), and tf.gradients' None for unconnected xs."""
import collections

import numpy as np
import pytest

import tinyflow as tf


def _net():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    hidden = tf.matmul(x, w, name="hidden")
    return x, hidden, hidden * 2.0 + 1.0


def test_an_unused_fed_placeholder_is_allowed():
    x, _, y = _net()
    unused = tf.placeholder(tf.float32, [3], name="unused")
    xv = np.ones((2, 4), np.float32)
    with tf.Session() as sess:
        out = sess.run(y, {x: xv, unused: np.zeros(3, np.float32)})
        np.testing.assert_allclose(out, xv @ np.arange(8).reshape(4, 2) * 2 + 1)
        assert sess.run(tf.constant(3.0), {unused: np.zeros(3)}) == 3.0  # a graph with no placeholder at all


def test_feeding_an_intermediate_tensor_overrides_it_and_skips_what_computes_it():
    x, hidden, y = _net()
    fed = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {hidden: fed}), fed * 2 + 1)  # x is not fed: it must not run
        np.testing.assert_allclose(sess.run(y, {"hidden:0": fed}), fed * 2 + 1)


def test_feed_shape_and_graph_errors_as_tf():
    x, _, y = _net()
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor 'x:0', which has shape "
                                             r"'\(\?, 4\)'"):
            sess.run(y, {x: np.zeros(3, np.float32)})
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 5\)"):
            sess.run(y, {x: np.zeros((2, 5), np.float32)})
        other = tf.Graph()
        with other.as_default():
            v = tf.Variable(1.0, name="v")
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(v)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(v.initializer)
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor.*not an element of this graph"):
            sess.run(y, {v: 1.0, x: np.zeros((1, 4))})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
            sess.run(y, {"nope:0": 1.0})
        with pytest.raises(TypeError, match="Fetch argument None"):
            sess.run([y, None], {x: np.zeros((1, 4))})
        with pytest.raises(ValueError, match="nope"):
            sess.run("nope:0")


def test_fetch_by_name_and_structures():
    x, hidden, y = _net()
    point = collections.namedtuple("Point", ["a", "b"])
    xv = np.ones((1, 4), np.float32)
    expect_h = xv @ np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run("hidden:0", {"x:0": xv}), expect_h)
        assert sess.run("hidden", {x: xv}) is None  # an operation's name: run, nothing fetched
        out = sess.run({"p": point(hidden, [y, (hidden,)]), "q": collections.OrderedDict(z=y)}, {x: xv})
        assert isinstance(out["p"], point) and isinstance(out["p"].b, list) and isinstance(out["p"].b[1], tuple)
        np.testing.assert_allclose(out["p"].a, expect_h)
        np.testing.assert_allclose(out["p"].b[0], expect_h * 2 + 1)
        np.testing.assert_allclose(out["p"].b[1][0], expect_h)
        assert isinstance(out["q"], collections.OrderedDict)
        np.testing.assert_allclose(out["q"]["z"], expect_h * 2 + 1)


def test_set_shape_refines_the_static_shape_and_reaches_inference():
    x = tf.placeholder(tf.float32, [None, None], name="images")
    assert tf.matmul(x, tf.ones([784, 10])).shape.as_list() == [None, 10]
    x.set_shape([None, 784])
    assert x.shape.as_list() == [None, 784] and str(x.shape) == "(?, 784)"
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    assert y.shape.as_list() == [None, 1]
    with pytest.raises(ValueError, match="not compatible"):
        x.set_shape([None, 10])
    with pytest.raises(ValueError, match="not compatible"):
        x.set_shape([3])
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 3\) for Tensor 'images:0'"):
            sess.run(y, {x: np.zeros((2, 3), np.float32)})


def test_gradients_none_for_unconnected_and_integer_xs():
    x = tf.placeholder(tf.float32, [2], name="x")
    z = tf.placeholder(tf.float32, [2], name="z")
    n = tf.placeholder(tf.int32, [2], name="n")
    y = tf.reduce_sum(x * x) + tf.reduce_sum(tf.cast(n, tf.float32))
    gx, gz, gn = tf.gradients(y, [x, z, n])
    assert gz is None and gn is None
    gs = tf.gradients(tf.reduce_sum(tf.stop_gradient(x) * 2.0), x)
    assert gs == [None]
    gz0 = tf.gradients(y, [z], unconnected_gradients="zero")[0]
    with pytest.raises(ValueError):
        tf.gradients(y, [z], unconnected_gradients="bogus")
    head = tf.constant([3.0, -1.0])
    gh = tf.gradients(x * x, x, grad_ys=head)[0]
    xv = np.array([1.5, -2.0], np.float32)
    with tf.Session() as sess:
        a, b, c = sess.run([gx, gz0, gh], {x: xv, z: np.zeros(2), n: np.zeros(2)})
    np.testing.assert_allclose(a, 2 * xv)
    np.testing.assert_array_equal(b, [0, 0])
    np.testing.assert_allclose(c, 2 * xv * np.array([3, -1]))


def test_gradients_connected_but_simplified_away_is_a_tensor():
    x = tf.placeholder(tf.float32, [3])
    g = tf.gradients(tf.reduce_sum(x / x), x)[0]  # connected: a tensor, though zero where x != 0
    assert g is not None
    with tf.Session(fast_math=True) as sess:  # (rules at bind time may fold it: still a tensor)
        np.testing.assert_array_equal(sess.run(g, {x: np.array([1, 2, -3], np.float32)}), [0, 0, 0])


def test_batch_dimension_none_end_to_end():
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, 5])
    labels = tf.placeholder(tf.int32, [None])
    w = tf.Variable(np.zeros((5, 3), np.float32))
    logits = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), labels), tf.float32))
    centers = rng.randn(3, 5).astype(np.float32) * 3
    ys = rng.randint(0, 3, 1000).astype(np.int32)
    xs = centers[ys] + rng.randn(1000, 5).astype(np.float32) * 0.3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(20):
            sess.run(train, {x: xs[i * 64 % 900:][:64], labels: ys[i * 64 % 900:][:64]})
        acc = sess.run(accuracy, {x: xs, labels: ys})
        wv = sess.run(w)
    expect = np.mean(np.argmax(xs @ wv, 1) == ys)
    assert abs(acc - expect) < 1e-6 and acc > 0.9


def test_static_shape_mismatches_raise_value_error_at_graph_construction():
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 for 'MatMul' \(op: 'matmul'\) "
                                         r"with input shapes: \[2,3\], \[4,5\]\."):
        tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5]), name="MatMul")
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 .* input shapes: \[2,3\], \[4\]"):
        tf.zeros([2, 3]) + tf.zeros([4])
    x = tf.placeholder(tf.float32, [None, None])
    h = tf.tanh(x)
    tf.matmul(h, tf.zeros([3, 5]))  # unknown: allowed
    x.set_shape([None, 784])
    with pytest.raises(ValueError, match=r"784 and 3 .* \[\?,784\], \[3,5\]"):
        tf.matmul(tf.tanh(x), tf.zeros([3, 5]))
    y = tf.placeholder(tf.float32, [None, 4])
    z = tf.nn.relu(tf.matmul(y, tf.ones([4, 2])))  # a deeper chain: shapes known op by op
    with pytest.raises(ValueError, match=r"but are 2 and 3"):
        tf.matmul(z, tf.ones([3, 1]))


def test_stop_gradients_treat_tensors_as_constants():
    a = tf.placeholder(tf.float32, [])
    b = 2.0 * a
    stopped = tf.gradients(a + b, [a, b], stop_gradients=[a, b])  # TF's documented example: [1, 1]
    full = tf.gradients(a + b, [a, b])
    x = tf.placeholder(tf.float32, [3])
    h = tf.sin(x)
    gx = tf.gradients(tf.reduce_sum(h * x), x, stop_gradients=h)[0]  # d/dx of c * x with c = sin(x) held: c
    assert tf.gradients(h * 2.0, x, stop_gradients=[h]) == [None]
    xv = np.array([0.1, 0.5, 1.0], np.float32)
    with tf.Session() as sess:
        assert sess.run(stopped, {a: 0.5}) == [1.0, 1.0]
        assert sess.run(full, {a: 0.5}) == [3.0, 1.0]
        np.testing.assert_allclose(sess.run(gx, {x: xv}), np.sin(xv), rtol=1e-6)


def test_integer_division_by_zero_raises_when_the_graph_runs():
    a = tf.constant([7, -7, 9])
    b = tf.placeholder(tf.int32, [3])
    outs = [a // b, a % b, tf.floordiv(a, b), tf.div(a, b), a // 2]
    with tf.Session() as sess:
        got = sess.run(outs[:4], {b: [2, 2, 4]})
        np.testing.assert_array_equal(got[0], [3, -4, 2])
        np.testing.assert_array_equal(got[1], [1, 1, 1])
        np.testing.assert_array_equal(sess.run(outs[4]), [3, -4, 4])
        for out in outs[:4]:
            with pytest.raises(tf.errors.OpError, match="Integer division by zero"):
                sess.run(out, {b: [2, 0, 4]})
        with pytest.raises(tf.errors.OpError, match="Integer division by zero"):
            sess.run(a // 0)
    x = tf.constant([1.0, 2.0])
    with tf.Session() as sess:  # floats divide by zero as IEEE does
        assert np.isinf(sess.run(x / 0.0)).all()


def test_random_ops_do_not_replay_a_stream_across_fetch_lists():
    # Each run of a session draws anew, whatever else it fetches (the executors of two fetch lists
    # used to start from the same state: sess.run(r) and sess.run([r, c]) gave the same numbers).
    tf.set_random_seed(5)
    r = tf.random_uniform([4])
    c = tf.constant(1.0)

    def draws():
        with tf.Session() as sess:
            return [sess.run(r), sess.run([r, c])[0], sess.run(r), sess.run([c, r])[1]]

    first = draws()
    for i in range(4):
        for j in range(i):
            assert not np.array_equal(first[i], first[j]), (i, j)
    second = draws()  # the same program draws the same numbers (a graph seed is set)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
