"""tinyflow: a TensorFlow-1-like Python API over the IR framework's C API (libir.so, via ctypes).

    import tinyflow as tf
    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, W)))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session(fusion=True) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed_dict={x: images, y: labels})

The library is found at $TINYFLOW_LIB (the file or its directory) or ../../build/lib/libir.so
relative to this package. tinyflow.ir exposes the graphs and passes underneath.

tf.enable_eager_execution() at program start switches to TF 1.x eager execution (eager.py): ops
record lazy arrays that run fused when a value is needed; tf.eager_stats() reports the traces.
"""
import types as _types

from ._lib import LIB_PATH, TinyflowError, check_call as _check_call, c_str as _c_str
from .dtypes import DType, as_dtype, bool, float32, float64, int32, int64  # noqa: A004
from .framework import (Dimension, Graph, Operation, Tensor, TensorShape, Variable, constant, control_dependencies,
                        convert_to_tensor, get_default_graph, name_scope, placeholder, placeholder_with_default,
                        reset_default_graph, rewrite_options)
from .math_ops import *  # noqa: F401,F403
from .array_ops import *  # noqa: F401,F403
from .state_ops import *  # noqa: F401,F403
from .gradients import gradients
from .control_flow_ops import case, cond, while_loop
from .tensor_array_ops import TensorArray
from .functional_ops import foldl, foldr, map_fn, scan
from . import parallel_for  # noqa: F401
from .parallel_for import hessians, vectorized_map
from .session import InteractiveSession, Session, get_default_session
from .init_ops import *  # noqa: F401,F403
from . import nest  # noqa: F401
from .variable_scope import AUTO_REUSE, VariableScope, get_variable, get_variable_scope, variable_scope
from . import nn, train, ir, init_ops as _init_ops  # noqa: F401
from .ir import list_ops, list_passes
from .eager import eager_stats, enable_eager_execution, executing_eagerly, reset_eager_stats
from . import eager_tape as _eager_tape
from .eager_tape import GradientTape

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


def load_op_library(path):
    """dlopens an op library (IRLoadOpLibrary); its ops can then be used through tinyflow.ir or apply_op."""
    import os
    from ._lib import LIB
    _check_call(LIB.IRLoadOpLibrary(_c_str(os.path.abspath(path))))
    return path


def load_rules(path):
    """Loads a rewrite-rule file (docs/REWRITE_RULES.md) as the rule set named after its stem, which
    sessions then apply (IRRulesLoadFile); returns that name. A malformed file raises TinyflowError
    naming the set and line."""
    import ctypes
    import os
    from ._lib import LIB
    name = ctypes.c_char_p()
    _check_call(LIB.IRRulesLoadFile(_c_str(os.path.abspath(path)), ctypes.byref(name)))
    return name.value.decode("utf-8")


def apply_op(op_name, inputs, attrs=None, name=None):
    """Any registered op by name (e.g. one from a loaded op library): op_name(inputs, **attrs)."""
    from .framework import apply_op as _apply
    return _apply(op_name, inputs, attrs, name=name)


# --- tf-session: tf.data ---
from . import data  # noqa: E402,F401
