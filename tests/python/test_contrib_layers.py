"""tf.contrib.layers: initializer statistics, regularizers, fully_connected/conv2d naming and reuse,
batch_norm in training and inference."""
import numpy as np
import pytest

import tinyflow as tf


def test_xavier_and_variance_scaling_statistics():
    a = tf.get_variable("a", [400, 600], initializer=tf.contrib.layers.xavier_initializer())
    b = tf.get_variable("b", [400, 600], initializer=tf.contrib.layers.xavier_initializer(uniform=False))
    c = tf.get_variable("c", [3, 3, 64, 32], initializer=tf.contrib.layers.variance_scaling_initializer())
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        va, vb, vc = s.run([a, b, c])
    limit = np.sqrt(3.0 / 500)
    assert va.max() <= limit and va.min() >= -limit and abs(va.std() - limit / np.sqrt(3)) < 0.002
    stddev = np.sqrt(1.3 / 500)  # truncated at two standard deviations, as TF1's contrib initializer
    assert np.abs(vb).max() <= 2 * stddev + 1e-6 and abs(vb.std() - stddev * 0.8796) < 0.002
    assert abs(vc.std() - np.sqrt(1.3 * 2 / (9 * 64)) * 0.8796) < 0.003


def test_fully_connected_conv2d_names_reuse_and_regularizer():
    x = tf.placeholder(tf.float32, [None, 6, 6, 3])
    h = tf.contrib.layers.conv2d(x, 4, 3, weights_regularizer=tf.contrib.layers.l2_regularizer(0.1))
    h = tf.contrib.layers.max_pool2d(h, 2)
    h = tf.contrib.layers.flatten(h)
    y = tf.contrib.layers.fully_connected(h, 2, activation_fn=None, scope="out")
    y2 = tf.contrib.layers.fully_connected(h, 2, activation_fn=None, scope="out", reuse=True)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == ["Conv/biases:0", "Conv/weights:0", "out/biases:0", "out/weights:0"]
    reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(reg) == 1
    data = np.random.RandomState(0).rand(2, 6, 6, 3).astype(np.float32)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, out2, r, w = s.run([y, y2, reg[0], tf.trainable_variables()[0]], {x: data})
    np.testing.assert_allclose(out, out2)
    conv_w = [v for v in tf.trainable_variables() if v.name == "Conv/weights:0"][0]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        wv, rv = s.run([conv_w, reg[0]])
    np.testing.assert_allclose(rv, 0.1 * (wv ** 2).sum() / 2, rtol=1e-5)
    with pytest.raises(ValueError):
        tf.contrib.layers.l2_regularizer(-1.0)


def test_batch_norm_training_and_inference():
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    y = tf.contrib.layers.batch_norm(x, decay=0.5, is_training=training, scale=True)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    data = np.random.RandomState(1).randn(8, 3).astype(np.float32) * 3 + 1
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, _ = s.run([y, updates], {x: data, training: True})
        np.testing.assert_allclose(out, (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-3), rtol=1e-4, atol=1e-4)
        inf = s.run(y, {x: data, training: False})
    mean, var = 0.5 * data.mean(0), 0.5 + 0.5 * data.var(0)
    np.testing.assert_allclose(inf, (data - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
