"""Small TF 1.x behaviours the aymericdamien/TensorFlow-Examples programs rely on: tf.contrib.data (TF 1.2-1.3's
tf.data) and softmax_cross_entropy_with_logits casting the labels to the logits' dtype."""
import numpy as np

import tinyflow as tf


def test_contrib_data_is_tf_data():
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.eye(3)[[0, 1, 2, 0, 1, 2]]  # float64, as input_data's one-hot labels
    dataset = tf.contrib.data.Dataset.from_tensor_slices((images, labels)).batch(4)
    iterator = dataset.make_initializable_iterator()
    x, y = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        bx, by = sess.run([x, y])
        tail = sess.run(x)
    np.testing.assert_array_equal(bx, images[:4])
    np.testing.assert_array_equal(by, labels[:4])
    np.testing.assert_array_equal(tail, images[4:])
    assert tf.contrib.data.Iterator is tf.data.Iterator


def test_softmax_cross_entropy_casts_labels_to_the_logits_dtype():
    logits_value = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], np.float32)
    labels_value = np.array([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])  # float64
    logits = tf.constant(logits_value)
    labels = tf.placeholder(tf.float64, [None, 3])
    loss = tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=labels)
    loss_v2 = tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=labels)
    assert loss.dtype == tf.float32 and loss_v2.dtype == tf.float32
    with tf.Session() as sess:
        got, got_v2 = sess.run([loss, loss_v2], {labels: labels_value})
    shifted = logits_value - logits_value.max(1, keepdims=True)
    ref = -(labels_value * (shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))).sum(1)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    np.testing.assert_allclose(got_v2, ref, rtol=1e-5)
