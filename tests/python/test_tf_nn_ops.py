"""tf.nn / tf ops of tf_nn_ops.py against NumPy references, with gradients checked by finite differences."""
import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(7)


def c64(a):
    return tf.constant(a, dtype=tf.float64)


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed_dict=feed)


def check_grad(f, x0, eps=1e-6, tol=1e-5):
    """tf.gradients of sum(f(x) * w) against central differences, in float64."""
    x = tf.placeholder(tf.float64, shape=x0.shape)
    y = f(x)
    w = rng.uniform(-1, 1, size=tuple(y.shape.as_list())).astype(np.float64)
    loss = tf.reduce_sum(y * tf.constant(w, dtype=tf.float64))
    (grad,) = tf.gradients(loss, [x])
    with tf.Session() as sess:
        analytic = sess.run(grad, feed_dict={x: x0})
        numeric = np.zeros_like(x0)
        for i in np.ndindex(*x0.shape):
            xp, xm = x0.copy(), x0.copy()
            xp[i] += eps
            xm[i] -= eps
            numeric[i] = (sess.run(loss, feed_dict={x: xp}) - sess.run(loss, feed_dict={x: xm})) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=tol, atol=tol)


SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717


def test_activations_and_float_classes():
    x = np.array([-3.0, -0.5, 0.0, 0.25, 4.0], np.float32)
    elu, selu, softsign = run(tf.nn.elu(x), tf.nn.selu(x), tf.nn.softsign(x))
    np.testing.assert_allclose(elu, np.where(x < 0, np.expm1(x), x), rtol=1e-6)
    np.testing.assert_allclose(selu, SELU_SCALE * np.where(x < 0, SELU_ALPHA * np.expm1(x), x), rtol=1e-6)
    np.testing.assert_allclose(softsign, x / (1 + np.abs(x)), rtol=1e-6)
    special = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32)
    nan, inf, fin = run(tf.is_nan(special), tf.is_inf(special), tf.is_finite(special))
    assert nan.dtype == np.bool_
    np.testing.assert_array_equal(nan, np.isnan(special))
    np.testing.assert_array_equal(inf, np.isinf(special))
    np.testing.assert_array_equal(fin, np.isfinite(special))
    with pytest.raises(TypeError):
        tf.is_nan(tf.constant([1, 2]))
    x0 = rng.uniform(-2, 2, (3, 4))
    for fn in (tf.nn.elu, tf.nn.selu, tf.nn.softsign):
        check_grad(fn, x0)


def depthwise_reference(x, w, stride, rate, padding):
    n, h, wd, c = x.shape
    kh, kw, _, m = w.shape
    span_h, span_w = (kh - 1) * rate + 1, (kw - 1) * rate + 1
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        ph = max((oh - 1) * stride + span_h - h, 0) // 2
        pw = max((ow - 1) * stride + span_w - wd, 0) // 2
    else:
        oh, ow, ph, pw = (h - span_h) // stride + 1, (wd - span_w) // stride + 1, 0, 0
    out = np.zeros((n, oh, ow, c, m))
    for oy in range(oh):
        for ox in range(ow):
            for ky in range(kh):
                for kx in range(kw):
                    iy, ix = oy * stride - ph + ky * rate, ox * stride - pw + kx * rate
                    if 0 <= iy < h and 0 <= ix < wd:
                        out[:, oy, ox] += x[:, iy, ix, :, None] * w[ky, kx]
    return out.reshape(n, oh, ow, c * m)


@pytest.mark.parametrize("stride,rate,padding", [(1, 1, "SAME"), (2, 1, "VALID"), (1, 2, "SAME")])
def test_depthwise_and_separable_conv2d(stride, rate, padding):
    x = rng.randn(2, 6, 5, 3)
    w = rng.randn(3, 3, 3, 2)
    p = rng.randn(1, 1, 6, 4)
    strides = [1, stride, stride, 1]
    got, sep = run(tf.nn.depthwise_conv2d(c64(x), c64(w), strides, padding, rate=[rate, rate]),
                   tf.nn.separable_conv2d(c64(x), c64(w), c64(p), strides, padding, rate=[rate, rate]))
    ref = depthwise_reference(x, w, stride, rate, padding)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(sep, np.einsum("nhwc,co->nhwo", ref, p[0, 0]), rtol=1e-10, atol=1e-10)
    check_grad(lambda t: tf.nn.depthwise_conv2d(t, c64(w), strides, padding, rate=[rate, rate]), x[:1, :4, :4])
    check_grad(lambda t: tf.nn.depthwise_conv2d(c64(x[:1, :4, :4]), t, strides, padding, rate=[rate, rate]), w)


def test_depthwise_errors():
    x = np.zeros((1, 4, 4, 2), np.float32)
    with pytest.raises(ValueError):
        tf.nn.depthwise_conv2d(x, np.zeros((2, 2, 2, 1), np.float32), [1, 2, 2, 1], "SAME", rate=[2, 2])
    with pytest.raises(ValueError):
        tf.nn.depthwise_conv2d(x, np.zeros((2, 2, 2, 1), np.float32), [1, 1], "SAME")
    with pytest.raises(ValueError, match="channels"):
        run(tf.nn.depthwise_conv2d(x, np.zeros((2, 2, 3, 1), np.float32), [1, 1, 1, 1], "SAME"))


def test_lrn():
    x = rng.randn(2, 3, 2, 8)
    radius, bias, alpha, beta = 2, 1.5, 0.4, 0.75
    sq = np.pad(x * x, [(0, 0), (0, 0), (0, 0), (radius, radius)])
    sums = sum(sq[..., k:k + 8] for k in range(2 * radius + 1))
    got, default = run(tf.nn.lrn(c64(x), radius, bias, alpha, beta), tf.nn.local_response_normalization(c64(x)))
    np.testing.assert_allclose(got, x / (bias + alpha * sums) ** beta, rtol=1e-10)
    sq5 = np.pad(x * x, [(0, 0), (0, 0), (0, 0), (5, 5)])
    np.testing.assert_allclose(default, x / (1 + sum(sq5[..., k:k + 8] for k in range(11))) ** 0.5, rtol=1e-10)
    check_grad(lambda t: tf.nn.lrn(t, radius, bias, alpha, beta), x[:1, :2])


def test_space_to_batch_and_back():
    x = np.arange(1, 17, dtype=np.float32).reshape(2, 2, 4, 1)
    s2b = tf.space_to_batch_nd(x, [2, 2], [[0, 0], [2, 0]])
    got, back = run(s2b, tf.batch_to_space_nd(s2b, [2, 2], [[0, 0], [2, 0]]))
    # TensorFlow's documented example.
    expected = [[0, 1, 3], [0, 9, 11], [0, 2, 4], [0, 10, 12], [0, 5, 7], [0, 13, 15], [0, 6, 8], [0, 14, 16]]
    np.testing.assert_array_equal(got.reshape(8, 3), expected)
    np.testing.assert_array_equal(back, x)
    y = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    a, b = run(tf.space_to_batch(y, [[0, 0], [0, 0]], block_size=2), tf.nn.space_to_batch(y, [[0, 0], [0, 0]], 2))
    np.testing.assert_array_equal(a, y.reshape(2, 2, 2, 2).transpose(1, 3, 0, 2).reshape(4, 2, 2, 1))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(run(tf.batch_to_space(a, [[0, 0], [0, 0]], 2))[0], y)
    check_grad(lambda t: tf.space_to_batch_nd(t, [2, 3], [[1, 0], [0, 1]]), rng.randn(1, 3, 5, 2))
    check_grad(lambda t: tf.batch_to_space_nd(t, [2, 1], [[1, 0], [0, 0]]), rng.randn(4, 2, 2, 1))
    with pytest.raises(ValueError):
        tf.space_to_batch_nd(x, [2, 2], [[0, 0]])


def test_mirror_pad():
    t = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    paddings = [[1, 1], [2, 2]]
    reflect, symmetric = run(tf.pad(t, paddings, mode="REFLECT"), tf.pad(t, paddings, mode="symmetric"))
    np.testing.assert_array_equal(reflect, np.pad(t, paddings, mode="reflect"))
    np.testing.assert_array_equal(symmetric, np.pad(t, paddings, mode="symmetric"))
    for mode in ("REFLECT", "SYMMETRIC"):
        check_grad(lambda x: tf.pad(x, [[2, 1], [0, 3]], mode=mode), rng.randn(3, 4))
    with pytest.raises(ValueError):
        tf.pad(t, paddings, mode="EDGE")
    with pytest.raises(ValueError, match="must be at most"):
        run(tf.pad(t, [[2, 0], [0, 0]], mode="REFLECT"))


def test_top_k_and_in_top_k():
    x = np.array([[1, 3, 3, -1, 2], [5, 4, 5, 5, 0]], np.float32)
    result = tf.nn.top_k(x, k=3)
    values, indices = run(result.values, result.indices)
    np.testing.assert_array_equal(values, [[3, 3, 2], [5, 5, 5]])
    assert indices.dtype == np.int32
    np.testing.assert_array_equal(indices, [[1, 2, 4], [0, 2, 3]])
    check_grad(lambda t: tf.nn.top_k(t, 2).values, rng.randn(3, 5))
    preds = np.array([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [1, np.nan, 0]], np.float32)
    targets = np.array([1, 0, 1], np.int32)
    k1, k2 = run(tf.nn.in_top_k(preds, targets, 1), tf.nn.in_top_k(preds, targets, 2))
    np.testing.assert_array_equal(k1, [True, False, False])
    np.testing.assert_array_equal(k2, [True, True, False])
    with pytest.raises(TypeError):
        tf.nn.in_top_k(preds, np.array([1.0, 0.0, 1.0], np.float32), 1)
    with pytest.raises(ValueError, match="at least k = 9"):
        run(tf.nn.top_k(x, 9).values)
