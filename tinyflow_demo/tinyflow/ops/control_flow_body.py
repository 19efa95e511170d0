"""Tracing control-flow bodies: a Python function becomes a closed IR subgraph.

A _Body is pushed on the graph while the user's function runs. Every op built then is tagged with
it (Operation._body); framework.apply_op hands the op's inputs to capture_inputs, which replaces a
tensor built outside the body by a param of the body (memoized): the outer tensor becomes an
extra input of the cond / an extra loop variable of the while_loop. A body nested in a body
captures through each level. The one exception is the IR's: a tf.Variable as the mutated input
(input 0) of assign / assign_add / assign_sub stays the variable itself (the session's variable).
"""

from .._lib import C
from ..framework import (Operation, TensorShape, Variable, _format_attr, _shape_text, _Symbol,
                        convert_to_tensor, get_default_graph)

__all__ = []

_MUTATING_OPS = frozenset(["assign", "assign_add", "assign_sub"])


def _body_of(tensor):
    return getattr(tensor.op, "_body", None)


class _Body(object):
    """One body being traced: its params (in order) and the outer tensors it captured."""

    def __init__(self, graph, scope):
        self.graph = graph
        self.scope = scope  # params are named scope/arg_<i>
        self.parent = graph._body_stack[-1] if graph._body_stack else None
        self.params = []
        self.captures = []  # outer tensors (of the parent level), in capture order
        self._captured = {}  # id(outer tensor) -> its param

    def __enter__(self):
        self._saved_controls = self.graph._control_stack
        self.graph._control_stack = []  # outer control dependencies do not reach into a body
        self.graph._body_stack.append(self)
        return self

    def __exit__(self, *exc):
        self.graph._body_stack.pop()
        self.graph._control_stack = self._saved_controls
        return False

    def new_param(self, like, shape=None):
        """A fresh param variable with `like`'s dtype and `shape` (default: like's shape) as hints."""
        shape = like.shape if shape is None else shape
        attrs = {"__dtype__": like.dtype.name}
        if shape.dims is not None:
            attrs["__shape__"] = _shape_text(shape.dims)
        name = self.graph.unique_name("%s/arg_%d" % (self.scope, len(self.params)))
        symbol = _Symbol(C.symbol_variable(name, attrs))
        op = Operation(symbol, "_Param", name, [], self.graph)
        op._body = self
        param = op.outputs[0]
        param._inferred = (shape, like.dtype)
        self.params.append(param)
        return param

    def _is_enclosing(self, body):
        level = self
        while level is not None:
            if level is body:
                return True
            level = level.parent
        return body is None

    def capture(self, tensor):
        """`tensor` as seen inside this body: itself when built here, else a param standing for it."""
        owner = _body_of(tensor)
        if owner is self:
            return tensor
        if not self._is_enclosing(owner):
            raise ValueError("Tensor %s was built inside another cond/while_loop body (%s) and cannot be used "
                             "in %s: return it from its body instead" % (tensor.name, owner.scope, self.scope))
        outer = tensor if owner is self.parent else self.parent.capture(tensor)
        param = self._captured.get(id(outer))
        if param is None:
            param = self.new_param(outer)
            self._captured[id(outer)] = param
            self.captures.append(outer)
        return param

    def capture_inputs(self, op_type, inputs):
        """The inputs of a new op of this body, outer tensors replaced by params."""
        return [x if i == 0 and op_type in _MUTATING_OPS and isinstance(x, Variable) else self.capture(x)
                for i, x in enumerate(inputs)]

    def params_for(self, outer_tensors):
        """This body's param of each outer tensor: the captured one, or a fresh unused param."""
        params = []
        for x in outer_tensors:
            if id(x) not in self._captured:
                self._captured[id(x)] = self.new_param(x)
            params.append(self._captured[id(x)])
        return params


def union_captures(bodies):
    """The outer tensors any of `bodies` captured, each once, in first-capture order."""
    seen, extras = set(), []
    for body in bodies:
        for x in body.captures:
            if id(x) not in seen:
                seen.add(id(x))
                extras.append(x)
    return extras


def body_output(body, value, dtype=None):
    """A body result as a tensor of the body: an Operation becomes a dummy scalar run after it."""
    if isinstance(value, Operation):
        from .array_ops import identity
        from ..framework import constant, control_dependencies
        with body, control_dependencies([value]):
            return identity(constant(0, dtype="int32"), name="op_done")
    with body:
        value = convert_to_tensor(value, dtype=dtype)
        return body.capture(value)


def create_control_flow(op_name, name, inputs, bodies, attrs=None):
    """The IR node op_name(inputs) over bodies [(params, outputs)]: an Operation named `name`."""
    graph = get_default_graph()
    if graph._body_stack:  # the node itself may sit in an enclosing body
        inputs = graph._body_stack[-1].capture_inputs(op_name, inputs)
    attrs = {k: _format_attr(v) for k, v in (attrs or {}).items() if v is not None}
    params = [p for body_params, _ in bodies for p in body_params]
    outputs = [_Symbol.group([t._symbol for t in outs]) for _, outs in bodies]
    out = C.symbol_control_flow(op_name, name, attrs, [x.handle for x in inputs], [len(b[0]) for b in bodies],
                                [p.handle for p in params], [o.handle for o in outputs])
    return Operation(_Symbol(out), op_name, name, inputs, graph)


def static_shape(tensor):
    """tensor's shape as far as the library infers it (TensorShape(None) when inference fails)."""
    try:
        return tensor.shape
    except Exception:  # an op whose inference needs run-time values
        return TensorShape(None)

