"""tf.layers: Dense, Conv1D/Conv2D, pooling, Dropout, BatchNormalization, Flatten and their functions.

A layer's variables are made by tf.get_variable in the layer's variable scope ("dense", "dense_1",
... or its name), so they are named as TF names them ("dense/kernel", "conv2d/bias",
"batch_normalization/moving_mean") and `reuse` works. Calling a layer object again reuses its
variables. `training` may be a Python bool or a bool tensor (a placeholder fed at run time).
"""
import re

import numpy as np

from ..ops import array_ops, math_ops, nn, state_ops
from .. import dtypes as _dtypes
from ..framework import Tensor, apply_op, convert_to_tensor
from ..ops.init_ops import ones_initializer, zeros_initializer
from ..ops.variable_scope import absolute_name_scope, get_variable, variable_scope

__all__ = ["Layer", "Dense", "Conv1D", "Conv2D", "MaxPooling2D", "AveragePooling2D", "Dropout",
           "BatchNormalization", "Flatten", "dense", "conv1d", "conv2d", "max_pooling2d", "average_pooling2d",
           "dropout", "batch_normalization", "flatten"]


def _snake_case(name):
    """Dense -> dense, MaxPooling2D -> max_pooling2d, BatchNormalization -> batch_normalization."""
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)).lower()


def _unsupported(**kwargs):
    used = sorted(k for k, v in kwargs.items() if v is not None)
    if used:
        raise NotImplementedError("tinyflow layers do not support %s" % ", ".join(used))


def _tuple(value, n, what):
    value = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(value) != n or not all(isinstance(v, (int, np.integer)) and v > 0 for v in value):
        raise ValueError("The `%s` argument must be a tuple of %d positive integers. Received: %s" % (what, n, value))
    return tuple(int(v) for v in value)


def _padding(padding):
    padding = padding.upper() if isinstance(padding, str) else padding
    if padding not in ("VALID", "SAME"):
        raise ValueError("The `padding` argument must be one of \"valid\", \"same\". Received: %s" % (padding,))
    return padding


def _layout(data_format):
    """channels_last -> NHWC, channels_first -> NCHW."""
    formats = {"channels_last": "NHWC", "channels_first": "NCHW"}
    if data_format not in formats:
        raise ValueError("The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                         "Received: %s" % (data_format,))
    return formats[data_format]


def _activation(activation, outputs):
    return outputs if activation is None else activation(outputs)


class Layer(object):
    """Base layer: __call__ (or apply) builds the variables once, in the layer's variable scope, then
    calls call(inputs, ...); later calls reuse them."""

    def __init__(self, trainable=True, name=None, dtype=None, _scope=None, _reuse=None, **kwargs):
        _unsupported(**kwargs)  # activity_regularizer and unknown arguments
        self.trainable = trainable
        self.built = False
        self.dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._base_name = name or _snake_case(type(self).__name__)
        self._name = name
        self._scope = _scope
        self._reuse = _reuse
        self._variables = []
        self.updates = []

    @property
    def name(self):
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def variables(self):
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self):
        return [v for v in self._variables if v.trainable] if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        return [v for v in self._variables if not v.trainable or not self.trainable]

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=True):
        """tf.get_variable(name, ...) in the layer's scope, remembered as one of its variables."""
        var = get_variable(name, shape, dtype or self.dtype, initializer, regularizer, trainable and self.trainable)
        self._variables.append(var)
        return var

    def add_update(self, updates):
        """Ops to run for the layer's state (moving averages), added to tf.GraphKeys.UPDATE_OPS."""
        for update in updates if isinstance(updates, (list, tuple)) else [updates]:
            self.updates.append(update)
            state_ops.add_to_collection(state_ops.GraphKeys.UPDATE_OPS, update)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs)
        if self.dtype is None:
            self.dtype = inputs.dtype
        if self._scope is None:  # TF: the scope is fixed at the first call (unique default names)
            with variable_scope(self._scope_name(), default_name=None if self._reuse else self._base_name) as scope:
                self._scope = scope
        with variable_scope(self._scope, reuse=True if self.built else self._reuse, auxiliary_name_scope=False):
            with absolute_name_scope(self._scope.original_name_scope):
                if not self.built:
                    self.build(inputs.shape)
                    self.built = True
                return self.call(inputs, *args, **kwargs)

    def _scope_name(self):
        return self._name if self._name or not self._reuse else self._base_name

    apply = __call__


def _known_last_dim(layer, shape, axis=-1):
    dims = shape.dims
    if dims is None or dims[axis] is None:
        raise ValueError("The %s dimension of the inputs to `%s` should be defined. Found `None`."
                         % ("last" if axis == -1 else "channel", type(layer).__name__))
    return dims[axis]


class Dense(Layer):
    """outputs = activation(inputs . kernel + bias), kernel [input_dim, units], over the last axis."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        _unsupported(kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        Layer.__init__(self, trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units, self.activation, self.use_bias = int(units), activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        in_dim = _known_last_dim(self, input_shape)
        self.kernel = self.add_weight("kernel", [in_dim, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) if self.use_bias else None

    def call(self, inputs):
        dims = inputs.shape.dims
        if len(dims) == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:  # a tensordot over the last axis: [..., in] -> [-1, in] -> [..., units]
            if any(d is None for d in dims[1:]):
                raise ValueError("Dense on rank-%d inputs needs every dimension but the first known, got %s"
                                 % (len(dims), inputs.shape))
            flat = math_ops.matmul(array_ops.reshape(inputs, [-1, dims[-1]]), self.kernel)
            outputs = array_ops.reshape(flat, [-1] + dims[1:-1] + [self.units])
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias)
        return _activation(self.activation, outputs)


class _Conv(Layer):
    """N-d convolution (N = 1 or 2) of channels-last or channels-first inputs with a kernel
    kernel_size + (in_channels, filters)."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        _unsupported(kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        Layer.__init__(self, trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.rank, self.filters = rank, int(filters)
        self.kernel_size = _tuple(kernel_size, rank, "kernel_size")
        self.strides = _tuple(strides, rank, "strides")
        self.dilation_rate = _tuple(dilation_rate, rank, "dilation_rate")
        self.padding, self.data_format = _padding(padding), _layout(data_format)
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        if input_shape.dims is None or len(input_shape.dims) != self.rank + 2:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected ndim=%d, found shape %s"
                             % (self._base_name, self.rank + 2, input_shape))
        channels = _known_last_dim(self, input_shape, -1 if self.data_format == "NHWC" else 1)
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [channels, self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) if self.use_bias else None

    def call(self, inputs):
        kernel, strides, dilations = self.kernel, self.strides, self.dilation_rate
        if self.rank == 1:  # as TF's conv1d: a conv2d over a height of 1
            inputs = array_ops.expand_dims(inputs, 1 if self.data_format == "NHWC" else 2)
            kernel = array_ops.expand_dims(kernel, 0)
            strides, dilations = (1,) + strides, (1,) + dilations
        outputs = nn.conv2d(inputs, kernel, strides, self.padding, data_format=self.data_format, dilations=dilations)
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias, data_format=self.data_format)
        if self.rank == 1:
            outputs = array_ops.squeeze(outputs, [1 if self.data_format == "NHWC" else 2])
        return _activation(self.activation, outputs)


class Conv2D(_Conv):
    """2-D convolution layer: kernel [kh, kw, in_channels, filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), **kwargs):
        _Conv.__init__(self, 2, filters, kernel_size, strides, padding, data_format, dilation_rate, **kwargs)


class Conv1D(_Conv):
    """1-D convolution layer: kernel [k, in_channels, filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, **kwargs):
        _Conv.__init__(self, 1, filters, kernel_size, strides, padding, data_format, dilation_rate, **kwargs)


class _Pooling2D(Layer):
    def __init__(self, op, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        Layer.__init__(self, name=name, **kwargs)
        self.op, self.pool_size = op, _tuple(pool_size, 2, "pool_size")
        self.strides = _tuple(strides, 2, "strides")
        self.padding, self.data_format = _padding(padding), _layout(data_format)

    def call(self, inputs):
        return self.op(inputs, self.pool_size, self.strides, self.padding, data_format=self.data_format)


class MaxPooling2D(_Pooling2D):
    """Max over pool_size windows moved by strides."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        _Pooling2D.__init__(self, nn.max_pool, pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling2D(_Pooling2D):
    """Mean over pool_size windows moved by strides (SAME padding: over the window's valid part)."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        _Pooling2D.__init__(self, nn.avg_pool, pool_size, strides, padding, data_format, name, **kwargs)


def _training_flag(training):
    """A Python bool as is; a tensor as a bool tensor (checked)."""
    if isinstance(training, Tensor):
        if training.dtype != _dtypes.bool:
            raise TypeError("`training` must be a bool tensor, got %s" % training.dtype.name)
        return training
    return bool(training)


class Dropout(Layer):
    """inputs with elements dropped with probability rate (scaled by 1 / (1 - rate)) when training."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        Layer.__init__(self, name=name, **kwargs)
        if not 0 <= float(rate) < 1:
            raise ValueError("rate must be a float in the range [0, 1), got %g" % rate)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs, training=False):
        training = _training_flag(training)
        if training is False or self.rate == 0:
            return array_ops.identity(inputs)
        keep = 1.0 - self.rate
        if isinstance(training, Tensor):  # keep everything (keep_prob 1) when not training
            keep = math_ops.subtract(1.0, math_ops.multiply(math_ops.cast(training, inputs.dtype), self.rate))
        return nn._dropout_composed(inputs, keep, self.noise_shape, self.seed)


class Flatten(Layer):
    """[N, d1, d2, ...] -> [N, d1 * d2 * ...] (channels_first inputs are made channels-last first)."""

    def __init__(self, data_format="channels_last", name=None, **kwargs):
        Layer.__init__(self, name=name, **kwargs)
        self.data_format = _layout(data_format)

    def call(self, inputs):
        dims = inputs.shape.dims
        if self.data_format == "NCHW" and len(dims) > 2:
            inputs = array_ops.transpose(inputs, [0] + list(range(2, len(dims))) + [1])
            dims = inputs.shape.dims
        if any(d is None for d in dims[1:]):
            raise ValueError("Flatten needs every dimension but the first known, got %s" % inputs.shape)
        return array_ops.reshape(inputs, [-1, int(np.prod(dims[1:], dtype=np.int64))])


class BatchNormalization(Layer):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over `axis`, with the batch's statistics when
    training (their moving averages, updated through tf.GraphKeys.UPDATE_OPS, otherwise).

    4-D inputs normalized over axis 1 or 3 use the fused batch_norm op, whose moving variance is updated
    with the unbiased batch variance (as TF's fused path); other inputs use tf.nn.moments.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(),
                 moving_mean_initializer=zeros_initializer(), moving_variance_initializer=ones_initializer(),
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        _unsupported(beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm or None,
                     renorm_clipping=renorm_clipping, virtual_batch_size=virtual_batch_size, adjustment=adjustment)
        Layer.__init__(self, trainable=trainable, name=name, **kwargs)
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise NotImplementedError("tinyflow BatchNormalization normalizes over one axis, got %s" % (axis,))
            axis = axis[0]
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale, self.fused = center, scale, fused
        self.initializers = (gamma_initializer, beta_initializer, moving_mean_initializer,
                             moving_variance_initializer)
        self.gamma_regularizer, self.beta_regularizer = gamma_regularizer, beta_regularizer

    def build(self, input_shape):
        ndims = input_shape.ndims
        if ndims is None:
            raise ValueError("Input has undefined rank: %s" % input_shape)
        if not -ndims <= self.axis < ndims:
            raise ValueError("Invalid axis: %d for input of rank %d" % (self.axis, ndims))
        self.axis %= ndims
        channels = _known_last_dim(self, input_shape, self.axis)
        gamma_init, beta_init, mean_init, var_init = self.initializers
        self.gamma = self.add_weight("gamma", [channels], initializer=gamma_init,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", [channels], initializer=beta_init,
                                    regularizer=self.beta_regularizer) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", [channels], initializer=mean_init, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", [channels], initializer=var_init, trainable=False)
        can_fuse = ndims == 4 and self.axis in (1, 3)
        if self.fused and not can_fuse:
            raise ValueError("Unsupported axis %d (rank %d) for fused batch norm" % (self.axis, ndims))
        self.fused = can_fuse if self.fused is None else bool(self.fused)

    def _normalize(self, inputs, training):
        """(outputs, batch mean, batch variance for the moving variance) for a Python bool `training`."""
        gamma = self.gamma if self.scale else array_ops.ones_like(self.moving_mean)
        beta = self.beta if self.center else array_ops.zeros_like(self.moving_mean)
        if self.fused:
            mean, variance = (None, None) if training else (self.moving_mean, self.moving_variance)
            return nn.fused_batch_norm(inputs, gamma, beta, mean, variance, self.epsilon,
                                       "NHWC" if self.axis == 3 else "NCHW", is_training=training)
        ndims = len(inputs.shape.dims)
        if training:
            mean, variance = nn.moments(inputs, [a for a in range(ndims) if a != self.axis])
        else:
            mean, variance = self.moving_mean, self.moving_variance
        if self.axis != ndims - 1:  # [C] -> [C, 1, ..., 1]: broadcasts over the axes after `axis`
            shape = [-1] + [1] * (ndims - 1 - self.axis)
            params = [array_ops.reshape(t, shape) for t in (mean, variance, beta, gamma)]
        else:
            params = [mean, variance, beta, gamma]
        return nn.batch_normalization(inputs, *params, variance_epsilon=self.epsilon), mean, variance

    def call(self, inputs, training=False):
        training = _training_flag(training)
        if training is False:
            return self._normalize(inputs, False)[0]
        outputs, mean, variance = self._normalize(inputs, True)
        decay = 1.0 - self.momentum
        if isinstance(training, Tensor):  # both ways, chosen when the graph runs; no update when not training
            outputs = array_ops.where(training, outputs, self._normalize(inputs, False)[0])
            decay = math_ops.multiply(math_ops.cast(training, inputs.dtype), decay)
        self.add_update([state_ops.assign_sub(var, math_ops.multiply(math_ops.subtract(var, value), decay))
                         for var, value in ((self.moving_mean, mean), (self.moving_variance, variance))])
        return outputs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """Dense(...)(inputs), its variables in variable scope `name` (default "dense", "dense_1", ...)."""
    return Dense(units, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                 _scope=None, _reuse=reuse)(inputs)


def _conv(cls, inputs, filters, kernel_size, strides, padding, data_format, dilation_rate, name, reuse, kwargs):
    return cls(filters, kernel_size, strides, padding, data_format, dilation_rate, name=name, _reuse=reuse,
               **kwargs)(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), name=None, reuse=None, **kwargs):
    """Conv2D(...)(inputs); kwargs: activation, use_bias, kernel_initializer, ... as Conv2D."""
    return _conv(Conv2D, inputs, filters, kernel_size, strides, padding, data_format, dilation_rate, name, reuse,
                 kwargs)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           name=None, reuse=None, **kwargs):
    """Conv1D(...)(inputs); kwargs as Conv1D."""
    return _conv(Conv1D, inputs, filters, kernel_size, strides, padding, data_format, dilation_rate, name, reuse,
                 kwargs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name)(inputs)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout(rate, ...)(inputs, training): the identity unless training (a bool or a bool tensor)."""
    return Dropout(rate, noise_shape, seed, name)(inputs, training=training)


def flatten(inputs, name=None, data_format="channels_last"):
    return Flatten(data_format, name)(inputs)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(),
                        moving_mean_initializer=zeros_initializer(),
                        moving_variance_initializer=ones_initializer(), beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """BatchNormalization(...)(inputs, training); the moving-average updates go to tf.GraphKeys.UPDATE_OPS."""
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                               moving_mean_initializer, moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, beta_constraint, gamma_constraint, renorm, renorm_clipping,
                               renorm_momentum, fused, trainable, virtual_batch_size, adjustment, name, _reuse=reuse)
    return layer(inputs, training=training)



def _deconv_output_length(length, kernel, padding, stride):
    """TF's conv_utils.deconv_output_length (no output_padding): the spatial size conv2d_transpose gives."""
    if length is None:
        return None
    return length * stride + (max(kernel - stride, 0) if padding == "VALID" else 0)


class Conv2DTranspose(Layer):
    """Transposed 2-D convolution (deconvolution) layer, as tf.layers.Conv2DTranspose:
    kernel [kh, kw, filters, in_channels]; output size in * stride (+ max(k - stride, 0) with "valid")."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        _unsupported(kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        Layer.__init__(self, trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
        self.strides = _tuple(strides, 2, "strides")
        self.padding, self.data_format = _padding(padding), _layout(data_format)
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        if input_shape.dims is None or len(input_shape.dims) != 4:
            raise ValueError("Inputs should have rank 4. Received input shape: " + str(input_shape))
        channels = _known_last_dim(self, input_shape, -1 if self.data_format == "NHWC" else 1)
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [self.filters, channels],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) if self.use_bias else None

    def call(self, inputs):
        h_axis, w_axis = (1, 2) if self.data_format == "NHWC" else (2, 3)
        dims = inputs.shape.dims
        dynamic = array_ops.shape(inputs)
        out = {0: dims[0]}
        for axis, kernel, stride in ((h_axis, self.kernel_size[0], self.strides[0]),
                                     (w_axis, self.kernel_size[1], self.strides[1])):
            out[axis] = _deconv_output_length(dims[axis], kernel, self.padding, stride)
        out[3 if self.data_format == "NHWC" else 1] = self.filters
        static = [out[i] for i in range(4)]
        parts = []
        for i, size in enumerate(static):
            if size is not None:
                parts.append(size)
            elif i == 0:
                parts.append(dynamic[0])
            else:  # an unknown spatial size: computed from the run-time one
                kernel, stride = (self.kernel_size[0], self.strides[0]) if i == h_axis else \
                    (self.kernel_size[1], self.strides[1])
                extra = max(kernel - stride, 0) if self.padding == "VALID" else 0
                parts.append(math_ops.add(math_ops.multiply(dynamic[i], stride), extra))
        if all(size is not None for size in static[1:]) and static[0] is None:
            # batch known only at run time: the shape operand [N, 1, 1, 1] + zeros [1, H', W', C'] keeps
            # the spatial sizes static for the library's shape inference (later layers need them)
            like = math_ops.add(math_ops.multiply(array_ops.slice(inputs, [0, 0, 0, 0], [-1, 1, 1, 1]), 0.0),
                                array_ops.zeros([1] + static[1:], inputs.dtype))
            outputs = apply_op("conv2d_backprop_input", [inputs, self.kernel, like],
                                  {"strides": list(self.strides), "padding": self.padding,
                                   "data_format": self.data_format}, name="conv2d_transpose")
        else:
            output_shape = parts if all(not isinstance(p, Tensor) for p in parts) else array_ops._dims_tensor(parts)
            outputs = nn.conv2d_transpose(inputs, self.kernel, output_shape, strides=self.strides,
                                          padding=self.padding, data_format=self.data_format)
        outputs.set_shape(static)
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias, data_format=self.data_format)
        return _activation(self.activation, outputs)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Conv2DTranspose(...)(inputs), its variables in variable scope `name` (default "conv2d_transpose")."""
    return Conv2DTranspose(filters, kernel_size, strides, padding, data_format, activation, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                           _scope=None, _reuse=reuse)(inputs)


__all__ += ["Conv2DTranspose", "conv2d_transpose"]
