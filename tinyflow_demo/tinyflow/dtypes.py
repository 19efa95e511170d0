"""TensorFlow-like dtypes; each maps to one DType value of the C API."""
import numpy as np

__all__ = ["DType", "float32", "float64", "int32", "int64", "bool", "as_dtype"]


class DType(object):
    def __init__(self, name, enum, np_type):
        self.name = name
        self.enum = enum  # the C API's DType value
        self.as_numpy_dtype = np_type

    @property
    def is_floating(self):
        return self.name.startswith("float")

    @property
    def is_integer(self):
        return self.name.startswith("int")

    @property
    def base_dtype(self):
        return self

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
_ALL = [float32, float64, int32, int64, bool]
_BY_NAME = {d.name: d for d in _ALL}
_BY_ENUM = {d.enum: d for d in _ALL}
_ALIASES = {"float": float32, "double": float64, "half": float32}


def as_dtype(value):
    """A DType from a DType, a name, a NumPy dtype or type, or a C API enum value."""
    if isinstance(value, DType):
        return value
    if isinstance(value, int) and not isinstance(value, type(True)) and value in _BY_ENUM:
        return _BY_ENUM[value]
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        if value in _ALIASES:
            return _ALIASES[value]
        raise ValueError("unsupported dtype '%s'" % value)
    if value is type(True):
        return bool
    if value is float:
        return float32
    if value is int:
        return int32
    np_dtype = np.dtype(value)
    if np_dtype == np.bool_:
        return bool
    if np_dtype.name in _BY_NAME:
        return _BY_NAME[np_dtype.name]
    if np_dtype.kind in "ui":
        return int64 if np_dtype.itemsize > 4 else int32
    if np_dtype.kind == "f":
        return float32 if np_dtype.itemsize <= 4 else float64
    raise TypeError("unsupported dtype %r" % (value,))
