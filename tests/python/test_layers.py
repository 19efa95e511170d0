"""tf.layers: variable names and reuse, outputs against NumPy, dropout and batch normalization in
training and inference, and a small CNN that learns."""
import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(11)


def var(name):
    """The global variable named `name`."""
    return [v for v in tf.global_variables() if v.name == name][0]


def names(variables):
    return [v.name for v in variables]


def test_dense_names_reuse_and_output():
    x = tf.placeholder(tf.float32, [None, 3])
    y1 = tf.layers.dense(x, 4, activation=tf.nn.relu)
    tf.layers.dense(y1, 2)
    assert names(tf.trainable_variables()) == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0",
                                               "dense_1/bias:0"]
    y3 = tf.layers.dense(x, 4, name="dense", reuse=True)  # the first layer's variables again
    assert len(tf.trainable_variables()) == 4
    with pytest.raises(ValueError):
        tf.layers.dense(x, 4, name="dense")  # exists, no reuse
    data = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run([var("dense/kernel:0"), var("dense/bias:0")])
        out1, out3 = sess.run([y1, y3], {x: data})
    np.testing.assert_allclose(out1, np.maximum(data @ kernel + bias, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out3, data @ kernel + bias, rtol=1e-5, atol=1e-6)
    limit = np.sqrt(6.0 / (3 + 4))  # glorot_uniform
    assert np.all(np.abs(kernel) <= limit) and np.all(bias == 0)


def test_dense_class_scopes_and_regularizer():
    layer = tf.layers.Dense(2, use_bias=False, kernel_initializer=tf.ones_initializer(),
                            kernel_regularizer=lambda w: 0.1 * tf.reduce_sum(w))
    with tf.variable_scope("model"):
        a = layer(tf.ones([1, 3]))
        b = layer(tf.ones([2, 3]) * 2)  # the same kernel
    assert names(layer.variables) == ["model/dense/kernel:0"]
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_a, out_b, reg = sess.run([a, b, tf.losses.get_regularization_loss()])
    np.testing.assert_allclose(out_a, [[3, 3]])
    np.testing.assert_allclose(out_b, [[6, 6], [6, 6]])
    assert reg == pytest.approx(0.6)
    with tf.variable_scope("model", reuse=True):
        tf.layers.dense(tf.ones([1, 3]), 2, use_bias=False)  # finds model/dense/kernel
    assert len(tf.global_variables()) == 1


def test_conv_pool_flatten_against_numpy():
    x = rng.uniform(-1, 1, (2, 6, 6, 3)).astype(np.float32)
    conv = tf.layers.conv2d(x, 4, 3, padding="SAME", activation=tf.nn.relu)
    pool = tf.layers.max_pooling2d(conv, 2, 2)
    avg = tf.layers.average_pooling2d(conv, [2, 2], [2, 2], padding="valid")
    flat = tf.layers.flatten(pool)
    assert names(tf.global_variables()) == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert flat.shape.as_list() == [2, 36]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, c, p, a, f = sess.run([var("conv2d/kernel:0"), conv, pool, avg, flat])
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    ref = np.zeros((2, 6, 6, 4), np.float32)
    for i in range(6):
        for j in range(6):
            ref[:, i, j] = np.tensordot(padded[:, i:i + 3, j:j + 3], kernel, axes=([1, 2, 3], [0, 1, 2]))
    ref = np.maximum(ref, 0)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(p, ref.reshape(2, 3, 2, 3, 2, 4).max((2, 4)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a, ref.reshape(2, 3, 2, 3, 2, 4).mean((2, 4)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f, p.reshape(2, -1))


def test_conv1d_and_errors():
    x = rng.uniform(-1, 1, (2, 7, 3)).astype(np.float32)
    y = tf.layers.conv1d(x, 2, 3, strides=2, use_bias=False)
    assert names(tf.global_variables()) == ["conv1d/kernel:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, out = sess.run([var("conv1d/kernel:0"), y])
    ref = np.stack([np.tensordot(x[:, 2 * i:2 * i + 3], kernel, axes=([1, 2], [0, 1])) for i in range(3)], 1)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        tf.layers.conv2d(tf.ones([1, 4, 4, 1]), 2, 3, padding="full")
    with pytest.raises(ValueError):
        tf.layers.conv2d(tf.ones([1, 4, 4, 1]), 2, 3, data_format="NHWC")
    with pytest.raises(ValueError):
        tf.layers.conv2d(tf.ones([4, 4, 1]), 2, 3)
    with pytest.raises(ValueError):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)


def test_conv2d_channels_first():
    x = rng.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)
    y = tf.layers.conv2d(x, 3, 3, data_format="channels_first", bias_initializer=tf.ones_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, out = sess.run([var("conv2d/kernel:0"), y])
    ref = np.zeros((1, 3, 3, 3), np.float32)
    for i in range(3):
        for j in range(3):
            ref[:, :, i, j] = np.tensordot(x[:, :, i:i + 3, j:j + 3], kernel, axes=([2, 3, 1], [0, 1, 2])) + 1
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_dropout_training_flag():
    x = tf.ones([100, 100])
    training = tf.placeholder(tf.bool, [])
    fed = tf.layers.dropout(x, rate=0.3, training=training)
    assert run_fetch(tf.layers.dropout(x, 0.3)).min() == 1.0  # training=False: identity
    on = run_fetch(tf.layers.dropout(x, 0.3, training=True))
    assert 0.25 < np.mean(on == 0) < 0.35
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(fed, {training: False}), np.ones((100, 100)))
        out = sess.run(fed, {training: True})
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.7)}
    assert 0.25 < np.mean(out == 0) < 0.35


def run_fetch(fetch, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetch, feed)


@pytest.mark.parametrize("shape", [(6, 3), (4, 2, 2, 3)], ids=["dense", "fused"])
def test_batch_normalization_training_and_inference(shape):
    x = tf.placeholder(tf.float32, shape)
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, momentum=0.9, training=training)
    assert names(tf.global_variables()) == ["batch_normalization/gamma:0", "batch_normalization/beta:0",
                                            "batch_normalization/moving_mean:0",
                                            "batch_normalization/moving_variance:0"]
    assert names(tf.trainable_variables()) == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    data = rng.uniform(-1, 3, shape).astype(np.float32)
    axes = tuple(range(len(shape) - 1))
    mean, variance = data.mean(axes), data.var(axes)
    count = data.size // shape[-1]
    moving_var_batch = variance * count / (count - 1) if len(shape) == 4 else variance  # the fused path: unbiased
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: data, training: True})
        np.testing.assert_allclose(out, (data - mean) / np.sqrt(variance + 1e-3), rtol=1e-4, atol=1e-4)
        sess.run(updates, {x: data, training: False})  # not training: the moving statistics stay
        mm, mv = sess.run([var("batch_normalization/moving_mean:0"), var("batch_normalization/moving_variance:0")])
        np.testing.assert_allclose(mm, 0)
        np.testing.assert_allclose(mv, 1)
        sess.run(updates, {x: data, training: True})
        mm, mv = sess.run([var("batch_normalization/moving_mean:0"), var("batch_normalization/moving_variance:0")])
        np.testing.assert_allclose(mm, 0.1 * mean, rtol=1e-5)
        np.testing.assert_allclose(mv, 0.9 + 0.1 * moving_var_batch, rtol=1e-5)
        inference = sess.run(y, {x: data, training: False})
    np.testing.assert_allclose(inference, (data - mm) / np.sqrt(mv + 1e-3), rtol=1e-4, atol=1e-4)


def test_batch_normalization_python_flag_and_axis():
    x = rng.uniform(-1, 1, (3, 4, 5)).astype(np.float32)
    layer = tf.layers.BatchNormalization(axis=1, center=False)
    train = layer(tf.constant(x), training=True)
    infer = layer(tf.constant(x))
    assert names(layer.variables) == ["batch_normalization/gamma:0", "batch_normalization/moving_mean:0",
                                      "batch_normalization/moving_variance:0"]
    assert len(layer.updates) == 2  # only the training call adds updates
    out_train, out_infer = run_fetch([train, infer])
    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    np.testing.assert_allclose(out_train, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out_infer, x / np.sqrt(1 + 1e-3), rtol=1e-5)


def test_cnn_learns():
    """A tf.layers CNN with batch norm and dropout on random data: the training loss falls."""
    tf.set_random_seed(1)
    images = np.random.RandomState(5).uniform(0, 1, (32, 8, 8, 1)).astype(np.float32)
    labels = (images[:, :4].mean((1, 2, 3)) > images[:, 4:].mean((1, 2, 3))).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    training = tf.placeholder(tf.bool, [])
    h = tf.layers.conv2d(x, 8, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.batch_normalization(h, momentum=0.8, training=training)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dropout(tf.layers.flatten(h), rate=0.1, training=training)
    logits = tf.layers.dense(h, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(0.03).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, {x: images, y: labels, training: False})
        for _ in range(30):
            sess.run(train_op, {x: images, y: labels, training: True})
        after = sess.run(loss, {x: images, y: labels, training: False})
        moving_mean = sess.run(var("batch_normalization/moving_mean:0"))
    assert after < 0.6 * before
    assert np.any(moving_mean != 0)  # the update ops ran with the train op


def test_model_function_reused_in_scopes():
    x = tf.placeholder(tf.float32, [None, 3])

    def model(inputs):
        h = tf.layers.batch_normalization(tf.layers.dense(inputs, 4, activation=tf.nn.relu), training=True)
        return tf.layers.dense(h, 2)
    with tf.variable_scope("m"):
        a = model(x)
    with tf.variable_scope("m", reuse=True):
        b = model(x)
    with tf.variable_scope("m", reuse=tf.AUTO_REUSE):
        model(x)
    assert names(tf.global_variables()) == [
        "m/dense/kernel:0", "m/dense/bias:0", "m/batch_normalization/gamma:0", "m/batch_normalization/beta:0",
        "m/batch_normalization/moving_mean:0", "m/batch_normalization/moving_variance:0", "m/dense_1/kernel:0",
        "m/dense_1/bias:0"]
    data = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    out_a, out_b = run_fetch([a, b], {x: data})
    np.testing.assert_array_equal(out_a, out_b)
    with pytest.raises(NotImplementedError):
        tf.layers.Dense(2, activity_regularizer=lambda t: t)
