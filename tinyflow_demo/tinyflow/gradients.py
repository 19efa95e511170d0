"""tf.gradients over the library's reverse-mode Gradient pass (IRSymbolGradientEx)."""
import ctypes
import json

from . import framework as _framework
from ._lib import LIB, c_str, check_call
from .framework import Operation, Tensor, _Symbol, convert_to_tensor, get_default_graph

__all__ = ["gradients"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None):
    """d(sum of ys)/d(x) for each x in xs (a list, in order); grad_ys are the head gradients. The
    forward graph is first simplified by the rewrite rules the default graph's rewrite_options
    select (default: the exact and real rules), so the gradient is taken of the simplified graph."""
    if _framework._EAGER is not None:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [convert_to_tensor(x) for x in _as_list(xs)]
    head = None
    if grad_ys is not None:
        grad_ys = [convert_to_tensor(g) if g is not None else None for g in _as_list(grad_ys)]
        if any(g is None for g in grad_ys):
            from .array_ops import ones_like
            grad_ys = [g if g is not None else ones_like(y) for g, y in zip(grad_ys, ys)]
        head = _Symbol.group([g._symbol for g in grad_ys])
    out = ctypes.c_void_p()
    y_group = _Symbol.group([y._symbol for y in ys])  # named: the handles must outlive the call
    x_group = _Symbol.group([x._symbol for x in xs])
    graph = get_default_graph()
    options = c_str(json.dumps(graph._gradient_options()))
    check_call(LIB.IRSymbolGradientEx(y_group.handle, x_group.handle, head.handle if head is not None else None,
                                      options, ctypes.byref(out)))
    grads = _Symbol(out)
    results = []
    for i, x in enumerate(xs):
        symbol = grads.output(i)
        op = _GradientOp(symbol, graph.unique_name("%s/%s" % (name, x.op.name)), graph)
        results.append(op.outputs[0])
    return results


class _GradientOp(Operation):
    """The node computing one gradient (built by the Gradient pass, so it has no Python inputs)."""

    def __init__(self, symbol, name, graph):
        self._symbol = symbol
        self.type = "Gradient"
        self.name = name
        self.inputs = []
        self.graph = graph
        self.outputs = [Tensor(self, 0, symbol)]
