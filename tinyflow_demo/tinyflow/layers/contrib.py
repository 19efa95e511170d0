"""tf.contrib.layers, the parts TF1 programs use most: xavier/variance-scaling initializers,
l1/l2 regularizers, fully_connected, conv2d, max_pool2d/avg_pool2d, flatten, dropout, batch_norm,
layer_norm.
Variables are named as contrib names them ("fully_connected/weights", "Conv/biases",
"BatchNorm/moving_mean") through tf.variable_scope, so reuse and checkpoints line up with TF."""
import math

from .. import dtypes as _dtypes
from ..ops import array_ops as _a
from ..ops import math_ops as _m
from ..ops import nn as _nn
from ..ops import init_ops as _init
from ..ops.variable_scope import get_variable as _get_variable, variable_scope as _variable_scope
from ..framework import convert_to_tensor
from ..ops.state_ops import GraphKeys, add_to_collection, add_to_collections, assign

__all__ = ["xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer", "l1_regularizer",
           "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "apply_regularization", "fully_connected",
           "linear", "conv2d", "convolution2d", "max_pool2d", "avg_pool2d", "flatten", "dropout", "batch_norm",
           "layer_norm", "optimize_loss"]


class _ContribVarianceScaling(_init.Initializer):
    """contrib's variance_scaling_initializer: factor/mode('FAN_IN'|'FAN_OUT'|'FAN_AVG')/uniform, with
    the truncated normal's stddev sqrt(1.3 * factor / n) as TF1's contrib computes it."""

    def __init__(self, factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=_dtypes.float32):
        if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
            raise TypeError("Unknown mode %s [FAN_IN, FAN_OUT, FAN_AVG]" % mode)
        if not _dtypes.as_dtype(dtype).is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        self.factor, self.mode, self.uniform, self.seed, self.dtype = factor, mode, uniform, seed, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = [int(d) for d in shape]
        if len(shape) > 1:
            fan_in = shape[-2] * int(math.prod(shape[:-2])) if len(shape) > 2 else shape[-2]
            fan_out = shape[-1] * int(math.prod(shape[:-2])) if len(shape) > 2 else shape[-1]
        else:
            fan_in = fan_out = shape[0] if shape else 1
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return _a.random_uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)
        return _a.truncated_normal(shape, 0.0, math.sqrt(1.3 * self.factor / n), dtype=dtype, seed=self.seed)


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=_dtypes.float32):
    return _ContribVarianceScaling(factor, mode, uniform, seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=_dtypes.float32):
    """Glorot & Bengio's initializer: variance_scaling(factor=1, FAN_AVG)."""
    return _ContribVarianceScaling(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer


def _check_scale(scale):
    if isinstance(scale, (int, float)):
        if scale < 0.0:
            raise ValueError("Setting a scale less than 0 on a regularizer: %g" % scale)
        return scale == 0.0
    return False


def l1_regularizer(scale, scope=None):
    if _check_scale(scale):
        return lambda _: None
    return lambda weights: _m.multiply(float(scale), _m.reduce_sum(_m.abs(weights)), name=scope or "l1_regularizer")


def l2_regularizer(scale, scope=None):
    if _check_scale(scale):
        return lambda _: None
    return lambda weights: _m.multiply(float(scale), _nn.l2_loss(weights), name=scope or "l2_regularizer")


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope)


def sum_regularizer(regularizer_list, scope=None):
    def fn(weights):
        terms = [t for t in (r(weights) for r in regularizer_list) if t is not None]
        return _m.add_n(terms) if terms else None
    return fn


def apply_regularization(regularizer, weights_list=None):
    """The sum of `regularizer` over the weights (default: the WEIGHTS collection), added to
    REGULARIZATION_LOSSES."""
    weights_list = weights_list if weights_list is not None else _vs_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    terms = [t for t in (regularizer(w) for w in weights_list) if t is not None]
    total = _m.add_n(terms) if terms else _a.zeros([])
    add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
    return total


def _vs_collection(key):
    from ..ops.state_ops import get_collection
    return get_collection(key)


def _variable(name, shape, initializer, regularizer, trainable, collections):
    v = _get_variable(name, shape, initializer=initializer, regularizer=regularizer, trainable=trainable)
    for key in collections or []:
        add_to_collection(key, v)
    return v


def fully_connected(inputs, num_outputs, activation_fn=_nn.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=None, weights_regularizer=None, biases_initializer=_init.zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
                    trainable=True, scope=None):
    inputs = convert_to_tensor(inputs)
    n_in = inputs.shape.as_list()[-1]
    if n_in is None:
        raise ValueError("fully_connected: the last dimension of '%s' must be known (shape %s)" % (inputs.name,
                                                                                                  inputs.shape))
    with _variable_scope(scope, default_name="fully_connected", values=[inputs], reuse=reuse):
        weights = _variable("weights", [n_in, num_outputs], weights_initializer or xavier_initializer(),
                            weights_regularizer, trainable, [GraphKeys.WEIGHTS, GraphKeys.MODEL_VARIABLES] +
                            list(variables_collections or []))
        x = inputs
        if x.shape.ndims > 2:
            x = _a.reshape(x, [-1, n_in])
        out = _normalize_bias_activate(_m.matmul(x, weights), num_outputs, activation_fn, normalizer_fn,
                                       normalizer_params, biases_initializer, biases_regularizer, trainable,
                                       variables_collections)
        if inputs.shape.ndims > 2:
            out = _a.reshape(out, [d if d is not None else -1 for d in inputs.shape.as_list()[:-1]] + [num_outputs])
    if outputs_collections:
        add_to_collections(outputs_collections, out)
    return out


def _normalize_bias_activate(out, num_outputs, activation_fn, normalizer_fn, normalizer_params, biases_initializer,
                             biases_regularizer, trainable, variables_collections):
    """The epilogue fully_connected and conv2d share: normalizer_fn (then no biases, as TF) or biases, then the
    activation."""
    if normalizer_fn is not None:
        out = normalizer_fn(out, **(normalizer_params or {}))
    elif biases_initializer is not None:
        biases = _variable("biases", [num_outputs], biases_initializer, biases_regularizer, trainable,
                           [GraphKeys.BIASES, GraphKeys.MODEL_VARIABLES] + list(variables_collections or []))
        out = _nn.bias_add(out, biases)
    if activation_fn is not None:
        out = activation_fn(out)
    return out


def linear(inputs, num_outputs, scope=None, **kwargs):
    return fully_connected(inputs, num_outputs, activation_fn=None, scope=scope, **kwargs)


def _pair(v):
    return [int(v), int(v)] if isinstance(v, (int, float)) else [int(x) for x in v]


def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
           activation_fn=_nn.relu, normalizer_fn=None, normalizer_params=None, weights_initializer=None,
           weights_regularizer=None, biases_initializer=_init.zeros_initializer(), biases_regularizer=None,
           reuse=None, variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    if data_format not in (None, "NHWC"):
        raise ValueError("tinyflow: contrib.layers.conv2d supports data_format NHWC only (got %r)" % (data_format,))
    inputs = convert_to_tensor(inputs)
    if inputs.shape.ndims != 4:
        raise ValueError("contrib.layers.conv2d: '%s' must be 4-D NHWC (shape %s)" % (inputs.name, inputs.shape))
    c_in = inputs.shape.as_list()[-1]
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    with _variable_scope(scope, default_name="Conv", values=[inputs], reuse=reuse):
        weights = _variable("weights", [kh, kw, c_in, num_outputs], weights_initializer or xavier_initializer(),
                            weights_regularizer, trainable, [GraphKeys.WEIGHTS, GraphKeys.MODEL_VARIABLES] +
                            list(variables_collections or []))
        if _pair(rate) != [1, 1]:
            out = _nn.conv2d(inputs, weights, [1, sh, sw, 1], padding.upper(), dilations=[1] + _pair(rate) + [1])
        else:
            out = _nn.conv2d(inputs, weights, [1, sh, sw, 1], padding.upper())
        out = _normalize_bias_activate(out, num_outputs, activation_fn, normalizer_fn, normalizer_params,
                                       biases_initializer, biases_regularizer, trainable, variables_collections)
    if outputs_collections:
        add_to_collections(outputs_collections, out)
    return out


convolution2d = conv2d


def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    return _nn.max_pool(inputs, [1, kh, kw, 1], [1, sh, sw, 1], padding.upper(), name=scope)


def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    return _nn.avg_pool(inputs, [1, kh, kw, 1], [1, sh, sw, 1], padding.upper(), name=scope)


def flatten(inputs, outputs_collections=None, scope=None):
    inputs = convert_to_tensor(inputs)
    dims = inputs.shape.as_list()
    if dims is None or len(dims) < 2:
        raise ValueError("Inputs must have a least 2 dimensions (got %s)" % inputs.shape)
    if None in dims[1:]:
        return _a.reshape(inputs, [-1, _m.reduce_prod(_a.shape(inputs)[1:])], name=scope)
    return _a.reshape(inputs, [-1, int(math.prod(dims[1:]))], name=scope)


def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None,
            seed=None):
    if isinstance(is_training, bool):
        return _nn.dropout(inputs, keep_prob, noise_shape=noise_shape, seed=seed) if is_training else \
            _a.identity(inputs)
    from ..ops.control_flow_ops import cond
    return cond(is_training, lambda: _nn.dropout(inputs, keep_prob, noise_shape=noise_shape, seed=seed),
                lambda: _a.identity(inputs))


def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None, updates_collections=GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False, scope=None,
               renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """Batch normalization over all axes but the last: batch statistics while training (moving
    averages updated through updates_collections, or in place when it is None), moving averages
    otherwise. is_training may be a Python bool or a bool tensor."""
    if renorm or batch_weights is not None or data_format != "NHWC":
        raise ValueError("tinyflow: contrib.layers.batch_norm supports NHWC without renorm or batch_weights")
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    depth = inputs.shape.as_list()[-1]
    if rank is None or depth is None:
        raise ValueError("batch_norm: '%s' needs a known rank and last dimension (shape %s)" % (inputs.name,
                                                                                               inputs.shape))
    inits = param_initializers or {}
    axes = list(range(rank - 1))
    with _variable_scope(scope, default_name="BatchNorm", values=[inputs], reuse=reuse):
        beta = _variable("beta", [depth], inits.get("beta", _init.zeros_initializer()), None, trainable,
                         [GraphKeys.MODEL_VARIABLES]) if center else None
        gamma = _variable("gamma", [depth], inits.get("gamma", _init.ones_initializer()), None, trainable,
                          [GraphKeys.MODEL_VARIABLES]) if scale else None
        moving_mean = _get_variable("moving_mean", [depth], initializer=inits.get(
            "moving_mean", _init.zeros_initializer()), trainable=False)
        moving_var = _get_variable("moving_variance", [depth], initializer=inits.get(
            "moving_variance", _init.ones_initializer()), trainable=False)

        def training_branch():
            mean, var = _nn.moments(inputs, axes)
            upd_mean = assign(moving_mean, moving_mean * decay + mean * (1 - decay))
            upd_var = assign(moving_var, moving_var * decay + var * (1 - decay))
            if updates_collections is None:
                from ..framework import control_dependencies
                with control_dependencies([upd_mean, upd_var]):
                    return _a.identity(mean), _a.identity(var)
            add_to_collections(updates_collections, upd_mean)
            add_to_collections(updates_collections, upd_var)
            return mean, var

        if isinstance(is_training, bool):
            mean, var = training_branch() if is_training else (moving_mean, moving_var)
        else:  # a tensor: statistics chosen at run time; the updates run when their collection is run
            batch_mean, batch_var = training_branch()
            from ..ops.control_flow_ops import cond
            mean, var = cond(is_training, lambda: (_a.identity(batch_mean), _a.identity(batch_var)),
                             lambda: (_a.identity(moving_mean), _a.identity(moving_var)))
        out = _nn.batch_normalization(inputs, mean, var, beta, gamma, epsilon)
        if activation_fn is not None:
            out = activation_fn(out)
    if outputs_collections:
        add_to_collections(outputs_collections, out)
    return out


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """TF 1.x's layer normalization: moments over axes [begin_norm_axis, rank) and beta/gamma of shape
    inputs.shape[begin_params_axis:] ("LayerNorm/beta", "LayerNorm/gamma"), variance epsilon 1e-12.
    Normalizing over the last axis with both parameters is the library's layer_norm op (one kernel,
    and one for its gradient); other axes are the moments formula TF writes."""
    inputs = convert_to_tensor(inputs)
    shape = inputs.shape.as_list() if inputs.shape.ndims is not None else None
    if shape is None:
        raise ValueError("Inputs %s has undefined rank." % inputs.name)
    rank = len(shape)
    if begin_norm_axis < 0:
        begin_norm_axis = rank + begin_norm_axis
    if begin_params_axis >= rank or begin_norm_axis >= rank:
        raise ValueError("begin_params_axis (%d) and begin_norm_axis (%d) must be < rank(inputs) (%d)" %
                         (begin_params_axis, begin_norm_axis, rank))
    params_shape = shape[begin_params_axis:]
    if any(d is None for d in params_shape):
        raise ValueError("Inputs %s: parameters shape %s must be fully defined." % (inputs.name, params_shape))
    with _variable_scope(scope, default_name="LayerNorm", values=[inputs], reuse=reuse):
        beta = _variable("beta", params_shape, _init.zeros_initializer(), None, trainable,
                         [GraphKeys.MODEL_VARIABLES] + list(variables_collections or [])) if center else None
        gamma = _variable("gamma", params_shape, _init.ones_initializer(), None, trainable,
                          [GraphKeys.MODEL_VARIABLES] + list(variables_collections or [])) if scale else None
        last = begin_norm_axis == rank - 1 and len(params_shape) == 1
        if last and beta is not None and gamma is not None and inputs.dtype.is_floating:
            from ..framework import apply_op
            out = apply_op("layer_norm", [inputs, gamma, beta], {"epsilon": 1e-12}, name="batchnorm")
            out = out if not hasattr(out, "outputs") else out.outputs[0]
        else:
            mean, variance = _nn.moments(inputs, list(range(begin_norm_axis, rank)), keep_dims=True)
            out = _nn.batch_normalization(inputs, mean, variance, beta, gamma, 1e-12)
        if activation_fn is not None:
            out = activation_fn(out)
    if outputs_collections:
        add_to_collections(outputs_collections, out)
    return out


def optimize_loss(loss, global_step, learning_rate, optimizer, clip_gradients=None, name=None, **unused):
    """contrib.layers.optimize_loss for the common case: an optimizer name or instance, optional
    global-norm clipping, global_step incremented."""
    import sys
    tf = sys.modules[__package__.partition(".")[0]]
    names = {"SGD": tf.train.GradientDescentOptimizer, "Adam": tf.train.AdamOptimizer,
             "Momentum": lambda lr: tf.train.MomentumOptimizer(lr, 0.9), "Adagrad": tf.train.AdagradOptimizer,
             "RMSProp": tf.train.RMSPropOptimizer}
    if isinstance(optimizer, str):
        if optimizer not in names:
            raise ValueError("Optimizer name should be one of [%s], you provided %s." % (", ".join(names), optimizer))
        opt = names[optimizer](learning_rate)
    elif isinstance(optimizer, type) or callable(optimizer) and not hasattr(optimizer, "compute_gradients"):
        opt = optimizer(learning_rate)
    else:
        opt = optimizer
    grads_and_vars = [(g, v) for g, v in opt.compute_gradients(loss) if g is not None]
    if clip_gradients is not None:
        grads, variables = zip(*grads_and_vars)
        grads, _ = tf.clip_by_global_norm(list(grads), clip_gradients)
        grads_and_vars = list(zip(grads, variables))
    return opt.apply_gradients(grads_and_vars, global_step=global_step)

