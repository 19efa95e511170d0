"""Tensor creation (fills, random) and shape manipulation."""
import builtins

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from ..framework import Tensor, apply_op, constant, convert_to_tensor, get_default_graph
from ..op_def import define_ops

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "random_normal", "random_uniform",
           "truncated_normal", "set_random_seed", "reshape", "transpose", "concat", "stack", "unstack", "split",
           "parallel_stack", "expand_dims", "squeeze", "tile", "gather", "one_hot", "where", "identity", "shape",
           "size", "rank", "slice", "pad", "stop_gradient", "range", "broadcast_to"]


def _host_values(shape):
    """In eager mode a shape given as a tensor (or a list holding scalar tensors) is read to the host."""
    if _framework._EAGER is not None:
        if isinstance(shape, Tensor):
            return np.asarray(shape).tolist()
        if isinstance(shape, (list, tuple)):
            return [int(d) if isinstance(d, Tensor) else d for d in shape]
    return shape


def _static_shape(shape):
    shape = _host_values(shape)
    if isinstance(shape, Tensor):
        raise TypeError("this op needs a static shape (a list of ints), got the tensor %s" % shape.name)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _is_dynamic(shape):
    """Whether a shape is a tensor, or a list holding one (known only when the graph runs)."""
    if _framework._EAGER is not None:
        return False
    return isinstance(shape, Tensor) or (isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape))


def _filled_dynamic(shape, value, dtype, name):
    """fill_dims: `value` in a shape computed by the graph (tf.zeros(tf.shape(x)), a batch-sized state)."""
    if isinstance(shape, Tensor):
        dims = shape
    else:
        dims = stack([d if isinstance(d, Tensor) else convert_to_tensor(int(d), dtype=_dtypes.int32) for d in shape])
    return apply_op("fill_dims", [dims, convert_to_tensor(value, dtype=_dtypes.as_dtype(dtype))], name=name)


def zeros(shape, dtype=_dtypes.float32, name=None):
    if _is_dynamic(shape):
        return _filled_dynamic(shape, 0, dtype, name)
    return apply_op("zeros", [], {"shape": _static_shape(shape), "dtype": _dtypes.as_dtype(dtype)}, name=name)


def ones(shape, dtype=_dtypes.float32, name=None):
    if _is_dynamic(shape):
        return _filled_dynamic(shape, 1, dtype, name)
    return apply_op("ones", [], {"shape": _static_shape(shape), "dtype": _dtypes.as_dtype(dtype)}, name=name)


def fill(dims, value, name=None):
    if isinstance(value, Tensor):
        return _filled_dynamic(dims, value, value.dtype, name)
    dtype = _dtypes.as_dtype(np.asarray(value).dtype)
    if dtype == _dtypes.float64 and isinstance(value, float):
        dtype = _dtypes.float32
    if _is_dynamic(dims):
        return _filled_dynamic(dims, value, dtype, name)
    return apply_op("fill", [], {"shape": _static_shape(dims), "value": float(value), "dtype": dtype}, name=name)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    out = apply_op("zeros_like", [tensor], name=name)
    return out if dtype is None else apply_op("cast", [out], {"dtype": _dtypes.as_dtype(dtype)})


def ones_like(tensor, dtype=None, name=None, optimize=True):
    out = apply_op("ones_like", [tensor], name=name)
    return out if dtype is None else apply_op("cast", [out], {"dtype": _dtypes.as_dtype(dtype)})


def set_random_seed(seed):
    """The graph-level seed: sessions of this graph use it as their run seed."""
    get_default_graph().seed = int(seed)


def _op_seed(seed):
    # Random nodes are told apart by their seed attribute (a per-graph counter unless given), so
    # two same-shaped initializers never draw the same values.
    if _framework._EAGER is not None:  # eager: the Context's RNG state varies the draws; a seed attribute
        return int(seed or 0)            # that counted would change every trace's key (a recompile per call)
    graph = get_default_graph()
    graph._random_ops = getattr(graph, "_random_ops", 0) + 1
    return int(seed) if seed is not None else graph._random_ops


def _random(op, shape, dtype, seed, name, **params):
    if any(isinstance(v, Tensor) for v in params.values()):
        return _random_tensor_params(op, shape, dtype, seed, name, params)
    if _is_dynamic(shape):
        return _random_dynamic_shape(op, shape, dtype, seed, name, params)
    attrs = {"shape": _static_shape(shape), "dtype": _dtypes.as_dtype(dtype).name, "seed": _op_seed(seed)}
    attrs.update({k: float(v) for k, v in params.items()})
    return apply_op(op, [], attrs, name=name)


def _random_tensor_params(op, shape, dtype, seed, name, params):
    """mean/stddev or minval/maxval given as tensors (TF accepts any scalar or broadcastable tensor):
    the standard draw (mean 0 and stddev 1, or [0, 1)) scaled and shifted by them."""
    from . import math_ops
    dtype = _dtypes.as_dtype(dtype)
    if op == "random_uniform":
        if dtype.is_integer:
            raise NotImplementedError("random_uniform of an integer dtype with tensor minval/maxval")
        low, high = (convert_to_tensor(params[k], dtype=dtype) for k in ("minval", "maxval"))
        unit = _random(op, shape, dtype, seed, None, minval=0.0, maxval=1.0)
        return math_ops.add(low, math_ops.multiply(unit, math_ops.subtract(high, low)), name=name)
    mean, stddev = (convert_to_tensor(params[k], dtype=dtype) for k in ("mean", "stddev"))
    unit = _random(op, shape, dtype, seed, None, mean=0.0, stddev=1.0)
    return math_ops.add(math_ops.multiply(unit, stddev), mean, name=name)


def _random_dynamic_shape(op, shape, dtype, seed, name, params):
    """A shape known only at run time (tf.shape(x), as in a VAE's reparameterization): uniform draws from
    the random_uniform_like op; normal ones from two of them by Box-Muller; truncated ones redrawn where
    beyond 2 stddev (8 redraws: all fail with probability 0.0455^8 < 1e-10; then clipped)."""
    from . import math_ops
    dtype = _dtypes.as_dtype(dtype)
    integer = dtype.is_integer
    if integer and op != "random_uniform":
        raise TypeError("%s needs a floating dtype, got %s" % (op, dtype.name))
    like = zeros(_dims_tensor(shape) if not isinstance(shape, Tensor) else shape,
                 _dtypes.float64 if integer else dtype)
    base = _op_seed(seed) * 16

    def uniform(k):
        return apply_op("random_uniform_like", [like], {"seed": base + k})

    if integer:  # minval + floor(u * (maxval - minval)): each integer of [minval, maxval) equally likely
        low, high = int(params["minval"]), int(params["maxval"])
        if low >= high:
            raise ValueError("Need minval < maxval: %d >= %d" % (low, high))
        drawn = math_ops.floor(math_ops.multiply(uniform(0), float(high - low)))
        return math_ops.add(math_ops.cast(drawn, dtype), convert_to_tensor(low, dtype=dtype), name=name)
    if op == "random_uniform":
        return math_ops.add(math_ops.multiply(uniform(0), float(params["maxval"]) - float(params["minval"])),
                            float(params["minval"]), name=name)

    def normal(k):
        radius = math_ops.sqrt(math_ops.multiply(math_ops.log(math_ops.subtract(1.0, uniform(2 * k))), -2.0))
        return math_ops.multiply(radius, math_ops.cos(math_ops.multiply(uniform(2 * k + 1), 2.0 * np.pi)))

    z = normal(0)
    if op == "truncated_normal":
        for k in builtins.range(1, 9):
            z = where(math_ops.greater(math_ops.abs(z), 2.0), normal(k), z)
        z = math_ops.minimum(math_ops.maximum(z, -2.0), 2.0)
    return math_ops.add(math_ops.multiply(z, float(params["stddev"])), float(params["mean"]), name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    return _random("random_normal", shape, dtype, seed, name, mean=mean, stddev=stddev)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    return _random("truncated_normal", shape, dtype, seed, name, mean=mean, stddev=stddev)


def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    if maxval is None and _dtypes.as_dtype(dtype).is_integer:
        raise ValueError("Must specify maxval for integer dtype %r" % _dtypes.as_dtype(dtype))
    return _random("random_uniform", shape, dtype, seed, name, minval=minval,
                   maxval=1.0 if maxval is None else maxval)


def _dims_tensor(dims, dtype=_dtypes.int32):
    """An int vector tensor of a shape given as a tensor or a list mixing ints and scalar tensors."""
    if isinstance(dims, Tensor):
        return dims
    return stack([d if isinstance(d, Tensor) else convert_to_tensor(int(d), dtype=dtype) for d in dims])


def reshape(tensor, shape, name=None):
    """tensor's elements in `shape` (a list with at most one -1; a tensor or a list holding scalar tensors
    when the shape is computed by the graph, as tf.reshape(x, [tf.shape(x)[0], -1]))."""
    if _is_dynamic(shape):
        out = apply_op("reshape_dims", [tensor, _dims_tensor(shape)], name=name or "Reshape")
        if isinstance(shape, (list, tuple)):  # what TF infers statically: the constant entries
            out._static_shape = _framework.TensorShape([d if isinstance(d, (int, np.integer)) and d >= 0 else None
                                                        for d in shape])
        return out
    return apply_op("reshape", [tensor], {"shape": tuple(-1 if d is None else int(d) for d in
                                                        _static_shape_allow_neg(shape))}, name=name)


def _static_shape_allow_neg(shape):
    shape = _host_values(shape)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(-1 if d is None else int(d) for d in shape)


# The functions that are one library op: (signature, op, inputs, attrs, doc[, node name]) rows from which
# op_def.define_ops generates them, as TF's gen_*_ops (the others are hand-written, below and above).
_ARRAY_OPS = [
    ('identity(input, name=None)', 'identity', 'input', {}, 'A tensor with the same shape and contents as input.'),
    ('stop_gradient(input, name=None)', 'stop_gradient', 'input', {}, 'input, with no gradient flowing through it.'),
    ('shape(input, name=None, out_type=_dtypes.int32)', 'shape', 'input',
     {'out_type': '_dtypes.as_dtype(out_type).name'}, 'The shape of input as a 1-D tensor.'),
    ('size(input, name=None, out_type=_dtypes.int32)', 'size', 'input',
     {'out_type': '_dtypes.as_dtype(out_type).name'}, 'The number of elements of input.'),
    ('rank(input, name=None)', 'rank', 'input', {}, 'The number of dimensions of input.'),
    ('slice(input_, begin, size, name=None)', 'slice', 'input_',
     {'begin': 'tuple(begin)', 'size': 'tuple(size)'},
     'The slice of input_ of `size` elements from `begin` in each dimension (-1: to the end).'),
    ('broadcast_to(input, shape, name=None)', 'broadcast_to', 'input',
     {'shape': '_static_shape(shape)'}, "input broadcast to `shape` (NumPy's rules)."),
    ('transpose(a, perm=None, name=None, conjugate=False)', 'transpose', 'a',
     {'axes': 'tuple(perm) if perm is not None else ()'}, 'a with its dimensions permuted by perm (reversed: None).'),
    ('expand_dims(input, axis=None, name=None, dim=None)', 'expand_dims', 'input',
     {'axis': 'int(dim if axis is None else axis)'}, 'input with a dimension of size 1 inserted at axis.'),
    ('gather(params, indices, validate_indices=None, name=None, axis=0)', 'gather',
     'params, convert_to_tensor(indices)',
     {'axis': 'int(axis)'}, 'The slices of params at indices along axis.'),
    ('one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None)', 'one_hot',
     'convert_to_tensor(indices)',
     {'depth': 'int(depth)', 'on_value': '1.0 if on_value is None else float(on_value)',
      'off_value': '0.0 if off_value is None else float(off_value)', 'axis': '-1 if axis is None else int(axis)',
      'dtype': '_dtypes.as_dtype(dtype or _dtypes.float32).name'},
     'A one-hot tensor: on_value where the last axis equals indices, off_value elsewhere.'),
]
define_ops(globals(), _ARRAY_OPS)


def concat(values, axis, name="concat"):
    values = list(values)
    if len(values) == 1:
        return identity(values[0], name=name)
    return apply_op("concat", values, {"axis": int(axis)}, name=name)


def stack(values, axis=0, name="stack"):
    values = [convert_to_tensor(v) for v in values]
    return concat([expand_dims(v, axis) for v in values], axis, name=name)


def parallel_stack(values, name="parallel_stack"):
    """The values (all of one shape) stacked along a new first axis: TF writes it as ParallelConcat of
    the values expanded to a leading 1; its result is stack's."""
    return stack(values, 0, name=name)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """A list of tensors: num_or_size_splits equal parts, or parts of the given sizes."""
    if isinstance(num_or_size_splits, (int, np.integer)):
        attrs = {"axis": int(axis), "num_outputs": int(num_or_size_splits)}
    else:
        sizes = tuple(int(s) for s in num_or_size_splits)
        attrs = {"axis": int(axis), "num_outputs": len(sizes), "sizes": sizes}
    out = apply_op("split", [value], attrs, name=name)
    return [out] if isinstance(out, Tensor) else list(out.outputs)


def unstack(value, num=None, axis=0, name="unstack"):
    value = convert_to_tensor(value)
    num = num or value.shape.dims[axis]
    return [squeeze(p, [axis]) for p in split(value, num, axis)]


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = squeeze_dims if axis is None else axis
    axes = () if axis is None else (tuple(axis) if isinstance(axis, (list, tuple)) else (int(axis),))
    return apply_op("squeeze", [input], {"axis": axes}, name=name)


def tile(input, multiples, name=None):  # noqa: A002
    """`input` repeated multiples[i] times along axis i. With multiples computed by the graph (a tensor, or
    a list holding scalar tensors) it is input, with a size-1 axis before each axis, times ones of
    [m0, 1, m1, 1, ...], reshaped to [m0 * d0, m1 * d1, ...] (differentiable like the static tile)."""
    if not _is_dynamic(multiples):
        return apply_op("tile", [input], {"reps": _static_shape(multiples)}, name=name)
    input = convert_to_tensor(input)  # noqa: A001
    ndim = input.shape.ndims
    if ndim is None:
        raise ValueError("tile: with multiples computed by the graph, the input's rank must be known")
    reps = [multiples[i] for i in builtins.range(ndim)]
    expanded = input
    for i in builtins.range(ndim):
        expanded = expand_dims(expanded, 2 * i)
    ones = _filled_dynamic([r for i in builtins.range(ndim) for r in (reps[i], 1)], 1, input.dtype, None)
    dims = shape(input)
    out_dims = [reps[i] * dims[i] if isinstance(reps[i], Tensor) else int(reps[i]) * dims[i]
                for i in builtins.range(ndim)]
    return reshape(expanded * ones, out_dims, name=name or "Tile")


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:  # the coordinates of the true elements: int64 [num_true, rank]
        return apply_op("argwhere", [condition], name=name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = convert_to_tensor(x)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, dtype=y.dtype)
    if not isinstance(y, Tensor):
        y = convert_to_tensor(y, dtype=x.dtype)
    return apply_op("where", [condition, x, y], name=name)


def _ints(value, what):
    """A constant list of ints (Python, NumPy or a constant tensor)."""
    value = _host_values(value)
    if isinstance(value, Tensor):
        raise TypeError("%s must be a constant, got the tensor %s" % (what, value.name))
    return [int(v) for v in np.asarray(value).reshape(-1)]


def mirror_pad(tensor, paddings, mode, name=None):
    """tf.pad with mode REFLECT (edges not repeated) or SYMMETRIC (edges repeated)."""
    mode = mode.upper()
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError("Unknown padding mode: %s" % mode)
    flat = tuple(_ints(paddings, "paddings"))
    if len(flat) % 2:
        raise ValueError("paddings must have shape [rank, 2], got %s" % (flat,))
    return apply_op("mirror_pad", [tensor], {"paddings": flat, "mode": mode}, name=name)


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    if mode.upper() in ("REFLECT", "SYMMETRIC"):
        return mirror_pad(tensor, paddings, mode, name=name)
    if mode.upper() != "CONSTANT":
        raise ValueError("Unknown padding mode: %s" % mode)
    flat = tuple(int(v) for pair in np.asarray(paddings).reshape(-1, 2) for v in pair)
    return apply_op("pad", [tensor], {"paddings": flat, "constant_value": float(constant_values)}, name=name)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    if any(isinstance(v, Tensor) for v in (start, limit, delta)):  # bounds computed by the graph
        kinds = [v.dtype for v in (start, limit, delta) if isinstance(v, Tensor)]
        if dtype is None:  # TF: the widest of the arguments' dtypes (a Python float makes it float32)
            order = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]
            kinds += [_dtypes.float32 for v in (start, limit, delta) if isinstance(v, float)]
            dtype = max(kinds, key=order.index)
        dtype = _dtypes.as_dtype(dtype)
        args = [_cast_to(v, dtype) for v in (start, limit, delta)]
        return apply_op("range_dims", args, name=name)
    if dtype is None:
        dtype = _dtypes.int32 if all(isinstance(v, (int, np.integer)) for v in (start, limit, delta)) \
            else _dtypes.float32
    return apply_op("range", [], {"start": float(start), "limit": float(limit), "delta": float(delta),
                                  "dtype": _dtypes.as_dtype(dtype).name}, name=name)


def _cast_to(value, dtype):
    """A range bound as a scalar tensor of `dtype` (a tensor of another dtype cast, as TF's range does)."""
    if not isinstance(value, Tensor):
        return convert_to_tensor(np.asarray(value, dtype=dtype.as_numpy_dtype), dtype=dtype)
    if value.dtype == dtype:
        return value
    from .math_ops import cast
    return cast(value, dtype)


def _slice_item(tensor, item):
    """tensor[item] for ints, slices, Ellipsis and None (tf.strided_slice semantics), and scalar
    int tensors (x[:, t] with a loop counter t: a gather along that axis)."""
    if not isinstance(item, tuple):
        item = (item,)
    picks = [(i, s) for i, s in enumerate(item) if isinstance(s, Tensor)]
    if picks:
        if any(s is Ellipsis for s in item):
            raise TypeError("tinyflow: a tensor index together with an Ellipsis is not supported: %r" % (item,))
        kept = _slice_item(tensor, tuple(builtins.slice(None) if isinstance(s, Tensor) else s for s in item))
        for i, s in reversed(picks):  # later axes first: earlier positions stay valid
            axis = builtins.sum(1 for t in item[:i] if not isinstance(t, (int, np.integer)))
            kept = gather(kept, s, axis=axis)
        return kept
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_mask = 0
    for i, s in enumerate(item):
        if s is Ellipsis:
            ellipsis_mask |= 1 << i
            begin.append(0), end.append(0), strides.append(1)
        elif s is None:
            new_axis_mask |= 1 << i
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(s, (int, np.integer)):
            shrink_mask |= 1 << i
            begin.append(int(s)), end.append(int(s) + 1 if s != -1 else 0), strides.append(1)
            if s == -1:
                end_mask |= 1 << i
        elif isinstance(s, builtins.slice):
            if s.start is None:
                begin_mask |= 1 << i
            if s.stop is None:
                end_mask |= 1 << i
            begin.append(s.start or 0), end.append(s.stop or 0), strides.append(s.step or 1)
        else:
            raise TypeError("unsupported index %r" % (s,))
    attrs = {"begin": tuple(begin), "end": tuple(end), "strides": tuple(strides), "begin_mask": begin_mask,
             "end_mask": end_mask, "ellipsis_mask": ellipsis_mask, "new_axis_mask": new_axis_mask,
             "shrink_axis_mask": shrink_mask}
    return apply_op("strided_slice", [tensor], attrs)


_ = constant  # re-exported by the package
Tensor._override_operator("__getitem__", _slice_item)  # tensor[...] (the core's Tensor defines no indexing)
