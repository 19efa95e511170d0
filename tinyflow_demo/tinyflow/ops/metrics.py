"""tf.metrics: streaming metrics as TF 1.x builds them. Each returns (value, update_op): update_op adds a
batch to LOCAL variables (in LOCAL_VARIABLES and METRIC_VARIABLES, so tf.local_variables_initializer()
resets them) and returns the metric over everything seen so far; value reads it without updating."""
from .. import dtypes as _dtypes
from . import math_ops as M
from .array_ops import ones_like, reshape, size, squeeze, where, zeros, zeros_like
from ..framework import Variable, apply_op, constant, convert_to_tensor, get_default_graph, name_scope
from .state_ops import GraphKeys, add_to_collections

__all__ = ["mean", "accuracy", "mean_squared_error", "mean_absolute_error", "precision", "recall",
           "true_positives", "false_positives", "false_negatives", "auc"]


def _metric_variable(name, shape=()):
    with get_default_graph()._init_scope():
        return Variable(zeros(list(shape), _dtypes.float32), trainable=False, name=name,
                        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])


def _scope(name):
    """A fresh name scope for one metric ("mean", then "mean_1", ...), as TF's variable_scope makes."""
    return name_scope(get_default_graph().unique_name(name).rsplit("/", 1)[-1])


def _collect(value, update_op, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def _remove_squeezable(labels, predictions):
    """Drops a trailing size-1 dimension of one side when its rank is one more than the other's (TF's
    remove_squeezable_dimensions); other shapes must agree."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is not None and pr is not None:
        if pr == lr + 1 and predictions.shape.as_list()[-1] == 1:
            predictions = squeeze(predictions, [-1])
        elif lr == pr + 1 and labels.shape.as_list()[-1] == 1:
            labels = squeeze(labels, [-1])
    ls, ps = labels.shape.as_list() if labels.shape.ndims is not None else None, \
        predictions.shape.as_list() if predictions.shape.ndims is not None else None
    if ls is not None and ps is not None and (len(ls) != len(ps) or any(
            a is not None and b is not None and a != b for a, b in zip(ls, ps))):
        raise ValueError("Shapes %s and %s are incompatible" % (labels.shape, predictions.shape))
    return labels, predictions


def _weighted(values, weights):
    """(values * weights, the sum of the weights broadcast to values), or (values, the count of values)."""
    values = M.cast(values, _dtypes.float32)
    if weights is None:
        return values, M.cast(size(values), _dtypes.float32)
    weights = M.add(M.cast(convert_to_tensor(weights), _dtypes.float32), zeros_like(values))
    return M.multiply(values, weights), M.reduce_sum(weights)


def _safe_div(numerator, denominator, name):
    """numerator / denominator, 0 where the denominator is not positive."""
    positive = M.greater(denominator, 0.0)
    return where(positive, M.divide(numerator, where(positive, denominator, ones_like(denominator))),
                 zeros_like(denominator), name=name)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every value seen: total / count."""
    with _scope(name or "mean"):
        values, count = _weighted(convert_to_tensor(values), weights)
        total_var, count_var = _metric_variable("total"), _metric_variable("count")
        update_total = apply_op("assign_add", [total_var, M.reduce_sum(values)], name="update_total")
        update_count = apply_op("assign_add", [count_var, count], name="update_count")
        value = _safe_div(total_var, count_var, "value")
        update_op = _safe_div(update_total, update_count, "update_op")
    return _collect(value, update_op, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """How often predictions equal labels (predictions cast to the labels' dtype), weighted."""
    labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
    labels, predictions = _remove_squeezable(labels, predictions)
    if predictions.dtype != labels.dtype:
        predictions = M.cast(predictions, labels.dtype)
    is_correct = M.cast(M.equal(predictions, labels), _dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    labels, predictions = _remove_squeezable(convert_to_tensor(labels), convert_to_tensor(predictions))
    return mean(M.squared_difference(labels, predictions), weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    labels, predictions = _remove_squeezable(convert_to_tensor(labels), convert_to_tensor(predictions))
    return mean(M.abs(M.subtract(predictions, labels)), weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def _as_bool(x):
    x = convert_to_tensor(x)
    return x if x.dtype == _dtypes.bool else M.not_equal(x, 0)


def _count_condition(name, labels, predictions, weights, label_is, prediction_is):
    """A streaming count of the (weighted) positions where labels == label_is and predictions == prediction_is."""
    labels, predictions = _remove_squeezable(_as_bool(labels), _as_bool(predictions))
    labels = labels if label_is else M.logical_not(labels)
    predictions = predictions if prediction_is else M.logical_not(predictions)
    with _scope(name):
        values, _ = _weighted(M.logical_and(labels, predictions), weights)
        count = _metric_variable("count")
        update_op = apply_op("assign_add", [count, M.reduce_sum(values)], name="update_op")
        return M.add(count, 0.0, name="value"), update_op


def true_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    value, update_op = _count_condition(name or "true_positives", labels, predictions, weights, True, True)
    return _collect(value, update_op, metrics_collections, updates_collections)


def false_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                    name=None):
    value, update_op = _count_condition(name or "false_positives", labels, predictions, weights, False, True)
    return _collect(value, update_op, metrics_collections, updates_collections)


def false_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                    name=None):
    value, update_op = _count_condition(name or "false_negatives", labels, predictions, weights, True, False)
    return _collect(value, update_op, metrics_collections, updates_collections)


def _ratio_metric(name, second, labels, predictions, weights, metrics_collections, updates_collections):
    """tp / (tp + other) over the streamed counts (0 while there are none)."""
    with _scope(name):
        tp, tp_update = true_positives(labels, predictions, weights)
        other, other_update = second(labels, predictions, weights)
        value = _safe_div(tp, M.add(tp, other), "value")
        update_op = _safe_div(tp_update, M.add(tp_update, other_update), "update_op")
    return _collect(value, update_op, metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """true_positives / (true_positives + false_positives) over boolean (or nonzero) labels and predictions."""
    return _ratio_metric(name or "precision", false_positives, labels, predictions, weights,
                         metrics_collections, updates_collections)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """true_positives / (true_positives + false_negatives) over boolean (or nonzero) labels and predictions."""
    return _ratio_metric(name or "recall", false_negatives, labels, predictions, weights,
                         metrics_collections, updates_collections)


def _area(x, y, summation_method):
    """The area under the curve through the points (x[i], y[i]), x decreasing with i."""
    dx = M.subtract(x[:-1], x[1:])
    if summation_method == "trapezoidal":
        return M.reduce_sum(M.multiply(dx, M.multiply(M.add(y[:-1], y[1:]), 0.5)))
    if summation_method == "minoring":
        return M.reduce_sum(M.multiply(dx, M.minimum(y[:-1], y[1:])))
    if summation_method == "majoring":
        return M.reduce_sum(M.multiply(dx, M.maximum(y[:-1], y[1:])))
    raise ValueError("Invalid summation_method: %s" % summation_method)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """The area under the ROC (or PR) curve, from confusion matrices at thresholds -1e-7, (i+1)/(n-1) for
    i < n-2 (or the given thresholds), 1+1e-7 (predictions are scores in [0, 1]), summed as TF's
    'trapezoidal', 'minoring' or 'majoring'."""
    if curve not in ("ROC", "PR"):
        raise ValueError("curve must be either ROC or PR, %s unknown" % curve)
    if thresholds is not None:
        points = sorted(float(t) for t in thresholds)
    else:
        points = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    points = [0.0 - 1e-7] + points + [1.0 + 1e-7]
    labels, predictions = _remove_squeezable(_as_bool(labels), convert_to_tensor(predictions))
    with _scope(name or "auc"):
        above = M.greater(reshape(M.cast(predictions, _dtypes.float32), [1, -1]),
                          constant([[t] for t in points], dtype=_dtypes.float32))  # [thresholds, values]
        positive = reshape(labels, [1, -1])
        weight = None if weights is None else reshape(M.cast(convert_to_tensor(weights), _dtypes.float32), [1, -1])
        counts = {}
        for key, label_is, above_is in [("tp", True, True), ("fn", True, False), ("tn", False, False),
                                        ("fp", False, True)]:
            hit = M.logical_and(positive if label_is else M.logical_not(positive),
                                above if above_is else M.logical_not(above))
            hit = M.cast(hit, _dtypes.float32)
            if weight is not None:
                hit = M.multiply(hit, weight)
            var = _metric_variable({"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                                    "fp": "false_positives"}[key], [len(points)])
            counts[key] = (var, apply_op("assign_add", [var, M.reduce_sum(hit, 1)]))

        def compute(tp, fn, tn, fp, op_name):
            recall_ = M.divide(M.add(tp, 1e-7), M.add(M.add(tp, fn), 1e-7))
            if curve == "ROC":
                x, y = M.divide(fp, M.add(M.add(fp, tn), 1e-7)), recall_
            else:
                x, y = recall_, M.divide(M.add(tp, 1e-7), M.add(M.add(tp, fp), 1e-7))
            return M.add(_area(x, y, summation_method), 0.0, name=op_name)
        value = compute(*[counts[k][0] for k in ("tp", "fn", "tn", "fp")], op_name="value")
        update_op = compute(*[counts[k][1] for k in ("tp", "fn", "tn", "fp")], op_name="update_op")
    return _collect(value, update_op, metrics_collections, updates_collections)
