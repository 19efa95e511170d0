"""Indexing, segment and scatter ops: gather_nd, scatter_nd, segment sums, unique, boolean_mask, cumulative
sums and products, reverse, random_shuffle and the sparse variable updates scatter_update/add/sub."""
import builtins
import collections

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from . import math_ops as _math_ops
# (_op_seed, _static_shape: used by the op table's expressions)
from .array_ops import (_op_seed, _static_shape, expand_dims, gather, range as _range, reshape, squeeze, stack,
                        transpose, where, zeros_like)
from ..framework import Tensor, apply_op, convert_to_tensor
from ..op_def import define_ops

__all__ = ["gather_nd", "scatter_nd", "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min",
           "segment_sum", "segment_mean", "segment_max", "segment_min", "unique", "invert_permutation", "boolean_mask",
           "random_shuffle", "cumsum", "cumprod", "reverse", "reverse_v2", "scatter_update", "scatter_add",
           "scatter_sub", "reverse_sequence"]

Unique = collections.namedtuple("Unique", ["y", "idx"])


def _host_array(value, what):
    """value as a NumPy array; a tensor only when its value is on the host (eager mode)."""
    if isinstance(value, Tensor):
        try:
            return np.asarray(value)
        except Exception:
            raise TypeError("tinyflow: %s must be known when the graph is built, got the tensor %s"
                            % (what, value.name))
    return np.asarray(value)


def _const_int(value, what):
    return int(_host_array(value, what).reshape(()))


def _indices(indices):
    indices = convert_to_tensor(indices)
    if indices.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError("indices must be int32 or int64, got %s" % indices.dtype.name)
    return indices


def gather_nd(params, indices, name=None, batch_dims=0):
    """Slices of params at the index tuples in the last dimension of indices (tf.gather_nd)."""
    if batch_dims != 0:
        raise NotImplementedError("tinyflow.gather_nd supports batch_dims=0 only")
    return apply_op("gather_nd", [params, _indices(indices)], name=name or "GatherNd")


# The functions that are one library op: (signature, op, inputs, attrs, doc[, node name]) rows from which
# op_def.define_ops generates them, as TF's gen_*_ops (the others are hand-written, below and above).
_INDEXING_OPS = [
    ('scatter_nd(indices, updates, shape, name=None)', 'scatter_nd', '_indices(indices), updates',
     {'shape': '_static_shape(shape)'},
     'Zeros of `shape` with the slices of updates added at the index tuples (duplicates add up; tf.scatter_nd).',
     'ScatterNd'),
    ('segment_sum(data, segment_ids, name=None)', 'segment_sum', 'data, _indices(segment_ids)',
     {}, 'Rows of data summed by sorted segment id; the result has max(segment_ids) + 1 rows.', 'SegmentSum'),
    ('segment_mean(data, segment_ids, name=None)', 'segment_mean', 'data, _indices(segment_ids)',
     {}, 'The mean row of data per sorted segment id (0 for an id without rows).', 'SegmentMean'),
    ('segment_max(data, segment_ids, name=None)', 'segment_max', 'data, _indices(segment_ids)',
     {}, 'The largest row of data per sorted segment id (0 for an id without rows).', 'SegmentMax'),
    ('segment_min(data, segment_ids, name=None)', 'segment_min', 'data, _indices(segment_ids)',
     {}, 'The smallest row of data per sorted segment id (0 for an id without rows).', 'SegmentMin'),
    ('invert_permutation(x, name=None)', 'invert_permutation', '_indices(x)',
     {}, 'The inverse of the permutation x: y[x[i]] = i.', 'InvertPermutation'),
    ('random_shuffle(value, seed=None, name=None)', 'random_shuffle', 'value',
     {'seed': '_op_seed(seed)'}, 'value with its rows (dimension 0) in a random order.', 'RandomShuffle'),
]
define_ops(globals(), _INDEXING_OPS)


def _unsorted_segment(op, data, segment_ids, num_segments, name):
    """`op` with num_segments an attribute when it is known as the graph is built, else its _dims form,
    which reads a count the graph computes (tf.shape(unique.y)[0] in a sparse optimizer update)."""
    segment_ids = _indices(segment_ids)
    try:
        count = _const_int(num_segments, "num_segments")
    except TypeError:
        return apply_op(op + "_dims", [data, segment_ids, _indices(num_segments)], name=name)
    return apply_op(op, [data, segment_ids], {"num_segments": count}, name=name)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Rows of data summed by segment id into num_segments rows; negative ids are dropped."""
    return _unsorted_segment("unsorted_segment_sum", data, segment_ids, num_segments, name or "UnsortedSegmentSum")


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The largest row of data per segment id (the dtype's lowest value for an empty segment)."""
    return _unsorted_segment("unsorted_segment_max", data, segment_ids, num_segments, name or "UnsortedSegmentMax")


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The smallest row of data per segment id (the dtype's highest value for an empty segment)."""
    return _unsorted_segment("unsorted_segment_min", data, segment_ids, num_segments, name or "UnsortedSegmentMin")


def unique(x, out_idx=_dtypes.int32, name=None):
    """(y, idx): the distinct values of the vector x in order of first occurrence, and x's positions in y."""
    op = apply_op("unique", [x], {"out_idx": _dtypes.as_dtype(out_idx).name}, name=name or "Unique")
    return Unique(*op.outputs)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices) of tensor where the boolean mask is true; mask covers dims axis..axis+mask.ndim."""
    tensor, mask = convert_to_tensor(tensor), convert_to_tensor(mask)
    mask_dims, tensor_dims = mask.shape.dims, tensor.shape.dims
    if mask_dims is None:
        raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.  "
                         "E.g. shape=[None] is ok, but shape=None is not.")
    if not mask_dims:
        raise ValueError("mask cannot be scalar.")
    if tensor_dims is None:
        raise ValueError("tinyflow.boolean_mask needs the rank of tensor")
    axis = 0 if axis is None else int(axis)
    covered = tensor_dims[axis:axis + len(mask_dims)]
    if len(covered) != len(mask_dims) or any(a is not None and b is not None and a != b
                                             for a, b in zip(covered, mask_dims)):
        raise ValueError("Shapes %s and %s are incompatible" % (tensor.shape, mask.shape))
    merged = -1 if None in covered else int(np.prod(covered))
    new_dims = tensor_dims[:axis] + [merged] + tensor_dims[axis + len(mask_dims):]
    if len(mask_dims) > 1 or None in new_dims:
        if sum(d is None or d < 0 for d in new_dims) > 1:
            raise ValueError("tinyflow.boolean_mask needs the dimensions of tensor %s outside the mask" % tensor.shape)
        tensor = reshape(tensor, [-1 if d is None else d for d in new_dims])
    if len(mask_dims) > 1:
        mask = reshape(mask, [-1])
    with_name = name or "boolean_mask"
    indices = squeeze(where(mask), axis=[1])
    return gather(tensor, indices, axis=axis, name=with_name)


def _scan(op, x, axis, exclusive, reverse, name):
    return apply_op(op, [x], {"axis": _const_int(axis, "axis"), "exclusive": bool(exclusive),
                              "reverse": bool(reverse)}, name=name)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    return _scan("cumsum", x, axis, exclusive, reverse, name or "Cumsum")


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    return _scan("cumprod", x, axis, exclusive, reverse, name or "Cumprod")


def reverse(tensor, axis, name=None):
    """tensor with the given axes reversed (tf.reverse / tf.reverse_v2): a strided_slice of stride -1 there."""
    tensor = convert_to_tensor(tensor)
    rank = tensor.shape.ndims
    if rank is None:
        raise ValueError("tinyflow.reverse needs the rank of tensor")
    axes = [int(a) for a in _host_array(axis, "axis").reshape(-1)]
    strides = [1] * rank
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("axis %d is out of range for a tensor of rank %d" % (a, rank))
        if strides[a % rank] == -1:
            raise ValueError("axis %d specified more than once" % a)
        strides[a % rank] = -1
    full = (1 << rank) - 1
    return apply_op("strided_slice", [tensor], {"begin": (0,) * rank, "end": (0,) * rank, "strides": tuple(strides),
                                                "begin_mask": full, "end_mask": full}, name=name or "ReverseV2")


reverse_v2 = reverse


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """Each slice b along batch_axis reversed along seq_axis within its first seq_lengths[b] elements: a gather_nd
    of (b, source step) pairs, so the gradient flows to input. The extent of seq_axis must be static."""
    input = convert_to_tensor(input)  # noqa: A001
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = (batch_dim if batch_dim is not None else 0) if batch_axis is None else batch_axis
    if seq_axis is None:
        raise TypeError("reverse_sequence() needs seq_axis")
    rank = input.shape.ndims
    if rank is None:
        raise ValueError("tinyflow.reverse_sequence needs the rank of input")
    seq, batch = int(seq_axis) % rank, int(batch_axis) % rank
    if seq == batch:
        raise ValueError("seq_axis and batch_axis must differ, both are %d" % seq)
    perm = [batch, seq] + [d for d in builtins.range(rank) if d not in (batch, seq)]
    x = transpose(input, perm)
    steps = x.shape.dims[1]
    if steps is None:
        raise ValueError("tinyflow.reverse_sequence needs the extent of seq_axis statically, got %s" % input.shape)
    lengths = expand_dims(_math_ops.cast(seq_lengths, _dtypes.int32), 1)
    t = _range(steps)
    source = where(_math_ops.less(t, lengths), lengths - 1 - t, t + zeros_like(lengths))
    rows = cumsum(source * 0 + 1, axis=0, exclusive=True)
    return transpose(gather_nd(x, stack([rows, source], axis=2)), list(np.argsort(perm)), name=name)


def _scatter(op, ref, indices, updates, name):
    args = [_indices(indices), convert_to_tensor(updates, dtype=ref.dtype)]
    if _framework._EAGER is not None:  # eager: the update of a snapshot, assigned back into the variable
        return ref.assign(apply_op(op, [ref.value()] + args, name=name))
    return apply_op(op, [ref] + args, name=name)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices[i], ...] = updates[i, ...]; returns the variable's new value."""
    return _scatter("scatter_update", ref, indices, updates, name or "ScatterUpdate")


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i], ...] += updates[i, ...] (repeated indices add up); returns the variable's new value."""
    return _scatter("scatter_add", ref, indices, updates, name or "ScatterAdd")


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i], ...] -= updates[i, ...] (repeated indices add up); returns the variable's new value."""
    return _scatter("scatter_sub", ref, indices, updates, name or "ScatterSub")
