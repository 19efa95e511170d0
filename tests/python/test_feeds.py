"""Feeds are borrowed, not copied: a run never writes them, and every run sees their current values."""
import numpy as np
import pytest

import tinyflow as tf


def test_elementwise_chain_never_writes_its_fed_input(fusion):
    # exp, multiply and add may run in place of their input; a fed input is not theirs to take.
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.exp(x) * 2.0 + 1.0
    fed = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    before = fed.copy()
    with tf.Session(fusion=fusion) as sess:
        out = sess.run(y, {x: fed})
    np.testing.assert_allclose(out, np.exp(before) * 2 + 1, rtol=1e-6)
    np.testing.assert_array_equal(fed, before)


def test_fetching_a_fed_placeholder_returns_a_copy(fusion):
    x = tf.placeholder(tf.float32, [3], name="x")
    fed = np.array([1, 2, 3], np.float32)
    with tf.Session(fusion=fusion) as sess:
        same, doubled = sess.run([x, x * 2.0], {x: fed})
    fed[0] = 100
    assert same.tolist() == [1, 2, 3] and doubled.tolist() == [2, 4, 6]


def test_fed_variable_updated_by_the_graph_stays_unchanged(fusion):
    w = tf.Variable(np.zeros(3, np.float32), name="w")
    step = w.assign_add(np.ones(3, np.float32))
    fed = np.array([5, 6, 7], np.float32)
    with tf.Session(fusion=fusion) as sess:
        sess.run(w.initializer)
        out = sess.run(step, {w: fed})
    assert out.tolist() == [6, 7, 8]
    assert fed.tolist() == [5, 6, 7]


def test_train_step_with_fed_batch_leaves_the_batch_unchanged(fusion):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    w = tf.Variable(np.full((3, 2), 0.1, np.float32), name="w")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    xs = np.random.RandomState(0).rand(4, 3).astype(np.float32)
    ys = np.array([0, 1, 1, 0], np.int32)
    xs_before, ys_before = xs.copy(), ys.copy()
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            assert sess.run(train, {x: xs, labels: ys}) is None
    np.testing.assert_array_equal(xs, xs_before)
    np.testing.assert_array_equal(ys, ys_before)


def test_a_fed_array_changed_between_runs_is_seen_by_the_next_run(fusion):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x * 3.0
    fed = np.array([1, 2], np.float32)
    with tf.Session(fusion=fusion) as sess:
        assert sess.run(y, {x: fed}).tolist() == [3, 6]
        fed[:] = [10, 20]
        assert sess.run(y, {x: fed}).tolist() == [30, 60]
        assert sess.run(y, {x: np.array([4, 5], np.float32)}).tolist() == [12, 15]


def test_changing_feed_shapes_rebinds(fusion):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.reduce_sum(x * 2.0, axis=1)
    with tf.Session(fusion=fusion) as sess:
        for rows in (1, 3, 1, 5):
            fed = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
            np.testing.assert_array_equal(sess.run(y, {x: fed}), (fed * 2).sum(axis=1))


def test_feeds_that_need_conversion(fusion):
    # float64, a strided view, a read-only array, a Python list and a scalar: converted, never written.
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    s = tf.placeholder(tf.float32, [], name="s")
    y = x * s
    wide = np.arange(12, dtype=np.float64).reshape(2, 6)
    view = wide[:, ::3]
    frozen = np.ones((2, 2), np.float32)
    frozen.setflags(write=False)
    with tf.Session(fusion=fusion) as sess:
        assert sess.run(y, {x: view, s: 2}).tolist() == [[0, 6], [12, 18]]
        assert sess.run(y, {x: frozen, s: np.float32(3)}).tolist() == [[3, 3], [3, 3]]
        assert sess.run(y, {x: [[1, 2]], s: 0.5}).tolist() == [[0.5, 1]]
        assert sess.run(y, {"x": np.zeros((0, 2), np.float32), "s": 1.0}).shape == (0, 2)
    assert wide[:, ::3].tolist() == [[0, 3], [6, 9]]


def test_fetch_order_and_duplicates_with_the_same_feeds(fusion):
    x = tf.placeholder(tf.float32, [2], name="x")
    a, b = x + 1.0, x * 10.0
    fed = np.array([1, 2], np.float32)
    with tf.Session(fusion=fusion) as sess:
        out = sess.run([b, a, b, {"k": a}], {x: fed})
        assert out[0].tolist() == [10, 20] and out[1].tolist() == [2, 3] and out[2].tolist() == [10, 20]
        assert out[3]["k"].tolist() == [2, 3]
        assert sess.run((a, b), {x: fed})[1].tolist() == [10, 20]


def test_feed_errors_name_the_placeholder_and_shapes():
    x = tf.placeholder(tf.float32, [None, 3], name="images")
    y = x * 2.0
    with tf.Session() as sess:
        sess.run(y, {x: np.zeros((2, 3), np.float32)})  # a cached plan must not hide later errors
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 4\) for Tensor 'images:0'.*\(\?, 3\)"):
            sess.run(y, {x: np.zeros((2, 4), np.float32)})
        with pytest.raises(TypeError, match=r"Cannot interpret feed_dict key as Tensor.*'nope:0'"):
            sess.run(y, {x: np.zeros((2, 3), np.float32), "nope": np.zeros(1)})
        with pytest.raises(tf.TinyflowError, match="given twice"):
            sess.run(y, {x: np.zeros((2, 3), np.float32), "images": np.zeros((2, 3), np.float32)})
