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
"""
from ._lib import LIB_PATH, TinyflowError, check_call as _check_call, c_str as _c_str
from .dtypes import DType, as_dtype, bool, float32, float64, int32, int64  # noqa: A004
from .framework import (Dimension, Graph, Operation, Tensor, TensorShape, Variable, constant, control_dependencies,
                        convert_to_tensor, get_default_graph, name_scope, placeholder, reset_default_graph)
from .math_ops import *  # noqa: F401,F403
from .array_ops import *  # noqa: F401,F403
from .state_ops import *  # noqa: F401,F403
from .gradients import gradients
from .session import InteractiveSession, Session, get_default_session
from . import nn, train, ir  # noqa: F401
from .ir import list_ops, list_passes

errors = type("errors", (), {"OpError": TinyflowError, "InvalidArgumentError": TinyflowError})
float16 = float32
newaxis = None
__version__ = "0.1"


def load_op_library(path):
    """dlopens an op library (IRLoadOpLibrary); its ops can then be used through tinyflow.ir or apply_op."""
    import os
    from ._lib import LIB
    _check_call(LIB.IRLoadOpLibrary(_c_str(os.path.abspath(path))))
    return path


def get_variable(name, shape=None, dtype=float32, initializer=None, trainable=True, **unused):
    """A new variable (no variable-scope reuse): initializer is a value, a tensor or fn(shape, dtype)."""
    if initializer is None:
        limit = (6.0 / sum(shape[-2:] if len(shape) > 1 else [shape[0], 1])) ** 0.5
        initial = random_uniform(shape, -limit, limit, dtype=dtype)  # noqa: F405
    elif callable(initializer):
        initial = initializer(shape, dtype=dtype)
    else:
        initial = initializer
    return Variable(initial, trainable=trainable, name=name, dtype=dtype)


def apply_op(op_name, inputs, attrs=None, name=None):
    """Any registered op by name (e.g. one from a loaded op library): op_name(inputs, **attrs)."""
    from .framework import apply_op as _apply
    return _apply(op_name, inputs, attrs, name=name)
