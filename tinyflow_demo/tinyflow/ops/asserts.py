"""TF 1.x run-time assertions: tf.Assert, tf.assert_equal / _less / _positive / ..., tf.assert_rank,
tf.assert_type, tf.check_numerics, tf.verify_tensor_all_finite (also under tf.debugging).

An assertion is an Operation (a host callback, see py_func.py) that checks its condition when it runs and
fails the run with tf.errors.InvalidArgumentError ("assertion failed: ...", then the data) otherwise; run it
or make it a control dependency, as in TF. Values known when the graph is built (Python numbers, NumPy
arrays) are checked at once and raise InvalidArgumentError there, as TF's static checks do; rank and dtype
checks are static when the shape / dtype is known (assert_rank of an unknown rank checks at run time).
"""
import numpy as np

from .. import dtypes as _dtypes
from .. import errors as _errors
from ..framework import Tensor, control_dependencies, convert_to_tensor

__all__ = ["Assert", "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_rank", "assert_rank_at_least", "assert_type", "assert_integer",
           "check_numerics", "verify_tensor_all_finite"]


def _format(values, summarize):
    parts = []
    for v in values:
        if isinstance(v, (str, bytes)):
            parts.append(v.decode() if isinstance(v, bytes) else v)
        else:
            arr = np.asarray(v)
            flat = arr.reshape(-1)
            shown = flat if summarize is None or summarize < 0 else flat[:summarize]
            parts.append("[%s%s]" % (" ".join(str(x) for x in shown), "..." if shown.size < flat.size else ""))
    return " ".join(parts)


def _raise(data_values, summarize):
    raise _errors.InvalidArgumentError(None, None, "assertion failed: " + _format(data_values, summarize))


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 (TF's name)
    """An Operation that fails its run with InvalidArgumentError (showing `data`) when `condition` is false."""
    from .py_func import py_func
    data = list(data)
    if not isinstance(condition, Tensor):
        if not bool(np.all(condition)):
            _raise(data, summarize)
        condition = convert_to_tensor(bool(np.all(condition)))
    strings = {i: d for i, d in enumerate(data) if isinstance(d, (str, bytes))}
    tensors = [convert_to_tensor(d) for i, d in enumerate(data) if i not in strings]

    def check(cond, *values):
        if not bool(np.all(cond)):
            it = iter(values)
            _raise([strings[i] if i in strings else next(it) for i in range(len(data))], summarize)
        return np.zeros((), np.bool_)
    return py_func(check, [condition] + tensors, _dtypes.bool, name=name or "Assert").op


def _binary_assert(symbol, fn):
    def assertion(x, y, data=None, summarize=None, message=None, name=None):
        static = not isinstance(x, Tensor) and not isinstance(y, Tensor)
        if data is None:
            data = ["Condition x %s y did not hold element-wise:" % symbol, "x = ", x, "y = ", y]
        if message is not None:
            data = [message] + list(data)
        if static:
            if not bool(np.all(fn(np.asarray(x), np.asarray(y)))):
                _raise(data, summarize)
            from .state_ops import no_op
            return no_op(name=name)
        x_t, y_t = convert_to_tensor(x), convert_to_tensor(y, dtype=convert_to_tensor(x).dtype)
        from .py_func import py_func
        cond = py_func(lambda a, b: np.asarray(np.all(fn(a, b))), [x_t, y_t], _dtypes.bool)
        return Assert(cond, [d if not (d is x or d is y) else (x_t if d is x else y_t) for d in data],
                      summarize=summarize, name=name)
    assertion.__name__ = "assert_" + {"==": "equal", "!=": "none_equal", "<": "less", "<=": "less_equal",
                                      ">": "greater", ">=": "greater_equal"}[symbol]
    assertion.__doc__ = "An assertion that x %s y holds element-wise (broadcasting)." % symbol
    return assertion


assert_equal = _binary_assert("==", np.equal)
assert_none_equal = _binary_assert("!=", np.not_equal)
assert_less = _binary_assert("<", np.less)
assert_less_equal = _binary_assert("<=", np.less_equal)
assert_greater = _binary_assert(">", np.greater)
assert_greater_equal = _binary_assert(">=", np.greater_equal)


def _sign_assert(symbol, binary):
    def assertion(x, data=None, summarize=None, message=None, name=None):
        if data is None:
            data = ["Condition x %s 0 did not hold element-wise:" % symbol, "x = ", x]
        zero = 0 if not isinstance(x, Tensor) else convert_to_tensor(0, dtype=x.dtype)
        return binary(x, zero, data=data, summarize=summarize, message=message, name=name)
    return assertion


assert_positive = _sign_assert(">", assert_greater)
assert_negative = _sign_assert("<", assert_less)
assert_non_negative = _sign_assert(">=", assert_greater_equal)
assert_non_positive = _sign_assert("<=", assert_less_equal)


def _rank_assert(x, rank, ok, what, message, name):
    from .state_ops import no_op
    x = convert_to_tensor(x)
    prefix = (message + " ") if message else ""
    if x.shape.ndims is not None:
        if not ok(x.shape.ndims, rank):
            raise ValueError("%sTensor %s must have rank %s%d. Received rank %d, shape %s"
                             % (prefix, x.name, what, rank, x.shape.ndims, x.shape))
        return no_op(name=name)
    from .array_ops import rank as _rank
    from .py_func import py_func
    cond = py_func(lambda r: np.asarray(ok(int(r), rank)), [_rank(x)], _dtypes.bool)
    return Assert(cond, ["%sTensor %s must have rank %s%d." % (prefix, x.name, what, rank)], name=name)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Static when x's rank is known (ValueError, as TF), else checked at run time."""
    return _rank_assert(x, int(rank), lambda r, k: r == k, "", message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    return _rank_assert(x, int(rank), lambda r, k: r >= k, "at least ", message, name)


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError at once when tensor's dtype is not tf_type (TF: a static check)."""
    from .state_ops import no_op
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != _dtypes.as_dtype(tf_type):
        raise TypeError("%s%s must be of type %s" % ((message + " ") if message else "", tensor.name,
                                                      _dtypes.as_dtype(tf_type).name))
    return no_op(name=name)


def assert_integer(x, message=None, name=None):
    from .state_ops import no_op
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError("%sExpected \"x\" to be integer type.  Found: %s of dtype %s"
                        % ((message + " ") if message else "", x.name, x.dtype.name))
    return no_op(name=name)


def check_numerics(tensor, message, name=None):
    """`tensor` (its gradient passes through) after checking it has no NaN / Inf: InvalidArgumentError
    "<message> : Tensor had NaN values" (or Inf) otherwise."""
    from .array_ops import identity
    from .py_func import py_func
    tensor = convert_to_tensor(tensor)

    def check(v):
        if np.isnan(v).any():
            raise _errors.InvalidArgumentError(None, None, "%s : Tensor had NaN values" % message)
        if np.isinf(v).any():
            raise _errors.InvalidArgumentError(None, None, "%s : Tensor had Inf values" % message)
        return np.zeros((), np.bool_)
    checked = py_func(check, [tensor], _dtypes.bool, name="CheckNumerics")
    with control_dependencies([checked.op]):
        return identity(tensor, name=name)


def verify_tensor_all_finite(t, msg, name=None):
    return check_numerics(t, msg, name=name)
