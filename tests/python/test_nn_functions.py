"""tf.nn's Python-level functions (dropout with a fed keep_prob, cross entropies, l2_normalize,
embedding_lookup, fused_batch_norm, conv2d_transpose, atrous_conv2d, ...) against NumPy, with
gradients checked by finite differences."""
import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(7)


def c(value):
    """A float64 constant."""
    return tf.constant(np.asarray(value, np.float64), dtype=tf.float64)


def run(fetch, feed=None, **session_args):
    with tf.Session(**session_args) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetch, feed)


def check_gradient(build, *values, atol=1e-6):
    """d sum(build(x...) * w) / dx against central differences, in float64."""
    xs = [tf.placeholder(tf.float64, v.shape) for v in values]
    y = build(*xs)
    weights = rng.uniform(-1, 1, [d for d in y.shape.as_list()])
    loss = tf.reduce_sum(y * c(weights))
    grads = tf.gradients(loss, xs)
    with tf.Session() as sess:
        feed = dict(zip(xs, values))
        analytic = sess.run(grads, feed)
        for x, value, grad in zip(xs, values, analytic):
            numeric = np.zeros_like(value)
            eps = 1e-6
            for i in range(value.size):
                for sign in (1, -1):
                    shifted = value.copy()
                    shifted.flat[i] += sign * eps
                    numeric.flat[i] += sign * sess.run(loss, {**feed, x: shifted}) / (2 * eps)
            np.testing.assert_allclose(grad, numeric, atol=atol, rtol=1e-4)


def np_sigmoid_xent(z, x):
    return x - x * z + np.log(1 + np.exp(-x))  # exact form; fine for the moderate logits used


# ---------------------------------------------------------------- dropout

def test_dropout_fed_keep_prob():
    x = tf.placeholder(tf.float32, [None, 1000])
    keep = tf.placeholder(tf.float32)
    y = tf.nn.dropout(x, keep)
    data = rng.uniform(1, 2, (4, 1000)).astype(np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: data, keep: 1.0}), data)
        half = sess.run(y, {x: data, keep: 0.5})
    zeros = np.mean(half == 0)
    assert 0.45 < zeros < 0.55
    kept = half != 0
    np.testing.assert_allclose(half[kept], data[kept] * 2, rtol=1e-6)


def test_dropout_rate_tensor_and_noise_shape():
    x = tf.ones([50, 3, 3, 8])
    rate = tf.placeholder(tf.float32, [])
    y = tf.nn.dropout(x, rate=rate, noise_shape=[50, 1, 1, 8])
    out = run(y, {rate: 0.75})
    assert set(np.unique(out)) <= {0.0, 4.0}
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :1, :1, :], out.shape))  # one decision per (n, c)
    assert 0.6 < np.mean(out == 0) < 0.9


def test_dropout_noise_shape_with_an_unknown_batch():
    x = tf.placeholder(tf.float32, [None, 200])
    y = tf.nn.dropout(x, 0.5, noise_shape=[None, 1])  # None: x's dimension; one decision per row
    out = run(y, {x: np.ones((300, 200), np.float32)})
    assert out.shape == (300, 200)
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :1], out.shape))
    assert 0.35 < np.mean(out[:, 0] == 0) < 0.65


def test_dropout_gradient_is_the_mask():
    x = tf.placeholder(tf.float32, [None, 64])
    keep = tf.placeholder(tf.float32)
    y = tf.nn.dropout(x, keep)
    grad, = tf.gradients(tf.reduce_sum(y), [x])
    out, g = run([y, grad], {x: np.ones((3, 64), np.float32), keep: 0.5})
    np.testing.assert_array_equal(g, out)  # d(x * mask / keep)/dx = mask / keep = y for x = 1


def test_dropout_errors():
    x = tf.ones([2, 2])
    with pytest.raises(ValueError):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError):
        tf.nn.dropout(x, keep_prob=1.5)
    with pytest.raises(ValueError):
        tf.nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError):
        tf.nn.dropout(x)
    with pytest.raises(ValueError):
        tf.nn.dropout(tf.ones([2, 2], tf.int32), 0.5)
    with pytest.raises(ValueError):
        tf.nn.dropout(x, 0.5, noise_shape=[3, 1])


# ---------------------------------------------------------------- cross entropies

def test_sigmoid_cross_entropy_with_logits():
    logits = rng.uniform(-5, 5, (3, 4))
    labels = rng.uniform(0, 1, (3, 4))
    out = run(tf.nn.sigmoid_cross_entropy_with_logits(labels=c(labels), logits=c(logits)))
    np.testing.assert_allclose(out, np_sigmoid_xent(labels, logits), rtol=1e-10)
    big = run(tf.nn.sigmoid_cross_entropy_with_logits(labels=c([1.0, 0.0]),
                                                      logits=c([-200.0, 200.0])))
    np.testing.assert_allclose(big, [200.0, 200.0])  # stable: no overflow to inf
    check_gradient(lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), labels, logits)
    with pytest.raises(ValueError):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2, 3]), logits=tf.ones([3, 2]))
    with pytest.raises(ValueError):
        tf.nn.sigmoid_cross_entropy_with_logits(tf.ones([2]), tf.ones([2]))


def test_weighted_cross_entropy_with_logits():
    logits = rng.uniform(-5, 5, (3, 4))
    targets = rng.uniform(0, 1, (3, 4))
    q = 2.5
    ref = targets * -np.log(1 / (1 + np.exp(-logits))) * q + (1 - targets) * -np.log(1 - 1 / (1 + np.exp(-logits)))
    out = run(tf.nn.weighted_cross_entropy_with_logits(c(targets), c(logits), q))
    np.testing.assert_allclose(out, ref, rtol=1e-9)
    check_gradient(lambda z, x: tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=q),
                   targets, logits)


def test_log_poisson_loss():
    targets = np.array([0.0, 1.0, 2.0, 5.0])
    log_input = rng.uniform(-1, 1, 4)
    base = np.exp(log_input) - log_input * targets
    out = run(tf.nn.log_poisson_loss(c(targets), c(log_input), compute_full_loss=True))
    stirling = targets * np.log(np.maximum(targets, 1)) - targets + 0.5 * np.log(2 * np.pi * np.maximum(targets, 1))
    np.testing.assert_allclose(out, base + np.where(targets > 1, stirling, 0), rtol=1e-10)


# ---------------------------------------------------------------- normalization, lookups, activations

def test_l2_normalize():
    x = rng.uniform(-1, 1, (3, 5))
    out = run(tf.nn.l2_normalize(c(x), axis=1))
    np.testing.assert_allclose(out, x / np.sqrt(np.sum(x * x, 1, keepdims=True)), rtol=1e-10)
    np.testing.assert_allclose(run(tf.nn.l2_normalize(tf.zeros([2], tf.float64), 0)), [0.0, 0.0])
    check_gradient(lambda v: tf.nn.l2_normalize(v, dim=0), x)


def test_embedding_lookup():
    table = rng.uniform(-1, 1, (7, 3))
    ids = np.array([[0, 6], [3, 3]])
    np.testing.assert_allclose(run(tf.nn.embedding_lookup(c(table), ids)), table[ids])
    np.testing.assert_allclose(run(tf.nn.embedding_lookup([c(table)], ids)), table[ids])
    mod_parts = [c(table[i::3]) for i in range(3)]  # id i in partition i % 3, row i // 3
    np.testing.assert_allclose(run(tf.nn.embedding_lookup(mod_parts, ids)), table[ids])
    div_parts = [c(table[:3]), c(table[3:5]), c(table[5:])]
    np.testing.assert_allclose(run(tf.nn.embedding_lookup(div_parts, ids, partition_strategy="div")), table[ids])
    rows = table[ids]
    norms = np.sqrt(np.sum(rows ** 2, -1, keepdims=True))
    clipped = run(tf.nn.embedding_lookup(c(table), ids, max_norm=0.5))
    np.testing.assert_allclose(clipped, rows * 0.5 / np.maximum(norms, 0.5), rtol=1e-10)
    check_gradient(lambda t: tf.nn.embedding_lookup(t, ids), table)


def test_selu_xw_plus_b_zero_fraction():
    x = rng.uniform(-2, 2, (3, 4))
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    np.testing.assert_allclose(run(tf.nn.selu(c(x))),
                               scale * np.where(x > 0, x, alpha * (np.exp(x) - 1)), rtol=1e-12)
    check_gradient(tf.nn.selu, x + 0.05)  # away from the kink at 0
    w, b = rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, 2)
    np.testing.assert_allclose(run(tf.nn.xw_plus_b(c(x), c(w), c(b))), x @ w + b)
    assert run(tf.nn.zero_fraction(c([0.0, 1.0, 0.0, 2.0]))) == pytest.approx(0.5)


def test_fused_batch_norm_training_and_inference():
    x = rng.uniform(-1, 1, (4, 3, 3, 2))
    gamma, beta = rng.uniform(0.5, 1.5, 2), rng.uniform(-1, 1, 2)
    y, mean, var = run(tf.nn.fused_batch_norm(c(x), c(gamma), c(beta), epsilon=1e-3))
    bm, bv = x.mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(y, (x - bm) / np.sqrt(bv + 1e-3) * gamma + beta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mean, bm, rtol=1e-10)
    np.testing.assert_allclose(var, bv * 36 / 35, rtol=1e-10)  # the unbiased variance
    m, v = rng.uniform(-1, 1, 2), rng.uniform(0.5, 1, 2)
    y2, _, _ = run(tf.nn.fused_batch_norm(c(x), c(gamma), c(beta), c(m),
                                          c(v), is_training=False))
    np.testing.assert_allclose(y2, (x - m) / np.sqrt(v + 1e-3) * gamma + beta, rtol=1e-9)
    with pytest.raises(ValueError):
        tf.nn.fused_batch_norm(c(x), c(gamma), c(beta), is_training=False)
    check_gradient(lambda t, g: tf.nn.fused_batch_norm(t, g, c(beta))[0], x, gamma, atol=1e-5)


# ---------------------------------------------------------------- convolutions

def np_conv2d_nhwc(x, w, stride=1, dilation=1):
    """VALID cross-correlation, NHWC x HWIO."""
    kh, kw = (w.shape[0] - 1) * dilation + 1, (w.shape[1] - 1) * dilation + 1
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh:dilation, j * stride:j * stride + kw:dilation, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv2d_transpose_is_the_adjoint_of_conv2d():
    x = rng.uniform(-1, 1, (2, 7, 7, 3))  # conv2d input
    w = rng.uniform(-1, 1, (3, 3, 3, 4))  # [h, w, out channels of the transpose, in channels]
    dy = rng.uniform(-1, 1, (2, 3, 3, 4))
    y = run(tf.nn.conv2d_transpose(c(dy), c(w), [2, 7, 7, 3], [1, 2, 2, 1], "VALID"))
    # <conv2d(x), dy> == <x, conv2d_transpose(dy)>
    np.testing.assert_allclose(np.sum(np_conv2d_nhwc(x, w, 2) * dy), np.sum(x * y), rtol=1e-9)
    assert y.shape == (2, 7, 7, 3)
    check_gradient(lambda v, f: tf.nn.conv2d_transpose(v, f, [2, 7, 7, 3], [1, 2, 2, 1], "VALID"), dy, w)
    with pytest.raises(ValueError):
        tf.nn.conv2d_transpose(c(dy), c(w), [2, 7, 7, 5], [1, 2, 2, 1], "VALID")
    with pytest.raises(ValueError):
        tf.nn.conv2d_transpose(tf.ones([2, 3, 3, 2]), c(w), [2, 7, 7, 3], [1, 2, 2, 1], "VALID")


def test_atrous_conv2d():
    x = rng.uniform(-1, 1, (1, 8, 8, 2))
    w = rng.uniform(-1, 1, (3, 3, 2, 3))
    out = run(tf.nn.atrous_conv2d(c(x), c(w), 2, "VALID"))
    np.testing.assert_allclose(out, np_conv2d_nhwc(x, w, dilation=2), rtol=1e-9)
    same = run(tf.nn.atrous_conv2d(c(x), c(w), 2, "SAME"))
    padded = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))
    np.testing.assert_allclose(same, np_conv2d_nhwc(padded, w, dilation=2), rtol=1e-9)
    with pytest.raises(ValueError):
        tf.nn.atrous_conv2d(c(x), c(w), 0, "VALID")


def test_softmax_cross_entropy_v1_stops_the_labels_gradient_v2_does_not():
    logits = rng.uniform(-1, 1, (2, 3))
    labels = np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]])
    log_softmax = logits - np.log(np.sum(np.exp(logits), 1, keepdims=True))
    z, x = c(labels), c(logits)
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x)
    np.testing.assert_allclose(run(v1), -np.sum(labels * log_softmax, 1), rtol=1e-10)
    grad_v2, = tf.gradients(tf.reduce_sum(v2), [z])
    np.testing.assert_allclose(run(grad_v2), -log_softmax, rtol=1e-10)
    grad_v1, = tf.gradients(tf.reduce_sum(v1), [z])
    assert grad_v1 is None or not np.any(run(grad_v1))
