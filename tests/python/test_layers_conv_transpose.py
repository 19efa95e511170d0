"""tf.layers.conv2d_transpose / Conv2DTranspose against a NumPy transposed convolution, and the random
ops with tensor mean/stddev/minval/maxval (as aymericdamien's GAN/VAE examples use them)."""
import numpy as np
import pytest

import tinyflow as tf


def deconv_ref(x, kernel, stride, padding):
    """NumPy conv2d_transpose (NHWC, kernel [kh, kw, out, in]) with TF's output size and SAME cropping."""
    n, h, w, _ = x.shape
    kh, kw, out_c, _ = kernel.shape
    full = np.zeros((n, (h - 1) * stride + kh, (w - 1) * stride + kw, out_c))
    for i in range(h):
        for j in range(w):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :] += \
                np.einsum("nc,abdc->nabd", x[:, i, j, :], kernel)
    if padding == "valid":
        oh, ow = h * stride + max(kh - stride, 0), w * stride + max(kw - stride, 0)
        return full[:, :oh, :ow, :]
    oh, ow = h * stride, w * stride
    top, left = max((h - 1) * stride + kh - oh, 0) // 2, max((w - 1) * stride + kw - ow, 0) // 2
    return full[:, top:top + oh, left:left + ow, :]


@pytest.mark.parametrize("kernel_size,stride,padding", [(4, 2, "valid"), (2, 2, "valid"), (3, 2, "same"),
                                                        (3, 1, "valid")])
def test_conv2d_transpose_layer_matches_numpy(kernel_size, stride, padding):
    rng = np.random.RandomState(0)
    x_val = rng.randn(2, 5, 6, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 6, 3])
    y = tf.layers.conv2d_transpose(x, 4, kernel_size, strides=stride, padding=padding, activation=tf.nn.relu,
                                   bias_initializer=tf.constant_initializer(0.1))
    expected_hw = [d * stride + (max(kernel_size - stride, 0) if padding == "valid" else 0) for d in (5, 6)]
    assert y.shape.as_list() == [None] + expected_hw + [4]  # spatial sizes static with a run-time batch
    kernel = [v for v in tf.trainable_variables() if v.name.endswith("kernel:0")][-1]
    assert kernel.name.startswith("conv2d_transpose") and kernel.shape.as_list() == [kernel_size, kernel_size, 4, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, k = sess.run([y, kernel], {x: x_val})
    ref = np.maximum(deconv_ref(x_val.astype(np.float64), k.astype(np.float64), stride, padding) + 0.1, 0)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_layer_reuse_and_gradient():
    x = tf.placeholder(tf.float32, [None, 3, 3, 2])
    with tf.variable_scope("gen"):
        a = tf.layers.conv2d_transpose(x, 1, 2, strides=2, name="up")
    with tf.variable_scope("gen", reuse=True):
        b = tf.layers.conv2d_transpose(x, 1, 2, strides=2, name="up")
    assert len(tf.trainable_variables()) == 2
    grads = tf.gradients(tf.reduce_sum(a + b), tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ga, gk = sess.run([a, grads[0]], {x: np.ones((2, 3, 3, 2), np.float32)})
    assert ga.shape == (2, 6, 6, 1)
    np.testing.assert_allclose(gk, np.full((2, 2, 1, 2), 2 * 2 * 9.0), rtol=1e-5)  # 2 uses x batch 2 x 9 pixels


def test_random_ops_with_tensor_parameters():
    tf.set_random_seed(0)
    stddev = 1. / tf.sqrt(50. / 2.)  # a tensor, as glorot_init in the GAN examples
    normal = tf.random_normal([200, 100], mean=tf.constant(3.0), stddev=stddev)
    trunc = tf.truncated_normal([200, 100], stddev=tf.constant(2.0))
    low = tf.placeholder(tf.float32, [])
    uniform = tf.random_uniform([20000], minval=low, maxval=low + 4.0)
    with tf.Session() as sess:
        n, t, u = sess.run([normal, trunc, uniform], {low: -1.0})
    assert n.shape == (200, 100) and abs(n.mean() - 3.0) < 0.01 and abs(n.std() - 0.2) < 0.01
    assert np.abs(t).max() <= 4.0 + 1e-5 and 1.5 < t.std() < 1.9  # truncated at 2 stddev
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05


def test_random_ops_with_a_run_time_shape():
    """tf.random_normal(tf.shape(x)) (a VAE's epsilon), truncated_normal and random_uniform likewise."""
    x = tf.placeholder(tf.float32, [None, 4])
    normal = tf.random_normal(tf.shape(x), mean=1.0, stddev=2.0)
    trunc = tf.truncated_normal([tf.shape(x)[0], 4], stddev=tf.constant(3.0))
    uniform = tf.random_uniform(tf.shape(x), minval=-2.0, maxval=1.0)
    other = tf.random_normal(tf.shape(x))
    feed = {x: np.zeros((50000, 4), np.float32)}
    with tf.Session() as sess:
        n, t, u, o = sess.run([normal, trunc, uniform, other], feed)
        n_again = sess.run([normal, trunc, uniform, other], feed)[0]
    assert n.shape == t.shape == u.shape == (50000, 4)
    assert abs(n.mean() - 1.0) < 0.03 and abs(n.std() - 2.0) < 0.03
    assert abs(np.mean(np.abs(n - 1.0) < 2.0) - 0.6827) < 0.01  # normal, not merely the right moments
    assert np.abs(t).max() <= 6.0 + 1e-4 and abs(t.std() - 3.0 * 0.8796) < 0.03
    assert u.min() >= -2.0 and u.max() < 1.0 and abs(u.mean() + 0.5) < 0.02
    assert abs(np.corrcoef(n.ravel(), o.ravel())[0, 1]) < 0.02  # independent ops draw independently
    assert not np.allclose(n, n_again)  # a fresh draw every run
