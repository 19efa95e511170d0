"""TF1 math built from the library's ops: logical and log-sum-exp reductions, einsum, tensordot,
norms, sequence masks, linspace/meshgrid and the small matrix helpers (eye, diag, trace)."""
import builtins
import re
import string

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from ..framework import Tensor, apply_op, constant, convert_to_tensor
from . import math_ops as _m
from . import array_ops as _a

__all__ = ["reduce_any", "reduce_all", "reduce_logsumexp", "reduce_euclidean_norm", "count_nonzero", "einsum",
           "tensordot", "norm", "sequence_mask", "linspace", "lin_space", "meshgrid", "eye", "diag", "diag_part",
           "matrix_transpose", "trace", "matrix_diag", "matrix_diag_part", "matrix_band_part", "is_non_decreasing",
           "is_strictly_increasing", "log_sigmoid", "softplus"]


def _keep(keepdims, keep_dims):
    return bool(keepdims if keepdims is not None else (keep_dims or False))


def _axis(axis, reduction_indices):
    return reduction_indices if axis is None else axis


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """Logical or over axes (bool in, bool out)."""
    x = _m.cast(convert_to_tensor(input_tensor), _dtypes.float32)
    out = _m.reduce_max(x, _axis(axis, reduction_indices), keepdims=_keep(keepdims, keep_dims))
    return _m.greater(out, 0.0, name=name)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """Logical and over axes (bool in, bool out); true over an empty axis, as in TF."""
    x = _m.cast(convert_to_tensor(input_tensor), _dtypes.float32)
    out = _m.reduce_min(x, _axis(axis, reduction_indices), keepdims=_keep(keepdims, keep_dims))
    return _m.greater(out, 0.0, name=name)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """log(sum(exp(x))) computed stably: the max is taken out (and held out of the gradient, as in TF)."""
    x = convert_to_tensor(input_tensor)
    axis = _axis(axis, reduction_indices)
    big = float(np.finfo(np.float32).max)
    peak = _a.stop_gradient(_m.clip_by_value(_m.reduce_max(x, axis, keepdims=True), -big, big))
    total = _m.log(_m.reduce_sum(_m.exp(x - peak), axis, keepdims=True)) + peak
    if _keep(keepdims, keep_dims):
        return _a.identity(total, name=name)
    return _m.reduce_sum(total, axis, keepdims=False, name=name) if axis is not None else \
        _a.reshape(total, [], name=name)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=None, name=None):
    return _m.sqrt(_m.reduce_sum(_m.square(input_tensor), axis, keepdims=bool(keepdims)), name=name)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=_dtypes.int64, name=None, reduction_indices=None,
                  keep_dims=None, input=None):  # noqa: A002
    x = convert_to_tensor(input if input_tensor is None else input_tensor)
    nonzero = _m.cast(_m.not_equal(x, _m.cast(0, x.dtype) if x.dtype != _dtypes.bool else False), _dtypes.float32)
    count = _m.reduce_sum(nonzero, _axis(axis, reduction_indices), keepdims=_keep(keepdims, keep_dims))
    return _m.cast(count, dtype, name=name)


def _rank(x):
    shape = x.shape
    if shape.ndims is None:
        raise ValueError("tinyflow: %s needs the static rank of '%s' (its shape is unknown)" % ("einsum", x.name))
    return shape.ndims


def _dims(x):
    return [d for d in x.shape.as_list()]


def einsum(equation, *inputs, **kwargs):
    """tf.einsum for one or two operands: transposes, sums, outer and batched matrix products
    ('ij,jk->ik', 'bij,bjk->bik', 'i,i->', 'ij->ji', 'bhqd,bhkd->bhqk', '...ij,...jk->...ik').
    Contractions become one matmul; repeated indices within one operand (traces) are not supported."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("einsum: unexpected keyword arguments %s" % sorted(kwargs))
    inputs = [convert_to_tensor(x) for x in inputs]
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:  # implicit output: the indices that appear once, in alphabetical order
        lhs = eq
        letters = lhs.replace(",", "").replace("...", "")
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) != len(inputs):
        raise ValueError("einsum: the equation '%s' has %d operands but %d were given" % (equation, len(terms),
                                                                                          len(inputs)))
    if len(inputs) > 2:
        raise ValueError("tinyflow: einsum supports one or two operands (got %d): chain einsum calls" % len(inputs))
    # Expand '...' into fresh upper-case letters, right-aligned (broadcast batch dimensions).
    free = [c for c in string.ascii_uppercase if c not in eq]
    n_ellipsis = 0
    for t, x in zip(terms, inputs):
        if "..." in t:
            n_ellipsis = builtins.max(n_ellipsis, _rank(x) - (len(t) - 3))
    ell = "".join(free[:n_ellipsis])
    expanded = []
    for t, x in zip(terms, inputs):
        if "..." in t:
            k = _rank(x) - (len(t) - 3)
            t = t.replace("...", ell[n_ellipsis - k:])
        if not re.fullmatch(r"[A-Za-z]*", t):
            raise ValueError("einsum: invalid term '%s' in '%s'" % (t, equation))
        if len(t) != _rank(x):
            raise ValueError("einsum: term '%s' has %d indices but operand '%s' has rank %d" % (
                t, len(t), x.name, _rank(x)))
        if len(set(t)) != len(t):
            raise ValueError("tinyflow: einsum with a repeated index in one operand ('%s', a trace or "
                             "diagonal) is not supported yet" % t)
        expanded.append(t)
    out = out.replace("...", ell)
    for c in out:
        if not builtins.any(c in t for t in expanded):
            raise ValueError("einsum: output index '%s' of '%s' appears in no operand" % (c, equation))

    def sum_out(x, t, keep):
        axes = [i for i, c in enumerate(t) if c not in keep]
        if axes:
            x = _m.reduce_sum(x, axes)
            t = "".join(c for c in t if c in keep)
        return x, t

    def permute(x, t, target):
        perm = [t.index(c) for c in target]
        return (x if perm == list(builtins.range(len(t))) else _a.transpose(x, perm)), target

    if len(inputs) == 1:
        x, t = sum_out(inputs[0], expanded[0], out)
        return _a.identity(permute(x, t, out)[0], name=name)
    (a, b), (ta, tb) = inputs, expanded
    a, ta = sum_out(a, ta, set(tb) | set(out))  # indices only a has and the output drops
    b, tb = sum_out(b, tb, set(ta) | set(out))
    batch = [c for c in ta if c in tb and c in out]
    contract = [c for c in ta if c in tb and c not in out]
    a_free = [c for c in ta if c not in tb]
    b_free = [c for c in tb if c not in ta]
    da = dict(zip(ta, _dims(a)))
    db = dict(zip(tb, _dims(b)))
    for c in batch + contract:
        if da[c] is not None and db[c] is not None and da[c] != db[c] and 1 not in (da[c], db[c]):
            raise ValueError("einsum '%s': index '%s' is %d in '%s' but %d in '%s'" % (equation, c, da[c], a.name,
                                                                                        db[c], b.name))
    if not contract:  # an outer or elementwise product: broadcasting multiply
        full = "".join(batch) + "".join(a_free) + "".join(b_free)
        a2, _ = permute(a, ta, "".join(batch) + "".join(a_free))
        b2, _ = permute(b, tb, "".join(batch) + "".join(b_free))
        a2 = _a.reshape(a2, [d if d is not None else -1 for d in _dims(a2)] + [1] * len(b_free)) if b_free else a2
        if a_free:
            shape_b = _dims(b2)
            nb = len(batch)
            b2 = _a.reshape(b2, shape_b[:nb] + [1] * len(a_free) + shape_b[nb:])
        prod = _m.multiply(a2, b2)
        return _a.identity(permute(prod, full, out)[0], name=name)
    for d, what in ((da, a), (db, b)):
        if builtins.any(d[c] is None for c in a_free + b_free + contract if c in d):
            raise ValueError("tinyflow: einsum '%s' needs the static sizes of '%s' (shape %s)" % (
                equation, what.name, what.shape))
    nb = len(batch)
    a2, _ = permute(a, ta, "".join(batch + a_free + contract))
    b2, _ = permute(b, tb, "".join(batch + contract + b_free))
    m = int(np.prod([da[c] for c in a_free])) if a_free else 1
    n = int(np.prod([db[c] for c in b_free])) if b_free else 1
    k = int(np.prod([da[c] for c in contract]))
    bdims = [da[c] if da[c] is not None else -1 for c in batch]
    if builtins.sum(1 for d in bdims if d == -1) > 1:
        raise ValueError("tinyflow: einsum '%s' needs static batch sizes" % equation)
    prod = _m.matmul(_a.reshape(a2, bdims + [m, k]), _a.reshape(b2, bdims + [k, n]))
    res_letters = "".join(batch + a_free + b_free)
    res = _a.reshape(prod, bdims + [da[c] for c in a_free] + [db[c] for c in b_free])
    return _a.identity(permute(res, res_letters, out)[0], name=name)


def tensordot(a, b, axes, name=None):
    """Sum of products over `axes` (an int N: a's last N with b's first N; or two lists)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    ra, rb = _rank(a), _rank(b)
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > builtins.min(ra, rb):
            raise ValueError("tensordot: axes=%d is out of range for ranks %d and %d" % (axes, ra, rb))
        axes_a, axes_b = list(builtins.range(ra - axes, ra)), list(builtins.range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ValueError("tensordot: %d axes of a but %d of b" % (len(axes_a), len(axes_b)))
    axes_a = [x % ra for x in axes_a]
    axes_b = [x % rb for x in axes_b]
    letters = string.ascii_lowercase
    ta = list(letters[:ra])
    tb = list(letters[ra:ra + rb])
    for i, j in zip(axes_a, axes_b):
        tb[j] = ta[i]
    out = [c for c in ta if c not in tb] + [c for c in tb if c not in ta]
    return einsum("%s,%s->%s" % ("".join(ta), "".join(tb), "".join(out)), a, b, name=name)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """Vector norms (ord 'euclidean'/2, 1, np.inf, any p > 0) and the Frobenius norm of matrices."""
    x = convert_to_tensor(tensor)
    keep = _keep(keepdims, keep_dims)
    if isinstance(axis, (list, tuple)) and len(axis) == 2 and ord not in ("euclidean", "fro"):
        raise ValueError("tinyflow: matrix norm ord=%r is not supported yet (only 'fro'/'euclidean')" % (ord,))
    if ord in ("euclidean", "fro", 2, 2.0):
        return _m.sqrt(_m.reduce_sum(_m.square(x), axis, keepdims=keep), name=name)
    if ord in (1, 1.0):
        return _m.reduce_sum(_m.abs(x), axis, keepdims=keep, name=name)
    if ord == np.inf:
        return _m.reduce_max(_m.abs(x), axis, keepdims=keep, name=name)
    if isinstance(ord, (int, float)) and ord > 0:
        return _m.pow(_m.reduce_sum(_m.pow(_m.abs(x), float(ord)), axis, keepdims=keep), 1.0 / ord, name=name)
    raise ValueError("norm: ord must be 'euclidean', 'fro', a positive number or np.inf (got %r)" % (ord,))


def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...]; maxlen defaults to max(lengths)."""
    lengths = convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = _m.reduce_max(lengths)
    if isinstance(maxlen, Tensor):
        row = _a.range(0, maxlen, 1)
    else:
        row = constant(np.arange(int(maxlen), dtype=np.int32))
    mask = _m.less(_m.cast(row, _dtypes.int64), _a.expand_dims(_m.cast(lengths, _dtypes.int64), -1))
    dtype = _dtypes.as_dtype(dtype)
    return _a.identity(mask, name=name) if dtype == _dtypes.bool else _m.cast(mask, dtype, name=name)


def linspace(start, stop, num, name=None, axis=0):
    """num evenly spaced values from start to stop inclusive (float)."""
    if not builtins.all(isinstance(v, (int, float, np.number)) for v in (start, stop, num)):
        start, stop = convert_to_tensor(start, _dtypes.float32), convert_to_tensor(stop, _dtypes.float32)
        if not isinstance(num, (int, np.integer)):
            raise ValueError("tinyflow: linspace needs a Python int num (got a tensor)")
        steps = constant(np.arange(num, dtype=np.float32) / builtins.max(num - 1, 1))
        return _m.add(start, (stop - start) * steps, name=name)
    return constant(np.linspace(start, stop, int(num)).astype(np.float32), name=name or "LinSpace")


lin_space = linspace


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors (indexing 'xy' swaps the first two outputs' axes, as numpy)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij' (got %r)" % (indexing,))
    xs = [_a.reshape(convert_to_tensor(x), [-1]) for x in args]
    n = len(xs)
    outs = []
    for i, x in enumerate(xs):
        shape = [1] * n
        shape[i] = -1
        outs.append(_a.reshape(x, shape))
    if indexing == "xy" and n >= 2:
        outs = [_a.transpose(o, [1, 0] + list(builtins.range(2, n))) for o in outs]
    grid = _a.zeros_like(outs[0])  # zeros of the full grid's shape, by broadcasting
    for o in outs[1:]:
        grid = _m.add(grid, _m.cast(_a.zeros_like(o), grid.dtype))
    return [_m.add(o, _m.cast(grid, o.dtype)) for o in outs]


def _is_tensor_arg(value):
    return isinstance(value, Tensor) or (isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """The [*batch_shape, num_rows, num_columns] identity; any argument may be a tensor (tf.shape(a)[0]): the
    matrix is then row index == column index, computed by the graph."""
    num_columns = num_rows if num_columns is None else num_columns
    dtype = _dtypes.as_dtype(dtype)
    if not any(_is_tensor_arg(v) for v in (num_rows, num_columns, batch_shape)) or _framework._EAGER is not None:
        value = np.eye(int(num_rows), int(num_columns), dtype=dtype.as_numpy_dtype)
        batch = [] if batch_shape is None else [int(d) for d in np.asarray(_a._host_values(batch_shape)).reshape(-1)]
        if batch:
            value = np.broadcast_to(value, tuple(batch) + value.shape).copy()
        return constant(value, name=name or "eye")
    rows = _a.expand_dims(_a.range(0, num_rows), 1)
    columns = _a.expand_dims(_a.range(0, num_columns), 0)
    matrix = _m.cast(_m.equal(rows, columns), dtype)
    if batch_shape is None or (not isinstance(batch_shape, Tensor) and not len(batch_shape)):
        return _a.identity(matrix, name=name or "eye")
    batch = _a.concat([_a._dims_tensor(batch_shape), _a.shape(matrix)], 0) if _is_tensor_arg(batch_shape) else \
        list(batch_shape) + [num_rows, num_columns]
    return _m.add(_a.zeros(batch, dtype), matrix, name=name or "eye")


def _square_size(x, what):
    dims = _dims(x)
    if not dims or dims[-1] is None:
        raise ValueError("tinyflow: %s needs the static last dimension of '%s' (shape %s)" % (what, x.name, x.shape))
    return dims


def matrix_diag(diagonal, name=None):
    """[..., n] -> [..., n, n] with the values on the diagonal."""
    d = convert_to_tensor(diagonal)
    n = _square_size(d, "matrix_diag")[-1]
    return _m.multiply(_a.expand_dims(d, -1), eye(n, dtype=d.dtype), name=name)


def diag(diagonal, name=None):
    d = convert_to_tensor(diagonal)
    if d.shape.ndims != 1:
        raise ValueError("tinyflow: tf.diag supports a 1-D diagonal (got shape %s); see tf.matrix_diag" % d.shape)
    return matrix_diag(d, name=name)


def matrix_diag_part(input, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    dims = _square_size(x, "matrix_diag_part")
    rows, cols = dims[-2], dims[-1]
    if rows is None:
        raise ValueError("tinyflow: matrix_diag_part needs static matrix sizes (shape %s)" % x.shape)
    k = builtins.min(rows, cols)
    picked = _m.multiply(x, eye(rows, cols, dtype=x.dtype))
    full = _m.reduce_sum(picked, -1)  # [..., rows]: row i holds x[i, i] (or 0 past the columns)
    return _a.identity(full if k == rows else full[..., :k], name=name)


def diag_part(input, name=None):  # noqa: A002
    return matrix_diag_part(input, name=name)


def trace(x, name=None):
    return _m.reduce_sum(matrix_diag_part(x), -1, name=name)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    a = convert_to_tensor(a)
    r = _rank(a)
    if r < 2:
        raise ValueError("matrix_transpose: '%s' has rank %d, needs at least 2" % (a.name, r))
    return _a.transpose(a, list(builtins.range(r - 2)) + [r - 1, r - 2], name=name)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    dims = _square_size(x, "matrix_band_part")
    rows, cols = dims[-2], dims[-1]
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = np.ones((rows, cols), bool)
    if num_lower >= 0:
        keep &= (i - j) <= num_lower
    if num_upper >= 0:
        keep &= (j - i) <= num_upper
    return _m.multiply(x, constant(keep.astype(x.dtype.as_numpy_dtype)), name=name)


def is_non_decreasing(x, name=None):
    x = _a.reshape(convert_to_tensor(x), [-1])
    return reduce_all(_m.less_equal(x[:-1], x[1:]), name=name)


def is_strictly_increasing(x, name=None):
    x = _a.reshape(convert_to_tensor(x), [-1])
    return reduce_all(_m.less(x[:-1], x[1:]), name=name)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return _m.negative(softplus(_m.negative(x)), name=name)


def softplus(features, name=None):
    return apply_op("softplus", [features], name=name)
