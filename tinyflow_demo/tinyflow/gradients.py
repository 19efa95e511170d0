"""tf.gradients over the library's reverse-mode Gradient pass (IRSymbolGradientEx).

Gradients are taken of the forward graph as the rewrite rules simplify it (a softmax
cross-entropy written by hand gets the fused op's stable gradient). The rules used are the
graph's: `with tf.rewrite_gradients(simplify=False):` (or fast_math=True, rule_sets=[...])
around tf.gradients / minimize / compute_gradients changes them for what is built inside.
"""
import contextlib
import ctypes

from ._lib import LIB, check_call
from .framework import Operation, Tensor, _Symbol, convert_to_tensor, get_default_graph

__all__ = ["gradients", "rewrite_gradients"]


@contextlib.contextmanager
def rewrite_gradients(simplify=True, fast_math=False, rule_sets=None):
    """The rewrite rules gradients built inside this block are taken with (tinyflow extension).

    simplify=False: differentiate the forward graph as written; fast_math=True: the fast_math
    rules too; rule_sets: the sets to use (None: all). tf.Session(simplify=...) decides what the
    session's own Simplify pass does to the graph it runs, gradients included.
    """
    graph = get_default_graph()
    saved = graph.gradient_rewrites
    graph.gradient_rewrites = {"simplify": bool(simplify), "fast_math": bool(fast_math),
                               "rule_sets": list(rule_sets) if rule_sets is not None else None}
    try:
        yield
    finally:
        graph.gradient_rewrites = saved


def _gradient_options():
    """IRSymbolGradientEx's key/value arrays from the default graph's gradient_rewrites."""
    opts = get_default_graph().gradient_rewrites
    pairs = [("simplify", "1" if opts["simplify"] else "0"), ("fast_math", "1" if opts["fast_math"] else "0")]
    if opts.get("rule_sets") is not None:
        pairs.append(("rule_sets", ",".join(opts["rule_sets"])))
    keys = (ctypes.c_char_p * len(pairs))(*[k.encode() for k, _ in pairs])
    vals = (ctypes.c_char_p * len(pairs))(*[v.encode() for _, v in pairs])
    return len(pairs), keys, vals


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None):
    """d(sum of ys)/d(x) for each x in xs (a list, in order); grad_ys are the head gradients."""
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
    num, keys, vals = _gradient_options()
    check_call(LIB.IRSymbolGradientEx(y_group.handle, x_group.handle, head.handle if head is not None else None,
                                      ctypes.c_uint32(num), keys, vals, ctypes.byref(out)))
    grads = _Symbol(out)
    graph = get_default_graph()
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
