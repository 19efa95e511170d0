"""tf.map_fn, tf.scan, tf.foldl, tf.foldr: tf.while_loops over TensorArrays, as TF builds them.

elems (a tensor or a nested structure of tensors with the same first dimension) is unstacked into
TensorArrays; the loop reads element i, calls fn and (map_fn, scan) writes the result to output
TensorArrays, which are stacked at the end.
"""
from . import array_ops, math_ops
from .. import nest
from .. import dtypes as _dtypes
from .control_flow_ops import while_loop
from .control_flow_body import static_shape
from ..framework import convert_to_tensor, name_scope
from .tensor_array_ops import TensorArray, zeros_rows

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _unstacked(elems):
    """(flat elems, their TensorArrays, the element count as an int32 scalar tensor)."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must not be empty")
    rows = flat[0].shape.dims[0] if flat[0].shape.dims else None
    n = convert_to_tensor(rows, dtype=_dtypes.int32) if rows is not None else array_ops.shape(flat[0])[0]
    # Each array is as long as elems[0] is: elems itself is its flow (the other elems must match it).
    arrays = [TensorArray(e.dtype, size=rows if rows is not None else n)._with_flow(e) if i == 0 else
              TensorArray(e.dtype, size=rows if rows is not None else n).unstack(e) for i, e in enumerate(flat)]
    return flat, arrays, n


def _read(elems, arrays, i):
    return nest.pack_sequence_as(elems, [ta.read(i) for ta in arrays])


def _accumulators(flat_elems, like, n, dtypes=None):
    """One TensorArray per leaf of `like` (tensors of the element shape), as long as elems, of
    `dtypes` (default: like's). An element shape known statically makes zeros of it, so `like`
    (fn traced outside the loop) never runs: elems may have no rows."""
    dims = flat_elems[0].shape.dims
    size = dims[0] if dims and dims[0] is not None else n
    arrays = []
    for x, dtype in zip(like, dtypes or [x.dtype for x in like]):
        shape = static_shape(x)
        if shape.is_fully_defined():
            flow = array_ops.zeros([size] + shape.dims, dtype)
        else:
            rows = flat_elems[0]
            for _ in range((rows.shape.ndims or 1) - 1):
                rows = math_ops.reduce_sum(rows, axis=-1)
            flow = zeros_rows(rows, array_ops.zeros_like(x, dtype=dtype) if dtype != x.dtype else x)
        arrays.append(TensorArray(dtype, size=n, flow=flow))
    return arrays


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None):
    """[fn(elems[0]), fn(elems[1]), ...] stacked. fn is traced twice: once outside the loop on
    elems[0] for its output's structure and shape (those ops run only when that shape has
    dimensions unknown before run time), once as the loop body."""
    with name_scope(name or "map"):
        flat, arrays, n = _unstacked(elems)
        probe = fn(_read(elems, arrays, 0))
        if dtype is not None:  # TF: fn's output has dtype's structure, the arrays its dtypes
            nest.assert_same_structure(dtype, probe, check_types=False)
        outputs = _accumulators(flat, [convert_to_tensor(p) for p in nest.flatten(probe)], n,
                                None if dtype is None else [_dtypes.as_dtype(d) for d in nest.flatten(dtype)])

        def body(i, accs):
            values = nest.flatten(fn(_read(elems, arrays, i)))
            return i + 1, [ta.write(i, v) for ta, v in zip(accs, values)]
        _, outputs = while_loop(lambda i, accs: i < n, body, (0, outputs), back_prop=back_prop,
                                name="while")
        return nest.pack_sequence_as(probe, [ta.stack() for ta in outputs])


def _indices(i, n, reverse):
    return math_ops.subtract(n - 1, i) if reverse else i


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """a_k = fn(a_{k-1}, elems[k]) for each k (from the end when reverse), all a_k stacked; without
    initializer a_0 is elems' first (last) element."""
    with name_scope(name or "scan"):
        flat, arrays, n = _unstacked(elems)
        start = 0
        if initializer is None:
            initializer = _read(elems, arrays, _indices(0, n, reverse))
            start = 1
        init = nest.map_structure(convert_to_tensor, initializer)
        outputs = _accumulators(flat, nest.flatten(init), n)
        if start:
            outputs = [ta.write(_indices(0, n, reverse), x) for ta, x in zip(outputs, nest.flatten(init))]

        def body(i, acc, outs):
            k = _indices(i, n, reverse)
            acc = fn(acc, _read(elems, arrays, k))
            return i + 1, acc, [ta.write(k, v) for ta, v in zip(outs, nest.flatten(acc))]
        _, _, outputs = while_loop(lambda i, acc, outs: i < n, body, (start, init, outputs), back_prop=back_prop,
                                   name="while")
        return nest.pack_sequence_as(init, [ta.stack() for ta in outputs])


def _fold(fn, elems, initializer, back_prop, name, reverse):
    with name_scope(name):
        flat, arrays, n = _unstacked(elems)
        start = 0
        if initializer is None:
            initializer = _read(elems, arrays, _indices(0, n, reverse))
            start = 1
        acc = nest.map_structure(convert_to_tensor, initializer)
        _, acc = while_loop(lambda i, acc: i < n,
                            lambda i, acc: (i + 1, fn(acc, _read(elems, arrays, _indices(i, n, reverse)))),
                            (start, acc), back_prop=back_prop, name="while")
        return acc


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])."""
    return _fold(fn, elems, initializer, back_prop, name or "foldl", reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """fn(...fn(fn(initializer, elems[n-1]), elems[n-2])..., elems[0])."""
    return _fold(fn, elems, initializer, back_prop, name or "foldr", reverse=True)
