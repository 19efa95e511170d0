"""TF1 control flow: tf.cond, tf.case and tf.while_loop over the IR's cond and while_loop ops.

Each branch / loop function is traced once into a closed body (control_flow_body): tensors it
reads from outside become extra cond inputs / extra loop variables automatically. Loop variables
and branch results are any nested structure (lists, tuples, namedtuples, dicts) of tensors and
TensorArrays (a TensorArray travels as its flow tensor).
"""
import contextlib

import numpy as np

from . import array_ops
from .. import nest
from .. import dtypes as _dtypes
from .. import framework as _framework
from .control_flow_body import _Body, body_output, create_control_flow, static_shape, union_captures
from ..framework import Operation, Tensor, TensorShape, convert_to_tensor, get_default_graph

__all__ = ["cond", "case", "while_loop"]


@contextlib.contextmanager
def _scope(graph, scope):
    """Names ops built inside a body under `scope` (the node's name/branch)."""
    saved = graph._name_stack
    graph._name_stack = [scope]
    try:
        yield
    finally:
        graph._name_stack = saved


def _flow(value, dtype=None):
    """A loop/branch value as a tensor: a TensorArray's flow, else the value converted."""
    flow = getattr(value, "_flow_for_loop", None)
    return flow() if flow is not None else convert_to_tensor(value, dtype=dtype)


def _rewrap(like, tensor):
    """`tensor` standing for `like` (a TensorArray over the new flow, or the tensor)."""
    with_flow = getattr(like, "_with_flow", None)
    return with_flow(tensor) if with_flow is not None else tensor


def _trace_branch(graph, scope, fn, strict, what):
    """(body, result structure, flat body outputs, which leaves were Operations) of fn(); TF1's
    ValueError when fn returns None, singletons unpacked unless strict."""
    body = _Body(graph, scope)
    with _scope(graph, scope), body:
        result = fn()
    if result is None:
        raise ValueError("%s must have a return value." % what)
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1:
        result = result[0]
    leaves = nest.flatten(result)
    outputs = [body_output(body, _flow(v) if not isinstance(v, Operation) else v) for v in leaves]
    return body, result, outputs, [isinstance(v, Operation) for v in leaves]


def _predicate(pred, node):
    """cond's predicate as a scalar bool tensor; TF1's errors (its Switch takes a bool) otherwise."""
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    pred = convert_to_tensor(pred)
    if pred.dtype != _dtypes.bool:
        raise TypeError("Input 'pred' of 'Switch' Op has type %s that does not match expected type of bool (%s)."
                        % (pred.dtype.name, node))
    dims = static_shape(pred).dims
    if dims is not None and len(dims) != 0:
        raise ValueError("Shape must be rank 0 but is rank %d for '%s/Switch' (op: 'Switch'): the predicate %s has "
                         "shape %s" % (len(dims), node, pred.name, pred.shape))
    return pred


def _check_same_structure(then_result, else_result, node):
    """TF1's errors for branches whose results differ in structure (a dict's keys included)."""
    try:
        nest.assert_same_structure(then_result, else_result)
    except TypeError as err:
        raise TypeError("Incompatible return types of true_fn and false_fn (%s): %s" % (node, err))
    except ValueError as err:
        raise ValueError("Incompatible return values of true_fn and false_fn (%s): %s" % (node, err))


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """true_fn() if pred else false_fn(); only the taken branch runs. Both must return the same
    structure of tensors (a branch may return an Operation, e.g. an assign or a tf.group)."""
    true_fn, false_fn = true_fn or fn1, false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable.")
    if _framework._EAGER is not None:  # eager: Python decides, only the taken branch is recorded
        return true_fn() if pred else false_fn()
    graph = get_default_graph()
    node = graph.unique_name(name or "cond")
    pred = _predicate(pred, node)
    then_body, then_result, then_out, is_op = _trace_branch(graph, node + "/then", true_fn, strict, "true_fn")
    else_body, else_result, else_out, _ = _trace_branch(graph, node + "/else", false_fn, strict, "false_fn")
    _check_same_structure(then_result, else_result, node)
    if not then_out:
        raise ValueError("true_fn and false_fn must return at least one result (%s)." % node)
    for t, e in zip(then_out, else_out):
        if t.dtype != e.dtype:
            raise ValueError("Outputs of true_fn and false_fn must have the same type: %s, %s (%s)"
                             % (t.dtype.name, e.dtype.name, node))
    extras = union_captures([then_body, else_body])
    op = create_control_flow("cond", node, [pred] + extras,
                             [(then_body.params_for(extras), then_out), (else_body.params_for(extras), else_out)])
    results = [op if was_op else _rewrap(like, t)
               for t, like, was_op in zip(op.outputs, nest.flatten(then_result), is_op)]
    return nest.pack_sequence_as(then_result, results)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The fn of the first pred that holds (else default()), as nested conds. Without default the
    last pair's fn is the default. exclusive is accepted but not checked at run time."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs and default is None:
        raise ValueError("case needs at least one (pred, fn) pair or a default")
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError("pred_fn_pairs must be (predicate, callable) pairs, got %r" % (pair,))
    if default is None:
        pairs, default = pairs[:-1], pairs[-1][1]

    def build(i):
        if i == len(pairs):
            return default()
        pred, fn = pairs[i]
        return cond(pred, fn, lambda: build(i + 1), strict=strict, name="%s_%d" % (name, i) if name else None)
    return build(0)


def _flatten_up_to(structure, values):
    """values (shaped like structure, its leaves anything, e.g. shapes) as a list, one per leaf."""
    if not nest.is_nested(structure):
        return [values]
    children = [structure[k] for k in sorted(structure)] if isinstance(structure, dict) else list(structure)
    given = [values[k] for k in sorted(structure)] if isinstance(structure, dict) else list(values)
    if len(given) != len(children):
        raise ValueError("shape_invariants must have the same structure as loop_vars")
    return [v for child, value in zip(children, given) for v in _flatten_up_to(child, value)]


def _as_shape(value):
    return value if isinstance(value, TensorShape) else TensorShape(None if value is None else list(value))


def _check_loop_var(node, var, out, invariant):
    """TF's errors for a loop variable whose dtype or (without an invariant) shape changes."""
    if out.dtype != var.dtype:
        raise ValueError("%s: loop variable %s enters the loop with dtype %s but the body returns dtype %s"
                         % (node, var.name, var.dtype.name, out.dtype.name))
    limit = invariant if invariant is not None else var.shape
    shape = static_shape(out)
    if limit.dims is None or shape.dims is None:
        return
    fits = len(shape.dims) == len(limit.dims) and all(
        want is None or (got is not None and got == want) for got, want in zip(shape.dims, limit.dims))
    if fits:
        return
    if invariant is None:
        raise ValueError("Input tensor '%s' enters the loop with shape %s, but has shape %s after one iteration. "
                         "To allow the shape to vary across iterations, use the `shape_invariants` argument of "
                         "tf.while_loop to specify a less-specific shape." % (var.name, var.shape, shape))
    raise ValueError("Input tensor '%s' enters the loop with shape %s, but has shape %s after one iteration, "
                     "which is not compatible with its shape invariant %s" % (var.name, var.shape, shape, invariant))


def _invariants_attr(inputs, invariants):
    """The shape_invariants attribute: one shape per loop variable, -1 for unknown dims."""
    shapes = [inv if inv is not None else x.shape for x, inv in zip(inputs, invariants)]
    if any(s.dims is None for s in shapes):
        raise ValueError("shape_invariants: tinyflow needs each loop variable's rank")
    return "[" + ",".join("[" + ",".join("-1" if d is None else str(d) for d in s.dims) + "]" for s in shapes) + "]"


def _call(fn, loop_vars, packed):
    return fn(*loop_vars) if packed else fn(loop_vars)


def _while_with_counter(cond, body, loop_vars, limit, packed, return_same_structure, **kwargs):
    """maximum_iterations given as a tensor: as TF1, a counter of its dtype is an extra loop variable
    and the condition becomes `counter < maximum_iterations and cond`."""
    from .math_ops import less, logical_and
    limit = convert_to_tensor(limit, name="maximum_iterations")
    if limit.shape.dims is not None and len(limit.shape.dims) != 0:
        raise ValueError("maximum_iterations must be a scalar, saw shape: %s" % limit.shape)
    if not limit.dtype.is_integer:
        # TF's while_v2 (what tf.compat.v1.while_loop builds since TF 2.0) takes an int32 bound.
        raise TypeError("maximum_iterations must be an integer, got %s" % limit.dtype.name)
    counter = convert_to_tensor(0, dtype=limit.dtype, name="iteration_counter")
    invariants = kwargs.pop("shape_invariants")
    if invariants is not None:
        invariants = (TensorShape([]), invariants)
    single = packed and len(loop_vars) == 1 and not return_same_structure  # TF1 unpacks one variable
    if single:
        loop_vars, packed = loop_vars[0], False
        invariants = invariants if invariants is None else (invariants[0], invariants[1][0])

    def step(lv):
        out = _call(body, lv, packed)
        return list(out) if packed and isinstance(out, (list, tuple)) else ([out] if packed else out)
    result = while_loop(lambda i, lv: logical_and(less(i, limit), _call(cond, lv, packed)),
                        lambda i, lv: (i + 1, step(lv)), (counter, list(loop_vars) if packed else loop_vars),
                        shape_invariants=invariants, return_same_structure=True, **kwargs)
    return type(loop_vars)(result[1]) if packed and isinstance(loop_vars, tuple) else result[1]


def _loop_condition(body, pred, node):
    """The condition's result as a body output; TF1's errors (its LoopCond takes a bool scalar) otherwise."""
    pred = body_output(body, pred)
    if pred.dtype != _dtypes.bool:
        raise TypeError("Input 'input' of 'LoopCond' Op has type %s that does not match expected type of bool (%s: "
                        "the loop condition must return a bool tensor)." % (pred.dtype.name, node))
    dims = static_shape(pred).dims
    if dims is not None and len(dims) != 0:
        raise ValueError("Shape must be rank 0 but is rank %d for '%s/LoopCond' (op: 'LoopCond'): the loop "
                         "condition returns shape %s" % (len(dims), node, pred.shape))
    return pred


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None, return_same_structure=False):
    """Repeats loop_vars = body(*loop_vars) while cond(*loop_vars); returns the final loop_vars.

    loop_vars: a (nested) list/tuple/namedtuple/dict of tensors and TensorArrays, or one tensor.
    A loop variable keeps its shape unless shape_invariants (same structure; None dims unknown)
    allows it to change. maximum_iterations: a scalar bounding the trip count as TF1's
    `counter < maximum_iterations` does (a negative bound runs no iteration; an int is the IR's
    attribute, an integer tensor an extra counter loop variable of its dtype; a float is a TypeError)."""
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable.")
    packed = isinstance(loop_vars, (list, tuple))
    if _framework._EAGER is not None:
        return _eager_while(cond, body, loop_vars, packed, maximum_iterations)
    if maximum_iterations is not None and not _is_int(maximum_iterations):
        return _while_with_counter(cond, body, loop_vars, maximum_iterations, packed, return_same_structure,
                                   shape_invariants=shape_invariants, back_prop=back_prop, name=name)
    leaves = nest.flatten(loop_vars)
    if not leaves:
        raise ValueError("No loop variables provided")
    graph = get_default_graph()
    node = graph.unique_name(name or "while")
    # A TensorArray entering before its first write with no element shape: its flow is known once
    # the body has been traced (the first write's value), so a stand-in of its dtype comes first.
    pending = [i for i, v in enumerate(leaves) if getattr(v, "_pending_flow", lambda: False)()]
    inputs = [array_ops.zeros([0], v.dtype) if i in pending else _flow(v) for i, v in enumerate(leaves)]
    invariants = [None] * len(leaves) if shape_invariants is None else \
        [None if s is None else _as_shape(s) for s in _flatten_up_to(loop_vars, shape_invariants)]
    for i in pending:
        invariants[i] = TensorShape(None)
    # A TensorArray whose element shape is partly unknown grows those dimensions at its first write.
    implicit = [getattr(v, "_loop_invariant", lambda: None)() for v in leaves]
    invariants = [inv if inv is not None else imp for inv, imp in zip(invariants, implicit)]

    def trace(scope, fn):
        traced = _Body(graph, node + "/" + scope)
        params = [traced.new_param(x, inv) for x, inv in zip(inputs, invariants)]
        args = nest.pack_sequence_as(loop_vars, [_rewrap(v, p) for v, p in zip(leaves, params)])
        with _scope(graph, traced.scope), traced:
            return traced, params, _call(fn, args, packed)
    cond_body, cond_params, pred = trace("cond", cond)
    pred = _loop_condition(cond_body, pred, node)
    loop_body, body_params, result = trace("body", body)
    if packed and not isinstance(result, (list, tuple)):
        result = [result]
    try:
        nest.assert_same_structure(list(loop_vars) if packed else loop_vars, list(result) if packed else result,
                                   check_types=False)
    except (TypeError, ValueError) as err:
        raise ValueError("%s: body must return the same structure as loop_vars: %s" % (node, err))
    for i in pending:
        inputs[i], invariants[i] = leaves[i]._entering_flow(_flow(nest.flatten(result)[i]))
    outputs = [body_output(loop_body, _flow(v, dtype=x.dtype)) for v, x in zip(nest.flatten(result), inputs)]
    for x, out, inv in zip(inputs, outputs, invariants):
        _check_loop_var(node, x, out, inv)
    extras = union_captures([cond_body, loop_body])
    attrs = {"back_prop": bool(back_prop)}
    if maximum_iterations is not None:
        attrs["maximum_iterations"] = min(max(0, int(maximum_iterations)), 2 ** 31 - 1)  # the IR: -1 is no bound
    if any(inv is not None for inv in invariants):
        attrs["shape_invariants"] = _invariants_attr(inputs + extras, invariants + [None] * len(extras))
    passed = loop_body.params_for(extras)
    op = create_control_flow("while_loop", node, inputs + extras,
                             [(cond_params + cond_body.params_for(extras), [pred]),
                              (body_params + passed, outputs + passed)], attrs)
    final = nest.pack_sequence_as(loop_vars, [_rewrap(v, t) for v, t in zip(leaves, op.outputs)])
    if packed and len(loop_vars) == 1 and not return_same_structure:
        return final[0]
    return final


def _eager_while(cond, body, loop_vars, packed, maximum_iterations):
    """while_loop in eager mode: a Python loop, each test of `cond` read to the host. As TF's, a body
    that returns one tensor for a one-element loop_vars makes the result that tensor."""
    limit = None if maximum_iterations is None else int(maximum_iterations)
    try_to_pack = packed and len(loop_vars) == 1
    unpacked = False  # (the body's result was one tensor: it is wrapped to call cond and body again)
    count = 0
    while (limit is None or count < limit) and _call(cond, loop_vars, packed):
        loop_vars = _call(body, loop_vars, packed)
        if try_to_pack and not isinstance(loop_vars, (list, tuple)):
            unpacked, loop_vars = True, (loop_vars,)
        count += 1
    return loop_vars[0] if unpacked else loop_vars
