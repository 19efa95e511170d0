"""tf.contrib.eager's containers and iterators (TF 1.x, `import tensorflow.contrib.eager as tfe`):

- tfe.Iterator(dataset): a Python iterator over a tf.data Dataset in eager mode, each element a structure of
  EagerTensors (for x, y in tfe.Iterator(ds); next(it); it.get_next() raises OutOfRangeError at the end).
  In eager mode a Dataset is itself iterable, and Dataset.map / filter apply their function to the element's
  tensors as it is produced (no tracing: eager ops run as written).
- tfe.Network: a layer container (TF 1.4-1.7's tfe.Network): track_layer(layer) registers a layer; call(inputs)
  is written by the subclass; __call__ runs it in the network's variable scope, so the layers' variables are
  named "<network>/<layer>/kernel"; variables / trainable_variables / layers / get_layer. tfe.Sequential
  applies a list of layers in order. (Works in graph mode too, as TF's did.)
- tfe.Saver(var_list): save(file_prefix, global_step=None) / restore(file_prefix) of eager variables in TF's
  checkpoint format (tf.train.Saver underneath).
"""
import numpy as np

from . import framework as _framework
from .layers import Layer
from .data import EagerIterator as Iterator, _require_eager  # noqa: F401 (tfe.Iterator)
from .ops.variable_scope import variable_scope

__all__ = ["Iterator", "Network", "Sequential", "Saver", "defun", "num_gpus"]


class Network(Layer):
    """tfe.Network: a Layer made of the layers it tracks (track_layer), called through call()."""

    def __init__(self, name=None):
        Layer.__init__(self, name=name)
        self._layers = []

    def track_layer(self, layer):
        """Registers `layer` (a tf.layers Layer or another Network) as part of this network; returns it."""
        if not isinstance(layer, Layer):
            raise TypeError("Network.track_layer() passed type %s, not a tf.layers.Layer" % type(layer).__name__)
        if layer not in self._layers:
            self._layers.append(layer)
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def get_layer(self, name=None, index=None):
        if index is not None:
            if len(self._layers) <= index:
                raise ValueError("Was asked to retrieve layer at index %d but model only has %d layers."
                                 % (index, len(self._layers)))
            return self._layers[index]
        for layer in self._layers:
            if layer.name == name or layer.name.split("/")[-1] == name:
                return layer
        raise ValueError("No such layer: %s" % name)

    @property
    def variables(self):
        seen, out = set(), []
        for v in list(self._variables) + [v for layer in self._layers for v in layer.variables]:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return out

    weights = variables

    @property
    def trainable_variables(self):
        if not self.trainable:
            return []
        own = [v for v in self._variables if v.trainable]
        return own + [v for layer in self._layers for v in layer.trainable_variables if v not in own]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        trainable = set(id(v) for v in self.trainable_variables)
        return [v for v in self.variables if id(v) not in trainable]

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError("A tfe.Network subclass must define call(inputs)")

    def __call__(self, inputs, *args, **kwargs):
        if self._scope is None:
            with variable_scope(self._name, default_name=None if self._name else self._base_name) as scope:
                self._scope = scope
        with variable_scope(self._scope, reuse=True if self.built else None):
            result = self.call(inputs, *args, **kwargs)
        self.built = True
        return result


class Sequential(Network):
    """tfe.Sequential(layers): applies the layers (or callables) in order."""

    def __init__(self, layers_funcs=None, name=None):
        Network.__init__(self, name=name)
        self._funcs = []
        for f in layers_funcs or []:
            self.add(f)

    def add(self, layer_func):
        if isinstance(layer_func, Layer):
            self.track_layer(layer_func)
        elif not callable(layer_func):
            raise TypeError("Sequential.add() takes a Layer or a callable, got %r" % (layer_func,))
        self._funcs.append(layer_func)

    def call(self, inputs, training=None):
        for f in self._funcs:
            inputs = f(inputs)
        return inputs


class _EagerSession(object):
    """What tf.train.Saver reads and writes through, for eager variables (their values by name)."""

    def __init__(self, variables):
        self._by_name = {v.op.name: v for v in variables}

    def get_variable(self, name):
        return self._by_name[name].numpy()

    def set_variable(self, name, value):
        self._by_name[name].assign(value)

    def run(self, tensor):
        return tensor.numpy()


class Saver(object):
    """tfe.Saver(var_list): saves and restores eager variables (a list, or a dict name -> variable) in TF's
    checkpoint format."""

    def __init__(self, var_list):
        from .train.saver import Saver as _GraphSaver
        _require_eager("tf.contrib.eager.Saver")
        eager, _framework._EAGER = _framework._EAGER, None  # the graph Saver refuses eager mode; its logic holds
        try:
            self._saver = _GraphSaver(var_list, max_to_keep=None)
        finally:
            _framework._EAGER = eager
        variables = list(var_list.values()) if isinstance(var_list, dict) else list(var_list)
        self._session = _EagerSession(variables)

    def save(self, file_prefix, global_step=None):
        step = None if global_step is None else int(np.asarray(global_step.numpy() if hasattr(global_step, "numpy")
                                                               else global_step))
        return self._saver.save(self._session, file_prefix, global_step=step)

    def restore(self, file_prefix):
        self._saver.restore(self._session, file_prefix)


def defun(func=None, input_signature=None, autograph=True):
    """tfe.defun: TF compiles the function to a graph function; tinyflow's eager ops already record lazily and
    run fused, so the function is returned as it is (same results)."""
    if func is None:
        return lambda f: f
    return func


def num_gpus():
    """Eager mode runs on the CPU target: 0."""
    return 0
