"""The graph-construction shape check of apply_op, as TF's: an op's inference run when it is built,
its failure a ValueError in TF's words naming the op and its input shapes."""

import re

from . import dtypes as _dtypes
from ._hooks import hook as _hook
from ._lib import C, TinyflowError
from ._symbol import _Symbol, _op_handle, _variable_symbol
from .tensor_shape import _shape_text


_SHAPE_ERROR = [(re.compile(r"inner dimensions (\d+) and (\d+) do not match"),
                 "Dimensions must be equal, but are %s and %s"),
                (re.compile(r"cannot be broadcast together \(dimension \d+: (\d+) vs (\d+)\)"),
                 "Dimensions must be equal, but are %s and %s")]


def _check_static_shapes(op, op_type, keys, attrs, inputs):
    """Graph-construction shape check, as TF's: the op's inference run on a graph of the op alone, its
    inputs placeholders of their construction-time shapes (so each op costs the same, however big the
    graph). Those shapes are kept per tensor (_construct), and a failure is confirmed on the whole graph
    (inference there sees more, e.g. values) before it raises ValueError naming the op and input shapes."""
    known = [x._inferred if x._inferred is not None else x._construct for x in inputs]
    if op.graph._body_stack or (inputs and all(k is None for k in known)) or op_type == "constant":
        return  # (a constant's shape is set from its value; its attributes may be large)
    if any(k is not None and k[1] is not None and not k[1].is_supported for k in known):
        return  # a dtype the core lacks (uint8, string): the run names it (dtypes.DType.enum)
    args = []
    for i, k in enumerate(known):
        hints = {"__kind__": "placeholder"}
        if k is not None and k[0].dims is not None:
            hints["__shape__"] = _shape_text(k[0].dims)
        if k is not None and k[1] is not None:
            hints["__dtype__"] = k[1].name
        args.append(_variable_symbol("in%d" % i, hints))
    probe = _Symbol(C.symbol_op(_op_handle(op_type), {k: attrs[k] for k in keys}, op.name, [a.handle for a in args]))
    ir = _hook("ir")
    try:
        g = ir.Graph(probe).apply_pipeline("infer")
    except TinyflowError as err:
        try:
            op.outputs[0]._infer()
        except TinyflowError:
            raise ValueError(_shape_error_text(str(err), op, known))
        return
    shapes, dtypes = g.attr("shape"), g.attr("dtype")
    n = len(op.outputs)
    for t, shape, dtype in zip(op.outputs, shapes[-n:], dtypes[-n:]):
        t._construct = (ir.parse_shape(shape), None if dtype in (None, "unknown", -1) else _dtypes.as_dtype(dtype))


def _shape_error_text(message, op, known):
    message = re.sub(r"^pass '\w+': ", "", message)
    for pattern, text in _SHAPE_ERROR:
        match = pattern.search(message)
        if match:
            message = text % match.groups()
            break
    shapes = ", ".join("?" if k is None or k[0].dims is None else _shape_text(k[0].dims) for k in known)
    return "%s for '%s' (op: '%s') with input shapes: %s." % (message, op.name, op.type, shapes)
