"""tinyflow: a TensorFlow-1-like Python API over the IR framework's C API (libir.so), through its native module.

    import tinyflow as tf
    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, W)))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session(fusion=True) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed_dict={x: images, y: labels})

Every call into the library goes through one native module, tinyflow._C (tinyflow_demo/csrc/, CMake
target tinyflow_C), which _lib.py finds in the package (installed), else next to $TINYFLOW_LIB (libir.so or
its directory), else in ../../build/lib beside libir.so. tinyflow.ir exposes the graphs and passes underneath.

tf.enable_eager_execution() at program start switches to TF 1.x eager execution (eager.py): ops
record lazy arrays that run fused when a value is needed; tf.eager_stats() reports the traces.
"""
import types as _types

from ._lib import LIB_PATH, TinyflowError
from .dtypes import DType, as_dtype, bool, float32, float64, int32, int64  # noqa: A004
from .framework import (Dimension, Graph, Operation, Tensor, TensorShape, Variable, constant, control_dependencies,
                        convert_to_tensor, get_default_graph, name_scope, placeholder, placeholder_with_default,
                        reset_default_graph)
from . import ir, session as _session, graph_def as _graph_def  # noqa: F401 (they install the core's hooks)
from .ops.math_ops import *  # noqa: F401,F403
from .ops.array_ops import *  # noqa: F401,F403
from .ops.state_ops import *  # noqa: F401,F403
from .ops.gradients import gradients
from .ops.control_flow_ops import case, cond, while_loop
from .ops.tensor_array_ops import TensorArray
from .ops.functional_ops import foldl, foldr, map_fn, scan
from .ops import parallel_for  # noqa: F401
from .ops.parallel_for import hessians, vectorized_map
from .session import InteractiveSession, Session, get_default_session
from .ops.init_ops import *  # noqa: F401,F403
from . import nest  # noqa: F401
from .ops.variable_scope import AUTO_REUSE, VariableScope, get_variable, get_variable_scope, variable_scope
from .ops import nn, init_ops as _init_ops  # noqa: F401
from . import train, ir  # noqa: F401
# tf.nn.rnn_cell and the unrolled RNNs join tf.nn here: the cells use nn.dropout, so nn cannot import them.
from .ops import rnn_cell as _cells, rnn_cell_wrappers as _wrappers  # noqa: E402
from .ops import rnn as _rnn, dynamic_rnn as _dynamic_rnn  # noqa: E402
nn.rnn_cell = _types.SimpleNamespace(**{_n: getattr(_m, _n) for _m in (_cells, _wrappers) for _n in _m.__all__})
nn.static_rnn, nn.static_bidirectional_rnn = _rnn.static_rnn, _rnn.static_bidirectional_rnn
nn.dynamic_rnn, nn.bidirectional_dynamic_rnn = _dynamic_rnn.dynamic_rnn, _dynamic_rnn.bidirectional_dynamic_rnn
nn.__all__ += ["rnn_cell", "static_rnn", "static_bidirectional_rnn", "dynamic_rnn", "bidirectional_dynamic_rnn"]
from .ir import list_ops, list_passes
from .eager import eager_stats, enable_eager_execution, executing_eagerly, reset_eager_stats
from .eager import tape as _eager_tape
from .eager.tape import GradientTape

from . import errors  # noqa: F401
float16 = float32
newaxis = None
__version__ = "0.1"
initializers = _types.SimpleNamespace(
    zeros=zeros_initializer, ones=ones_initializer, constant=constant_initializer,  # noqa: F405
    random_uniform=random_uniform_initializer, random_normal=random_normal_initializer,  # noqa: F405
    truncated_normal=truncated_normal_initializer, variance_scaling=variance_scaling_initializer,  # noqa: F405
    glorot_uniform=glorot_uniform_initializer, glorot_normal=glorot_normal_initializer,  # noqa: F405
    he_normal=_init_ops.he_normal, he_uniform=_init_ops.he_uniform, lecun_normal=_init_ops.lecun_normal,
    lecun_uniform=_init_ops.lecun_uniform,
    global_variables=global_variables_initializer, variables=variables_initializer)  # noqa: F405
contrib = _types.SimpleNamespace(rnn=_types.SimpleNamespace(
    static_rnn=nn.static_rnn, static_bidirectional_rnn=nn.static_bidirectional_rnn, **vars(nn.rnn_cell)),
    eager=_types.SimpleNamespace(GradientTape=GradientTape, Variable=Variable, executing_eagerly=executing_eagerly,
                                 enable_eager_execution=enable_eager_execution, stats=eager_stats,
                                 reset_stats=reset_eager_stats, gradients_function=_eager_tape.gradients_function,
                                 value_and_gradients_function=_eager_tape.value_and_gradients_function,
                                 implicit_gradients=_eager_tape.implicit_gradients,
                                 implicit_value_and_gradients=_eager_tape.implicit_value_and_gradients))

# --- tf.layers, tf.losses ---
from . import layers  # noqa: E402,F401
from .ops import losses  # noqa: E402,F401


# --- nn ops extra (tf-nnops) ---
from .ops import tf_nn_ops as _tf_nn_ops  # noqa: E402
for _name in ("elu", "selu", "softsign", "depthwise_conv2d", "separable_conv2d", "lrn", "local_response_normalization",
              "top_k", "in_top_k"):
    setattr(nn, _name, getattr(_tf_nn_ops, _name))
for _name in ("is_nan", "is_inf", "is_finite", "space_to_batch_nd", "batch_to_space_nd", "space_to_batch",
              "batch_to_space"):
    globals()[_name] = getattr(_tf_nn_ops, _name)
nn.space_to_batch, nn.batch_to_space = _tf_nn_ops.space_to_batch, _tf_nn_ops.batch_to_space
del _name
# --- end nn ops extra ---


def load_op_library(path):
    """dlopens an op library (IRLoadOpLibrary); its ops can then be used through tinyflow.ir or apply_op."""
    import os
    from ._lib import C
    C.load_op_library(os.path.abspath(path))
    from . import ir as _ir
    _ir._PIPELINE_PASSES.clear()  # the library may have extended a pipeline
    return path


def load_rules(path):
    """Loads a rewrite-rule file (docs/REWRITE_RULES.md) as the rule set named after its stem, which
    sessions then apply (IRRulesLoadFile); returns that name. A malformed file raises TinyflowError
    naming the set and line."""
    import os
    from ._lib import C
    return C.rules_load_file(os.path.abspath(path))


def apply_op(op_name, inputs, attrs=None, name=None):
    """Any registered op by name (e.g. one from a loaded op library): op_name(inputs, **attrs)."""
    from .framework import apply_op as _apply
    return _apply(op_name, inputs, attrs, name=name)

# --- math, linalg and image (lead) ---
from .ops.composite_math import *  # noqa: F401,F403,E402
from .ops import image_ops as image  # noqa: E402
from .ops import composite_math as _composite_math  # noqa: E402


class _Namespace(_types.ModuleType):
    """tf.math / tf.linalg: their own names first, then tf's top-level function of the same name."""

    def __init__(self, name, own):
        super(_Namespace, self).__init__(name)
        self.__dict__.update(own)

    def __getattr__(self, attr):
        import sys
        top = sys.modules[__name__]
        if attr.startswith("__"):
            raise AttributeError(attr)
        if not hasattr(top, attr):
            raise top._compat.not_supported("tf." + self.__name__.split(".", 1)[-1], attr)
        return getattr(top, attr)


math = _Namespace("tinyflow.math", {"softplus": nn.softplus if hasattr(nn, "softplus") else _composite_math.softplus,
                                    "log_sigmoid": _composite_math.log_sigmoid})
linalg = _Namespace("tinyflow.linalg", {
    "norm": _composite_math.norm, "transpose": _composite_math.matrix_transpose, "trace": _composite_math.trace,
    "diag": _composite_math.matrix_diag, "diag_part": _composite_math.matrix_diag_part, "eye": _composite_math.eye,
    "band_part": _composite_math.matrix_band_part, "tensordot": _composite_math.tensordot, "einsum": _composite_math.einsum,
    "matmul": matmul})  # noqa: F405
from . import gfile  # noqa: E402
arg_min, arg_max = argmin, argmax  # noqa: F405  (TF1's deprecated names, still common in tutorials)
from .graph_def import write_graph as _write_graph  # noqa: E402
io = _types.SimpleNamespace(gfile=gfile, write_graph=_write_graph)
train.write_graph = _write_graph
from .train import monitored_session as _monitored_session  # noqa: E402
for _name in _monitored_session.__all__:  # tf.train.MonitoredTrainingSession, hooks, Coordinator...
    setattr(train, _name, getattr(_monitored_session, _name))
from .ops import asserts as _asserts  # noqa: E402
from .ops.asserts import *  # noqa: E402,F401,F403  (tf.Assert, tf.assert_equal, tf.check_numerics...)
from .train.supervisor import Supervisor as _Supervisor  # noqa: E402
train.Supervisor = _Supervisor
from . import keras_datasets as _keras_datasets  # noqa: E402


class _OwnNamespace(_Namespace):
    def __getattr__(self, attr):  # no fallback to tf's top level
        if attr.startswith("__"):
            raise AttributeError(attr)
        own = ", ".join(sorted(k for k in self.__dict__ if not k.startswith("_")))
        error = _compat.not_supported("tf." + self.__name__.split(".", 1)[-1], attr)
        raise type(error)("%s (tinyflow has only %s of it)" % (error, own))


keras = _OwnNamespace("tinyflow.keras", {"datasets": _types.SimpleNamespace(mnist=_keras_datasets)})
from .layers import contrib as _contrib_layers  # noqa: E402
contrib.layers = _contrib_layers
contrib.keras = keras  # TF 1.x kept tf.contrib.keras as an alias of tf.keras
from .ops import seq2seq as _seq2seq  # noqa: E402
contrib.seq2seq = _types.SimpleNamespace(sequence_loss=_seq2seq.sequence_loss)
from .ops.lstm_block_cell import LSTMBlockCell as _LSTMBlockCell  # noqa: E402
contrib.rnn.LSTMBlockCell = _LSTMBlockCell
from . import projector as _projector  # noqa: E402
contrib.tensorboard = _types.SimpleNamespace(plugins=_types.SimpleNamespace(projector=_projector))

# --- tf-train: more optimizers, learning-rate schedules, EMA on tf.train; clipping; tf.metrics ---
from .ops import metrics  # noqa: E402,F401
from .ops.clip_ops import clip_by_average_norm, clip_by_global_norm, clip_by_norm, global_norm  # noqa: E402,F401
from .train import learning_rate_decay as _lr_decay, moving_averages as _moving_averages, \
    training_ops as _training_ops  # noqa: E402
for _module in (_training_ops, _lr_decay, _moving_averages):
    for _name in _module.__all__:
        setattr(train, _name, getattr(_module, _name))

# --- tf-saver: tf.train.Saver and checkpoints, tf.summary ---
from .train import saver as _saver  # noqa: E402
from . import summary  # noqa: E402
for _name in _saver.__all__:
    setattr(train, _name, getattr(_saver, _name))
Summary = summary.Summary

# --- indexing, segment and scatter ops (indexing_ops) ---
from .ops.indexing_ops import *  # noqa: F401,F403,E402
from .ops import indexing_ops as _indexing_ops  # noqa: E402
math = globals().get("math") or _types.SimpleNamespace()
for _name in ("unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min", "segment_sum", "segment_mean",
              "segment_max", "segment_min", "cumsum", "cumprod", "invert_permutation"):
    setattr(math, _name, getattr(_indexing_ops, _name))

# --- tf-compat: configs, flags, logging, dtypes, py_func / Print, names tinyflow lacks ---
from . import app, compat as _compat, flags, tf_logging as logging  # noqa: E402
from .compat import (VERSION, GIT_VERSION, COMPILER_VERSION, ConfigProto, GPUOptions, GraphOptions,  # noqa: E402
                     OptimizerOptions, RunMetadata, RunOptions, device, disable_v2_behavior, enable_v2_behavior,
                     disable_eager_execution, test)
from .dtypes import uint8, int8, int16, uint16, uint32, uint64, string, complex64, complex128  # noqa: E402
from .ops.py_func import Print, numpy_function, print_v2 as print, py_func  # noqa: E402,A001
from .ops.variable_scope import get_local_variable  # noqa: E402
from .ops.init_ops import identity_initializer, orthogonal_initializer  # noqa: E402
half, double = float16, float64
initializers = _compat._Namespace("tf.initializers", orthogonal=orthogonal_initializer, identity=identity_initializer,
                                  **vars(initializers))
compat = _compat._Namespace("tf.compat", as_bytes=_compat.as_bytes, as_text=_compat.as_text,
                            as_str=_compat.as_text)
compat.v1 = __import__("sys").modules[__name__]
debugging = _compat._Namespace("tf.debugging", **{_n: getattr(_asserts, _n) for _n in _asserts.__all__})


# tf.estimator: Estimator, EstimatorSpec, RunConfig, inputs.numpy_input_fn, train_and_evaluate (estimator/)
from . import estimator  # noqa: E402


def _missing(module_name):
    def __getattr__(name):  # noqa: N807 (PEP 562)
        if name.startswith("__"):
            raise AttributeError(name)
        raise _compat.not_supported(module_name, name)
    return __getattr__


def _guarded(name, value):
    """A namespace whose missing names raise NotSupportedYetError: modules get a PEP 562 __getattr__ (when they
    have none), SimpleNamespaces become compat namespaces."""
    if isinstance(value, _types.ModuleType):
        if "__getattr__" not in vars(value):
            value.__getattr__ = _missing(name)
        return value
    if isinstance(value, _types.SimpleNamespace):
        return _compat._Namespace(name, **vars(value))
    return value


contrib = _compat._Namespace("tf.contrib", **{k: _guarded("tf.contrib." + k, v) for k, v in vars(contrib).items()})
nn.rnn_cell = _guarded("tf.nn.rnn_cell", nn.rnn_cell)
for _module, _name in ((nn, "tf.nn"), (train, "tf.train"), (app, "tf.app"), (flags, "tf.flags"),
                       (logging, "tf.logging"), (errors, "tf.errors"), (estimator, "tf.estimator")):
    _guarded(_name, _module)
__getattr__ = _missing("tf")
NotSupportedYetError = _compat.NotSupportedYetError

# --- tf-session: tf.data ---
from . import data  # noqa: E402,F401

# --- tf.random (TF 1.13+ names) ---
random = _OwnNamespace("tinyflow.random", {
    "normal": random_normal, "uniform": random_uniform, "truncated_normal": truncated_normal,  # noqa: F405
    "shuffle": random_shuffle, "set_random_seed": set_random_seed, "set_seed": set_random_seed})  # noqa: F405

# --- tf.nn candidate sampling: nce_loss, sampled_softmax_loss and the samplers ---
from .ops import candidate_sampling as _candidate_sampling  # noqa: E402
for _name in _candidate_sampling.__all__:
    setattr(nn, _name, getattr(_candidate_sampling, _name))
del _name

# --- tf.contrib.data: TF 1.2-1.3's name of tf.data (Dataset, Iterator) ---
contrib.data = data

# --- The subpackages' implementation modules are no TF names: Python binds a submodule on its package when it is
# imported, which would make tf.train.saver, tf.layers.contrib and tf.eager.tape; unbind them (they stay
# importable by their full names, tinyflow.train.saver).
for _pkg in (train, layers, eager):
    for _name, _value in list(vars(_pkg).items()):
        if isinstance(_value, _types.ModuleType) and _value.__name__ == _pkg.__name__ + "." + _name:
            delattr(_pkg, _name)
del _pkg, _name, _value

# --- queue-based input: tf.FIFOQueue & co, tf.train.batch & co, QueueRunner, Coordinator ---
from . import input_producers as _input_producers, queue_runner as _queue_runner  # noqa: E402
from .queue_input import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue  # noqa: E402,F401
for _module in (_queue_runner, _input_producers):
    for _name in _module.__all__:
        setattr(train, _name, getattr(_module, _name))
train.queue_runner = _compat._Namespace("tf.train.queue_runner", **{_n: getattr(_queue_runner, _n) for _n in (
    "QueueRunner", "add_queue_runner", "start_queue_runners")})
queue = _compat._Namespace("tf.queue", FIFOQueue=FIFOQueue, PaddingFIFOQueue=PaddingFIFOQueue,
                           RandomShuffleQueue=RandomShuffleQueue, QueueBase=QueueBase)
del _module, _name

# --- tf.feature_column: numeric_column, input_layer ---
from . import feature_column  # noqa: E402,F401

# --- tf.contrib.eager: Iterator, Network, Sequential, Saver (contrib_eager) ---
from . import contrib_eager as _contrib_eager  # noqa: E402
contrib.eager = _compat._Namespace("tf.contrib.eager", **dict(vars(contrib.eager), **{
    _n: getattr(_contrib_eager, _n) for _n in _contrib_eager.__all__}))

# --- every namespace: a missing name raises NotSupportedYetError naming it (tf.image.decode_jpeg, ...) ---
_PUBLIC_NAMESPACES = ("nn", "train", "image", "layers", "losses", "metrics", "summary", "data", "gfile", "io", "keras",
                      "math", "linalg", "random", "contrib", "estimator", "initializers", "compat", "debugging",
                      "test", "app", "flags", "logging", "errors", "queue", "feature_column", "python")


def _guard_all():
    """Walks tf's namespaces (public names first, so a module gets the name users write): modules get a PEP 562
    __getattr__, SimpleNamespaces become compat namespaces (both raise NotSupportedYetError with the dotted name)."""
    top = __import__("sys").modules[__name__]
    seen = {id(top)}  # (tf.compat.v1 is tf itself)
    for names in (_PUBLIC_NAMESPACES, sorted(n for n in vars(top) if n not in _PUBLIC_NAMESPACES)):
        _guard_from(top, [(top, "tf", name) for name in names if name in vars(top) and not name.startswith("_")],
                    seen)


def _guard_from(top, queue_, seen):
    while queue_:
        parent, parent_name, attr = queue_.pop(0)
        value = vars(parent).get(attr)
        dotted = "%s.%s" % (parent_name, attr)
        if isinstance(value, _types.SimpleNamespace):
            value = _compat._Namespace(dotted, **vars(value))
            setattr(parent, attr, value)
        elif isinstance(value, _types.ModuleType):
            if not value.__name__.startswith(__name__) or attr.startswith("__"):
                continue
            if "__getattr__" not in vars(value):
                value.__getattr__ = _missing(dotted)
        elif not isinstance(value, _compat._Namespace):
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        queue_.extend((value, dotted, name) for name in sorted(vars(value)) if not name.startswith("_"))


_guard_all()
