"""Gradient clipping as TF 1.x computes it: clip_by_norm, clip_by_global_norm, clip_by_average_norm,
global_norm (tf.clip_by_value is math_ops')."""
from . import math_ops as M
from .array_ops import ones_like, size, where
from ..framework import Tensor, convert_to_tensor

__all__ = ["clip_by_norm", "clip_by_global_norm", "clip_by_average_norm", "global_norm"]


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(||t||_2, clip_norm), the L2 norm over `axes` (all by default); a zero norm
    takes the square root of 1 instead (so the gradient stays finite, as TF's)."""
    t = convert_to_tensor(t)
    l2sum = M.reduce_sum(M.square(t), axes, keepdims=True)
    pred = M.greater(l2sum, 0.0)
    l2norm = where(pred, M.sqrt(where(pred, l2sum, ones_like(l2sum))), l2sum)
    return M.divide(M.multiply(t, clip_norm), M.maximum(l2norm, clip_norm), name=name)


def _check_sequence(t_list):
    if not isinstance(t_list, (list, tuple)) or isinstance(t_list, Tensor):
        raise TypeError("t_list should be a sequence")


def global_norm(t_list, name=None):
    """sqrt(sum of the squares of every element of the tensors in t_list); None entries are ignored."""
    _check_sequence(t_list)
    squares = [M.reduce_sum(M.square(convert_to_tensor(t))) for t in t_list if t is not None]
    if not squares:
        raise ValueError("global_norm needs at least one tensor that is not None")
    return M.sqrt(M.add_n(squares), name=name)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(each t * clip_norm / max(global_norm, clip_norm), global_norm); None entries stay None. A global
    norm that is inf or nan makes every entry nan, as TF's."""
    _check_sequence(t_list)
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    inv_clip = 1.0 / clip_norm if isinstance(clip_norm, (int, float)) else M.divide(1.0, clip_norm)
    scale = M.multiply(M.minimum(M.divide(1.0, norm), inv_clip), clip_norm)
    clipped = [None if t is None else M.multiply(convert_to_tensor(t), scale,
                                                 name=None if name is None else "%s_%d" % (name, i))
               for i, t in enumerate(t_list)]
    return clipped, norm


def clip_by_average_norm(t, clip_norm, name=None):
    """t * clip_norm / max(||t||_2 / n, clip_norm) with n the number of elements of t."""
    t = convert_to_tensor(t)
    n = M.cast(size(t), t.dtype)
    inv_norm = M.rsqrt(M.reduce_sum(M.square(t)))
    inv_clip = 1.0 / clip_norm if isinstance(clip_norm, (int, float)) else M.divide(1.0, clip_norm)
    return M.multiply(M.multiply(t, clip_norm), M.minimum(M.multiply(inv_norm, n), inv_clip), name=name)
