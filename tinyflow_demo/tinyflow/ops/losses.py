"""tf.losses: weighted losses reduced as TF's compute_weighted_loss, collected in tf.GraphKeys.LOSSES."""
from . import array_ops, math_ops, nn
from .. import dtypes as _dtypes
from ..framework import convert_to_tensor, name_scope
from .state_ops import GraphKeys, add_to_collection, get_collection

__all__ = ["Reduction", "compute_weighted_loss", "add_loss", "get_losses", "get_regularization_losses",
           "get_regularization_loss", "get_total_loss", "absolute_difference", "mean_squared_error", "hinge_loss",
           "log_loss", "huber_loss", "cosine_distance", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy"]


class Reduction(object):
    """How compute_weighted_loss reduces the weighted losses (TF's tf.losses.Reduction)."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s." % key)


def _check_weights(weights, losses):
    """TF's rule: weights are a scalar or have the losses' rank, each dimension 1 or the losses'."""
    w, v = weights.shape.dims, losses.shape.dims
    if w is None or v is None or len(w) == 0:
        return
    if len(w) != len(v) or any(a is not None and b is not None and a not in (1, b) for a, b in zip(w, v)):
        raise ValueError("weights can not be broadcast to values. values.shape=%s, weights.shape=%s"
                         % (losses.shape, weights.shape))


def _safe_div(numerator, denominator):
    """numerator / denominator, 0 where denominator is 0 (a finite gradient there too)."""
    positive = math_ops.greater(denominator, 0.0)
    safe = array_ops.where(positive, denominator, array_ops.ones_like(denominator))
    return array_ops.where(positive, math_ops.divide(numerator, safe), array_ops.zeros_like(numerator))


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """losses * weights reduced by `reduction`; the result is added to loss_collection."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss"):
        losses = math_ops.to_float(convert_to_tensor(losses))
        weights = math_ops.to_float(convert_to_tensor(weights, dtype=_dtypes.float32))
        _check_weights(weights, losses)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(loss, math_ops.reduce_sum(math_ops.multiply(array_ops.ones_like(losses), weights)))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                present = array_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                          array_ops.ones_like(weights))
                count = math_ops.reduce_sum(math_ops.multiply(array_ops.ones_like(losses), present))
                loss = _safe_div(loss, count)
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(loss, math_ops.to_float(array_ops.size(losses)))
        add_loss(loss, loss_collection)
        return loss


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses (0.0 when there are none)."""
    losses = get_regularization_losses(scope)
    return math_ops.add_n(losses, name=name) if losses else convert_to_tensor(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the collected losses and, by default, the regularization losses."""
    losses = get_losses(scope) + (get_regularization_losses(scope) if add_regularization_losses else [])
    if not losses:
        raise ValueError("No losses to add: the LOSSES and REGULARIZATION_LOSSES collections are empty")
    return math_ops.add_n(losses, name=name)


def _pair(labels, predictions, what="predictions"):
    """(labels, predictions) as float tensors of compatible shapes (ValueError otherwise, as TF)."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("%s must not be None." % what)
    predictions = math_ops.to_float(convert_to_tensor(predictions))
    labels = math_ops.to_float(convert_to_tensor(labels))
    nn._same_shape("%s and labels" % what, predictions, labels)
    return labels, predictions


def _loss(default_name, compute):
    """A tf.losses function: compute(labels, predictions, **extra) weighted and reduced."""
    def fn(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
           reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, **extra):
        with name_scope(scope, default_name):
            losses = compute(*_pair(labels, predictions), **extra)
            return compute_weighted_loss(losses, weights, None, loss_collection, reduction)
    fn.__name__ = default_name
    return fn


absolute_difference = _loss("absolute_difference", lambda z, p: math_ops.abs(math_ops.subtract(p, z)))
mean_squared_error = _loss("mean_squared_error", math_ops.squared_difference)


def _log_loss(labels, predictions, epsilon=1e-7):
    return math_ops.subtract(
        math_ops.negative(math_ops.multiply(labels, math_ops.log(math_ops.add(predictions, epsilon)))),
        math_ops.multiply(math_ops.subtract(1.0, labels),
                          math_ops.log(math_ops.add(math_ops.subtract(1.0, predictions), epsilon))))


def _huber(labels, predictions, delta=1.0):
    error = math_ops.abs(math_ops.subtract(predictions, labels))
    quadratic = math_ops.minimum(error, float(delta))
    return math_ops.add(math_ops.multiply(math_ops.square(quadratic), 0.5),
                        math_ops.multiply(math_ops.subtract(error, quadratic), float(delta)))


_log_loss_fn = _loss("log_loss", _log_loss)
_huber_fn = _loss("huber_loss", _huber)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-z log(p + epsilon) - (1 - z) log(1 - p + epsilon)."""
    return _log_loss_fn(labels, predictions, weights, scope, loss_collection, reduction, epsilon=epsilon)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 e^2 for |e| <= delta, else delta (|e| - 0.5 delta), e = predictions - labels."""
    return _huber_fn(labels, predictions, weights, scope, loss_collection, reduction, delta=delta)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - (2 z - 1) * logits) for labels z in {0, 1}."""
    with name_scope(scope, "hinge_loss"):
        labels, logits = _pair(labels, logits, "logits")
        signs = math_ops.subtract(math_ops.multiply(labels, 2.0), 1.0)
        losses = nn.relu(math_ops.subtract(1.0, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions, axis) for unit-normalized labels and predictions."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with name_scope(scope, "cosine_distance_loss"):
        labels, predictions = _pair(labels, predictions)
        products = math_ops.reduce_sum(math_ops.multiply(labels, predictions), axis, keepdims=True)
        return compute_weighted_loss(math_ops.subtract(1.0, products), weights, None, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Elementwise sigmoid cross entropy; label_smoothing s moves labels to z (1 - s) + s / 2."""
    with name_scope(scope, "sigmoid_cross_entropy_loss"):
        labels, logits = _pair(multi_class_labels, logits, "logits")
        if label_smoothing > 0:
            labels = math_ops.add(math_ops.multiply(labels, 1.0 - label_smoothing), 0.5 * label_smoothing)
        losses = nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Per-example softmax cross entropy of logits [N, C]; label_smoothing s: labels (1 - s) + s / C."""
    with name_scope(scope, "softmax_cross_entropy_loss"):
        labels, logits = _pair(onehot_labels, logits, "logits")
        if label_smoothing > 0:
            classes = logits.shape.dims[-1]
            if classes is None:
                raise ValueError("label_smoothing needs the number of classes (logits' last dimension) known")
            labels = math_ops.add(math_ops.multiply(labels, 1.0 - label_smoothing), label_smoothing / classes)
        losses = nn.softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(labels), logits=logits)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Per-example softmax cross entropy of logits [N, C] against class indices [N]."""
    with name_scope(scope, "sparse_softmax_cross_entropy_loss"):
        logits = convert_to_tensor(logits)
        losses = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)
