"""Elementwise math, comparisons, reductions, matmul and cast (TF1 names over the library's ops)."""
import numbers

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from ..framework import Tensor, apply_op, convert_to_tensor

__all__ = ["add", "subtract", "multiply", "divide", "truediv", "div", "floordiv", "mod", "pow", "negative",
           "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square", "abs", "sign", "floor", "ceil", "round",
           "sin", "cos", "tanh", "sigmoid", "reciprocal", "maximum", "minimum", "equal", "not_equal", "greater",
           "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_not", "cast", "to_float",
           "to_int32", "to_int64", "argmax", "argmin", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
           "reduce_prod", "matmul", "add_n", "clip_by_value", "squared_difference", "binary_op", "sub", "mul",
           "scalar_mul"]


def _is_scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, np.ndarray) and x.ndim == 0) or \
        isinstance(x, np.generic)


def binary_op(op, scalar_op, rscalar_op, x, y, name=None):
    """op(x, y) with NumPy broadcasting; a Python scalar on either side folds into a `*_scalar` op (in
    eager mode it becomes a 0-d parameter instead, so its value is not part of the trace's key)."""
    if _framework._EAGER is not None:
        return _framework._EAGER.binary(op, x, y)
    if _is_scalar(y) and not _is_scalar(x):
        return apply_op(scalar_op, [x], {"scalar": float(y)}, name=name)
    if _is_scalar(x) and not _is_scalar(y):
        return apply_op(rscalar_op, [y], {"scalar": float(x)}, name=name)
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x = convert_to_tensor(x, dtype=y.dtype)
    if not isinstance(y, Tensor) and isinstance(x, Tensor):
        y = convert_to_tensor(y, dtype=x.dtype)
    return apply_op(op, [x, y], name=name)


def _binary(op, scalar_op, rscalar_op):
    def fn(x, y, name=None):
        return binary_op(op, scalar_op, rscalar_op, x, y, name=name)
    fn.__name__ = op
    return fn


add = _binary("add", "add_scalar", "add_scalar")
subtract = sub = _binary("subtract", "subtract_scalar", "rsubtract_scalar")
multiply = mul = _binary("multiply", "multiply_scalar", "multiply_scalar")
def _is_int_tensor(x):
    return isinstance(x, Tensor) and x.dtype is not None and x.dtype.is_integer


def _integer_division(op, scalar_op, rscalar_op):
    """op(x, y) where, as in TensorFlow, an integer division by zero raises InvalidArgumentError
    "Integer division by zero" when the graph runs (the library's own integer division is total: it
    gives 0), through a check_int_operand on the divisor."""
    def fn(x, y, name=None):
        if _framework._EAGER is None and (_is_int_tensor(x) or _is_int_tensor(y)):
            if not isinstance(y, Tensor) and _is_scalar(y) and y != 0:
                return binary_op(op, scalar_op, rscalar_op, x, y, name=name)  # a nonzero constant divisor
            if not isinstance(x, Tensor):
                x = convert_to_tensor(x, dtype=y.dtype)
            y = convert_to_tensor(y, dtype=x.dtype)
            if y.dtype.is_integer:
                y = apply_op("check_int_operand", [y], {"require": "nonzero", "message": "Integer division by zero"},
                             name="divisor")
        return binary_op(op, scalar_op, rscalar_op, x, y, name=name)
    fn.__name__ = op
    return fn


divide = truediv = div = _integer_division("divide", "divide_scalar", "rdivide_scalar")
floordiv = _integer_division("floor_divide", "floor_divide_scalar", "rfloor_divide_scalar")
mod = _integer_division("floor_mod", "floor_mod_scalar", "rfloor_mod_scalar")
pow = _binary("power", "power_scalar", "rpower_scalar")  # noqa: A001
maximum = _binary("maximum", "maximum_scalar", "maximum_scalar")
minimum = _binary("minimum", "minimum_scalar", "minimum_scalar")
equal = _binary("equal", "equal_scalar", "equal_scalar")
not_equal = _binary("not_equal", "not_equal_scalar", "not_equal_scalar")
greater = _binary("greater", "greater_scalar", "less_scalar")
greater_equal = _binary("greater_equal", "greater_equal_scalar", "less_equal_scalar")
less = _binary("less", "less_scalar", "greater_scalar")
less_equal = _binary("less_equal", "less_equal_scalar", "greater_equal_scalar")
logical_and = _binary("logical_and", "logical_and_scalar", "logical_and_scalar")
logical_or = _binary("logical_or", "logical_or_scalar", "logical_or_scalar")


def scalar_mul(scalar, x, name=None):
    return multiply(x, scalar, name=name)


def _unary(op):
    def fn(x, name=None):
        return apply_op(op, [x], name=name)
    fn.__name__ = op
    return fn


negative = _unary("negative")
exp = _unary("exp")
log = _unary("log")
log1p = _unary("log1p")
expm1 = _unary("expm1")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
square = _unary("square")
abs = _unary("abs")  # noqa: A001
sign = _unary("sign")
floor = _unary("floor")
ceil = _unary("ceil")
round = _unary("round")  # noqa: A001
sin = _unary("sin")
cos = _unary("cos")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
reciprocal = _unary("reciprocal")
logical_not = _unary("logical_not")


def squared_difference(x, y, name=None):
    return square(subtract(x, y), name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    if isinstance(clip_value_min, Tensor) or isinstance(clip_value_max, Tensor):  # TF's min then max
        return maximum(minimum(t, clip_value_max), clip_value_min, name=name)
    return apply_op("clip", [t], {"a_min": float(clip_value_min), "a_max": float(clip_value_max)}, name=name)


def cast(x, dtype, name=None):
    x = convert_to_tensor(x)
    return apply_op("cast", [x], {"dtype": _dtypes.as_dtype(dtype).name}, name=name)


def to_float(x, name=None):
    return cast(x, _dtypes.float32, name=name)


def to_int32(x, name=None):
    return cast(x, _dtypes.int32, name=name)


def to_int64(x, name=None):
    return cast(x, _dtypes.int64, name=name)


def _arg_reduce(op):
    def fn(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):  # noqa: A002
        if axis is None:
            axis = dimension if dimension is not None else 0
        out = apply_op(op, [input], {"axis": int(axis)}, name=name)
        return out if _dtypes.as_dtype(output_type) == _dtypes.int64 else cast(out, output_type)
    fn.__name__ = op
    return fn


argmax = _arg_reduce("argmax")
argmin = _arg_reduce("argmin")


def _axes(axis):
    if axis is None:
        return ()
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return (int(axis),)


def _reduce(op):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else (keep_dims or False))
        axes = _axes(axis)
        if axis is not None and len(axes) == 0:  # reducing over no axis: the input itself
            return apply_op("identity", [input_tensor], name=name)
        return apply_op(op, [input_tensor], {"axis": axes, "keepdims": keep}, name=name)
    fn.__name__ = "reduce_" + op
    return fn


reduce_sum = _reduce("sum")
reduce_mean = _reduce("mean")
reduce_max = _reduce("max")
reduce_min = _reduce("min")
reduce_prod = _reduce("prod")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, name=None, **unused):
    return apply_op("matmul", [a, b], {"transpose_a": bool(transpose_a or adjoint_a),
                                       "transpose_b": bool(transpose_b or adjoint_b)}, name=name)


def add_n(inputs, name=None):
    inputs = list(inputs)
    if len(inputs) == 1:
        return apply_op("identity", inputs, name=name)
    return apply_op("add_n", inputs, name=name)


# --- Tensor's Python operators, installed on the core's Tensor (which defines no arithmetic), as TF's math_ops does.
_CHECKED_DIVISIONS = {"divide": divide, "floor_divide": floordiv, "floor_mod": mod}


def _operator(op, scalar_op, rscalar_op, reverse=False):
    checked = _CHECKED_DIVISIONS.get(op)

    def method(self, other):
        if _framework._EAGER is not None:  # (the fast path of eager recording: no scalar folding)
            return _framework._EAGER.binary(op, other, self) if reverse else _framework._EAGER.binary(op, self, other)
        if checked is not None:  # integer division by zero raises, as in TF
            return checked(other, self) if reverse else checked(self, other)
        return binary_op(op, scalar_op, rscalar_op, other, self) if reverse else \
            binary_op(op, scalar_op, rscalar_op, self, other)
    return method


for _name, _op, _s, _rs in [("add", "add", "add_scalar", "add_scalar"),
                            ("sub", "subtract", "subtract_scalar", "rsubtract_scalar"),
                            ("mul", "multiply", "multiply_scalar", "multiply_scalar"),
                            ("truediv", "divide", "divide_scalar", "rdivide_scalar"),
                            ("div", "divide", "divide_scalar", "rdivide_scalar"),
                            ("floordiv", "floor_divide", "floor_divide_scalar", "rfloor_divide_scalar"),
                            ("mod", "floor_mod", "floor_mod_scalar", "rfloor_mod_scalar"),
                            ("pow", "power", "power_scalar", "rpower_scalar"),
                            ("lt", "less", "less_scalar", "greater_scalar"),
                            ("le", "less_equal", "less_equal_scalar", "greater_equal_scalar"),
                            ("gt", "greater", "greater_scalar", "less_scalar"),
                            ("ge", "greater_equal", "greater_equal_scalar", "less_equal_scalar"),
                            ("and", "logical_and", "logical_and_scalar", "logical_and_scalar"),
                            ("or", "logical_or", "logical_or_scalar", "logical_or_scalar")]:
    Tensor._override_operator("__%s__" % _name, _operator(_op, _s, _rs))
    if _name not in ("lt", "le", "gt", "ge"):
        Tensor._override_operator("__r%s__" % _name, _operator(_op, _s, _rs, reverse=True))
del _name, _op, _s, _rs
Tensor._override_operator("__neg__", lambda self: apply_op("negative", [self]))
Tensor._override_operator("__abs__", lambda self: apply_op("abs", [self]))
Tensor._override_operator("__matmul__", lambda self, other: apply_op("matmul", [self, convert_to_tensor(other)]))
Tensor._override_operator("__rmatmul__", lambda self, other: apply_op("matmul", [convert_to_tensor(other), self]))
Tensor._override_operator("__invert__", lambda self: apply_op("logical_not", [self]))
