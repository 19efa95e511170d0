"""More of tf.nn and tf: elu, selu, softsign, is_nan/is_inf/is_finite, depthwise and separable
convolution, local response normalization, space_to_batch(_nd)/batch_to_space(_nd), mirror padding,
top_k and in_top_k, with TensorFlow 1.x's arguments and semantics (attached to tinyflow.nn and
tinyflow in __init__.py)."""
import collections

from .array_ops import _ints, mirror_pad  # noqa: F401 (mirror_pad: re-exported)
from ..framework import apply_op, convert_to_tensor

__all__ = ["elu", "selu", "softsign", "is_nan", "is_inf", "is_finite", "depthwise_conv2d", "separable_conv2d",
           "local_response_normalization", "lrn", "space_to_batch_nd", "batch_to_space_nd", "space_to_batch",
           "batch_to_space", "mirror_pad", "top_k", "in_top_k"]


def _float_op(op, x, name, what):
    """op(x) for a float tensor; other dtypes raise TypeError as TensorFlow's op constructors do."""
    x = convert_to_tensor(x)
    if x.dtype is not None and not x.dtype.is_floating:
        raise TypeError("Value passed to parameter '%s' of %s has DataType %s not in list of allowed values: "
                        "float32, float64" % (what, op, x.dtype.name))
    return apply_op(op, [x], name=name)


def elu(features, name=None):
    """features < 0 ? exp(features) - 1 : features."""
    return _float_op("elu", features, name, "features")


def selu(features, name=None):
    """scale * (features < 0 ? alpha * (exp(features) - 1) : features), TensorFlow's scale and alpha."""
    return _float_op("selu", features, name, "features")


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return _float_op("softsign", features, name, "features")


def is_nan(x, name=None):
    """Elementwise whether x is NaN (bool)."""
    return _float_op("is_nan", x, name, "x")


def is_inf(x, name=None):
    """Elementwise whether x is +inf or -inf (bool)."""
    return _float_op("is_inf", x, name, "x")


def is_finite(x, name=None):
    """Elementwise whether x is neither infinite nor NaN (bool)."""
    return _float_op("is_finite", x, name, "x")


def _window(strides, rate, dilations, data_format):
    """TF's 4-value strides and 2-value rate (or 4-value dilations) as our (h, w) pairs."""
    strides = _ints(strides, "strides")
    if len(strides) != 4:
        raise ValueError("strides must have 4 values, got %s" % (strides,))
    h, w = (1, 2) if data_format == "NHWC" else (2, 3)
    if strides[0] != 1 or strides[3 if data_format == "NHWC" else 1] != 1:
        raise ValueError("Current implementation only supports equal length strides in the row and column "
                         "dimensions, and strides of 1 in the batch and depth dimensions: %s" % (strides,))
    if rate is None and dilations is not None:
        rate = _ints(dilations, "dilations")
        rate = rate[h:w + 1] if len(rate) == 4 else rate
    rate = [1, 1] if rate is None else _ints(rate, "rate")
    if len(rate) == 1:
        rate = rate * 2
    if len(rate) != 2 or min(rate) < 1:
        raise ValueError("rate must be 2 positive values, got %s" % (rate,))
    if max(rate) > 1 and max(strides[h], strides[w]) > 1:
        raise ValueError("strides > 1 not supported in conjunction with rate > 1")
    return (strides[h], strides[w]), tuple(rate)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """Depthwise 2-D convolution: filter [KH, KW, C, M] applied per input channel; C * M output channels."""
    data_format = data_format or "NHWC"
    (sh, sw), rate = _window(strides, rate, dilations, data_format)
    if padding.upper() not in ("SAME", "VALID"):
        raise ValueError("padding must be 'SAME' or 'VALID', got %r" % (padding,))
    return apply_op("depthwise_conv2d", [input, filter], {"strides": (sh, sw), "padding": padding.upper(),
                                                          "dilations": rate, "data_format": data_format}, name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """depthwise_conv2d followed by a 1x1 conv2d with pointwise_filter [1, 1, C * M, O]."""
    data_format = data_format or "NHWC"
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate, data_format=data_format,
                                 dilations=dilations)
    return apply_op("conv2d", [depthwise, pointwise_filter], {"strides": (1, 1), "padding": "VALID",
                                                              "data_format": data_format}, name=name)


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """input / (bias + alpha * sum of squares over depth_radius neighbours in the last axis) ** beta."""
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha), "beta": float(beta)}
    return apply_op("lrn", [input], attrs, name=name)


lrn = local_response_normalization


def _pairs(value, m, what):
    flat = _ints(value, what)
    if len(flat) != 2 * m:
        raise ValueError("%s must have shape [%d, 2], got %s" % (what, m, flat))
    if min(flat + [0]) < 0:
        raise ValueError("%s must not be negative, got %s" % (what, flat))
    return tuple(flat)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the M spatial dimensions after the batch, then moves block_shape blocks into the batch."""
    block = tuple(_ints(block_shape, "block_shape"))
    return apply_op("space_to_batch_nd", [input], {"block_shape": block,
                                                   "paddings": _pairs(paddings, len(block), "paddings")}, name=name)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of space_to_batch_nd: moves batch blocks back into space, then crops."""
    block = tuple(_ints(block_shape, "block_shape"))
    return apply_op("batch_to_space_nd", [input], {"block_shape": block,
                                                   "paddings": _pairs(crops, len(block), "crops")}, name=name)


def space_to_batch(input, paddings, block_size, name=None, block_shape=None):  # noqa: A002
    """space_to_batch_nd of a 4-D NHWC tensor with a block_size x block_size block."""
    size = int(block_size if block_shape is None else block_shape)
    return space_to_batch_nd(input, [size, size], paddings, name=name)


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """batch_to_space_nd of a 4-D NHWC tensor with a block_size x block_size block."""
    size = int(block_size if block_shape is None else block_shape)
    return batch_to_space_nd(input, [size, size], crops, name=name)


TopKV2 = collections.namedtuple("TopKV2", ("values", "indices"))


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """The k largest entries of the last axis (largest first, ties by lower index) and their int32 indices."""
    k = _ints(k, "k")
    if len(k) != 1 or k[0] < 0:
        raise ValueError("k must be a non-negative scalar, got %s" % (k,))
    out = apply_op("top_k", [input], {"k": k[0], "sorted": bool(sorted)}, name=name)
    return TopKV2(*out.outputs)


def in_top_k(predictions, targets, k, name=None):
    """Whether targets[i] is among the k largest predictions[i] (false when that prediction is not finite)."""
    k = _ints(k, "k")
    if len(k) != 1:
        raise ValueError("k must be a scalar, got %s" % (k,))
    targets = convert_to_tensor(targets)
    if targets.dtype is not None and targets.dtype.name not in ("int32", "int64"):
        raise TypeError("Value passed to parameter 'targets' has DataType %s not in list of allowed values: "
                        "int32, int64" % targets.dtype.name)
    return apply_op("in_top_k", [predictions, targets], {"k": k[0]}, name=name)
