"""tf.nn: activations, convolution and pooling (NHWC), losses."""
import math

import numpy as np

from . import array_ops, math_ops
from .. import dtypes as _dtypes
from ..framework import Tensor, apply_op, convert_to_tensor, name_scope
from ..op_def import define_ops

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "conv2d", "max_pool", "avg_pool",
           "bias_add", "dropout", "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
           "sparse_softmax_cross_entropy_with_logits", "l2_loss", "batch_normalization", "moments", "relu6",
           "leaky_relu", "elu"]  # (rnn_cell, static_rnn, dynamic_rnn... join when the package's __init__ attaches them)
__all__ += ["sigmoid_cross_entropy_with_logits", "weighted_cross_entropy_with_logits", "l2_normalize",
            "embedding_lookup", "fused_batch_norm", "conv2d_transpose", "atrous_conv2d", "xw_plus_b", "zero_fraction",
            "selu", "log_poisson_loss"]


# The functions that are one library op: (signature, op, inputs, attrs, doc[, node name]) rows from which
# op_def.define_ops generates them, as TF's gen_*_ops (the others are hand-written, below and above).
_NN_OPS = [
    ('relu(features, name=None)', 'relu', 'features', {}, 'max(features, 0).'),
    ('relu6(features, name=None)', 'clip', 'features', {'a_min': '0.0', 'a_max': '6.0'}, 'min(max(features, 0), 6).'),
    ('softplus(features, name=None)', 'softplus', 'features', {}, 'log(exp(features) + 1).'),
    ('softmax(logits, axis=-1, name=None, dim=None)', 'softmax', 'logits',
     {'axis': 'int(dim if dim is not None else axis)'}, 'exp(logits) / sum(exp(logits), axis).'),
    ('log_softmax(logits, axis=-1, name=None, dim=None)', 'log_softmax', 'logits',
     {'axis': 'int(dim if dim is not None else axis)'}, 'logits - log(sum(exp(logits), axis)).'),
    ('bias_add(value, bias, data_format=None, name=None)', 'bias_add', 'value, bias',
     {'data_format': 'data_format or "NHWC"'}, 'value plus the 1-D bias along its channel dimension.'),
]
define_ops(globals(), _NN_OPS)


def leaky_relu(features, alpha=0.2, name=None):
    return math_ops.maximum(features, math_ops.multiply(features, alpha), name=name)


def elu(features, name=None):
    return apply_op("where", [math_ops.greater(features, 0.0), features, math_ops.expm1(features)], name=name)


sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


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


def _keep_probability(keep_prob, rate):
    """keep_prob (or 1 - rate): a Python number checked as TF does, or a scalar tensor."""
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'")
    if keep_prob is None and rate is None:
        raise ValueError("You must provide a rate to dropout.")
    if isinstance(keep_prob, Tensor) or isinstance(rate, Tensor):
        return keep_prob if keep_prob is not None else math_ops.subtract(1.0, rate)
    if keep_prob is not None and not 0 < float(keep_prob) <= 1:
        raise ValueError("keep_prob must be a scalar tensor or a float in the range (0, 1], got %g" % keep_prob)
    if rate is not None and not 0 <= float(rate) < 1:
        raise ValueError("rate must be a scalar tensor or a float in the range [0, 1), got %g" % rate)
    return float(keep_prob) if keep_prob is not None else 1.0 - float(rate)


def _uniform_noise(x, noise_shape, seed):
    """Uniform [0, 1) values shaped like x, or like noise_shape (None entries take x's dimension)."""
    seed = array_ops._op_seed(seed)
    if noise_shape is None:
        return apply_op("random_uniform_like", [x], {"seed": seed})
    if not array_ops._is_dynamic(noise_shape):
        dims = list(noise_shape)
        if x.shape.dims is not None:
            if len(dims) != len(x.shape.dims):
                raise ValueError("noise_shape %s must have the rank of x's shape %s" % (dims, x.shape))
            dims = [x.shape.dims[i] if d is None else int(d) for i, d in enumerate(dims)]
            for d, xd in zip(dims, x.shape.dims):
                if d is not None and xd is not None and d not in (1, xd):
                    raise ValueError("noise_shape %s is not broadcastable to x's shape %s" % (list(noise_shape),
                                                                                            x.shape))
        if all(d is not None for d in dims):
            return array_ops.random_uniform(dims, dtype=x.dtype, seed=seed)
        noise_shape = [array_ops.shape(x)[i] if d is None else d for i, d in enumerate(dims)]  # known at run time
    return apply_op("random_uniform_like", [array_ops.zeros(noise_shape, x.dtype)], {"seed": seed})


def _dropout_composed(x, keep, noise_shape, seed):
    """x / keep * floor(keep + uniform): keep may be a tensor, known only when the graph runs (as in TF)."""
    keep = convert_to_tensor(keep, dtype=x.dtype)
    if keep.shape.dims is not None and keep.shape.dims != []:
        raise ValueError("keep_prob (or rate) must be a scalar, got shape %s" % keep.shape)
    mask = math_ops.floor(math_ops.add(keep, _uniform_noise(x, noise_shape, seed)))
    return math_ops.multiply(math_ops.divide(x, keep), mask)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Keeps each element with probability keep_prob (= 1 - rate), scaled by 1 / keep_prob, else 0.

    keep_prob (or rate) may be a Python number or a scalar tensor (a placeholder fed 0.5 when training
    and 1.0 when testing); noise_shape (broadcastable to x's shape) makes dimensions of size 1 share
    one decision. A Python number without noise_shape uses the library's dropout op, which keeps
    everything in sessions created with is_train=False.
    """
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError("x has to be a floating point tensor since it's going to be scaled. Got a %s tensor "
                         "instead." % x.dtype.name)
    keep = _keep_probability(keep_prob, rate)
    if not isinstance(keep, Tensor) and noise_shape is None:
        if keep >= 1.0:
            return apply_op("identity", [x], name=name)
        out = apply_op("dropout", [x], {"keep_prob": keep, "seed": int(seed or 0)}, name=name)
        return out if isinstance(out, Tensor) else out.outputs[0]  # (the op's second output is its mask)
    with name_scope(name, "dropout"):
        return _dropout_composed(x, keep, noise_shape, seed)


def _labels_logits(labels, logits, _sentinel=None):
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("Only call the cross-entropy functions with named arguments (labels=..., logits=...)")
    return convert_to_tensor(labels), convert_to_tensor(logits)


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """Per-example loss [N] of softmax(logits) against label distributions [N, C]; gradients flow into
    both logits and labels."""
    labels, logits = _labels_logits(labels, logits, _sentinel)
    if (axis if axis is not None else dim) not in (-1, 1):
        raise NotImplementedError("cross entropy along an axis other than the last")
    if labels.dtype != logits.dtype:  # as TF 1.x: "labels and logits must be of the same type"
        labels = math_ops.cast(labels, logits.dtype)
    op = apply_op("softmax_cross_entropy_with_logits", [logits, labels], name=name)
    return op.outputs[0]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """As softmax_cross_entropy_with_logits_v2, but backpropagation happens only into logits (as TF1's)."""
    labels, logits = _labels_logits(labels, logits, _sentinel)
    return softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(labels), logits=logits, dim=dim,
                                                name=name, axis=axis)


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


def _same_shape(what, a, b):
    if a.shape.dims is not None and b.shape.dims is not None and (
            len(a.shape.dims) != len(b.shape.dims) or
            any(x is not None and y is not None and x != y for x, y in zip(a.shape.dims, b.shape.dims))):
        raise ValueError("%s must have the same shape (%s vs %s)" % (what, a.shape, b.shape))


def _softplus_neg_abs(logits):
    """log(1 + exp(-|logits|)): never overflows."""
    return math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(logits))))


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z (same shape)."""
    labels, logits = _labels_logits(labels, logits, _sentinel)
    _same_shape("logits and labels", logits, labels)
    with name_scope(name, "logistic_loss"):
        return math_ops.add(math_ops.subtract(math_ops.maximum(logits, 0.0), math_ops.multiply(logits, labels)),
                            _softplus_neg_abs(logits))


def weighted_cross_entropy_with_logits(targets=None, logits=None, pos_weight=None, name=None, labels=None):
    """sigmoid cross entropy with the positive term weighted by pos_weight:
    (1 - z) * x + (1 + (pos_weight - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))."""
    targets = convert_to_tensor(targets if targets is not None else labels)
    logits = convert_to_tensor(logits)
    _same_shape("logits and targets", logits, targets)
    with name_scope(name, "logistic_loss"):
        log_weight = math_ops.add(math_ops.multiply(targets, pos_weight - 1.0), 1.0)
        return math_ops.add(math_ops.multiply(math_ops.subtract(1.0, targets), logits),
                            math_ops.multiply(log_weight, math_ops.add(_softplus_neg_abs(logits),
                                                                       relu(math_ops.negative(logits)))))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize"):
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        return math_ops.multiply(x, math_ops.rsqrt(math_ops.maximum(square_sum, float(epsilon))))


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """Rows `ids` of params (a tensor, or a list of partitions of it split by `partition_strategy`
    "mod" (id i in partition i % n) or "div" (contiguous ranges)); max_norm clips each row's l2 norm."""
    if partition_strategy not in ("mod", "div"):
        raise ValueError("Unrecognized partition strategy: " + str(partition_strategy))
    params = list(params) if isinstance(params, (list, tuple)) else [params]
    if not params:
        raise ValueError("Need at least one param")
    ids = convert_to_tensor(ids)
    with name_scope(name, "embedding_lookup"):
        if len(params) == 1 or partition_strategy == "div":  # div: the partitions concatenated in order
            table = array_ops.concat(params, 0) if len(params) > 1 else params[0]
            rows = array_ops.gather(table, ids)
        else:
            sizes = [p.shape.dims[0] if isinstance(p, Tensor) else np.shape(p)[0] for p in params]
            if any(n is None for n in sizes):
                raise ValueError("embedding_lookup with partition_strategy='mod' needs partitions of known size")
            offsets = convert_to_tensor(np.cumsum([0] + sizes[:-1]).astype(ids.dtype.as_numpy_dtype))
            count = len(params)
            position = math_ops.add(array_ops.gather(offsets, math_ops.mod(ids, count)),
                                    math_ops.floordiv(ids, count))
            rows = array_ops.gather(array_ops.concat(params, 0), position)
        if max_norm is None:
            return rows
        axes = list(range(len(ids.shape.dims), len(rows.shape.dims)))
        norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(rows), axes, keepdims=True))
        return math_ops.divide(math_ops.multiply(rows, float(max_norm)), math_ops.maximum(norm, float(max_norm)))


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None):
    """(y, batch_mean, batch_var) of the library's batch_norm op (TF's FusedBatchNorm): in training the
    batch's statistics normalize x and batch_var is their unbiased variance; otherwise mean and variance do."""
    if not is_training and (mean is None or variance is None):
        raise ValueError("Both 'mean' and 'variance' must be a 1-D tensor when is_training is False.")
    x = convert_to_tensor(x)
    empty = array_ops.zeros([0], x.dtype)
    inputs = [x, scale, offset, empty if mean is None else mean, empty if variance is None else variance]
    attrs = {"epsilon": max(float(epsilon), 1.001e-5), "is_training": bool(is_training), "data_format": data_format}
    return tuple(apply_op("batch_norm", inputs, attrs, name=name).outputs)


def conv2d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):
    """The gradient of conv2d with respect to its input: value [N, H, W, in] and filter [h, w, out, in]
    give output_shape [N, H', W', out] (a list or an int32 tensor)."""
    value = convert_to_tensor(value if value is not None else input)
    filter = convert_to_tensor(filter if filter is not None else filters)  # noqa: A001
    channel = 3 if data_format == "NHWC" else 1
    if value.shape.dims is not None and filter.shape.dims is not None and \
            None not in (value.shape.dims[channel], filter.shape.dims[3]) and \
            value.shape.dims[channel] != filter.shape.dims[3]:
        raise ValueError("input channels does not match filter's input channels, {} != {}".format(
            value.shape.dims[channel], filter.shape.dims[3]))
    if not isinstance(output_shape, Tensor):
        output_shape = list(output_shape)
        if len(output_shape) != 4:
            raise ValueError("output_shape must have shape (4,), got (%d,)" % len(output_shape))
        if filter.shape.dims is not None and filter.shape.dims[2] not in (None, output_shape[channel]):
            raise ValueError("output_shape does not match filter's output channels, {} != {}".format(
                output_shape[channel], filter.shape.dims[2]))
    like = array_ops.zeros(output_shape, value.dtype)
    attrs = {"strides": _pair(strides or 1, "strides"), "padding": padding.upper(), "data_format": data_format}
    if dilations is not None:
        attrs["dilations"] = _pair(dilations, "dilations")
    return apply_op("conv2d_backprop_input", [value, filter, like], attrs, name=name or "conv2d_transpose")


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d of NHWC value with filters dilated by rate (holes of rate - 1 between taps), stride 1."""
    if rate < 1:
        raise ValueError("rate {} cannot be less than one".format(rate))
    return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=(int(rate), int(rate)), name=name)


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    with name_scope(name, "xw_plus_b"):
        return bias_add(math_ops.matmul(x, weights), biases)


def zero_fraction(value, name=None):
    """The fraction of value's elements that are zero, as a float32 scalar."""
    with name_scope(name, "zero_fraction"):
        return math_ops.reduce_mean(math_ops.cast(math_ops.equal(value, 0.0), _dtypes.float32))


def selu(features, name=None):
    """scale * (x if x > 0 else alpha * (exp(x) - 1)), the self-normalizing constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    features = convert_to_tensor(features)
    negative = math_ops.multiply(math_ops.expm1(math_ops.minimum(features, 0.0)), alpha)
    return math_ops.multiply(apply_op("where", [math_ops.greater(features, 0.0), features, negative]), scale,
                             name=name)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's approximation of log(targets!) for
    targets > 1 when compute_full_loss."""
    targets, log_input = convert_to_tensor(targets), convert_to_tensor(log_input)
    _same_shape("log_input and targets", log_input, targets)
    with name_scope(name, "log_poisson_loss"):
        result = math_ops.subtract(math_ops.exp(log_input), math_ops.multiply(log_input, targets))
        if not compute_full_loss:
            return result
        safe = math_ops.maximum(targets, 1.0)  # log of targets <= 1 would be -inf or nan in the unused branch
        stirling = math_ops.add(math_ops.subtract(math_ops.multiply(safe, math_ops.log(safe)), safe),
                                math_ops.multiply(math_ops.log(math_ops.multiply(safe, 2 * math.pi)), 0.5))
        return math_ops.add(result, apply_op("where", [math_ops.greater(targets, 1.0), stirling,
                                                        array_ops.zeros_like(stirling)]))
