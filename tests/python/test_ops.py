"""Ops through the TF-like API against NumPy, fused and unfused."""
import math

import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(0)
A = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
B = rng.uniform(-1.0, 1.0, (3, 4)).astype(np.float32)
ROW = rng.uniform(-1.0, 1.0, (4,)).astype(np.float32)


def run(fetch, fusion=True, feed=None):
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetch, feed)


UNARY = [
    ("exp", tf.exp, np.exp), ("log", tf.log, np.log), ("sqrt", tf.sqrt, np.sqrt),
    ("rsqrt", tf.rsqrt, lambda x: 1 / np.sqrt(x)), ("square", tf.square, np.square), ("abs", tf.abs, np.abs),
    ("neg", lambda x: -x, np.negative), ("tanh", tf.tanh, np.tanh),
    ("sigmoid", tf.sigmoid, lambda x: 1 / (1 + np.exp(-x))), ("relu", tf.nn.relu, lambda x: np.maximum(x, 0)),
    ("erf", tf.math.erf, np.vectorize(math.erf)), ("tf.erf", tf.erf, np.vectorize(math.erf)),
]


@pytest.mark.parametrize("name,op,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, op, ref, fusion):
    x = tf.placeholder(tf.float32, [None, 4])
    data = A if name in ("log", "sqrt", "rsqrt") else B
    np.testing.assert_allclose(run(op(x), fusion, {x: data}), ref(data), rtol=1e-5, atol=1e-6)


BINARY = [
    ("add", tf.add, np.add), ("subtract", tf.subtract, np.subtract), ("multiply", tf.multiply, np.multiply),
    ("divide", tf.divide, np.divide), ("pow", tf.pow, np.power), ("maximum", tf.maximum, np.maximum),
    ("minimum", tf.minimum, np.minimum),
    ("op+", lambda a, b: a + b, np.add), ("op-", lambda a, b: a - b, np.subtract),
    ("op*", lambda a, b: a * b, np.multiply), ("op/", lambda a, b: a / b, np.divide),
    ("op**", lambda a, b: a ** b, np.power),
]


@pytest.mark.parametrize("name,op,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_with_broadcasting(name, op, ref, fusion):
    a = tf.placeholder(tf.float32, [3, 4])
    b = tf.constant(ROW if name not in ("pow", "op**") else np.abs(ROW))
    rhs = ROW if name not in ("pow", "op**") else np.abs(ROW)
    np.testing.assert_allclose(run(op(a, b), fusion, {a: A}), ref(A, rhs), rtol=1e-5, atol=1e-6)


def test_python_scalars_on_either_side():
    x = tf.constant(A)
    got = run([x + 1, 1 + x, x - 2, 2 - x, x * 3, 3 * x, x / 4, 4 / x, x ** 2, 2 ** x, -x])
    want = [A + 1, 1 + A, A - 2, 2 - A, A * 3, 3 * A, A / 4, 4 / A, A ** 2, 2 ** A, -A]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_comparisons_and_cast():
    a, b = tf.constant(A), tf.constant(B + 1)
    got = run([tf.equal(a, a), tf.not_equal(a, b), tf.greater(a, b), tf.less(a, b), tf.cast(a, tf.int32),
               tf.cast(tf.greater(a, 1.0), tf.float32)])
    np.testing.assert_array_equal(got[0], np.ones_like(A, bool))
    np.testing.assert_array_equal(got[1], A != B + 1)
    np.testing.assert_array_equal(got[2], A > B + 1)
    np.testing.assert_array_equal(got[3], A < B + 1)
    assert got[4].dtype == np.int32
    np.testing.assert_array_equal(got[4], A.astype(np.int32))
    np.testing.assert_array_equal(got[5], (A > 1).astype(np.float32))


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1], -1])
@pytest.mark.parametrize("keep", [False, True])
def test_reductions(axis, keep):
    x = tf.constant(B)
    ax = tuple(axis) if isinstance(axis, list) else axis
    got = run([tf.reduce_sum(x, axis, keepdims=keep), tf.reduce_mean(x, axis=axis, keep_dims=keep),
               tf.reduce_max(x, reduction_indices=axis, keepdims=keep), tf.reduce_min(x, axis, keepdims=keep),
               tf.reduce_prod(x, axis, keepdims=keep)])
    for g, f in zip(got, [np.sum, np.mean, np.max, np.min, np.prod]):
        np.testing.assert_allclose(g, f(B, axis=ax, keepdims=keep), rtol=1e-5, atol=1e-6)


def test_argmax_argmin_matmul():
    a, b = tf.constant(A), tf.constant(B.T.copy())
    got = run([tf.argmax(a, 1), tf.argmin(a, axis=0), tf.matmul(a, b), tf.matmul(a, a, transpose_b=True),
               tf.matmul(a, a, transpose_a=True)])
    np.testing.assert_array_equal(got[0], A.argmax(1))
    np.testing.assert_array_equal(got[1], A.argmin(0))
    np.testing.assert_allclose(got[2], A @ B.T, rtol=1e-5)
    np.testing.assert_allclose(got[3], A @ A.T, rtol=1e-5)
    np.testing.assert_allclose(got[4], A.T @ A, rtol=1e-5)


def test_shape_ops():
    x = tf.constant(B)
    parts = tf.split(x, 2, axis=1)
    sized = tf.split(x, [1, 3], 1)
    got = run([tf.reshape(x, [-1, 2]), tf.transpose(x), tf.concat([x, x], 0), tf.stack([x, x], axis=1),
               tf.expand_dims(x, 0), tf.squeeze(tf.expand_dims(x, 2)), tf.tile(x, [2, 1]),
               tf.gather(x, tf.constant([2, 0])), parts[0], parts[1], sized[1], x[1], x[:, 1:3]])
    want = [B.reshape(-1, 2), B.T, np.concatenate([B, B]), np.stack([B, B], 1), B[None], B, np.tile(B, (2, 1)),
            B[[2, 0]], B[:, :2], B[:, 2:], B[:, 1:], B[1], B[:, 1:3]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_one_hot_where_fill_and_likes():
    idx = tf.constant(np.array([0, 2, 1], np.int32))
    x = tf.constant(B)
    got = run([tf.one_hot(idx, 3), tf.where(tf.greater(x, 0.0), x, tf.zeros_like(x)), tf.fill([2, 2], 7.0),
               tf.ones_like(x), tf.zeros([2], tf.int32), tf.ones([1, 2]), tf.constant(3, shape=[2, 2]),
               tf.identity(x)])
    np.testing.assert_array_equal(got[0], np.eye(3, dtype=np.float32)[[0, 2, 1]])
    np.testing.assert_allclose(got[1], np.where(B > 0, B, 0))
    np.testing.assert_array_equal(got[2], np.full((2, 2), 7.0))
    np.testing.assert_array_equal(got[3], np.ones_like(B))
    assert got[4].dtype == np.int32 and got[4].tolist() == [0, 0]
    np.testing.assert_array_equal(got[5], np.ones((1, 2)))
    np.testing.assert_array_equal(got[6], np.full((2, 2), 3))
    np.testing.assert_array_equal(got[7], B)


def test_nn_ops():
    logits = rng.randn(5, 7).astype(np.float32)
    labels = rng.randint(0, 7, 5).astype(np.int32)
    onehot = np.eye(7, dtype=np.float32)[labels]
    lg = tf.constant(logits)
    sm = np.exp(logits - logits.max(1, keepdims=True))
    sm /= sm.sum(1, keepdims=True)
    xent = -np.log(sm[np.arange(5), labels])
    got = run([tf.nn.softmax(lg), tf.nn.log_softmax(lg),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(labels), logits=lg),
               tf.nn.softmax_cross_entropy_with_logits(labels=tf.constant(onehot), logits=lg),
               tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.constant(onehot), logits=lg),
               tf.nn.l2_loss(lg), tf.nn.bias_add(lg, tf.constant(np.arange(7, dtype=np.float32)))])
    np.testing.assert_allclose(got[0], sm, rtol=1e-5)
    np.testing.assert_allclose(got[1], np.log(sm), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], xent, rtol=1e-5)
    np.testing.assert_allclose(got[3], xent, rtol=1e-5)
    np.testing.assert_allclose(got[4], xent, rtol=1e-5)
    np.testing.assert_allclose(got[5], (logits ** 2).sum() / 2, rtol=1e-5)
    np.testing.assert_allclose(got[6], logits + np.arange(7), rtol=1e-6)


def _conv_ref(x, w, stride, padding):
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv2d_and_pooling(padding, stride):
    x = rng.randn(2, 7, 7, 3).astype(np.float32)
    w = rng.randn(3, 3, 3, 4).astype(np.float32)
    xt = tf.constant(x)
    got = run([tf.nn.conv2d(xt, tf.constant(w), strides=[1, stride, stride, 1], padding=padding),
               tf.nn.max_pool(xt, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
               tf.nn.avg_pool(xt, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")])
    np.testing.assert_allclose(got[0], _conv_ref(x, w, stride, padding), rtol=1e-4, atol=1e-4)
    blocks = x[:, :6, :6, :].reshape(2, 3, 2, 3, 2, 3)
    np.testing.assert_allclose(got[1], blocks.max(axis=(2, 4)), rtol=1e-6)
    np.testing.assert_allclose(got[2], blocks.mean(axis=(2, 4)), rtol=1e-5)


def test_dropout_scales_kept_values_and_is_identity_when_not_training():
    x = tf.ones([100, 100])
    y = tf.nn.dropout(x, keep_prob=0.5)
    with tf.Session() as sess:
        out = sess.run(y)
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert 0.4 < (out > 0).mean() < 0.6
    with tf.Session(is_train=False) as sess:
        np.testing.assert_array_equal(sess.run(y), np.ones((100, 100)))


def test_random_ops_have_the_requested_statistics():
    tf.set_random_seed(3)
    n, u, t = tf.random_normal([200, 100], mean=1.0, stddev=2.0), tf.random_uniform([20000], -1, 3), \
        tf.truncated_normal([20000], stddev=1.0)
    a, b, c = run([n, u, t])
    assert abs(a.mean() - 1.0) < 0.1 and abs(a.std() - 2.0) < 0.1
    assert u.dtype == tf.float32 and b.min() >= -1 and b.max() < 3 and abs(b.mean() - 1.0) < 0.05
    assert np.abs(c).max() <= 2.0
    a2 = run(tf.random_normal([3]))
    assert a2.shape == (3,)


def test_static_shapes_and_dtypes_are_inferred():
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.matmul(x, tf.zeros([784, 10]))
    assert y.shape.as_list() == [None, 10]
    assert y.get_shape()[1].value == 10
    assert y.dtype == tf.float32
    assert tf.argmax(y, 1).dtype == tf.int64
    assert tf.cast(y, tf.int32).dtype == tf.int32
