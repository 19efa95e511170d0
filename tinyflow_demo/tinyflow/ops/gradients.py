"""tf.gradients over the library's reverse-mode Gradient pass (IRSymbolGradientEx)."""
import json

from .. import framework as _framework
from .._lib import C
from ..framework import Operation, Tensor, _Symbol, convert_to_tensor, get_default_graph

__all__ = ["gradients"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """d(sum of ys)/d(x) for each x in xs (a list, in order); grad_ys are the head gradients. The
    forward graph is differentiated as written: the rewrite rules run when a Session binds the
    graph (Session(simplify=...)), over the gradient as over the forward graph, as TF's grappler.
    As TF, an x that no y depends on, and an integer x, get None (unconnected_gradients="zero":
    zeros like x); stop_gradients: tensors the gradient treats as constants (not flowing through them)."""
    if _framework._EAGER is not None:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError("Unknown value for unconnected_gradients: %r" % (unconnected_gradients,))
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [convert_to_tensor(x) for x in _as_list(xs)]
    if grad_ys is not None and len(_as_list(grad_ys)) != len(ys):
        raise ValueError("Passed %d grad_ys for %d ys" % (len(_as_list(grad_ys)), len(ys)))
    graph = get_default_graph()
    for t in ys + xs:
        if t.graph is not graph:
            raise ValueError("Tensor %s must be from the same graph as the default graph." % t)
    differentiable = [x.dtype is None or not x.dtype.is_integer for x in xs]
    results = [None] * len(xs)
    wanted = [x for x, d in zip(xs, differentiable) if d]
    stops = [convert_to_tensor(t) for t in _as_list(stop_gradients)] if stop_gradients is not None else []
    grads = _gradient_tensors(graph, ys, wanted, grad_ys, name, stops) if wanted else []
    for i, grad in zip([i for i, d in enumerate(differentiable) if d], grads):
        results[i] = grad
    if unconnected_gradients == "zero":
        from .array_ops import zeros_like
        results = [g if g is not None else zeros_like(x) for g, x in zip(results, xs)]
    return results


def _gradient_tensors(graph, ys, xs, grad_ys, name, stops):
    """The gradient tensors of xs (None where no y depends on the x: the pass gave it zeros)."""
    head = None
    if grad_ys is not None:
        grad_ys = [convert_to_tensor(g) if g is not None else None for g in _as_list(grad_ys)]
        if any(g is None for g in grad_ys):
            from .array_ops import ones_like
            grad_ys = [g if g is not None else ones_like(y) for g, y in zip(grad_ys, ys)]
        for g, y in zip(grad_ys, ys):
            if g.shape.dims is not None and y.shape.dims is not None and not g.shape.is_compatible_with(y.shape):
                raise ValueError("Incompatible shapes between op input and calculated input gradient. Forward "
                                 "operation: %s. Input index: 0. Original input shape: %s. Calculated input "
                                 "gradient shape: %s" % (y.op.name, y.shape, g.shape))
        head = _Symbol.group([g._symbol for g in grad_ys])
    y_group = _Symbol.group([y._symbol for y in ys])
    x_group = _Symbol.group([x._symbol for x in xs])
    options = {"stop_nodes": [t.op.name for t in stops]} if stops else {}
    grads = _Symbol(C.symbol_gradient(y_group.handle, x_group.handle, head.handle if head is not None else None,
                                      json.dumps(options)))
    results, reached = [], None
    for i, x in enumerate(xs):
        symbol = grads.output(i)
        if _is_zero_gradient(symbol):  # the pass's zeros: None when no y depends on x (not just simplified away)
            reached = _reached_ops(ys, stops) if reached is None else reached
            if reached is not True and x.op not in reached:
                results.append(None)
                continue
        op = _GradientOp(symbol, graph.unique_name("%s/%s" % (name, x.op.name)), graph, ys + xs)
        results.append(op.outputs[0])
    return results


# Ops whose outputs carry no gradient to their inputs (TF registers None or no gradient for them).
_NO_GRADIENT = frozenset(["stop_gradient", "shape", "size", "rank", "zeros_like", "ones_like", "argmax", "argmin",
                          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
                          "logical_or", "logical_not", "one_hot", "equal_scalar", "not_equal_scalar",
                          "greater_scalar", "greater_equal_scalar", "less_scalar", "less_equal_scalar",
                          "logical_and_scalar", "logical_or_scalar"])


def _casts_to_integer(op):
    """A cast to an integer or bool dtype: TF's Cast passes no gradient then (nor does the library's)."""
    if op.type != "cast":
        return False
    dtype = op.outputs[0].dtype
    return dtype is not None and not dtype.is_floating


def _reached_ops(ys, stops=()):
    """The operations a gradient of ys can flow back to (True when some op hides its inputs: assume all)."""
    stopped = set(t.op for t in stops)
    seen, stack = set(), [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type in _NO_GRADIENT or _casts_to_integer(op):
            continue
        if op.type in ("pfor",) or (op.type == "Gradient" and not op.inputs):
            return True
        if op not in stopped:  # a stop is reached, what computes it is not
            stack.extend(t.op for t in op.inputs)
    return seen


def _is_zero_gradient(symbol):
    """Whether a gradient is the Gradient pass's "<x>_zero_grad" node (no gradient reached x)."""
    names = C.symbol_output_names(symbol.handle)
    return len(names) == 1 and names[0].endswith("_zero_grad")


class _GradientOp(Operation):
    """The node computing one gradient (built by the Gradient pass, so it has no Python inputs)."""

    def __init__(self, symbol, name, graph, inputs=()):
        self._symbol = symbol
        self.type = "Gradient"
        self.name = name
        self.inputs = list(inputs)  # what it is computed from (the ys and xs), for reachability
        self.graph = graph
        graph._ops[name] = self
        self.outputs = [Tensor(self, 0, symbol)]
