"""Eager execution (TF 1.x's tf.enable_eager_execution) over the library's lazy arrays (IRLazy*).

Once enabled, framework.apply_op records every op as a lazy array (IRLazyApply) and returns an
EagerTensor: nothing runs until a value is needed (.numpy(), printing, `if t > 0:`, an assignment),
and then everything pending runs as one fused, hash-cached trace. Python numbers combined with
tensors enter as 0-d leaves (IRLazyScalar), parameters of the trace, so a changing learning rate
never recompiles. tf.Variable makes an EagerVariable: a leaf its assignments write in place.

Threads (TF's contract): each thread records and computes with its own lazy Context (with the
enabling call's config), and tapes record the ops of their own thread. Tensors and variables may
be shared between threads: an update (assign_add, assign_sub) is atomic, and a read of a variable
sees a whole value (the old or the new one of a concurrent assignment).
"""
import json
import threading

import numpy as np

from .. import dtypes as _dtypes
from .. import framework as _framework
from .._lib import C
from ..framework import Tensor, TensorShape, Variable, _op_handle, convert_to_tensor, get_default_graph

__all__ = ["enable_eager_execution", "executing_eagerly", "eager_stats", "reset_eager_stats", "EagerTensor",
           "EagerVariable"]

_LAZY_APPLY = C.lazy_apply  # (the per-op call: op handle, attribute tuples, the input tensors themselves)
_SPECS = {}  # (op, attribute items) -> (op handle, keys, values, keeps float dtype) for lazy_apply
_SCALARS = {}  # (value, dtype code) -> a 0-d leaf shared by the ops that use that number
_MAX_CACHED = 4096
_CONFIG = None  # enable_eager_execution's config (JSON): every thread's Context is made with it
_UPDATES = {"add": 1, "subtract": 2}  # IRLazyAssignUpdate's ops


class _Context(object):
    """A lazy Context made for one thread with the enabling call's config; freed with the thread."""

    def __init__(self, config):
        self.handle = C.lazy_context_create(config)
        C.lazy_context_set_current(self.handle)


class _ThreadState(threading.local):
    """What each thread has of its own: the GradientTapes recording on it (innermost last), its Context."""

    def __init__(self):
        self.tapes = []
        self.context = _Context(_CONFIG) if _CONFIG is not None else None


_STATE = _ThreadState()


def _tapes():
    """The GradientTapes recording on this thread (eager_tape.py appends and removes them)."""
    return _STATE.tapes


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Makes every op from now on run eagerly (lazily recorded, fused when needed). TF 1.x
    semantics: call it at program start, before any graph op is built. `config` may be a dict of
    SessionOptions (target, fusion, ...) for the lazy Context; TF's ConfigProto is not supported."""
    if _framework._EAGER is not None:
        return
    if get_default_graph()._names:
        raise ValueError("tf.enable_eager_execution must be called at program startup.")
    global _CONFIG
    if isinstance(config, dict):
        _CONFIG = json.dumps(config)
        _STATE.context = _Context(_CONFIG)  # (other threads make theirs at their first op)
    _install_operators()
    _framework._EAGER = __import__(__name__, fromlist=["apply"])


def executing_eagerly():
    return _framework._EAGER is not None


def eager_stats():
    """What this thread's lazy Context did so far: kernels_launched, traces_compiled, cache_hits,
    cache_misses, cache_size, evictions, ops_recorded, record_ns, execute_ns, tape_cache_hits,
    tape_cache_misses (IRLazyContextGetStatsJSON)."""
    _STATE.tapes  # (makes this thread's Context, if it has none yet)
    return json.loads(C.lazy_stats_json(None))


def reset_eager_stats():
    _STATE.tapes
    C.lazy_reset_stats(None)


def _spec(op_type, attrs):
    attrs = {k: _framework._format_attr(v) for k, v in attrs.items() if v is not None} if attrs else {}
    return _op_handle(op_type), tuple(attrs), tuple(attrs.values()), op_type in _FLOAT_PRESERVING


def _lookup_spec(op_type, attrs):
    """The formatted attributes of (op, attrs), cached: recording then formats nothing."""
    try:
        key = (op_type, tuple(attrs.items())) if attrs else op_type
        return _SPECS[key]
    except KeyError:
        if len(_SPECS) >= _MAX_CACHED:
            _SPECS.clear()
        spec = _SPECS[key] = _spec(op_type, attrs)
        return spec
    except TypeError:  # an unhashable attribute value (a list): format it every time
        return _spec(op_type, attrs)


def _as_eager(x):
    """An op input as an eager tensor or variable (a Python or NumPy value becomes a constant)."""
    if getattr(x, "_h", None) is not None:
        return x
    if isinstance(x, Tensor):
        raise ValueError("a graph tensor (%r) cannot be used in eager mode" % (x,))
    return convert_to_tensor(x)


def apply(op_type, inputs, attrs=None):
    """Records op_type(inputs) with `attrs`: an EagerTensor, or an _EagerOp when it has several outputs."""
    spec = None if attrs else _SPECS.get(op_type)  # (the common case first: an op without attributes)
    op, keys, vals, keeps_dtype = spec or _lookup_spec(op_type, attrs)
    tapes = _STATE.tapes
    if tapes:
        _watch_trainable(inputs, tapes)
    try:  # (tinyflow._C reads each input's handle and makes the EagerTensors)
        out = _LAZY_APPLY(op, keys, vals, inputs, keeps_dtype)
    except AttributeError:  # an input that is no eager tensor yet: a Python or NumPy value
        out = _LAZY_APPLY(op, keys, vals, [_as_eager(x) for x in inputs], keeps_dtype)
    return _EagerOp(op_type, out) if type(out) is list else out


# Elementwise ops whose output has the dtype of their floating inputs (when these agree): their
# results know their dtype without asking the library, whose answer infers the pending DAG (an
# optimizer's update reads the dtype of its intermediate values to make its scalar parameters).
_FLOAT_PRESERVING = frozenset([
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "negative", "exp", "log", "log1p",
    "expm1", "sqrt", "rsqrt", "square", "abs", "tanh", "erf", "sigmoid", "reciprocal", "relu", "identity", "bias_add"])


def _watch_trainable(inputs, tapes):
    """TF's automatic watching: a trainable variable read while a tape records is watched by it."""
    for x in inputs:
        if isinstance(x, EagerVariable) and x.trainable:
            for tape in tapes:
                tape._watch_variable(x)


def scalar(value, dtype):
    """A 0-d leaf holding `value`: a parameter of the trace (its value is not part of the cache key)."""
    key = (value, dtype.enum)
    t = _SCALARS.get(key)
    if t is None:
        if len(_SCALARS) >= _MAX_CACHED:
            _SCALARS.clear()
        t = _SCALARS[key] = EagerTensor(C.lazy_scalar(float(value), dtype.enum))
        t._dtype = dtype
    return t


def from_numpy(arr, dtype):
    """A leaf holding a copy of `arr` (IRLazyFromHost; tinyflow._C converts it to `dtype` when needed)."""
    t = EagerTensor(C.lazy_from_numpy(arr, dtype.enum))
    t._dtype = dtype
    return t


def binary(op, x, y):
    """op(x, y) with broadcasting; a Python number becomes a 0-d parameter of the other side's dtype."""
    x_tensor, y_tensor = isinstance(x, Tensor), isinstance(y, Tensor)
    if x_tensor and not y_tensor:
        y = scalar(y, x.dtype) if _is_number(y) else convert_to_tensor(y, dtype=x.dtype)
    elif y_tensor and not x_tensor:
        x = scalar(x, y.dtype) if _is_number(x) else convert_to_tensor(x, dtype=y.dtype)
    elif not x_tensor:
        x, y = convert_to_tensor(x), convert_to_tensor(y)
    return apply(op, [x, y])


def _is_number(x):
    return isinstance(x, (int, float, np.number)) or (isinstance(x, np.ndarray) and x.ndim == 0)


def assign_all(pairs, update=None):
    """targets[i] = values[i] in place for (target variable, value) pairs, all computed in one trace
    (update "add" or "subtract": targets[i] op= values[i], each atomically)."""
    if not pairs:
        return
    values = [convert_to_tensor(v, dtype=t.dtype) for t, v in pairs]
    C.lazy_assign([t._h for t, _ in pairs], [v._h for v in values], _UPDATES.get(update, 0))


def _value_for(variable, value):
    """`value` as a tensor of the variable's dtype: TF's convert_to_tensor(value, dtype=variable.dtype),
    which converts Python and NumPy values but rejects a tensor of another dtype."""
    tensor = convert_to_tensor(value, dtype=variable.dtype)
    if tensor.dtype != variable.dtype:
        raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                         % (variable.dtype.name, tensor.dtype.name, tensor))
    return tensor


def _to_numpy(h, snapshot=False):
    """A copy of the value (snapshot: taken while no assignment writes it, IRLazyReadValue)."""
    return C.lazy_to_numpy(h, snapshot)


def _shape_of(h):
    return TensorShape(C.lazy_shape(h))


def _dtype_of(h):
    return _dtypes._BY_ENUM[C.lazy_dtype(h)]


def _dims_text(shape):
    """TensorShape.DebugString's form: [2,2], [] (TF's kernel errors)."""
    return "[%s]" % ",".join(str(d) for d in shape.dims)


class _ValueMethods(object):
    """What an eager tensor and an eager variable share: host conversions and Python protocols."""

    __array_priority__ = 100  # NumPy defers `array + tensor` to the tensor's operators

    def numpy(self):
        """The value as a NumPy array (a NumPy scalar for a 0-d tensor); computes what is pending."""
        return _to_numpy(self._h)

    @property
    def dtype(self):
        """Inferred once (a variable's is fixed at creation: assign_all converts values to it)."""
        if self._dtype is None:
            self._dtype = _dtype_of(self._h)
        return self._dtype

    def _infer(self):
        return self.shape, self.dtype

    def eval(self, feed_dict=None, session=None):
        return self.numpy()

    def get_shape(self):
        return self.shape

    def __array__(self, dtype=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def __bool__(self):
        return bool(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError("only integer tensors can be used as an index, not %s" % self.dtype.name)
        return int(self.numpy())

    def __len__(self):
        dims = self.shape.dims
        if not dims:
            raise TypeError("Scalar tensor has no `len()`")
        return dims[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __format__(self, spec):
        return format(self.numpy(), spec)

    @property
    def name(self):
        raise AttributeError("Tensor.name is meaningless when eager execution is enabled.")

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is meaningless when eager execution is enabled.")


class EagerTensor(C.LazyTensor, _ValueMethods, Tensor):
    """A lazy array: its value is computed when needed. Immutable, like a TF eager tensor. Its handle (`_h`)
    and dtype (`_dtype`, None until known) are fields of tinyflow._C.LazyTensor: an op's output has no dict."""

    _static_shape = None
    _shape = None

    def __init__(self, handle):
        self._h = handle  # a Lazy handle of tinyflow._C (the array is freed with it)

    def _detach(self):
        """Takes the handle away from this tensor (its new owner keeps it)."""
        h, self._h = self._h, None
        return h

    @property
    def shape(self):
        """The inferred shape (nothing is computed)."""
        if self._shape is None:
            self._shape = _shape_of(self._h)
        return self._shape


    @property
    def op(self):
        raise AttributeError("Tensor.op is meaningless when eager execution is enabled.")

    def __repr__(self):
        return "tf.Tensor(%s, shape=%s, dtype=%s)" % (self.numpy(), tuple(self.shape.dims), self.dtype.name)

    __str__ = __repr__


class _EagerOp(object):
    """What an op with several outputs returns in eager mode: its outputs (the graph Operation's role)."""

    def __init__(self, op_type, outputs):
        self.type = op_type
        self.outputs = outputs


class _VariableOp(object):
    """A variable's `op`: its name (optimizers name slots after it) and type."""

    type = "VarHandleOp"

    def __init__(self, name):
        self.name = name


class EagerVariable(_ValueMethods, Variable):
    """tf.Variable in eager mode: a lazy leaf holding a copy of the initial value. Ops read its value
    when they are recorded; assign/assign_add/assign_sub write into its buffer (IRLazyAssign)."""

    _static_shape = None
    _dtype = None

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, collections=None,
                 validate_shape=True, **unused):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if callable(initial_value):
            initial_value = initial_value()
        value = np.array(convert_to_tensor(initial_value, dtype=dtype).numpy())
        if dtype is not None:
            value = value.astype(_dtypes.as_dtype(dtype).as_numpy_dtype)
        self._h = None
        self._dtype = _dtypes.as_dtype(value.dtype)
        self._h = from_numpy(value, self._dtype)._detach()
        graph = get_default_graph()
        self.op = _VariableOp(graph.unique_name(name or "Variable"))
        self.trainable = trainable
        self.initial_value = initial_value
        self.initializer = None
        for key in collections or []:  # none by default: eager mode has no collections (as in TF)
            graph.add_to_collection(key, self)

    @property
    def name(self):
        return self.op.name + ":0"

    @property
    def shape(self):
        return _shape_of(self._h)


    def numpy(self):
        """A copy of the current value, whole even while other threads assign the variable."""
        return _to_numpy(self._h, snapshot=True)

    def value(self):
        """The current value (a snapshot: later assignments do not change it)."""
        return apply("identity", [self])

    read_value = value

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """TF's ResourceVariable.assign: the value keeps the variable's shape and dtype (ValueError)."""
        value = _value_for(self, value)
        if not self.shape.is_compatible_with(value.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (self.shape, value.shape))
        assign_all([(self, value)])
        return self

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds `delta` (of the variable's shape, as TF's AssignAddVariableOp) atomically."""
        return self._update("add", delta)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._update("subtract", delta)

    def _update(self, op, delta):
        delta = _value_for(self, delta)
        if self.shape != delta.shape:
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError(None, None, "Cannot update variable with shape %s using a Tensor with shape %s, "
                                       "shapes must be equal." % (_dims_text(self.shape), _dims_text(delta.shape)))
        assign_all([(self, delta)], update=op)
        return self

    def load(self, value, session=None):
        self.assign(value)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s, numpy=%r>" % (self.name, tuple(self.shape.dims),
                                                                  self.dtype.name, self.numpy())



def _fast_binary(op_type, reverse):
    """EagerTensor's operator for op_type (tinyflow._C's lazy_binary_op): two eager tensors record the op without
    a Python frame (no variable among them, so no tape watches anything); other operands take binary()'s
    conversions."""
    op, _, _, keeps_dtype = _spec(op_type, None)

    def fallback(self, other):
        return binary(op_type, other, self) if reverse else binary(op_type, self, other)
    return C.lazy_binary_op(op, keeps_dtype, reverse, fallback)


def _install_operators():
    """The operators of framework's Tensor table, on EagerTensor, made when eager execution is enabled."""
    for name, op_type in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                          ("div", "divide"), ("floordiv", "floor_divide"), ("mod", "floor_mod"), ("pow", "power"),
                          ("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                          ("and", "logical_and"), ("or", "logical_or")):
        setattr(EagerTensor, "__%s__" % name, _fast_binary(op_type, False))
        if name not in ("lt", "le", "gt", "ge"):
            setattr(EagerTensor, "__r%s__" % name, _fast_binary(op_type, True))


C.lazy_setup(EagerTensor, (_dtypes.float32, _dtypes.float64))  # what lazy_apply makes, the dtypes ops keep
