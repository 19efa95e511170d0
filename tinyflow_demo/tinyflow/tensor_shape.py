"""Static shapes as TF 1.x has them: Dimension, TensorShape (unknown rank or a list of int/None), and
the conversions framework.py uses (a shape argument to a list, a list to the IR's "[?,4]" text)."""

import numpy as np


class Dimension(object):
    def __init__(self, value):
        self.value = value

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, Dimension) else other)

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return "Dimension(%s)" % self.value


class TensorShape(object):
    """A partially known shape: dims is None (unknown rank) or a list of int/None."""

    def __init__(self, dims):
        self.dims = None if dims is None else [None if d is None or d < 0 else int(d) for d in dims]

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self.dims)

    def is_fully_defined(self):
        return self.dims is not None and all(d is not None for d in self.dims)

    def num_elements(self):
        return int(np.prod(self.dims)) if self.is_fully_defined() else None

    def __len__(self):
        return len(self.dims)

    def __iter__(self):
        return iter(Dimension(d) for d in self.dims)

    def __getitem__(self, i):
        return Dimension(self.dims[i])

    def __eq__(self, other):
        other_dims = other.dims if isinstance(other, TensorShape) else list(other)
        return self.dims == other_dims

    def __repr__(self):
        if self.dims is None:
            return "TensorShape(None)"
        return "TensorShape([%s])" % ", ".join("?" if d is None else str(d) for d in self.dims)

    def __str__(self):  # as TF 1.x prints a shape: (?, 4), (3,), (), <unknown>
        if self.dims is None:
            return "<unknown>"
        if len(self.dims) == 1:
            return "(%s,)" % ("?" if self.dims[0] is None else self.dims[0])
        return "(%s)" % ", ".join("?" if d is None else str(d) for d in self.dims)

    def is_compatible_with(self, other):
        other = other if isinstance(other, TensorShape) else TensorShape(_as_shape_list(other))
        if self.dims is None or other.dims is None:
            return True
        return len(self.dims) == len(other.dims) and all(
            a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other):
        """The most specific shape compatible with both; ValueError when they are incompatible."""
        other = other if isinstance(other, TensorShape) else TensorShape(_as_shape_list(other))
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])


def _as_shape_list(shape):
    if isinstance(shape, TensorShape):
        return shape.dims
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [None if d is None else int(d) for d in shape]


def _shape_text(shape):
    return "[" + ",".join("?" if d is None or d < 0 else str(int(d)) for d in shape) + "]"
