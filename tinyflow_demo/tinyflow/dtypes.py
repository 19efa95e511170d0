"""TensorFlow-like dtypes. Those the core supports (float32, float64, int32, int64, bool) map to one
DType value of the C API (`enum`); TF's others (uint8, int8, int16, uint16, uint32, uint64, string,
complex64, complex128) exist as DTypes with TF's properties, so scripts that name them import and build
(an unused placeholder of one is fine), but a value of one cannot be stored: its `enum` raises TypeError,
and the core rejects a node of that dtype naming it. tf.float16 stays an alias of float32 (the core has
no half type); tf.as_dtype("float16"/"half") gives float32 as well.
"""
import builtins

import numpy as np

__all__ = ["DType", "float32", "float64", "int32", "int64", "bool", "uint8", "int8", "int16", "uint16", "uint32",
           "uint64", "string", "complex64", "complex128", "as_dtype"]

# TF's DataType enum values (types.proto), for as_datatype_enum.
_TF_ENUMS = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7,
             "complex64": 8, "int64": 9, "bool": 10, "uint16": 17, "complex128": 18, "uint32": 22, "uint64": 23}


class DType(object):
    """A dtype: name, as_numpy_dtype, TF's predicates and limits; `enum` is the C API's value."""

    def __init__(self, name, enum, np_type):
        self.name = name
        self._enum = enum  # None: not supported by the core
        self.as_numpy_dtype = np_type

    @property
    def enum(self):
        """The C API's DType value; TypeError for a dtype the core does not support."""
        if self._enum is None:
            raise TypeError("tf.%s is not supported by tinyflow: its core stores float32, float64, int32, int64 "
                            "and bool (cast to one of them, e.g. tf.cast(x, tf.int32) or feed int32 values)"
                            % self.name)
        return self._enum

    @property
    def is_supported(self):
        """Whether the core can hold values of this dtype."""
        return self._enum is not None

    is_floating = property(lambda self: self.is_numpy_compatible and np.issubdtype(self.as_numpy_dtype, np.floating))
    is_integer = property(lambda self: self.is_numpy_compatible and np.issubdtype(self.as_numpy_dtype, np.integer))
    is_unsigned = property(lambda self: self.is_integer and np.issubdtype(self.as_numpy_dtype, np.unsignedinteger))
    is_complex = property(lambda self: self.name.startswith("complex"))
    is_bool = property(lambda self: self.name == "bool")
    is_quantized = property(lambda self: False)
    is_numpy_compatible = property(lambda self: self.name != "string")
    base_dtype = property(lambda self: self)
    real_dtype = property(lambda self: {"complex64": float32, "complex128": float64}.get(self.name, self))
    as_datatype_enum = property(lambda self: _TF_ENUMS[self.name])

    @property
    def size(self):
        """Bytes per element."""
        return np.dtype(self.as_numpy_dtype).itemsize

    @property
    def min(self):
        """The smallest value of the dtype (TypeError for bool, string and complex, as in TF)."""
        return self._limit("minimum", lambda info: info.min)

    @property
    def max(self):
        return self._limit("maximum", lambda info: info.max)

    @property
    def limits(self):
        return self.min, self.max

    def _limit(self, what, pick):
        if self.is_bool or self.is_complex or not self.is_numpy_compatible:
            raise TypeError("Cannot find %s value of %s." % (what, self))
        info = np.finfo(self.as_numpy_dtype) if self.is_floating else np.iinfo(self.as_numpy_dtype)
        return pick(info)

    def is_compatible_with(self, other):
        return self == other

    def __repr__(self):
        return "tf." + self.name

    def __eq__(self, other):
        try:
            return self.name == as_dtype(other).name
        except (TypeError, ValueError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)


float32 = DType("float32", 0, np.float32)
float64 = DType("float64", 1, np.float64)
int32 = DType("int32", 2, np.int32)
int64 = DType("int64", 3, np.int64)
bool = DType("bool", 4, np.bool_)  # noqa: A001  (tf.bool)
uint8 = DType("uint8", None, np.uint8)
int8 = DType("int8", None, np.int8)
int16 = DType("int16", None, np.int16)
uint16 = DType("uint16", None, np.uint16)
uint32 = DType("uint32", None, np.uint32)
uint64 = DType("uint64", None, np.uint64)
string = DType("string", None, np.object_)
complex64 = DType("complex64", None, np.complex64)
complex128 = DType("complex128", None, np.complex128)
_ALL = [float32, float64, int32, int64, bool, uint8, int8, int16, uint16, uint32, uint64, string, complex64,
        complex128]
_BY_NAME = {d.name: d for d in _ALL}
_BY_ENUM = {d._enum: d for d in _ALL if d._enum is not None}
_ALIASES = {"float": float32, "double": float64, "half": float32, "float16": float32}


def as_dtype(type_value):
    """A DType from a DType, a name ("float32", "float", "double", "half"), a NumPy dtype or type, a Python
    type (float: float32, int: int32, bool, str: string) or a C API enum value; TypeError for anything else."""
    value = type_value
    if isinstance(value, DType):
        return value
    if isinstance(value, int) and not isinstance(value, builtins.bool) and value in _BY_ENUM:
        return _BY_ENUM[value]
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        if value in _ALIASES:
            return _ALIASES[value]
        raise TypeError("Cannot convert value %r to a TensorFlow DType." % (value,))
    python_types = {builtins.bool: bool, float: float32, int: int32, str: string, bytes: string}
    if isinstance(value, type) and value in python_types:
        return python_types[value]
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError("Cannot convert value %r to a TensorFlow DType." % (value,))
    if np_dtype == np.float16:
        return float32
    if np_dtype.kind in "OSU":
        return string
    if np_dtype.name in _BY_NAME:
        return _BY_NAME[np_dtype.name]
    raise TypeError("Cannot convert value %r to a TensorFlow DType." % (value,))
