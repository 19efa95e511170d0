"""TF1 initializer classes (tf.zeros_initializer, tf.glorot_uniform_initializer, ...).

An initializer is called as init(shape, dtype=None, partition_info=None) and returns a tensor
built from the library's fill and random ops, so its values are drawn when the variable's
initializer runs in a session (seeded by the session seed and the op seed, as TF does).
orthogonal_initializer draws its matrix with NumPy when the graph is built (the IR has no QR op), seeded
from the graph and op seeds when set: each run of the initializer gives that same matrix.
"""
import math

import numpy as np

from . import array_ops
from .. import dtypes as _dtypes
from ..framework import constant

__all__ = ["Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer", "truncated_normal_initializer",
           "variance_scaling_initializer", "glorot_uniform_initializer", "glorot_normal_initializer",
           "orthogonal_initializer", "identity_initializer"]


class Initializer(object):
    """Base class: a callable (shape, dtype=None, partition_info=None) -> initial value tensor."""

    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def _dtype(self, dtype):
        return self.dtype if dtype is None else _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}


class zeros_initializer(Initializer):  # noqa: N801 (TF's name)
    """All zeros."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, self._dtype(dtype))


class ones_initializer(Initializer):  # noqa: N801
    """All ones."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, self._dtype(dtype))


def _constant_value(value, shape, dtype):
    """TF's constant(value, shape): a scalar fills the shape; a shorter list repeats its last element."""
    arr = np.asarray(value, dtype=dtype.as_numpy_dtype).ravel()
    size = int(np.prod(shape, dtype=np.int64))
    if arr.size > size:
        raise ValueError("Too many elements provided. Needed at most %d, but received %d" % (size, arr.size))
    if arr.size == 0:
        raise ValueError("constant_initializer got an empty value for shape %s" % (list(shape),))
    padded = np.concatenate([arr, np.full(size - arr.size, arr[-1], dtype=arr.dtype)])
    return padded.reshape(shape)


class constant_initializer(Initializer):  # noqa: N801
    """The given value: a scalar fills the shape; a list or array is laid out in row-major order
    (fewer elements than the shape: the last one repeats, as TF1's constant does)."""

    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape=False):
        Initializer.__init__(self, dtype)
        self.value = value
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = self._dtype(dtype)
        verify = self.verify_shape if verify_shape is None else verify_shape
        if verify and np.shape(self.value) != tuple(shape):
            raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(shape), np.shape(self.value)))
        return constant(_constant_value(self.value, list(shape), dtype), dtype=dtype)


class random_uniform_initializer(Initializer):  # noqa: N801
    """Uniform in [minval, maxval)."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=_dtypes.float32):
        Initializer.__init__(self, dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.random_uniform(shape, self.minval, self.maxval, self._dtype(dtype), seed=self.seed)


class random_normal_initializer(Initializer):  # noqa: N801
    """Normal with the given mean and stddev."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32):
        Initializer.__init__(self, dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.random_normal(shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class truncated_normal_initializer(Initializer):  # noqa: N801
    """Normal with the given mean and stddev, values beyond 2 stddev drawn again."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32):
        Initializer.__init__(self, dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class orthogonal_initializer(Initializer):  # noqa: N801
    """An orthogonal matrix (times gain), as TF draws it: the Q of a normal matrix's QR, signs fixed by R's
    diagonal; shapes of rank > 2 are (prod(shape[:-1]), shape[-1]) matrices. Drawn with NumPy when the graph is
    built, from the graph-level and op seeds (tf.set_random_seed) when either is set."""

    def __init__(self, gain=1.0, seed=None, dtype=_dtypes.float32):
        Initializer.__init__(self, dtype)
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from ..framework import get_default_graph
        dtype = self._dtype(dtype)
        if not dtype.is_floating:
            raise ValueError("Expected floating point type, got %s." % dtype)
        shape = [int(d) for d in shape]
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        graph_seed = get_default_graph().seed
        seeded = graph_seed is not None or self.seed is not None
        rng = np.random.RandomState([graph_seed or 0, self.seed or 0] if seeded else None)
        q, r = np.linalg.qr(rng.standard_normal((max(rows, cols), min(rows, cols))))
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return constant((self.gain * q).reshape(shape).astype(dtype.as_numpy_dtype), dtype=dtype)


class identity_initializer(Initializer):  # noqa: N801
    """gain times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0, dtype=_dtypes.float32):
        Initializer.__init__(self, dtype)
        self.gain = gain

    def __call__(self, shape, dtype=None, partition_info=None):
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = self._dtype(dtype)
        return constant(self.gain * np.eye(int(shape[0]), int(shape[1]), dtype=dtype.as_numpy_dtype), dtype=dtype)


def _compute_fans(shape):
    """(fan_in, fan_out) as TF computes them: conv kernels multiply by the receptive field size."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class variance_scaling_initializer(Initializer):  # noqa: N801
    """Values with variance scale / n, n = fan_in, fan_out or their mean (mode).

    distribution "truncated_normal" (alias "normal"), "untruncated_normal" or "uniform" (limit
    sqrt(3 * scale / n)); the truncated normal's stddev is corrected for the truncation.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dtypes.float32):
        Initializer.__init__(self, dtype)
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument: %s" % mode)
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("Invalid `distribution` argument: %s" % distribution)
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self._dtype(dtype)
        fan_in, fan_out = _compute_fans(list(shape))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / .87962566103423978  # stddev of a unit normal truncated at 2
            return array_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return array_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return array_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)


def glorot_uniform_initializer(seed=None, dtype=_dtypes.float32):
    """Uniform in +-sqrt(6 / (fan_in + fan_out)) (Xavier); get_variable's default for floats."""
    return variance_scaling_initializer(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=_dtypes.float32):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out))."""
    return variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)

