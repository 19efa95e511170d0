"""tf.parallel_for (TensorFlow's tensorflow.python.ops.parallel_for): pfor, for_loop, jacobian,
batch_jacobian, and tf.vectorized_map, tf.hessians, over the IR's pfor op and its Vectorize pass.

loop_fn(i) runs once, on an int32 scalar index, and builds its ops in the graph as usual (it may
call tf.gradients of tensors built outside, as jacobians do). The library then closes the loop body
(IRSymbolCreatePfor): what reads the index, and every op loop_fn built (so a random op draws per
iteration), goes into the body; other tensors are captured. The session's Vectorize pass turns the
loop into batched ops; an op it cannot convert runs as a loop over the iterations and is listed in
Session.stats()["pfor_fallbacks"] (Session.pfor_fallbacks()).
"""

from .. import dtypes, nest
from .._lib import C
from .array_ops import gather, reshape, transpose
from ..framework import (Operation, TensorShape, _format_attr, _Symbol, _variable_node, convert_to_tensor,
                        get_default_graph)
from .gradients import gradients

__all__ = ["pfor", "for_loop", "jacobian", "batch_jacobian", "vectorized_map", "hessians"]


def _index(graph, node):
    """The loop index: an int32 scalar variable the pfor node's body takes as its first param."""
    symbol, name = _variable_node(node + "/index", {"__dtype__": "int32", "__shape__": "[]"})
    index = Operation(symbol, "_Param", name, [], graph).outputs[0]
    index._inferred = (TensorShape([]), dtypes.int32)
    return index


def _trace(graph, loop_fn, index):
    """(loop_fn(index), the operations it built); an enclosing loop function sees them too."""
    saved, graph._op_log = graph._op_log, []
    try:
        result = loop_fn(index)
    finally:
        built, graph._op_log = graph._op_log, saved
        if saved is not None:
            saved.extend(built)
    return result, built


def _pfor(loop_fn, iters, vectorize=True, parallel_iterations=None, n_from=None, name="pfor"):
    """The pfor node of loop_fn over `iters` iterations (n_from: a tensor whose leading dim is n)."""
    graph = get_default_graph()
    node = graph.unique_name(name)
    index = _index(graph, node)
    result, built = _trace(graph, loop_fn, index)
    leaves = nest.flatten(result)
    values = [convert_to_tensor(v) for v in leaves if v is not None]
    if not values:
        return result
    attrs = {"n": -1 if n_from is not None else int(iters), "vectorize": bool(vectorize),
             "parallel_iterations": parallel_iterations}
    attrs = {k: _format_attr(v) for k, v in attrs.items() if v is not None}
    outputs = _Symbol.group([v._symbol for v in values])
    inside = _Symbol.group([t._symbol for op in built for t in op.outputs]) if built else None
    out = C.symbol_pfor(node, index.handle, outputs.handle, inside.handle if inside is not None else None,
                        convert_to_tensor(n_from).handle if n_from is not None else None, attrs)
    stacked = iter(Operation(_Symbol(out), "pfor", node, [], graph).outputs)
    return nest.pack_sequence_as(result, [None if v is None else next(stacked) for v in leaves])


def _iterations(iters):
    if isinstance(iters, int) or hasattr(iters, "__index__"):
        return int(iters)
    raise TypeError("pfor: iters must be a Python int in tinyflow (got %r); vectorized_map takes a batch whose "
                    "size is known only when the graph runs" % (iters,))


def pfor(loop_fn, iters, fallback_to_while_loop=True, parallel_iterations=None):
    """Equivalent to stacking loop_fn(i) for i in range(iters), vectorized: loop_fn(i) returns a
    tensor or a nested structure of tensors (None leaves stay None); each output gets a leading
    axis of iters. An op without a converter runs as a loop and is reported in the session's
    pfor_fallbacks (fallback_to_while_loop=False is accepted: check that list instead)."""
    return _pfor(loop_fn, _iterations(iters), parallel_iterations=parallel_iterations)


def for_loop(loop_fn, loop_fn_dtypes, iters, parallel_iterations=None):
    """pfor run as a loop, one body run per iteration (TF's for_loop; loop_fn_dtypes is not needed)."""
    return _pfor(loop_fn, _iterations(iters), vectorize=False, parallel_iterations=parallel_iterations,
                 name="for_loop")


def _static_dims(tensor, what):
    shape = tensor.shape
    if shape.dims is None:
        raise ValueError("%s: the rank of %s must be known" % (what, tensor.name))
    return shape.dims


def _reshape_known(tensor, dims):
    """tensor reshaped to dims (one unknown dim allowed: -1); unchanged when more are unknown."""
    if sum(d is None for d in dims) > 1:
        return tensor
    return reshape(tensor, [-1 if d is None else d for d in dims])


def jacobian(output, inputs, use_pfor=True, parallel_iterations=None):
    """d output / d inputs: for each x in inputs (a tensor or a nested structure), a tensor of shape
    output.shape + x.shape; one pfor over output's elements (use_pfor=False: the same loop, not
    vectorized). output's shape must be fully known. Unconnected inputs give zeros."""
    output = convert_to_tensor(output)
    out_dims = _static_dims(output, "jacobian")
    if any(d is None for d in out_dims):
        raise ValueError("jacobian: the shape of output %s must be fully known in tinyflow, got %s"
                         % (output.name, output.shape))
    flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
    size = int(TensorShape(out_dims).num_elements())
    flat_output = reshape(output, [-1])
    stacked = _pfor(lambda i: gradients(gather(flat_output, i), flat_inputs, unconnected_gradients="zero"), size,
                    vectorize=use_pfor,
                    parallel_iterations=parallel_iterations, name="jacobian")
    results = [_reshape_known(j, out_dims + _static_dims(x, "jacobian")) for j, x in zip(stacked, flat_inputs)]
    return nest.pack_sequence_as(inputs, results)


def batch_jacobian(output, inp, use_pfor=True, parallel_iterations=None):
    """For output [b, ...] where row i depends only on row i of inp [b, ...]: the jacobian of each
    row, shape [b] + output.shape[1:] + inp.shape[1:]; one pfor over the columns of output."""
    output, inp = convert_to_tensor(output), convert_to_tensor(inp)
    out_dims, in_dims = _static_dims(output, "batch_jacobian"), _static_dims(inp, "batch_jacobian")
    if len(out_dims) < 1 or len(in_dims) < 1:
        raise ValueError("batch_jacobian: output and inp need a batch axis (got shapes %s and %s)"
                         % (output.shape, inp.shape))
    if any(d is None for d in out_dims[1:]):
        raise ValueError("batch_jacobian: output %s must have a known shape past its batch axis, got %s"
                         % (output.name, output.shape))
    row = int(TensorShape(out_dims[1:]).num_elements())
    rows = reshape(output, [-1, row])
    stacked = _pfor(lambda j: gradients(gather(rows, j, axis=1), [inp], unconnected_gradients="zero")[0], row,
                    vectorize=use_pfor,
                    parallel_iterations=parallel_iterations, name="batch_jacobian")
    batch_major = transpose(stacked, [1, 0] + list(range(2, len(in_dims) + 1)))
    batch = out_dims[0] if out_dims[0] is not None else in_dims[0]
    return _reshape_known(batch_major, [batch] + out_dims[1:] + in_dims[1:])


def vectorized_map(fn, elems, fallback_to_while_loop=True):
    """fn applied to each row of elems (a tensor or a nested structure of tensors with the same
    leading dim, which may be unknown until the graph runs), results stacked: a pfor over the rows."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("vectorized_map: elems has no tensors")
    n = _static_dims(flat[0], "vectorized_map")[0] if flat[0].shape.dims else None
    rows = lambda i: nest.pack_sequence_as(elems, [gather(e, i) for e in flat])  # noqa: E731
    return _pfor(lambda i: fn(rows(i)), n, n_from=flat[0] if n is None else None, name="vectorized_map")


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """For each x in xs: the hessian of sum(ys) with respect to x, shape x.shape + x.shape (a
    jacobian of the gradient, vectorized)."""
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    return [jacobian(g, x) for g, x in zip(gradients(ys, xs, unconnected_gradients="zero"), xs)]
