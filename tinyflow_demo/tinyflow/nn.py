"""tf.nn: activations, convolution and pooling (NHWC), losses."""
from . import math_ops
from .framework import Tensor, apply_op, convert_to_tensor

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "conv2d", "max_pool", "avg_pool",
           "bias_add", "dropout", "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
           "sparse_softmax_cross_entropy_with_logits", "l2_loss", "batch_normalization", "moments", "relu6",
           "leaky_relu", "elu", "rnn_cell", "static_rnn", "static_bidirectional_rnn", "dynamic_rnn",
           "bidirectional_dynamic_rnn"]


def relu(features, name=None):
    return apply_op("relu", [features], name=name)


def relu6(features, name=None):
    return apply_op("clip", [features], {"a_min": 0.0, "a_max": 6.0}, name=name)


def leaky_relu(features, alpha=0.2, name=None):
    return math_ops.maximum(features, math_ops.multiply(features, alpha), name=name)


def elu(features, name=None):
    return apply_op("where", [math_ops.greater(features, 0.0), features, math_ops.expm1(features)], name=name)


sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


def softplus(features, name=None):
    return apply_op("softplus", [features], name=name)


def softmax(logits, axis=-1, name=None, dim=None):
    return apply_op("softmax", [logits], {"axis": int(dim if dim is not None else axis)}, name=name)


def log_softmax(logits, axis=-1, name=None, dim=None):
    return apply_op("log_softmax", [logits], {"axis": int(dim if dim is not None else axis)}, name=name)


def _pair(values, what):
    """TF's [1, h, w, 1] (or [h, w], or an int) as (h, w)."""
    if isinstance(values, int):
        return (values, values)
    values = list(values)
    if len(values) == 4:
        if values[0] != 1 or values[3] != 1:
            raise ValueError("%s over the batch or channel dimension is not supported: %s" % (what, values))
        return (values[1], values[2])
    if len(values) == 2:
        return tuple(values)
    if len(values) == 1:
        return (values[0], values[0])
    raise ValueError("bad %s %s" % (what, values))


def conv2d(input, filter=None, strides=None, padding="VALID", use_cudnn_on_gpu=True, data_format="NHWC",  # noqa: A002
           dilations=None, name=None, filters=None):
    filter = filter if filter is not None else filters  # noqa: A001
    attrs = {"strides": _pair(strides or 1, "strides"), "padding": padding.upper(), "data_format": data_format}
    if dilations is not None:
        attrs["dilations"] = _pair(dilations, "dilations")
    return apply_op("conv2d", [input, filter], attrs, name=name)


def _pool(op):
    def fn(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
        value = value if value is not None else input
        attrs = {"ksize": _pair(ksize, "ksize"), "strides": _pair(strides, "strides"),
                 "padding": padding.upper(), "data_format": data_format}
        return apply_op(op, [value], attrs, name=name)
    return fn


max_pool = _pool("max_pool2d")
avg_pool = _pool("avg_pool2d")


def bias_add(value, bias, data_format=None, name=None):
    return apply_op("bias_add", [value, bias], {"data_format": data_format or "NHWC"}, name=name)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Keeps each element with probability keep_prob (scaled by 1/keep_prob) in training sessions.

    keep_prob must be a Python number; feeding 1.0 for evaluation is done with a session created
    with is_train=False (or by building the eval graph without dropout).
    """
    if keep_prob is None:
        keep_prob = 1.0 - (rate if rate is not None else 0.5)
    if isinstance(keep_prob, Tensor):
        raise NotImplementedError("tinyflow.nn.dropout needs a Python number for keep_prob; use a session "
                                  "with is_train=False to evaluate without dropout")
    if noise_shape is not None:
        raise NotImplementedError("tinyflow.nn.dropout does not support noise_shape")
    if float(keep_prob) >= 1.0:
        return apply_op("identity", [x], name=name)
    out = apply_op("dropout", [x], {"keep_prob": float(keep_prob), "seed": int(seed or 0)}, name=name)
    return out if isinstance(out, Tensor) else out.outputs[0]  # (the op's second output is its mask)


def _labels_logits(labels, logits, _sentinel=None):
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("Only call the cross-entropy functions with named arguments (labels=..., logits=...)")
    return convert_to_tensor(labels), convert_to_tensor(logits)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """Per-example loss [N] of softmax(logits) against label distributions [N, C]."""
    labels, logits = _labels_logits(labels, logits, _sentinel)
    if (axis if axis is not None else dim) not in (-1, 1):
        raise NotImplementedError("cross entropy along an axis other than the last")
    op = apply_op("softmax_cross_entropy_with_logits", [logits, labels], name=name)
    return op.outputs[0]


softmax_cross_entropy_with_logits_v2 = softmax_cross_entropy_with_logits


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per-example loss [N] of softmax(logits [N, C]) against class indices [N]."""
    labels, logits = _labels_logits(labels, logits, _sentinel)
    op = apply_op("sparse_softmax_cross_entropy_with_logits", [logits, labels], name=name)
    return op.outputs[0]


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return math_ops.multiply(math_ops.reduce_sum(math_ops.square(t)), 0.5, name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    mean = math_ops.reduce_mean(x, axes, keepdims=True)
    variance = math_ops.reduce_mean(math_ops.squared_difference(x, mean), axes, keepdims=keep)
    if not keep:
        mean = math_ops.reduce_mean(x, axes)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    inv = math_ops.rsqrt(math_ops.add(variance, variance_epsilon))
    if scale is not None:
        inv = math_ops.multiply(inv, scale)
    y = math_ops.add(math_ops.multiply(x, inv), math_ops.negative(math_ops.multiply(mean, inv)))
    return y if offset is None else math_ops.add(y, offset, name=name)


# tf.nn.rnn_cell and the statically unrolled RNNs (imported last: the cells use this module's dropout).
from . import rnn_cell as _cells, rnn_cell_wrappers as _wrappers  # noqa: E402
from .rnn import static_bidirectional_rnn, static_rnn  # noqa: E402,F401
from .dynamic_rnn import bidirectional_dynamic_rnn, dynamic_rnn  # noqa: E402,F401
import types as _types  # noqa: E402

rnn_cell = _types.SimpleNamespace(**{name: getattr(module, name) for module in (_cells, _wrappers)
                                     for name in module.__all__})
