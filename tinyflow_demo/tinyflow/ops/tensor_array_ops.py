"""tf.TensorArray: a Python object over one dense "flow" tensor [size, element...].

Every write returns a new TensorArray over a new flow (the IR ops tensor_array_write /
tensor_array_scatter copy the array with rows replaced), so a TensorArray is a plain value: it can
be a tf.while_loop variable (it travels as its flow) and gradients flow through it. The flow is
made at construction when size and element_shape are static, else lazily at the first write.
dynamic_size (growing arrays) is not supported: the size is fixed.
"""
import numpy as np

from . import array_ops, math_ops
from .. import dtypes as _dtypes
from ..framework import Tensor, TensorShape, apply_op, convert_to_tensor

__all__ = ["TensorArray"]


def _index(i):
    i = convert_to_tensor(i, dtype=_dtypes.int32)
    return i if i.dtype == _dtypes.int32 else math_ops.cast(i, _dtypes.int32)


def zeros_rows(rows, element):
    """Zeros [len(rows), element.shape...] at run time: rows is any [n] tensor, element any tensor
    of the element's shape (their sizes may be unknown until run time)."""
    rows = array_ops.zeros_like(rows, dtype=element.dtype) if rows.dtype != element.dtype else \
        array_ops.zeros_like(rows)
    for _ in range(element.shape.ndims or 0):
        rows = array_ops.expand_dims(rows, -1)
    return math_ops.add(rows, array_ops.expand_dims(array_ops.zeros_like(element), 0))


class TensorArray(object):
    """TF1's TensorArray (fixed size): write/read/stack/unstack/gather/scatter/concat/split/size."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if dynamic_size:
            raise NotImplementedError("tinyflow's TensorArray has a fixed size: dynamic_size=True is not supported")
        self._dtype = _dtypes.as_dtype(dtype)
        self._size = size
        self._element_shape = None if element_shape is None else TensorShape(
            element_shape.dims if isinstance(element_shape, TensorShape) else element_shape)
        self._flow = flow
        if flow is None and size is not None and self._element_shape is not None and \
                self._element_shape.dims is not None:
            # A tensor size (tf.shape(x)[0]) makes zeros whose first dimension is found at run time.
            # Element dimensions known only at run time are 0 until the first write, which adopts the
            # written value's (the IR's tensor_array_write does), so the array can enter a loop.
            dims = [0 if d is None else d for d in self._element_shape.dims]
            self._flow = array_ops.zeros([size] + dims, self._dtype)

    # -- what TF exposes --
    @property
    def dtype(self):
        return self._dtype

    @property
    def flow(self):
        return self._flow

    @property
    def element_shape(self):
        if self._flow is not None:
            dims = self._flow.shape.dims
            return TensorShape(None if dims is None else dims[1:])
        return self._element_shape or TensorShape(None)

    def size(self, name=None):
        if isinstance(self._size, int) or self._flow is None:
            return convert_to_tensor(self._size, dtype=_dtypes.int32)
        return array_ops.shape(self._flow)[0]

    def identity(self):
        return self._with_flow(array_ops.identity(self._require_flow("identity")))

    def close(self, name=None):
        from .state_ops import no_op
        return no_op(name)

    # -- reading --
    def read(self, index, name=None):
        return apply_op("tensor_array_read", [self._require_flow("read"), _index(index)], name=name)

    def gather(self, indices, name=None):
        return apply_op("tensor_array_gather", [self._require_flow("gather"), _index(indices)], name=name)

    def stack(self, name=None):
        return array_ops.identity(self._require_flow("stack"), name=name)

    def concat(self, name=None):
        """The elements joined along their first axis (all elements have the same shape here)."""
        flow = self._require_flow("concat")
        rest = flow.shape.dims[2:] if flow.shape.dims is not None else None
        if rest is None or any(d is None for d in rest):
            raise ValueError("TensorArray.concat needs the element shape past its first axis, got %s"
                             % self.element_shape)
        return array_ops.reshape(flow, [-1] + rest, name=name)

    # -- writing (each returns a new TensorArray) --
    def write(self, index, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        flow = self._flow if self._flow is not None else self._first_flow(value)
        return self._with_flow(apply_op("tensor_array_write", [flow, _index(index), value], name=name))

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        flow = self._flow if self._flow is not None else self._first_flow(value[0])
        return self._with_flow(apply_op("tensor_array_scatter", [flow, _index(indices), value], name=name))

    def unstack(self, value, name=None):
        """value's rows as elements 0, 1, ...: TF's scatter at range(rows), so more rows than the array's
        size fail the run ("tried to write to index ...") and fewer leave the other elements zeros."""
        value = convert_to_tensor(value, dtype=self._dtype)
        rows = value.shape.dims[0] if value.shape.dims else None
        if rows is not None and isinstance(self._size, (int, np.integer)) and rows == self._size:
            return self._with_flow(array_ops.identity(value, name=name))  # the rows fill the array exactly
        if rows is not None:
            indices = convert_to_tensor(np.arange(rows, dtype=np.int32))
        else:
            indices = array_ops.range(0, array_ops.shape(value)[0])
        return self.scatter(indices, value, name=name)

    def split(self, value, lengths, name=None):
        """Rows of value split into size pieces of the given (equal) lengths."""
        value = convert_to_tensor(value, dtype=self._dtype)
        lengths = [int(n) for n in (lengths.tolist() if hasattr(lengths, "tolist") else lengths)]
        if len(set(lengths)) > 1:
            raise NotImplementedError("TensorArray.split: tinyflow needs equal lengths (a dense array), got %s"
                                      % lengths)
        rest = value.shape.dims[1:] if value.shape.dims is not None else None
        if rest is None or any(d is None for d in rest):
            raise ValueError("TensorArray.split needs value's shape past its first axis, got %s" % value.shape)
        return self._with_flow(array_ops.reshape(value, [len(lengths), lengths[0]] + rest, name=name))

    def _pending_flow(self):
        """Whether the array enters a loop before its first write with no element shape."""
        return self._flow is None

    def _entering_flow(self, written):
        """(the flow entering a loop, its shape across iterations) from `written`, the flow the loop
        body makes with its first write: element dimensions it does not know statically are 0 until
        that write adopts the value's."""
        dims = written.shape.dims
        if dims is None or self._size is None:
            self._flow_for_loop()  # raises: the rank (or the size) is not known
        elem = dims[1:]
        flow = array_ops.zeros([self._size] + [0 if d is None else d for d in elem], self._dtype)
        return flow, TensorShape([None] + elem)

    def _loop_invariant(self):
        """The flow's shape across loop iterations when its element shape is only partly known
        (its unknown dimensions grow from 0 at the first write), else None."""
        if self._element_shape is None or self._element_shape.dims is None or \
                self._element_shape.is_fully_defined():
            return None
        size = self._size if isinstance(self._size, int) else None
        return TensorShape([size] + self._element_shape.dims)

    # -- plumbing --
    def _with_flow(self, flow):
        """A TensorArray like this one over `flow` (a new flow after a write, a loop variable)."""
        return TensorArray(self._dtype, size=self._size, element_shape=self._element_shape, flow=flow)

    def _flow_for_loop(self):
        if self._flow is None:
            raise ValueError("A TensorArray enters a tf.while_loop or tf.cond before its first write and with an "
                             "unknown element_shape: give TensorArray(..., element_shape=...) so its dense flow "
                             "tensor exists (None for dimensions known only when the graph runs)")
        return self._flow

    def _require_flow(self, what):
        if self._flow is None:
            raise ValueError("TensorArray.%s before any write: the element shape is unknown (give element_shape)"
                             % what)
        return self._flow

    def _first_flow(self, element):
        """The zero flow [size, element...] made at the first write (static size, element's shape)."""
        if self._size is None:
            raise ValueError("TensorArray: the first write needs a size or an element_shape")
        if element.shape.is_fully_defined():
            return array_ops.zeros([self._size] + element.shape.dims, self._dtype)
        if isinstance(self._size, Tensor):
            dims = array_ops.concat([array_ops.reshape(self._size, [1]), array_ops.shape(element)], 0)
            return array_ops.zeros(dims, self._dtype)
        return zeros_rows(array_ops.zeros([self._size], self._dtype), element)
