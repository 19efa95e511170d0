"""Adam checkpoints interchangeable with TensorFlow's.

TF 1.x's AdamOptimizer (tensorflow/python/training/adam.py: _create_slots, _finish) keeps the bias-correction
state in two non-slot float32 variables "beta1_power" and "beta2_power", created at the top level with the
values beta1 and beta2 and multiplied by beta1 / beta2 after every update, and its moments in the slots
"<var>/Adam" (m) and "<var>/Adam_1" (v). No TF-written Adam checkpoint is among the real TF files in
shared/tf_graphs, so the TF side here is that layout written by the checkpoint writer (TF's V2 format).
Older tinyflow versions wrote "Adam/step" (the step count) instead of the powers: those still restore."""
import numpy as np
import pytest

import tinyflow as tf

B1, B2, EPS, LR = 0.9, 0.999, 1e-8, 0.1
C = np.array([1.0, -2.0, 0.5], np.float32)
W0 = np.array([0.3, 0.2, -0.1], np.float32)


def numpy_adam(w, m, v, b1p, b2p, steps):
    """TF's Adam on loss = sum(c * w) + 0.5 * sum(w^2) (gradient c + w), from the given state."""
    w, m, v = w.astype(np.float64), m.astype(np.float64), v.astype(np.float64)
    for _ in range(steps):
        g = C + w
        lr_t = LR * np.sqrt(1 - b2p) / (1 - b1p)
        m = B1 * m + (1 - B1) * g
        v = B2 * v + (1 - B2) * g * g
        w = w - lr_t * m / (np.sqrt(v) + EPS)
        b1p, b2p = b1p * B1, b2p * B2
    return w, m, v, b1p, b2p


def model():
    w = tf.Variable(W0, name="w")
    loss = tf.reduce_sum(w * C) + 0.5 * tf.reduce_sum(tf.square(w))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(LR, B1, B2, EPS).minimize(loss, global_step=step)
    return w, train


def test_tinyflow_writes_tf_names_and_values(tmp_path):
    w, train = model()
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["beta1_power", "beta2_power", "global_step", "w", "w/Adam", "w/Adam_1"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    reader = tf.train.NewCheckpointReader(path)
    assert sorted(reader.get_variable_to_shape_map()) == names
    assert reader.get_variable_to_shape_map()["beta1_power"] == []
    assert reader.get_variable_to_dtype_map()["beta1_power"] == "float32"
    want_w, want_m, want_v, b1p, b2p = numpy_adam(W0, np.zeros(3), np.zeros(3), B1, B2, 3)
    np.testing.assert_allclose(reader.get_tensor("beta1_power"), B1 ** 4, rtol=1e-6)  # starts at B1: B1^(t+1)
    np.testing.assert_allclose(reader.get_tensor("beta2_power"), B2 ** 4, rtol=1e-6)
    np.testing.assert_allclose(reader.get_tensor("w"), want_w, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(reader.get_tensor("w/Adam"), want_m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reader.get_tensor("w/Adam_1"), want_v, rtol=1e-5, atol=1e-7)


def _write(path, values):
    """A checkpoint holding exactly `values` (name -> array) in TF's V2 format."""
    with tf.Graph().as_default():
        variables = {name: tf.Variable(value, name=name.replace("/", "_")) for name, value in values.items()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver(variables).save(sess, path)


def _continue_from(path, steps):
    w, train = model()
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        for _ in range(steps):
            sess.run(train)
        return sess.run([w] + [tf.get_default_graph().as_graph_element(n + ":0")
                               for n in ("w/Adam", "w/Adam_1", "beta1_power", "beta2_power")])


def test_a_tf_layout_checkpoint_restores_and_training_continues(tmp_path):
    w, m, v, b1p, b2p = numpy_adam(W0, np.zeros(3), np.zeros(3), B1, B2, 5)  # what TF holds after 5 steps
    path = str(tmp_path / "tf.ckpt")
    _write(path, {"w": w.astype(np.float32), "w/Adam": m.astype(np.float32), "w/Adam_1": v.astype(np.float32),
                  "beta1_power": np.float32(b1p), "beta2_power": np.float32(b2p), "global_step": np.int64(5)})
    got = _continue_from(path, 2)
    want = numpy_adam(w, m, v, b1p, b2p, 2)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=2e-5)


def test_an_old_tinyflow_checkpoint_with_adam_step_restores(tmp_path):
    w, m, v, b1p, b2p = numpy_adam(W0, np.zeros(3), np.zeros(3), B1, B2, 4)
    path = str(tmp_path / "old.ckpt")
    _write(path, {"w": w.astype(np.float32), "w/Adam": m.astype(np.float32), "w/Adam_1": v.astype(np.float32),
                  "Adam/step": np.float32(4.0), "global_step": np.int64(4)})
    got = _continue_from(path, 1)
    want = numpy_adam(w, m, v, b1p, b2p, 1)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=2e-5)


def test_a_checkpoint_without_powers_or_step_names_them(tmp_path):
    path = str(tmp_path / "bare.ckpt")
    _write(path, {"w": W0, "w/Adam": np.zeros(3, np.float32), "w/Adam_1": np.zeros(3, np.float32),
                  "global_step": np.int64(0)})
    model()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="beta1_power"):
            tf.train.Saver().restore(sess, path)


def test_two_adam_optimizers_get_tf_unique_names():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    tf.train.AdamOptimizer(0.1).minimize(a * a)
    tf.train.AdamOptimizer(0.1, name="Adam2").minimize(b * b)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["a", "a/Adam", "a/Adam_1", "b", "b/Adam2", "b/Adam2_1", "beta1_power", "beta1_power_1",
                     "beta2_power", "beta2_power_1"]
