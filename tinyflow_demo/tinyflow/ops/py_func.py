"""Python functions in the graph: tf.py_func, tf.numpy_function, tf.Print and tf.print.

Each becomes a host_callback node (src/ops/host_callback.cc) calling back into Python through
IRHostCallbackRegister when it runs: its inputs arrive as NumPy arrays, its results go back with
their own dtypes, which must be the declared ones (as in TF). An exception raised by the function
fails the run with an error naming the node and the exception. py_func outputs have unknown
shapes (set_shape may declare them) and no gradient (TF: None).
"""
import sys

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from .._lib import C
from .array_ops import identity
from ..framework import Operation, apply_op, control_dependencies, convert_to_tensor

__all__ = ["py_func", "numpy_function", "Print", "print_v2"]


def _register(fn):
    """Registers fn(list of input arrays) -> list of output arrays; returns the callback id. tinyflow._C calls it
    with the GIL held; what it raises fails the run with "Type: message" (errors.py maps tf.errors' classes)."""
    from ..session import _host_array
    return C.host_callback_register(lambda args: [_host_array(v) for v in fn(args)])


def _host_call(fn, inputs, dtypes, name, shapes=None):
    attrs = {"callback": _register(fn), "dtypes": ",".join(d.name for d in dtypes)}
    if shapes is not None:
        attrs["shapes"] = ";".join("[%s]" % ",".join(str(d) for d in shape) for shape in shapes)
    return apply_op("host_callback", inputs, attrs, name=name)


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 (TF's argument name)
    """func(*arrays) run as an op: inp are its arguments (tensors or values); Tout its result dtype (one
    tensor) or list of dtypes (a list of tensors). The results must have exactly those dtypes."""
    is_list = isinstance(Tout, (list, tuple))
    dtypes = [_dtypes.as_dtype(t) for t in (Tout if is_list else [Tout])]
    func_name = getattr(func, "__name__", "func")

    def call(args):
        result = func(*args)
        if not is_list:
            result = [result]
        elif not isinstance(result, (list, tuple)):
            result = [result] if len(dtypes) == 1 else result
        if len(result) != len(dtypes):
            raise ValueError("%s returned %d values, expected %d" % (func_name, len(result), len(dtypes)))
        converted = []
        for i, (value, dtype) in enumerate(zip(result, dtypes)):
            arr = np.asarray(value)
            if arr.dtype.kind in "OSUc" or _dtypes.as_dtype(arr.dtype) != dtype:
                raise TypeError("%d-th value returned by %s is %s, but expects %s"
                                % (i, func_name, arr.dtype.name, dtype.name))
            converted.append(arr)
        return converted

    inputs = [convert_to_tensor(x) for x in inp]
    op = _host_call(call, inputs, dtypes, name or "PyFunc")
    if isinstance(op, Operation):
        return list(op.outputs) if is_list else op
    return [op] if is_list else op


def numpy_function(func, inp, Tout, name=None):  # noqa: N803
    """tf.numpy_function: py_func (func gets and returns NumPy arrays)."""
    return py_func(func, inp, Tout, stateful=True, name=name)


def _format_scalar(value):
    """One element as TF's StrCat prints it: shortest of %.6g / %.9g (float32), %.15g / %.17g (float64)."""
    if isinstance(value, (np.bool_, bool)):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        digits = (6, 9) if value.dtype == np.float32 else (15, 17)
        text = "%.*g" % (digits[0], value)
        return text if value.dtype.type(text) == value else "%.*g" % (digits[1], value)
    return str(value)


def _summarize_v1(arr, summarize):
    """TF1's SummarizeValue: the first `summarize` elements row-major, rows in brackets, '...' when cut."""
    flat = arr.ravel()
    limit = flat.size if summarize is None or summarize < 0 else min(summarize, flat.size)
    if arr.ndim == 0:
        return _format_scalar(flat[0])
    pos = [0]

    def dim(level):
        out = ""
        if pos[0] >= limit:
            return out
        if level == arr.ndim - 1:
            items = []
            for _ in range(arr.shape[level]):
                if pos[0] >= limit:
                    break
                items.append(_format_scalar(flat[pos[0]]))
                pos[0] += 1
            return " ".join(items)
        for _ in range(arr.shape[level]):
            if pos[0] >= limit:
                break
            out += "[" + dim(level + 1) + "]"
        return out
    return dim(0) + ("..." if flat.size > limit else "")


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 (TF's name)
    """input_, unchanged, after printing message and each tensor of data ("message[1 2 3]...") to stderr when it
    runs (the first first_n times when first_n >= 0; at most summarize elements each, default 3)."""
    message = message or ""
    first_n = -1 if first_n is None else int(first_n)
    summarize = 3 if summarize is None else int(summarize)
    count = [0]

    def call(args):
        if first_n < 0 or count[0] < first_n:
            count[0] += 1
            sys.stderr.write(message + "".join("[%s]" % _summarize_v1(a, summarize) for a in args) + "\n")
            sys.stderr.flush()

    printer = _printer(call, [convert_to_tensor(x) for x in data], (name or "Print") + "_host")
    if printer is None:  # eager: printed already
        return input_
    with control_dependencies([printer]):
        return identity(input_, name=name or "Print")


def _format_v2(arr, summarize, indent=0):
    """tf.print's layout: nested brackets, rows on their own lines, the first and last `summarize` entries of
    each dimension around '...' when it is longer than 2 * summarize."""
    if arr.ndim == 0:
        return _format_scalar(arr[()])
    n = arr.shape[0]
    cut = summarize is not None and 0 <= summarize and 2 * summarize < n
    indices = list(range(summarize)) + [None] + list(range(n - summarize, n)) if cut else list(range(n))
    if arr.ndim == 1:
        return "[" + " ".join("..." if i is None else _format_scalar(arr[i]) for i in indices) + "]"
    sep = "\n" + " " * (indent + 1)
    return "[" + sep.join("..." if i is None else _format_v2(arr[i], summarize, indent + 1) for i in indices) + "]"


def _resolve_stream(stream):
    """A function writing one text to output_stream: sys.stderr / sys.stdout (as they are when it runs), a
    logging function (tf.logging.info), or "file://path" (appended to)."""
    if stream is sys.stderr or stream is sys.__stderr__:
        return lambda text: sys.stderr.write(text)
    if stream is sys.stdout or stream is sys.__stdout__:
        return lambda text: sys.stdout.write(text)
    if isinstance(stream, str) and stream.startswith("file://"):
        def append(text):
            with open(stream[len("file://"):], "a") as f:
                f.write(text)
        return append
    if callable(stream):
        return lambda text: stream(text.rstrip("\n"))
    if hasattr(stream, "write"):
        return stream.write
    raise ValueError("Unsupported output stream, logging level, or file.%r" % (stream,))


def print_v2(*inputs, **kwargs):
    """tf.print: an op that prints inputs (tensors, nested in lists/dicts or not, and Python values) separated by
    sep and followed by end to output_stream (default sys.stderr) each time it runs; summarize (default 3):
    entries shown at each end of a dimension (-1: all). Run it by fetching it or as a control dependency."""
    unknown = set(kwargs) - {"output_stream", "summarize", "sep", "end", "name"}
    if unknown:
        raise ValueError("Unrecognized keyword arguments for tf.print: %s" % sorted(unknown))
    write = _resolve_stream(kwargs.get("output_stream", sys.stderr))
    summarize = kwargs.get("summarize", 3)
    sep, end = kwargs.get("sep", " "), kwargs.get("end", "\n")
    tensors, pieces = [], []
    for x in inputs:
        if isinstance(x, str) or not _is_tensor_like(x):
            pieces.append(str(x))
        else:
            pieces.append(len(tensors))
            tensors.append(convert_to_tensor(x))

    def call(args):
        write(sep.join(p if isinstance(p, str) else _format_v2(args[p], summarize) for p in pieces) + end)

    return _printer(call, tensors, kwargs.get("name") or "PrintV2")


def _printer(write, tensors, name):
    """The Operation of a host_callback node that calls write(arrays) and outputs an int32 scalar token."""
    def call(args):
        write(args)
        return [np.int32(0)]
    token = _host_call(call, tensors, [_dtypes.int32], name, shapes=[[]])
    if _framework._EAGER is not None:  # eager: print now, as TF does
        token.numpy()
        return None
    return token.op


def _is_tensor_like(x):
    from ..framework import Tensor, Variable
    return isinstance(x, (Tensor, Variable, np.ndarray))
