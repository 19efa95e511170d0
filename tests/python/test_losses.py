"""tf.losses against NumPy: every loss, every Reduction, the LOSSES collection and the totals."""
import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(3)
LABELS = rng.uniform(0, 1, (4, 3)).astype(np.float32)
PREDS = rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
WEIGHTS = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)  # broadcast over the columns; one zero row


def run(fetch, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetch, feed)


def reduce_ref(losses, weights, reduction):
    """TF's compute_weighted_loss in NumPy."""
    weights = np.broadcast_to(weights, losses.shape)
    weighted = losses * weights
    total = weighted.sum()
    if reduction == tf.losses.Reduction.NONE:
        return weighted
    if reduction == tf.losses.Reduction.SUM:
        return total
    if reduction == tf.losses.Reduction.MEAN:
        count = weights.sum()
    elif reduction == tf.losses.Reduction.SUM_OVER_BATCH_SIZE:
        count = losses.size
    else:
        count = np.sum(weights != 0)
    return total / count if count > 0 else 0.0


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


LOSSES = [
    ("absolute_difference", lambda z, p, **k: tf.losses.absolute_difference(z, p, **k), lambda z, p: np.abs(p - z)),
    ("mean_squared_error", lambda z, p, **k: tf.losses.mean_squared_error(z, p, **k), lambda z, p: (p - z) ** 2),
    ("log_loss", lambda z, p, **k: tf.losses.log_loss(z, p, **k),
     lambda z, p: -z * np.log(p + 1e-7) - (1 - z) * np.log(1 - p + 1e-7)),
    ("huber_loss", lambda z, p, **k: tf.losses.huber_loss(z, p * 4, delta=0.8, **k),
     lambda z, p: np.where(np.abs(4 * p - z) <= 0.8, 0.5 * (4 * p - z) ** 2, 0.8 * (np.abs(4 * p - z) - 0.4))),
    ("hinge_loss", lambda z, p, **k: tf.losses.hinge_loss(tf.round(z), p * 4 - 2, **k),
     lambda z, p: np.maximum(0, 1 - (2 * np.round(z) - 1) * (p * 4 - 2))),
    ("sigmoid_cross_entropy", lambda z, p, **k: tf.losses.sigmoid_cross_entropy(z, p * 6 - 3, **k),
     lambda z, p: -z * np.log(sigmoid(p * 6 - 3)) - (1 - z) * np.log(1 - sigmoid(p * 6 - 3))),
]
REDUCTIONS = ["none", "weighted_sum", "weighted_mean", "weighted_sum_over_batch_size",
              "weighted_sum_by_nonzero_weights"]


@pytest.mark.parametrize("name,loss,ref", LOSSES, ids=[entry[0] for entry in LOSSES])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_loss_and_reduction(name, loss, ref, reduction):
    out = run(loss(tf.constant(LABELS), tf.constant(PREDS), weights=tf.constant(WEIGHTS), reduction=reduction))
    np.testing.assert_allclose(out, reduce_ref(ref(LABELS.astype(np.float64), PREDS.astype(np.float64)), WEIGHTS,
                                               reduction), rtol=2e-5, atol=1e-6)


def test_default_reduction_and_collection():
    loss = tf.losses.mean_squared_error(LABELS, PREDS)
    assert tf.losses.get_losses() == [loss]
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    np.testing.assert_allclose(run(loss), np.mean((PREDS - LABELS) ** 2), rtol=1e-5)
    tf.losses.absolute_difference(LABELS, PREDS, loss_collection=None)
    assert len(tf.losses.get_losses()) == 1


def test_all_zero_weights_give_zero():
    for reduction in ("weighted_mean", "weighted_sum_by_nonzero_weights"):
        assert run(tf.losses.mean_squared_error(LABELS, PREDS, weights=0.0, reduction=reduction)) == 0.0


def test_softmax_cross_entropy_label_smoothing_and_weights():
    logits = rng.uniform(-2, 2, (4, 5)).astype(np.float32)
    onehot = np.eye(5, dtype=np.float32)[[0, 3, 1, 4]]
    smooth = onehot * 0.9 + 0.1 / 5
    logp = logits - np.log(np.sum(np.exp(logits), 1, keepdims=True))
    per_example = -np.sum(smooth * logp, 1)
    w = np.array([1.0, 2.0, 0.0, 1.0], np.float32)
    out = run(tf.losses.softmax_cross_entropy(onehot, logits, weights=w, label_smoothing=0.1))
    np.testing.assert_allclose(out, np.sum(per_example * w) / 3, rtol=1e-5)
    sparse = run(tf.losses.sparse_softmax_cross_entropy(np.array([0, 3, 1, 4]), logits))
    np.testing.assert_allclose(sparse, np.mean(-np.sum(onehot * logp, 1)), rtol=1e-5)


def test_sigmoid_cross_entropy_label_smoothing():
    logits = rng.uniform(-3, 3, (2, 3)).astype(np.float32)
    z = np.round(LABELS[:2]) * 0.8 + 0.1
    ref = np.mean(np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits))))
    out = run(tf.losses.sigmoid_cross_entropy(np.round(LABELS[:2]), logits, label_smoothing=0.2))
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_cosine_distance():
    a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    out = run(tf.losses.cosine_distance(a, b, axis=1))
    np.testing.assert_allclose(out, np.mean(1 - np.sum(a * b, 1)), rtol=1e-5)
    with pytest.raises(ValueError):
        tf.losses.cosine_distance(a, b)


def test_totals_with_regularization():
    w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]), regularizer=lambda v: 0.5 * tf.reduce_sum(v * v))
    tf.losses.add_loss(tf.reduce_sum(w))
    tf.losses.absolute_difference([1.0, 1.0], w)
    assert len(tf.losses.get_regularization_losses()) == 1
    reg, total, plain = run([tf.losses.get_regularization_loss(), tf.losses.get_total_loss(),
                             tf.losses.get_total_loss(add_regularization_losses=False)])
    assert reg == pytest.approx(2.5)
    assert plain == pytest.approx(3.0 + 0.5)
    assert total == pytest.approx(3.0 + 0.5 + 2.5)


def test_errors():
    with pytest.raises(ValueError):
        tf.losses.mean_squared_error(tf.ones([2, 3]), tf.ones([3, 2]))
    with pytest.raises(ValueError):
        tf.losses.mean_squared_error(tf.ones([2, 3]), tf.ones([2, 3]), weights=tf.ones([3, 3]))
    with pytest.raises(ValueError):
        tf.losses.mean_squared_error(tf.ones([2, 3]), tf.ones([2, 3]), reduction="bogus")
    with pytest.raises(ValueError):
        tf.losses.get_total_loss()
