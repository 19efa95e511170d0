"""TF1 constructors whose shapes or sizes are tensors (tf.eye(tf.shape(a)[0]), tf.zeros / ones / fill of
a tensor shape or a list mixing ints and scalar tensors, tf.range of tensor bounds, the random ops of
a run-time shape), placeholder_with_default's declared shape and tf.parallel_stack."""
import numpy as np
import pytest

import tinyflow as tf


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_eye_of_tensor_sizes():
    a = tf.placeholder(tf.float32, [None, None])
    n = tf.shape(a)[0]
    square = tf.eye(n)
    wide = tf.eye(n, num_columns=tf.shape(a)[1], dtype=tf.int32)
    batched = tf.eye(2, batch_shape=[tf.shape(a)[0]])
    batched_tensor = tf.eye(n, batch_shape=tf.shape(a)[1:])
    feed = {a: np.zeros((3, 4), np.float32)}
    got = _run([square, wide, batched, batched_tensor, square + a[:, :3]], feed)
    np.testing.assert_array_equal(got[0], np.eye(3))
    assert got[1].dtype == np.int32
    np.testing.assert_array_equal(got[1], np.eye(3, 4))
    np.testing.assert_array_equal(got[2], np.broadcast_to(np.eye(2), (3, 2, 2)))
    np.testing.assert_array_equal(got[3], np.broadcast_to(np.eye(3), (4, 3, 3)))
    np.testing.assert_array_equal(got[4], np.eye(3))


def test_fills_of_tensor_shapes():
    x = tf.placeholder(tf.float32, [None, 2])
    rows = tf.shape(x)[0]
    outs = [tf.zeros(tf.shape(x)), tf.ones([rows, 3], tf.int32), tf.fill([2, rows], 7.0),
            tf.zeros([rows]) + tf.reduce_sum(x, 1)]
    got = _run(outs, {x: np.ones((4, 2), np.float32)})
    assert got[0].shape == (4, 2) and not got[0].any()
    assert got[1].dtype == np.int32 and got[1].shape == (4, 3) and (got[1] == 1).all()
    np.testing.assert_array_equal(got[2], np.full((2, 4), 7.0))
    np.testing.assert_array_equal(got[3], [2, 2, 2, 2])


def test_range_of_tensor_bounds():
    n = tf.placeholder(tf.int32, [])
    limit = tf.placeholder(tf.float32, [])
    ints = tf.range(n)
    stepped = tf.range(tf.constant(1), n, 2)
    floats = tf.range(0.5, limit, 0.75)
    counted = tf.range(tf.constant(3, tf.int64), 0, -1)
    assert floats.dtype == tf.float32 and counted.dtype == tf.int64
    got = _run([ints, stepped, floats, counted], {n: 6, limit: 3.0})
    np.testing.assert_array_equal(got[0], np.arange(6))
    np.testing.assert_array_equal(got[1], [1, 3, 5])
    np.testing.assert_allclose(got[2], np.arange(0.5, 3.0, 0.75))
    np.testing.assert_array_equal(got[3], [3, 2, 1])
    with pytest.raises(tf.errors.OpError, match="requires start <= limit when delta > 0"):
        _run(tf.range(n, 0, 1), {n: 4})


def test_random_ops_of_a_run_time_shape():
    x = tf.placeholder(tf.float32, [None, 3])
    shape = tf.shape(x)
    draws = [tf.random_normal(shape), tf.random_uniform(shape, 2.0, 4.0), tf.truncated_normal(shape),
             tf.random_uniform([shape[0], 500], minval=-2, maxval=3, dtype=tf.int32)]
    got = _run(draws, {x: np.zeros((2, 3), np.float32)})
    for value in got[:3]:
        assert value.shape == (2, 3)
    assert ((got[1] >= 2.0) & (got[1] < 4.0)).all()
    assert (np.abs(got[2]) <= 2.0).all()
    assert got[3].dtype == np.int32 and got[3].shape == (2, 500)
    assert set(np.unique(got[3])) == {-2, -1, 0, 1, 2}
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform(shape, dtype=tf.int32)


def test_placeholder_with_default_takes_its_declared_shape():
    x = tf.placeholder_with_default(np.array([1.0, 2.0, 3.0], np.float32), shape=[None])
    assert x.shape.as_list() == [None]
    y = x * 2.0
    unknown = tf.placeholder_with_default(tf.constant([[1, 2]]), shape=None)
    assert unknown.shape.ndims is None
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [2, 4, 6])
        np.testing.assert_array_equal(sess.run(y, {x: np.arange(5, dtype=np.float32)}), np.arange(5) * 2)
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: np.ones((2, 2), np.float32)})
    with pytest.raises(ValueError, match="not compatible"):
        tf.placeholder_with_default([1.0, 2.0], shape=[3])


def test_parallel_stack_stacks_along_a_new_first_axis():
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    stacked = tf.parallel_stack([a, b])
    assert stacked.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(_run(stacked), [[1, 2], [3, 4]])
