"""tf.gradients (the library's Gradient pass) against central finite differences."""
import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(1)


def numeric_grad(f, x, eps=1e-3):
    g = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


LABELS = rng.randint(0, 4, 3).astype(np.int32)
CASES = {
    "matmul": ((3, 4), lambda x: tf.matmul(x, tf.constant(rng.randn(4, 2).astype(np.float32)))),
    "sigmoid_tanh": ((3, 4), lambda x: tf.sigmoid(x) * tf.tanh(x)),
    "exp_log_sqrt": ((3, 4), lambda x: tf.log(tf.exp(x) + 1.0) + tf.sqrt(tf.square(x) + 1.0)),
    "divide_broadcast": ((3, 4), lambda x: x / (tf.reduce_sum(tf.abs(x), axis=0) + 1.0)),
    "relu_mean": ((3, 4), lambda x: tf.reduce_mean(tf.nn.relu(x) * x, axis=1)),
    "softmax": ((3, 4), lambda x: tf.nn.softmax(x) * tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))),
    "sparse_xent": ((3, 4), lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant(LABELS), logits=x)),
    "conv_pool": ((1, 5, 5, 2), lambda x: tf.nn.max_pool(tf.nn.conv2d(
        x, tf.constant(rng.randn(3, 3, 2, 2).astype(np.float32)), strides=[1, 1, 1, 1], padding="SAME"),
        ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")),
    "reshape_transpose_concat": ((2, 3), lambda x: tf.concat([tf.transpose(x), tf.reshape(x, [3, 2]) * 2.0], 1)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case):
    shape, build = CASES[case]
    x = tf.placeholder(tf.float32, shape)
    y = build(x)
    weights = tf.constant(rng.uniform(0.5, 1.5, y.shape.as_list()).astype(np.float32))
    loss = tf.reduce_sum(y * weights)
    grad, = tf.gradients(loss, [x])
    x0 = rng.randn(*shape).astype(np.float32)
    with tf.Session(fusion=False) as sess:
        got = sess.run(grad, {x: x0})
        want = numeric_grad(lambda v: float(sess.run(loss, {x: v.astype(np.float32)})), x0.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)


def test_grad_ys_scale_the_head_gradient():
    x = tf.placeholder(tf.float32, [3])
    y = x * x
    g, = tf.gradients(y, x, grad_ys=tf.constant(np.array([1, 2, 3], np.float32)))
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: np.array([1, 1, 2], np.float32)}), [2, 4, 12])


def test_gradients_of_several_ys_are_summed_and_unreached_xs_get_zeros():
    x, z = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [2])
    gx, gz = tf.gradients([x * 3.0, tf.square(x)], [x, z], unconnected_gradients="zero")  # (TF's default: None)
    with tf.Session() as sess:
        a, b = sess.run([gx, gz], {x: np.array([1, 2], np.float32), z: np.zeros(2, np.float32)})
    np.testing.assert_allclose(a, [5, 7])
    np.testing.assert_allclose(b, [0, 0])


@pytest.mark.parametrize("value", [0.0, 1.0, 2.5])
def test_gradient_with_respect_to_a_constant_keeps_its_paths(value):
    # An x that happens to be a constant 0 or 1 keeps its own path (when rules simplified the
    # forward graph first, 0 + y -> y dropped it: d(a + 2a)/da came out 2); the rules now run at
    # bind time, over the gradient as built.
    a = tf.constant(value)
    with tf.Session() as sess:
        got = sess.run(tf.gradients(a + 2.0 * a, a) + tf.gradients(a * 1.0 + a * a, a) + tf.gradients(a * 0.0 + a, a))
    np.testing.assert_allclose(got, [3.0, 1.0 + 2 * value, 1.0])
