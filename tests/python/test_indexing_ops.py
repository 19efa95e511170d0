"""Indexing, segment and scatter ops (indexing_ops) against NumPy references, with gradients checked
against central finite differences."""
import numpy as np
import pytest

import tinyflow as tf
from eager_util import run_program

rng = np.random.RandomState(1)


def run(fetch, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetch, feed)


def check_gradient(build, x0, eps=1e-6, tol=1e-6):
    """d sum(w * build(x)) / dx from tf.gradients against central differences, in float64."""
    x = tf.placeholder(tf.float64, x0.shape)
    y = build(x)
    with tf.Session() as sess:
        y0 = sess.run(y, {x: x0})
        w = rng.uniform(-1, 1, y0.shape)
        loss = tf.reduce_sum(y * tf.constant(w, dtype=tf.float64))
        grad = sess.run(tf.gradients(loss, x)[0], {x: x0})
        numeric = np.zeros_like(x0)
        for i in range(x0.size):
            d = np.zeros(x0.size)
            d[i] = eps
            d = d.reshape(x0.shape)
            numeric.flat[i] = (sess.run(loss, {x: x0 + d}) - sess.run(loss, {x: x0 - d})) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, atol=tol, rtol=1e-5)


def np_gather_nd(params, indices):
    k = indices.shape[-1]
    flat = indices.reshape(-1, k)
    rows = [params[tuple(i)] for i in flat]
    return np.array(rows).reshape(indices.shape[:-1] + params.shape[k:])


def test_gather_nd_values_and_gradient():
    params = rng.uniform(-1, 1, (3, 4, 2))
    for indices in (np.array([[0, 1], [2, 3], [0, 1]]), np.array([[[1], [2]]]), np.array([[2, 0, 1]], np.int64)):
        np.testing.assert_allclose(run(tf.gather_nd(tf.constant(params), tf.constant(indices))),
                                   np_gather_nd(params, indices))
    check_gradient(lambda x: tf.gather_nd(x, tf.constant(np.array([[0, 1], [2, 3], [0, 1]], np.int32))), params)


def test_gather_nd_errors():
    with pytest.raises(Exception, match=r"index depth 4 .*exceeds the rank"):
        tf.gather_nd(tf.zeros([2, 3]), tf.constant(np.zeros((1, 4), np.int32))).shape
    with pytest.raises(Exception, match="out of range"):
        run(tf.gather_nd(tf.zeros([2, 3]), tf.constant(np.array([[2, 0]], np.int32))))
    with pytest.raises(TypeError):
        tf.gather_nd(tf.zeros([2, 3]), tf.constant(np.zeros((1, 2), np.float32)))


def test_scatter_nd_adds_duplicates_and_gradient():
    indices = np.array([[4], [3], [1], [7], [4]], np.int32)
    updates = rng.uniform(-1, 1, (5, 2))
    expected = np.zeros((8, 2))
    np.add.at(expected, indices[:, 0], updates)
    got = run(tf.scatter_nd(tf.constant(indices), tf.constant(updates), [8, 2]))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    check_gradient(lambda u: tf.scatter_nd(tf.constant(indices), u, [8, 2]), updates)
    with pytest.raises(Exception, match="updates"):
        tf.scatter_nd(tf.constant(indices), tf.zeros([4, 2]), [8, 2]).shape


def test_unsorted_segment_sum_drops_negative_ids_and_gradient():
    data = rng.uniform(-1, 1, (6, 3))
    ids = np.array([0, 2, -1, 2, 0, 3], np.int32)
    expected = np.zeros((4, 3))
    for i, s in enumerate(ids):
        if s >= 0:
            expected[s] += data[i]
    for op in (tf.unsorted_segment_sum, tf.math.unsorted_segment_sum):
        np.testing.assert_allclose(run(op(tf.constant(data), tf.constant(ids), 4)), expected, rtol=1e-6)
    check_gradient(lambda x: tf.unsorted_segment_sum(x, tf.constant(ids), 4), data)
    with pytest.raises(Exception, match="out of range"):
        run(tf.unsorted_segment_sum(tf.constant(data), tf.constant(ids), 3))


@pytest.mark.parametrize("name,fold,empty", [("max", np.maximum, np.finfo(np.float64).min),
                                             ("min", np.minimum, np.finfo(np.float64).max)])
def test_unsorted_segment_max_min_and_gradient(name, fold, empty):
    data = rng.uniform(-1, 1, (6, 2))
    ids = np.array([1, 0, -1, 1, 1, 0], np.int64)
    expected = np.full((3, 2), empty)
    for i, s in enumerate(ids):
        if s >= 0:
            expected[s] = fold(expected[s], data[i])
    op = getattr(tf, "unsorted_segment_" + name)
    x = tf.placeholder(tf.float64, [6, 2])
    np.testing.assert_allclose(run(op(x, tf.constant(ids), 3), {x: data}), expected)
    check_gradient(lambda x: op(x, tf.constant(ids), 2), data)
    tie = np.array([[1.0], [1.0], [0.5]])  # a tie shares the gradient: TF's rule
    y = tf.placeholder(tf.float64, [3, 1])
    grad = run(tf.gradients(tf.reduce_sum(getattr(tf.math, "unsorted_segment_" + name)(y, tf.constant([0, 0, 0]), 1)),
                            y)[0], {y: tie if name == "max" else -tie})
    np.testing.assert_allclose(grad, [[0.5], [0.5], [0.0]])


def test_segment_sum_rows_from_max_id_and_gradient():
    data = rng.uniform(-1, 1, (5, 2))
    ids = np.array([0, 0, 2, 2, 4], np.int64)
    expected = np.zeros((5, 2))
    np.add.at(expected, ids, data)
    np.testing.assert_allclose(run(tf.segment_sum(tf.constant(data), tf.constant(ids))), expected, rtol=1e-6)
    check_gradient(lambda x: tf.segment_sum(x, tf.constant(ids)), data)
    with pytest.raises(Exception, match="not increasing"):
        run(tf.segment_sum(tf.constant(data), tf.constant(np.array([1, 0, 2, 2, 3], np.int32))))


@pytest.mark.parametrize("name", ["mean", "max", "min"])
def test_sorted_segment_mean_max_min_and_gradient(name):
    data = rng.uniform(-1, 1, (5, 2))
    ids = np.array([0, 0, 0, 2, 2], np.int32)
    fold = {"mean": np.mean, "max": np.max, "min": np.min}[name]
    expected = np.array([fold(data[:3], 0), [0, 0], fold(data[3:], 0)])  # an id without rows gives 0
    op = getattr(tf.math, "segment_" + name)
    x = tf.placeholder(tf.float64, [5, 2])
    np.testing.assert_allclose(run(op(x, tf.constant(ids)), {x: data}), expected)
    check_gradient(lambda x: op(x, tf.constant(ids)), data)


def test_unique_in_order_of_first_occurrence():
    x = tf.placeholder(tf.int32, [None])
    y, idx = tf.unique(x)
    data = np.array([1, 1, 2, 4, 4, 4, 7, 8, 8], np.int32)
    got_y, got_idx = run([y, idx], {x: data})
    np.testing.assert_array_equal(got_y, [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(got_idx, [0, 0, 1, 2, 2, 2, 3, 4, 4])
    assert got_idx.dtype == np.int32
    out = tf.unique(tf.constant(np.array([3.5, -1.0, 3.5])), out_idx=tf.int64)
    got = run(list(out))
    np.testing.assert_array_equal(got[0], [3.5, -1.0])
    assert got[1].dtype == np.int64


def test_invert_permutation():
    perm = np.array([3, 4, 0, 2, 1], np.int32)
    np.testing.assert_array_equal(run(tf.invert_permutation(tf.constant(perm))), np.argsort(perm))
    with pytest.raises(Exception, match="duplicated"):
        run(tf.invert_permutation(tf.constant(np.array([0, 0, 1], np.int32))))


def test_where_one_argument_and_three_arguments():
    cond = np.array([[True, False, True], [False, False, True]])
    got = run(tf.where(tf.constant(cond)))
    np.testing.assert_array_equal(got, np.argwhere(cond))
    assert got.dtype == np.int64
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(run(tf.where(tf.constant(cond), tf.constant(a), tf.constant(b))), cond * 1.0)
    with pytest.raises(ValueError):
        tf.where(tf.constant(cond), tf.constant(a))


def test_boolean_mask_values_and_gradient():
    data = rng.uniform(-1, 1, (3, 4, 2))
    mask = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, False]])
    np.testing.assert_allclose(run(tf.boolean_mask(tf.constant(data), tf.constant(mask))), data[mask])
    row_mask = np.array([True, False, True, False])
    np.testing.assert_allclose(run(tf.boolean_mask(tf.constant(data), tf.constant(row_mask), axis=1)),
                               data[:, row_mask])
    check_gradient(lambda x: tf.boolean_mask(x, tf.constant(mask)), data)
    with pytest.raises(ValueError, match="scalar"):
        tf.boolean_mask(tf.constant(data), tf.constant(True))
    with pytest.raises(ValueError, match="incompatible"):
        tf.boolean_mask(tf.constant(data), tf.constant(np.ones((3, 5), bool)))


def test_random_shuffle_is_a_seeded_permutation_of_rows():
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    shuffled = tf.random_shuffle(tf.constant(data), seed=3)
    with tf.Session() as sess:
        first, second = sess.run(shuffled), sess.run(shuffled)
    for got in (first, second):
        np.testing.assert_array_equal(np.sort(got[:, 0]), data[:, 0])
        np.testing.assert_array_equal(got[:, 1], got[:, 0] + 1)
    assert not np.array_equal(first, data) or not np.array_equal(second, data)


def np_scan(x, axis, exclusive, reverse, op):
    x = np.flip(x, axis) if reverse else x
    out = np.cumsum(x, axis) if op == "sum" else np.cumprod(x, axis)
    if exclusive:
        init = np.zeros_like(np.take(x, [0], axis)) if op == "sum" else np.ones_like(np.take(x, [0], axis))
        out = np.concatenate([init, np.take(out, range(x.shape[axis] - 1), axis)], axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_cumprod(exclusive, reverse):
    data = rng.uniform(0.5, 1.5, (3, 4))
    for axis in (0, 1, -1):
        for op, fn in (("sum", tf.cumsum), ("prod", tf.cumprod)):
            got = run(fn(tf.constant(data), axis=axis, exclusive=exclusive, reverse=reverse))
            np.testing.assert_allclose(got, np_scan(data, axis % 2, exclusive, reverse, op), rtol=1e-6)
    check_gradient(lambda x: tf.cumsum(x, axis=1, exclusive=exclusive, reverse=reverse), data)
    check_gradient(lambda x: tf.cumprod(x, axis=0, exclusive=exclusive, reverse=reverse), data, tol=1e-5)


def test_reverse():
    data = rng.uniform(-1, 1, (2, 3, 4))
    np.testing.assert_allclose(run(tf.reverse(tf.constant(data), [0, 2])), data[::-1, :, ::-1])
    np.testing.assert_allclose(run(tf.reverse_v2(tf.constant(data), [-2])), data[:, ::-1])
    check_gradient(lambda x: tf.reverse(x, [1]), data)


def test_reverse_sequence():
    data = rng.uniform(-1, 1, (3, 4, 2))
    lengths = np.array([2, 4, 0], np.int64)
    expected = data.copy()
    for b, n in enumerate(lengths):
        expected[b, :n] = data[b, :n][::-1]
    np.testing.assert_allclose(run(tf.reverse_sequence(tf.constant(data), tf.constant(lengths), seq_axis=1)), expected,
                               rtol=1e-6)
    time_major = np.transpose(data, (1, 0, 2))
    got = run(tf.reverse_sequence(tf.constant(time_major), tf.constant(lengths), seq_dim=0, batch_dim=1))
    np.testing.assert_allclose(got, np.transpose(expected, (1, 0, 2)), rtol=1e-6)
    check_gradient(lambda x: tf.reverse_sequence(x, tf.constant(lengths), 1, 0), data)


def test_scatter_updates_on_a_variable():
    v = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    idx = tf.constant(np.array([2, 0, 2], np.int32))
    upd = tf.constant(np.ones((3, 3), np.float32))
    add, sub = tf.scatter_add(v, idx, upd), tf.scatter_sub(v, idx, upd)
    update = tf.scatter_update(v, tf.constant(np.array([1], np.int64)), tf.constant(np.full((1, 3), 7, np.float32)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = np.arange(12, dtype=np.float32).reshape(4, 3)
        expected[2] += 2
        expected[0] += 1
        np.testing.assert_allclose(sess.run(add), expected)
        np.testing.assert_allclose(sess.run(sub), np.arange(12, dtype=np.float32).reshape(4, 3))
        expected = np.arange(12, dtype=np.float32).reshape(4, 3)
        expected[1] = 7
        np.testing.assert_allclose(sess.run(update), expected)
        np.testing.assert_allclose(sess.run(v), expected)
        with pytest.raises(Exception, match="out of range"):
            sess.run(tf.scatter_add(v, tf.constant(np.array([4], np.int32)), upd[:1]))


def test_sparse_embedding_training_with_scatter_sub():
    table0 = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    emb = tf.Variable(table0)
    ids = tf.placeholder(tf.int32, [None])
    target = tf.placeholder(tf.float32, [None, 3])
    rows = tf.gather(emb, ids)
    loss = tf.reduce_sum(tf.square(rows - target))
    grad_rows = tf.gradients(loss, rows)[0]
    step = tf.scatter_sub(emb, ids, 0.1 * grad_rows)
    batch_ids = np.array([1, 4, 1], np.int32)
    batch_target = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
    expected = table0.copy()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            grad = 2 * (expected[batch_ids] - batch_target)
            np.subtract.at(expected, batch_ids, 0.1 * grad)
            sess.run(step, {ids: batch_ids, target: batch_target})
            np.testing.assert_allclose(sess.run(emb), expected, rtol=1e-5, atol=1e-6)


def test_eager_mode_dynamic_shapes_and_scatter():
    run_program("""
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        y, idx = tf.unique(tf.constant(np.array([3, 1, 3, 2], np.int32)))
        np.testing.assert_array_equal(y.numpy(), [3, 1, 2])
        np.testing.assert_array_equal(idx.numpy(), [0, 1, 0, 2])
        np.testing.assert_array_equal(tf.where(tf.constant([True, False, True])).numpy(), [[0], [2]])
        data = tf.constant(np.arange(4.0, dtype=np.float32))
        np.testing.assert_array_equal(tf.boolean_mask(data, tf.constant([True, False, True, True])).numpy(), [0, 2, 3])
        v = tf.Variable(np.zeros((3, 2), np.float32))
        tf.scatter_add(v, tf.constant(np.array([1, 1], np.int32)), tf.constant(np.ones((2, 2), np.float32)))
        tf.scatter_update(v, tf.constant(np.array([0], np.int32)), tf.constant(np.full((1, 2), 5, np.float32)))
        np.testing.assert_array_equal(v.numpy(), [[5, 5], [2, 2], [0, 0]])
    """)
