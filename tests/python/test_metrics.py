"""tf.metrics: streaming (value, update_op) pairs over batches, against NumPy over everything seen."""
import numpy as np
import pytest

import tinyflow as tf

RNG = np.random.RandomState(0)
BATCHES = [(RNG.randint(0, 3, 6), RNG.randint(0, 3, 6), RNG.rand(6).astype(np.float32)) for _ in range(3)]


def stream(metric_fn, feeds_dtype=tf.int32, weighted=False):
    """Runs update_op on each batch; returns ([update_op's results], value after all batches)."""
    labels = tf.placeholder(feeds_dtype, [None])
    predictions = tf.placeholder(feeds_dtype, [None])
    weights = tf.placeholder(tf.float32, [None]) if weighted else None
    value, update_op = metric_fn(labels, predictions, weights)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert np.all(sess.run(value) == 0.0)  # nothing seen yet: 0, not nan
        updates = []
        for lab, pred, w in BATCHES:
            np_dtype = feeds_dtype.as_numpy_dtype
            feed = {labels: lab.astype(np_dtype), predictions: pred.astype(np_dtype)}
            if weighted:
                feed[weights] = w
            updates.append(sess.run(update_op, feed))
        final = sess.run(value)
        sess.run(tf.local_variables_initializer())
        assert np.all(sess.run(value) == 0.0)  # the initializer resets the streams
    return updates, final


def seen(k):
    return [np.concatenate([b[i] for b in BATCHES[:k]]) for i in range(3)]


@pytest.mark.parametrize("weighted", [False, True])
def test_accuracy_streams_over_batches(weighted):
    updates, final = stream(lambda lab, pred, w: tf.metrics.accuracy(lab, pred, weights=w), weighted=weighted)
    for k, got in enumerate(updates, 1):
        lab, pred, w = seen(k)
        w = w if weighted else np.ones_like(w)
        np.testing.assert_allclose(got, ((lab == pred) * w).sum() / w.sum(), rtol=1e-6)
    np.testing.assert_allclose(final, updates[-1], rtol=1e-6)


def test_accuracy_variables_are_local_metric_variables():
    value, update_op = tf.metrics.accuracy(tf.constant([1, 2]), tf.constant([1, 1]), metrics_collections=["m"],
                                           updates_collections=["u"])
    tf.metrics.accuracy(tf.constant([1, 2]), tf.constant([1, 1]))
    names = [v.op.name for v in tf.local_variables()]
    assert names == ["accuracy/total", "accuracy/count", "accuracy_1/total", "accuracy_1/count"]
    assert [v.op.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)] == names
    assert not tf.global_variables() and not tf.trainable_variables()
    assert tf.get_collection("m") == [value] and tf.get_collection("u") == [update_op]


def test_mean_squared_and_absolute_error():
    def both(lab, pred, w):
        mse = tf.metrics.mean_squared_error(lab, pred, weights=w)
        mae = tf.metrics.mean_absolute_error(lab, pred, weights=w)
        return tf.stack([mse[0], mae[0]]), tf.stack([mse[1], mae[1]])
    updates, final = stream(both, tf.float32, weighted=True)
    for k, got in enumerate(updates, 1):
        lab, pred, w = (x.astype(np.float64) for x in seen(k))
        expected = [(w * (lab - pred) ** 2).sum() / w.sum(), (w * abs(lab - pred)).sum() / w.sum()]
        np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_mean_with_a_weight_per_row():
    values = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    value, update_op = tf.metrics.mean(values, weights=tf.constant([[1.0], [3.0]]))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update_op)
        np.testing.assert_allclose(sess.run(update_op), (1 + 2 + 9 + 15) / 8.0, rtol=1e-6)
        np.testing.assert_allclose(sess.run(value), (1 + 2 + 9 + 15) / 8.0, rtol=1e-6)


@pytest.mark.parametrize("metric", ["precision", "recall"])
def test_precision_and_recall(metric):
    updates, final = stream(lambda lab, pred, w: getattr(tf.metrics, metric)(lab, pred, weights=w), weighted=True)
    for k, got in enumerate(updates, 1):
        lab, pred, w = seen(k)
        lab, pred = lab != 0, pred != 0
        tp = (w * (lab & pred)).sum()
        other = (w * (~lab & pred)).sum() if metric == "precision" else (w * (lab & ~pred)).sum()
        np.testing.assert_allclose(got, tp / (tp + other), rtol=1e-5)
    np.testing.assert_allclose(final, updates[-1], rtol=1e-6)


def test_labels_with_a_trailing_unit_dimension_are_squeezed_and_bad_shapes_raise():
    value, update_op = tf.metrics.accuracy(tf.constant([[1], [2], [0]]), tf.constant([1, 2, 2]))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        np.testing.assert_allclose(sess.run(update_op), 2.0 / 3.0, rtol=1e-6)
    with pytest.raises(ValueError, match="incompatible"):
        tf.metrics.accuracy(tf.constant([1, 2, 3]), tf.constant([1, 2]))


def reference_auc(labels, scores, weights, num_thresholds, curve, summation):
    """TF's auc in NumPy: confusion counts at the thresholds, then the area."""
    points = np.array([-1e-7] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1 + 1e-7])
    above = scores[None, :] > points[:, None]
    tp = (weights * (labels & above)).sum(1)
    fn = (weights * (labels & ~above)).sum(1)
    tn = (weights * (~labels & ~above)).sum(1)
    fp = (weights * (~labels & above)).sum(1)
    recall = (tp + 1e-7) / (tp + fn + 1e-7)
    x, y = (fp / (fp + tn + 1e-7), recall) if curve == "ROC" else (recall, (tp + 1e-7) / (tp + fp + 1e-7))
    pair = {"trapezoidal": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
            "majoring": np.maximum(y[:-1], y[1:])}[summation]
    return ((x[:-1] - x[1:]) * pair).sum()


@pytest.mark.parametrize("curve,summation", [("ROC", "trapezoidal"), ("PR", "trapezoidal"), ("ROC", "minoring"),
                                             ("PR", "majoring")])
def test_auc_streams_over_batches(curve, summation):
    rng = np.random.RandomState(1)
    batches = [(rng.rand(8) > 0.5, rng.rand(8).astype(np.float32), rng.rand(8).astype(np.float32)) for _ in range(2)]
    labels, scores, weights = tf.placeholder(tf.bool, [None]), tf.placeholder(tf.float32, [None]), \
        tf.placeholder(tf.float32, [None])
    value, update_op = tf.metrics.auc(labels, scores, weights, num_thresholds=50, curve=curve,
                                      summation_method=summation)
    assert [v.op.name for v in tf.local_variables()] == ["auc/true_positives", "auc/false_negatives",
                                                         "auc/true_negatives", "auc/false_positives"]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for k, (lab, sc, w) in enumerate(batches, 1):
            got = sess.run(update_op, {labels: lab, scores: sc, weights: w})
            seen_batches = [np.concatenate([b[i] for b in batches[:k]]) for i in range(3)]
            np.testing.assert_allclose(got, reference_auc(*seen_batches, 50, curve, summation), rtol=1e-4)
        np.testing.assert_allclose(sess.run(value), got, rtol=1e-6)
    with pytest.raises(ValueError, match="curve must be either ROC or PR"):
        tf.metrics.auc(labels, scores, curve="XY")
