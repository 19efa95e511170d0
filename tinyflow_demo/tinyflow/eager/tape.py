"""tf.GradientTape over the library's lazy tapes (IRLazyTape*).

The tape records nothing of its own: the lazy arrays already are IR nodes, so gradient() runs the
library's reverse-mode Gradient pass over the DAG recorded since the tape started and returns
pending arrays, which fuse with the optimizer's update into one trace.
"""
from .. import eager as _eager
from .._lib import C
from . import EagerTensor, EagerVariable
from ..framework import convert_to_tensor

__all__ = ["GradientTape", "gradients_function", "value_and_gradients_function", "implicit_gradients",
           "implicit_value_and_gradients"]

def _flatten(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _gradient(handle, source):
    """The gradient of `source` as a tensor; it has the (floating) dtype of its source, so knowing
    that asks the library for no dtype inference (the optimizer's update needs the dtype)."""
    grad = EagerTensor(handle)
    dtype = source._dtype
    if dtype is not None and dtype.is_floating:
        grad._dtype = dtype
    return grad


class GradientTape(object):
    """Records the operations run inside `with tf.GradientTape() as tape:` for differentiation.

    Trainable variables read inside the block are watched automatically; other tensors with
    tape.watch(t). tape.gradient(target, sources) may be called once (persistent=True: any number
    of times) and returns a gradient for each source (None where the target does not depend on it),
    in the structure of `sources`.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        if not _eager.executing_eagerly():
            raise RuntimeError("tf.GradientTape needs eager execution: call tf.enable_eager_execution() first.")
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._handle = None
        self._watched = []  # the watched variables, in watch order (watched_variables())
        self._watched_ids = set()
        self._recording = False

    def __enter__(self):
        if self._handle is not None:
            raise ValueError("a GradientTape can be entered once")
        self._handle = C.tape_create(bool(self._persistent))
        self._recording = True
        if self._watch_accessed:
            _eager._tapes().append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._stop()
        return False

    def _stop(self):
        if self._recording:
            self._recording = False
            if self in _eager._tapes():
                _eager._tapes().remove(self)
            C.tape_stop(self._handle)

    def __del__(self):
        try:
            self._free()
        except Exception:  # interpreter shutdown
            pass

    def _free(self):
        if self._handle:
            self._stop()
            C.free(self._handle)
            self._handle = None

    def _check_recording(self):
        if not self._recording:
            raise ValueError("GradientTape.watch() is only valid while the tape is recording (inside `with`).")

    def watch(self, tensor):
        """Differentiates with respect to `tensor` (or each tensor of a list) too."""
        self._check_recording()
        for t in _flatten(tensor):
            if isinstance(t, EagerVariable):
                self._watch_variable(t)
            elif isinstance(t, EagerTensor):
                C.tape_watch(self._handle, t._h)
            else:
                raise TypeError("GradientTape.watch takes eager tensors or variables, got %r" % (t,))

    def _watch_variable(self, variable):
        if id(variable) not in self._watched_ids:
            self._watched_ids.add(id(variable))
            self._watched.append(variable)
            C.tape_watch(self._handle, variable._h)

    def watched_variables(self):
        return list(self._watched)

    def stop_recording(self):
        raise NotImplementedError("tinyflow's GradientTape cannot pause recording (stop_recording); "
                                  "compute the values outside the `with` block instead")

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=None):
        """d(sum of target)/d(source) for each source (None when unconnected), shaped like `sources`."""
        if self._handle is None:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent tapes.")
        targets = [convert_to_tensor(t) for t in _flatten(target)]
        flat = _flatten(sources)
        heads = None  # (NULL: ones)
        if output_gradients is not None:
            from ..ops.array_ops import ones_like
            heads = [ones_like(t) if g is None else convert_to_tensor(g)
                     for t, g in zip(targets, _flatten(output_gradients))]
        grads = C.tape_gradient(self._handle, [t._h for t in targets], None if heads is None else [h._h for h in heads],
                                [s._h for s in flat])
        out = [None if g is None else _gradient(g, s) for g, s in zip(grads, flat)]
        if not self._persistent:
            self._free()
        if isinstance(sources, (list, tuple)):
            return out if isinstance(sources, list) else tuple(out)
        return out[0]


# ---- tf.contrib.eager's function transformations (TF 1.x), over GradientTape ----

def value_and_gradients_function(f, params=None):
    """tfe.value_and_gradients_function: a function of f's arguments returning (f(*args), the gradients
    of f's output with respect to the positional arguments indexed by `params`, default all)."""
    def value_and_grads(*args, **kwargs):
        args = [a if isinstance(a, (EagerTensor, EagerVariable)) else convert_to_tensor(a) for a in args]
        chosen = list(range(len(args))) if params is None else list(params)
        with GradientTape() as tape:
            for i in chosen:
                tape.watch(args[i])
            value = f(*args, **kwargs)
        return value, tape.gradient(value, [args[i] for i in chosen])
    return value_and_grads


def gradients_function(f, params=None):
    """tfe.gradients_function: value_and_gradients_function without the value."""
    value_and_grads = value_and_gradients_function(f, params)
    return lambda *args, **kwargs: value_and_grads(*args, **kwargs)[1]


def implicit_value_and_gradients(f):
    """tfe.implicit_value_and_gradients: a function returning (f(*args), [(gradient, variable)]) for the
    trainable variables f reads."""
    def value_and_grads(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = tape.watched_variables()
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was being computed.")
        return value, list(zip(tape.gradient(value, variables), variables))
    return value_and_grads


def implicit_gradients(f):
    """tfe.implicit_gradients: implicit_value_and_gradients without the value (for apply_gradients)."""
    value_and_grads = implicit_value_and_gradients(f)
    return lambda *args, **kwargs: value_and_grads(*args, **kwargs)[1]
