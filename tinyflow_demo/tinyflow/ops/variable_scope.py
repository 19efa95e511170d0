"""TF1 variable scopes: tf.variable_scope, tf.get_variable, tf.get_variable_scope, tf.AUTO_REUSE.

Each graph keeps a store of the variables made by get_variable (by full name), the current
VariableScope and how often each scope name was opened (default_name scopes are made unique
from those counts, as TF does). A variable is named "<scope>/<name>" whatever name scope is
active; a string variable_scope also opens a (uniquified) name scope for the ops inside it.
"""
import contextlib
import enum
import inspect
import warnings

import numpy as np

from .. import dtypes as _dtypes
from ..framework import Tensor, TensorShape, Variable, convert_to_tensor, get_default_graph
from .init_ops import glorot_uniform_initializer, zeros_initializer

__all__ = ["VariableScope", "variable_scope", "get_variable", "get_variable_scope", "AUTO_REUSE",
           "get_local_variable"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class VariableScope(object):
    """A variable scope: its name, reuse flag, default initializer, regularizer and dtype."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, dtype=_dtypes.float32,
                 name_scope=""):
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = _dtypes.as_dtype(dtype)
        self._name_scope = name_scope

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)

    def reuse_variables(self):
        """From now on get_variable in this scope (and its sub-scopes opened later) reuses."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = _dtypes.as_dtype(dtype)

    def get_variable(self, name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, validate_shape=True, **unsupported):
        """The variable "<scope name>/<name>": created, or found when reusing (see tf.get_variable)."""
        _check_unsupported(unsupported)
        full_name = self._name + "/" + name if self._name else name
        return _store().get_variable(
            full_name, shape, _dtypes.as_dtype(dtype if dtype is not None else self._dtype),
            initializer if initializer is not None else self._initializer,
            regularizer if regularizer is not None else self._regularizer,
            self._reuse if reuse is None else reuse, True if trainable is None else trainable, collections,
            validate_shape)

    def global_variables(self):
        return _scoped(get_default_graph().get_collection("variables"), self._name)

    def trainable_variables(self):
        return _scoped(get_default_graph().get_collection("trainable_variables"), self._name)


def _scoped(variables, scope_name):
    prefix = scope_name + "/" if scope_name else ""
    return [v for v in variables if v.op.name.startswith(prefix)]


def _check_unsupported(kwargs):
    if kwargs.get("partitioner") is not None:
        warnings.warn("tinyflow ignores variable partitioners: each variable is one unpartitioned tensor",
                      stacklevel=3)
    used = sorted(k for k, v in kwargs.items() if v is not None and k not in (
        "caching_device", "use_resource", "synchronization", "aggregation", "partitioner"))
    if used:
        raise NotImplementedError("tinyflow variable scopes do not support %s" % ", ".join(used))


def _shape_text(shape):
    return "<unknown>" if shape.dims is None else "(%s)" % ", ".join("?" if d is None else str(d)
                                                                     for d in shape.dims)


def _compatible(a, b):
    if a.dims is None or b.dims is None:
        return True
    return len(a.dims) == len(b.dims) and all(x is None or y is None or x == y for x, y in zip(a.dims, b.dims))


class _VariableStore(object):
    """Per-graph state: variables by full name, the current scope, scope open counts."""

    def __init__(self):
        self.vars = {}
        self.current_scope = VariableScope(False)
        self.scope_counts = {}

    def open_scope(self, name):
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1

    def close_subscopes(self, name):
        for key in self.scope_counts:
            if key.startswith(name + "/"):
                self.scope_counts[key] = 0

    def get_variable(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                     validate_shape):
        from_value = initializer is not None and (isinstance(initializer, Tensor) or not callable(initializer))
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        shape = TensorShape(None if shape is None else _shape_list(shape))
        if name in self.vars:
            return self._existing(name, shape, dtype, reuse)
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with tf.get_variable(). Did you "
                             "mean to set reuse=tf.AUTO_REUSE in VarScope?" % name)
        if not from_value and not shape.is_fully_defined():
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead was %s."
                             % (name, _shape_text(shape)))
        var = _new_variable(name, shape, dtype, initializer, from_value, trainable, collections, validate_shape)
        self.vars[name] = var
        if regularizer is not None:
            loss = regularizer(var)
            if loss is not None:
                get_default_graph().add_to_collection("regularization_losses", loss)
        return var

    def _existing(self, name, shape, dtype, reuse):
        if reuse is False:
            raise ValueError("Variable %s already exists, disallowed. Did you mean to set reuse=True or "
                             "reuse=tf.AUTO_REUSE in VarScope?" % name)
        found = self.vars[name]
        if not _compatible(shape, found.shape):
            raise ValueError("Trying to share variable %s, but specified shape %s and found shape %s."
                             % (name, _shape_text(shape), _shape_text(found.shape)))
        if dtype != found.dtype:
            raise ValueError("Trying to share variable %s, but specified dtype %s and found dtype %s."
                             % (name, dtype.name, found.dtype.name))
        return found


def _shape_list(shape):
    if isinstance(shape, TensorShape):
        return shape.dims
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [None if d is None else int(d) for d in shape]


def _call_initializer(initializer, shape, dtype):
    if inspect.isclass(initializer):
        initializer = initializer(dtype=dtype)
    try:
        params = inspect.signature(initializer).parameters
    except (TypeError, ValueError):  # a builtin: call it the plain way
        params = {}
    if "partition_info" in params or any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return initializer(shape, dtype=dtype, partition_info=None)
    return initializer(shape, dtype=dtype)


def _new_variable(name, shape, dtype, initializer, from_value, trainable, collections, validate_shape):
    """A Variable named exactly `name` (no name scope), its initial value under name/Initializer."""
    graph = get_default_graph()
    saved = graph._name_stack
    try:
        graph._name_stack = [name, "Initializer"]
        with graph._init_scope():  # outside control-flow bodies and control dependencies
            if from_value:
                initial = convert_to_tensor(initializer)
            else:
                if initializer is None:
                    initializer = glorot_uniform_initializer() if dtype.is_floating else zeros_initializer()
                initial = convert_to_tensor(_call_initializer(initializer, shape.dims, dtype))
        graph._name_stack = []
        collections = list(collections) if collections is not None else ["variables"]
        if trainable and "trainable_variables" not in collections:
            collections.append("trainable_variables")
        return Variable(initial, trainable=trainable, name=name, collections=collections,
                        validate_shape=validate_shape)
    finally:
        graph._name_stack = saved


def _store():
    graph = get_default_graph()
    store = getattr(graph, "_variable_store", None)
    if store is None:
        store = graph._variable_store = _VariableStore()
    return store


def get_variable_scope():
    """The current VariableScope (the root scope, named "", outside any variable_scope)."""
    return _store().current_scope


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, validate_shape=True, **unsupported):
    """The variable "<current scope>/<name>", created or (when the scope reuses) found.

    Without reuse an existing name is a ValueError; with reuse=True a missing one is; with
    tf.AUTO_REUSE it is created once and found afterwards. initializer: an initializer (called
    with shape and dtype), a tensor or a value (then shape must be None); default: the scope's,
    else glorot_uniform for floating dtypes and zeros for the others.
    """
    return get_variable_scope().get_variable(name, shape, dtype, initializer, regularizer, None, trainable,
                                             collections, validate_shape, **unsupported)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, validate_shape=True, **unsupported):
    """get_variable for a local variable: not trainable, in the LOCAL_VARIABLES collection (not in
    GLOBAL_VARIABLES), initialized by tf.local_variables_initializer()."""
    collections = list(collections or []) + ["local_variables"]
    return get_variable(name, shape, dtype, initializer, regularizer, False, collections, validate_shape,
                        **unsupported)


class variable_scope(object):  # noqa: N801 (TF's name)
    """Context manager that opens a variable scope (and, by default, a name scope of the same name).

    name_or_scope: a string (a sub-scope of the current one) or a VariableScope (entered again with
    its own name; the name scope opened is new, as in TF); default_name: used, made unique, when name_or_scope is None.
    reuse: None inherits, True reuses, tf.AUTO_REUSE creates or reuses; sub-scopes inherit it.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                 reuse=None, dtype=None, auxiliary_name_scope=True, **unsupported):
        _check_unsupported(unsupported)
        if name_or_scope is None and default_name is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        if reuse is not None and reuse is not False and name_or_scope is None:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._name_or_scope, self._default_name = name_or_scope, default_name
        self._initializer, self._regularizer, self._reuse, self._dtype = initializer, regularizer, reuse, dtype
        self._aux_name_scope = auxiliary_name_scope
        self._saved = self._counts = self._name = None

    def __enter__(self):
        store, graph = _store(), get_default_graph()
        old = store.current_scope
        self._saved = (old, graph._name_stack)
        if isinstance(self._name_or_scope, VariableScope):
            scope = self._name_or_scope
            name, reuse = scope.name, self._reuse or scope.reuse
            relative = name.split("/")[-1]
            defaults = (scope.initializer, scope.regularizer, scope.dtype)
        else:
            relative = self._name_or_scope
            if relative is None:
                relative = _unique_scope_name(store, old.name, self._default_name)
            name = old.name + "/" + relative if old.name else relative
            reuse = self._reuse or old.reuse
            defaults = (old.initializer, old.regularizer, old.dtype)
        if self._aux_name_scope and relative:
            # TF opens a new (made unique) name scope, relative to the current one, even when it
            # enters a scope object again: only its original_name_scope stays the first one.
            graph._name_stack = graph.unique_name(relative).split("/")
        name_scope = self._name_or_scope.original_name_scope if isinstance(self._name_or_scope, VariableScope) \
            else current_name_scope()
        store.open_scope(name)
        self._counts = dict(store.scope_counts)  # what leaving a re-entered scope object restores
        new = VariableScope(reuse, name, *[mine if mine is not None else inherited for mine, inherited in
                                           zip((self._initializer, self._regularizer, self._dtype), defaults)],
                            name_scope=name_scope)
        self._name = name
        store.current_scope = new
        return new

    def __exit__(self, *exc):
        store, graph = _store(), get_default_graph()
        old, name_stack = self._saved
        if isinstance(self._name_or_scope, VariableScope):
            store.scope_counts = self._counts
        else:
            store.close_subscopes(self._name)
        store.current_scope = old
        graph._name_stack = name_stack
        return False


def current_name_scope():
    """The name scope ops are created in now, as "a/b/" ("" at the root)."""
    stack = get_default_graph()._name_stack
    return "/".join(stack) + "/" if stack else ""


@contextlib.contextmanager
def absolute_name_scope(name_scope):
    """Ops inside are named under name_scope ("a/b/", "" for the root), whatever scope is active."""
    graph = get_default_graph()
    saved = graph._name_stack
    graph._name_stack = name_scope.rstrip("/").split("/") if name_scope else []
    try:
        yield
    finally:
        graph._name_stack = saved


def _unique_scope_name(store, parent, prefix):
    """prefix, or prefix_1, prefix_2, ...: the first not yet opened under parent."""
    base = parent + "/" + prefix if parent else prefix
    if store.scope_counts.get(base, 0) == 0:
        return prefix
    idx = 1
    while store.scope_counts.get("%s_%d" % (base, idx), 0) > 0:
        idx += 1
    return "%s_%d" % (prefix, idx)
