"""Shapes computed by the graph: tf.reshape / tf.tile / tf.range / tf.zeros / tf.fill with tf.shape(x)
parts, zeros_like of a placeholder with None dims, shape slicing, size and rank; values and
gradients against NumPy and finite differences."""
import numpy as np
import pytest

import tinyflow as tf


def _finite_difference(f, x0, eps=1e-3):
    grad = np.zeros_like(x0)
    for i in np.ndindex(*x0.shape):
        up, down = x0.copy(), x0.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_reshape_with_a_batch_dimension_from_the_graph():
    x = tf.placeholder(tf.float32, [None, 2, 3])
    flat = tf.reshape(x, [tf.shape(x)[0], -1])
    assert flat.shape.ndims == 2
    stacked = tf.reshape(x, tf.stack([tf.shape(x)[0] * 2, 3]))
    xv = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    with tf.Session() as sess:
        a, b = sess.run([flat, stacked], {x: xv})
        np.testing.assert_array_equal(a, xv.reshape(4, 6))
        np.testing.assert_array_equal(b, xv.reshape(8, 3))
        np.testing.assert_array_equal(sess.run(flat, {x: xv[:1]}), xv[:1].reshape(1, 6))
        with pytest.raises(tf.errors.OpError, match=r"reshape.*\[4,2,3\].*24 elements"):
            sess.run(tf.reshape(x, [tf.shape(x)[0], 5]), {x: xv})


def test_reshape_and_tile_gradients_match_finite_differences():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 6) / 7)
    tiled = tf.tile(x, [tf.shape(x)[0], 2])  # [2n, 6]
    loss = tf.reduce_sum(tf.sin(tf.reshape(tiled, [-1, tf.shape(tiled)[1]])[:2] * w))
    grad = tf.gradients(loss, x)[0]
    xv = np.array([[0.1, -0.4, 0.7], [0.3, 0.2, -0.5]], np.float32)
    with tf.Session() as sess:
        g = sess.run(grad, {x: xv})
        tv = sess.run(tiled, {x: xv})
        fd = _finite_difference(lambda v: float(sess.run(loss, {x: v})), xv.astype(np.float64))
    np.testing.assert_array_equal(tv, np.tile(xv, [2, 2]))
    np.testing.assert_allclose(g, fd, rtol=1e-2, atol=1e-2)


def test_tile_by_another_tensors_batch():
    x = tf.placeholder(tf.float32, [1, 3])
    y = tf.placeholder(tf.float32, [None, 5])
    out = tf.tile(x, [tf.shape(y)[0], 1])
    xv = np.array([[1, 2, 3]], np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: xv, y: np.zeros((4, 5))}), np.tile(xv, [4, 1]))
        np.testing.assert_array_equal(sess.run(tf.tile(x, tf.shape(x)), {x: xv}), np.tile(xv, [1, 3]))


def test_fills_ranges_and_shape_parts():
    x = tf.placeholder(tf.float32, [None, None])
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    fetches = {"zeros": tf.zeros(tf.shape(x)), "ones": tf.ones(tf.shape(x), tf.int32),
               "fill": tf.fill(tf.shape(x), 7.0), "fill_list": tf.fill([tf.shape(x)[1], 2], 1.5),
               "zeros_like": tf.zeros_like(x), "ones_like": tf.ones_like(x), "range": tf.range(tf.shape(x)[0]),
               "range3": tf.range(1, tf.shape(x)[1] * 3, 2), "tail": tf.shape(x)[1:], "size": tf.size(x),
               "rank": tf.rank(x)}
    with tf.Session() as sess:
        out = sess.run(fetches, {x: xv})
    np.testing.assert_array_equal(out["zeros"], np.zeros((2, 3)))
    assert out["ones"].dtype == np.int32 and out["ones"].shape == (2, 3)
    np.testing.assert_array_equal(out["fill"], np.full((2, 3), 7.0))
    np.testing.assert_array_equal(out["fill_list"], np.full((3, 2), 1.5))
    np.testing.assert_array_equal(out["zeros_like"], np.zeros((2, 3)))
    np.testing.assert_array_equal(out["ones_like"], np.ones((2, 3)))
    np.testing.assert_array_equal(out["range"], [0, 1])
    np.testing.assert_array_equal(out["range3"], np.arange(1, 9, 2))
    np.testing.assert_array_equal(out["tail"], [3])
    assert out["size"] == 6 and out["rank"] == 2


def test_range_errors():
    n = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.OpError, match="delta must not be 0"):
            sess.run(tf.range(0, n, 0), {n: 3})
        with pytest.raises(tf.errors.OpError, match="start <= limit"):
            sess.run(tf.range(5, n), {n: 3})
