"""Graph building: Graph, Operation, Tensor and Variable over IR symbols (the C API's IRSymbolHandle).

An Operation is one IR node (a symbol whose outputs are the node's outputs); a Tensor is one
output of it. Shapes and dtypes are inferred lazily by the library's InferShape/InferType
passes, so Python never re-implements an op's rules.
"""
import base64
import contextlib
import re

import numpy as np

from . import dtypes as _dtypes
from ._hooks import hook as _hook, register_hook  # noqa: F401 (register_hook: for the modules above the core)
from ._lib import C
# Split out of this module; re-exported here, where the rest of tinyflow imports them from.
from ._symbol import _Symbol, _op_handle
from .static_shapes import _check_static_shapes
from .tensor_shape import Dimension, TensorShape, _as_shape_list, _shape_text  # noqa: F401

__all__ = ["Graph", "Operation", "Tensor", "Variable", "get_default_graph", "reset_default_graph",
           "apply_op", "convert_to_tensor", "placeholder", "placeholder_with_default", "constant", "control_dependencies",
           "name_scope", "TensorShape", "Dimension"]

# The eager module once tf.enable_eager_execution() ran (eager.py): apply_op, constant and Variable
# then create lazy arrays instead of graph nodes.
_EAGER = None

class Graph(object):
    """Holds what TF keeps per graph: unique names, collections, control-dependency scopes, seed."""

    def __init__(self):
        self._names = {}
        self._ops = {}  # every Operation by name (fetches and feeds given by name)
        self._inputs = {}  # placeholders and variables by name (feeds given by name)
        self.collections = {}
        self._control_stack = []
        self._name_stack = []
        self._body_stack = []  # control-flow bodies being traced, innermost last (control_flow_ops)
        self._op_log = None  # while a pfor loop function runs: the operations it builds (parallel_for)
        self.seed = None
        self._shape_epoch = 0  # counts set_shape calls that refine what inference sees
        self._iterator_feeds = {}  # tf.data: placeholder name -> the Iterator whose get_next() it is (data.py)

    def unique_name(self, base):
        base = re.sub(r"[^A-Za-z0-9_./-]", "_", base)
        if self._name_stack:
            base = "/".join(self._name_stack) + "/" + base
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        return base if count == 0 else "%s_%d" % (base, count)

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph's TensorFlow GraphDef (graph_def.GraphDef: SerializeToString(), str())."""
        return _hook("graph_def")(self)

    def add_to_collection(self, key, value):
        self.collections.setdefault(key, []).append(value)

    def get_tensor_by_name(self, name):
        """The tensor "op:index" (as TF: a name without ":index" is an operation's, a ValueError)."""
        if not isinstance(name, str):
            raise TypeError("Can not convert a %s into a Tensor." % type(name).__name__)
        if ":" not in name:
            raise ValueError("The name '%s' refers to an Operation, not a Tensor. Tensor names must be of the form "
                             "\"<op_name>:<output_index>\"." % name)
        base, index = name.rsplit(":", 1)
        op = self._ops.get(base)
        if op is None or not index.isdigit() or int(index) >= len(op.outputs):
            raise KeyError("The name '%s' refers to a Tensor which does not exist. The operation, '%s', %s."
                           % (name, base, "does not exist in the graph" if op is None
                              else "exists but only has %d outputs" % len(op.outputs)))
        return op.outputs[int(index)]

    def get_operation_by_name(self, name):
        if ":" in name:
            raise ValueError("The name '%s' appears to refer to a Tensor, not an Operation." % name)
        if name not in self._ops:
            raise KeyError("The name '%s' refers to an Operation not in the graph." % name)
        return self._ops[name]

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """The Tensor or Operation `obj` names (or is) in this graph; ValueError when it is another graph's."""
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if ":" not in obj and allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError("Can not convert a name '%s' into a %s." % (obj, "Tensor" if allow_tensor else
                                                                           "Operation"))
        if hasattr(obj, "_as_tensor") and not isinstance(obj, Tensor):
            obj = obj._as_tensor()
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError("%s %s is not an element of this graph." % (
                    "Tensor" if isinstance(obj, Tensor) else "Operation", obj))
            return obj
        raise TypeError("Can not convert a %s into a Tensor or Operation." % type(obj).__name__)

    def get_operations(self):
        return list(self._ops.values())

    def get_collection(self, key, scope=None):
        values = list(self.collections.get(key, []))
        if scope is None:
            return values
        return [v for v in values if hasattr(v, "name") and re.match(scope, v.name)]

    def get_collection_ref(self, key):
        return self.collections.setdefault(key, [])

    def get_all_collection_keys(self):
        return list(self.collections)

    def clear_collection(self, key):
        self.collections.pop(key, None)

    def as_default(self):
        return _default_graph_scope(self)

    def control_dependencies(self, control_inputs):
        return _control_scope(self, control_inputs)

    def finalize(self):
        pass

    @contextlib.contextmanager
    def _init_scope(self):
        """Builds outside every control-flow body and control-dependency scope (TF's init_scope):
        variables and their initializers belong to the outer graph, not to a loop or branch."""
        saved = self._body_stack, self._control_stack
        self._body_stack, self._control_stack = [], []
        try:
            yield
        finally:
            self._body_stack, self._control_stack = saved


_GRAPH_STACK = [Graph()]


def get_default_graph():
    return _GRAPH_STACK[-1]


def reset_default_graph():
    _GRAPH_STACK[:] = [Graph()]


@contextlib.contextmanager
def _default_graph_scope(graph):
    _GRAPH_STACK.append(graph)
    try:
        yield graph
    finally:
        _GRAPH_STACK.remove(graph)


@contextlib.contextmanager
def _control_scope(graph, control_inputs):
    saved = graph._control_stack
    graph._control_stack = [] if control_inputs is None else saved + [_as_operation(c) for c in control_inputs]
    try:
        yield
    finally:
        graph._control_stack = saved


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    graph = get_default_graph()
    scope = name or default_name
    if scope:
        graph._name_stack.append(scope.rstrip("/"))
    try:
        yield (scope or "") + "/"
    finally:
        if scope:
            graph._name_stack.pop()


def _as_operation(x):
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    raise TypeError("control input must be an Operation or Tensor, got %r" % (x,))


class Operation(object):
    """One IR node. Running it (Session.run or .run()) executes it for its effects."""

    def __init__(self, symbol, op_type, name, inputs, graph, output_dtypes=None):
        self._symbol = symbol
        self.type = op_type
        self.name = name
        self.inputs = list(inputs)
        self.graph = graph
        graph._ops[name] = self
        self._body = graph._body_stack[-1] if graph._body_stack else None  # the body it was built in
        if graph._op_log is not None:
            graph._op_log.append(self)
        n = symbol.num_outputs()
        self.outputs = [Tensor(self, i, symbol.output(i) if n > 1 else symbol) for i in range(n)]

    @property
    def handle(self):
        return self._symbol.handle

    def run(self, feed_dict=None, session=None):
        _hook("session")(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self.name, self.type)


class Tensor(object):
    """One output of an Operation."""

    def __init__(self, op, value_index, symbol):
        self.op = op
        self.value_index = value_index
        self._symbol = symbol
        self._inferred = None
        self._construct = None  # (TensorShape, DType) from the construction-time check (_check_static_shapes)
        self._inferred_epoch = 0
        self._static_shape = None  # what the user declared (placeholder, constant)

    @property
    def handle(self):
        return self._symbol.handle

    @property
    def name(self):
        return "%s:%d" % (self.op.name, self.value_index)

    @property
    def graph(self):
        return self.op.graph

    def _infer(self):
        # Cached until a set_shape in the graph (a placeholder's refined shape changes what follows it).
        epoch = self.op.graph._shape_epoch
        if self._inferred is None or (self._inferred_epoch != epoch and self.op.type != "Placeholder"):
            self._inferred = _hook("ir").infer_shape_dtype(self)
            self._inferred_epoch = epoch
        return self._inferred

    @property
    def dtype(self):
        return self._infer()[1]

    @property
    def shape(self):
        if self._static_shape is not None:
            return self._static_shape
        return self._infer()[0]

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Refines the static shape (ValueError when `shape` is incompatible with it). On a placeholder
        the refined shape also reaches the library's shape inference of the ops that use it."""
        merged = self.shape.merge_with(shape)
        if self.op.type == "Placeholder" and merged.dims is not None:
            self._symbol.set_attrs({"__shape__": _shape_text(merged.dims)})
            self._inferred = (merged, self._inferred[1])
            self.op.graph._shape_epoch += 1
        known = self._inferred or self._construct
        self._construct = (merged, known[1] if known else None)
        self._static_shape = merged

    def eval(self, feed_dict=None, session=None):
        return _hook("session")(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "<tf.Tensor '%s'>" % self.name

    __hash__ = object.__hash__

    @classmethod
    def _override_operator(cls, operator, func):
        """Installs `func` as the Python operator `operator` ("__add__", "__getitem__"...) of every Tensor: the
        core defines no arithmetic; math_ops installs the operators and array_ops indexing when imported."""
        if not (operator.startswith("__") and operator.endswith("__")):
            raise ValueError("Tensor._override_operator: %r is not an operator name" % operator)
        setattr(cls, operator, func)

    def __bool__(self):
        raise TypeError("Using a tf.Tensor as a Python bool is not allowed.")

    def __iter__(self):
        raise TypeError("'Tensor' object is not iterable.")


def _format_attr(value):
    if isinstance(value, type(True)):
        return "1" if value else "0"
    if isinstance(value, _dtypes.DType):
        return value.name
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(_format_attr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (np.integer, np.floating)):
        return _format_attr(value.item())
    return str(value)


def apply_op(op_type, inputs, attrs=None, name=None, cls=Operation):
    """Creates the IR node `op_type(inputs...)` with string attributes, in the default graph (in eager
    mode: records it as a lazy array, see eager.py)."""
    if _EAGER is not None:
        return _EAGER.apply(op_type, inputs, attrs)
    graph = get_default_graph()
    attrs = {k: _format_attr(v) for k, v in (attrs or {}).items() if v is not None}
    keys = list(attrs.keys())
    op_handle = _op_handle(op_type)
    node_name = graph.unique_name(name or op_type)
    inputs = [convert_to_tensor(x) for x in inputs]
    if graph._body_stack:  # inside a cond/while_loop body: outer tensors become params (bodies are closed)
        inputs = graph._body_stack[-1].capture_inputs(op_type, inputs)
    deps = _Symbol.group([op._symbol for op in graph._control_stack]).handle if graph._control_stack else None
    symbol = _Symbol(C.symbol_op(op_handle, attrs, node_name, [x.handle for x in inputs], deps))
    op = cls(symbol, op_type, node_name, inputs, graph)
    _check_static_shapes(op, op_type, keys, attrs, inputs)
    return op.outputs[0] if len(op.outputs) == 1 and cls is Operation else op


def _variable_node(name, attrs):
    graph = get_default_graph()
    node_name = graph.unique_name(name)
    return _Symbol(C.symbol_variable(node_name, {k: str(v) for k, v in attrs.items()})), node_name


def placeholder(dtype, shape=None, name=None):
    """A graph input fed by Session.run's feed_dict; None dims take any size."""
    if _EAGER is not None:
        raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
    dtype = _dtypes.as_dtype(dtype)
    attrs = {"__kind__": "placeholder", "__dtype__": dtype.name}
    if shape is not None:
        shape = [None if d is None else int(d) for d in _as_shape_list(shape)]
        attrs["__shape__"] = _shape_text(shape)
    symbol, node_name = _variable_node(name or "Placeholder", attrs)
    op = Operation(symbol, "Placeholder", node_name, [], get_default_graph())
    get_default_graph()._inputs[node_name] = op.outputs[0]
    t = op.outputs[0]
    t._inferred = (TensorShape(shape), dtype)
    return t


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    """A placeholder that takes `input`'s value when a run does not feed it: an identity of the default,
    which a run may feed like any single-output tensor (the session replaces it by the fed value). Its
    static shape is `shape` (None: unknown), as TF's, so a run may feed any value of that shape; what
    is computed from it is inferred from the default's shape until a run feeds it."""
    default = convert_to_tensor(input)
    dims = None if shape is None else _as_shape_list(shape)
    known = default.shape.dims
    if known is not None and dims is not None and (len(known) != len(dims) or any(
            d is not None and k is not None and d != k for d, k in zip(dims, known))):
        raise ValueError("placeholder_with_default: default of shape %s is not compatible with shape %s"
                         % (default.shape, TensorShape(dims)))
    out = apply_op("identity", [default], name=name or "PlaceholderWithDefault")
    out._static_shape = TensorShape(dims)
    return out


def constant(value, dtype=None, shape=None, name=None):
    """A tensor bound into the graph (NumPy bytes through the constant op's data_base64); in eager
    mode a lazy leaf holding a copy of the value."""
    if isinstance(value, Tensor):
        raise TypeError("constant() takes a Python or NumPy value, not a Tensor")
    arr, dtype = _constant_array(value, dtype, shape)
    if _EAGER is not None:
        return _EAGER.from_numpy(arr, dtype)
    attrs = {"dtype": dtype.name, "shape": tuple(arr.shape),
             "data_base64": base64.b64encode(arr.tobytes()).decode("ascii")}
    t = apply_op("constant", [], attrs, name=name or "Const")
    t._inferred = (TensorShape(arr.shape), dtype)
    return t


def _constant_array(value, dtype, shape):
    """(C-contiguous NumPy array, DType) of a constant: floats default to float32, Python ints to int32."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    else:
        arr = np.asarray(value)
        if arr.dtype.kind == "f":
            dtype = _dtypes.float32
        elif arr.dtype.kind in "iu":
            dtype = _dtypes.int64 if arr.dtype == np.int64 and not isinstance(value, (int, list, tuple)) \
                else _dtypes.int32
        else:
            dtype = _dtypes.as_dtype(arr.dtype)
    arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
    if shape is not None:
        shape = _as_shape_list(shape)
        arr = np.broadcast_to(arr, shape) if arr.size == 1 else arr.reshape(shape)
    return np.require(arr, requirements="C"), dtype


def convert_to_tensor(value, dtype=None, name=None):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Operation):
        return value.outputs[0]
    conv = getattr(value, "_as_tensor", None)
    if conv is not None:
        return conv()
    return constant(value, dtype=dtype, name=name)


def _assigned_value(ref, value, op_name):
    """`value` as a tensor of ref's dtype; a tensor of another dtype is TF's TypeError naming both."""
    tensor = convert_to_tensor(value, dtype=ref.dtype)
    if tensor.dtype != ref.dtype:
        raise TypeError("Input 'value' of '%s' Op has type %s that does not match type %s of argument 'ref'."
                        % (op_name, tensor.dtype.name, ref.dtype.name))
    return tensor


class Variable(Tensor):
    """A persistent, named IR variable (kind "variable"); its initializer assigns initial_value. In
    eager mode tf.Variable(...) makes an eager.EagerVariable (a lazy leaf assigned in place)."""

    def __new__(cls, *args, **kwargs):
        if _EAGER is not None and cls is Variable:
            cls = _EAGER.EagerVariable
        return Tensor.__new__(cls)

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, collections=None,
                 validate_shape=True):
        graph = get_default_graph()
        with graph._init_scope():
            self._init(graph, initial_value, trainable, name, dtype, collections, validate_shape)

    def _init(self, graph, initial_value, trainable, name, dtype, collections, validate_shape):
        if callable(initial_value):
            initial_value = initial_value()
        if dtype is not None and not isinstance(initial_value, Tensor):
            initial_value = constant(initial_value, dtype=dtype)
        init = convert_to_tensor(initial_value)
        if dtype is not None and init.dtype != _dtypes.as_dtype(dtype):
            init = apply_op("cast", [init], {"dtype": _dtypes.as_dtype(dtype).name})
        shape, vdtype = init.shape, init.dtype
        attrs = {"__kind__": "variable", "__dtype__": vdtype.name}
        if shape.dims is not None and validate_shape:
            attrs["__shape__"] = _shape_text(shape.dims)
        symbol, node_name = _variable_node(name or "Variable", attrs)
        op = Operation(symbol, "VariableV2", node_name, [], graph)
        graph._inputs[node_name] = self
        Tensor.__init__(self, op, 0, symbol)
        op.outputs = [self]
        self._inferred = (shape, vdtype)
        self.initial_value = init
        self.trainable = trainable
        with control_dependencies(None):
            self.initializer = apply_op("assign", [self, init], name=node_name + "/Assign").op
        default = ["variables"] + (["trainable_variables"] if trainable else [])
        for key in collections if collections is not None else default:  # TF: collections=[] puts it in none
            graph.add_to_collection(key, self)

    def _as_tensor(self):
        return self

    def value(self):
        return self

    def read_value(self):
        return self

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return apply_op("assign", [self, _assigned_value(self, value, "Assign")], name=name or "Assign")

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return apply_op("assign_add", [self, _assigned_value(self, delta, "AssignAdd")], name=name or "AssignAdd")

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return apply_op("assign_sub", [self, _assigned_value(self, delta, "AssignSub")], name=name or "AssignSub")

    def load(self, value, session=None):
        _hook("session")(session).set_variable(self.op.name, value)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.op.name, self.shape, self.dtype.name)
