"""The op wrappers generated from tables (tinyflow/op_def.py, as TF's gen_*_ops): the machinery, and every row."""
import inspect

import numpy as np
import pytest

import tinyflow as tf
from tinyflow import op_def
from tinyflow.ops import array_ops, indexing_ops, math_ops, nn

TABLES = [(array_ops, "_ARRAY_OPS"), (nn, "_NN_OPS"), (indexing_ops, "_INDEXING_OPS"), (math_ops, "_MATH_OPS"),
          (math_ops, "_UNARY_OPS")]
ROWS = [(module, row) for module, var in TABLES for row in getattr(module, var)]


def _recording_namespace():
    calls = []

    def apply_op(op, inputs, attrs, name=None):
        calls.append((op, inputs, attrs, name))
        return "out"
    return {"__name__": "fake_ops", "apply_op": apply_op, "_twice": lambda v: 2 * v}, calls


def test_a_row_becomes_a_function_of_that_signature_calling_its_op():
    ns, calls = _recording_namespace()
    assert op_def.define_ops(ns, [("scale(x, factor=3, name=None)", "mul_scalar", "x", {"scalar": "_twice(factor)"},
                                   "x times twice factor."),
                                  ("ident(a, b, name=None)", "pair", "b, a", {}, "b and a.", "Pair")]) == \
        ["scale", "ident"]
    scale, ident = ns["scale"], ns["ident"]
    assert str(inspect.signature(scale)) == "(x, factor=3, name=None)"
    assert (scale.__module__, scale.__name__, scale.__doc__) == ("fake_ops", "scale", "x times twice factor.")
    assert scale("X") == "out" and scale("X", factor=5, name="s") == "out"
    assert ident(1, 2) == "out"
    assert calls == [("mul_scalar", ["X"], {"scalar": 6}, None), ("mul_scalar", ["X"], {"scalar": 10}, "s"),
                     ("pair", [2, 1], {}, "Pair")]
    with pytest.raises(TypeError):
        scale("X", nonsense=1)


def test_bad_rows_are_errors_naming_them():
    ns, _ = _recording_namespace()
    with pytest.raises(ValueError, match="no name=None"):
        op_def.define_ops(ns, [("f(x)", "op", "x", {}, "doc")])
    with pytest.raises(ValueError, match="not a signature"):
        op_def.define_ops(ns, [("f x", "op", "x", {}, "doc")])
    op_def.define_ops(ns, [("g(x, name=None)", "op", "x", {}, "doc")])
    with pytest.raises(ValueError, match="g is defined twice"):
        op_def.define_ops(ns, [("g(x, name=None)", "op", "x", {}, "doc")])


@pytest.mark.parametrize("module,row", ROWS, ids=["%s.%s" % (m.__name__.rsplit(".", 1)[1], r[0].split("(")[0])
                                                  for m, r in ROWS])
def test_every_row_is_a_public_function_of_its_module(module, row):
    name = row[0].split("(")[0]
    fn = getattr(module, name)
    assert fn._op_table_row[:2] == (row[0], row[1])
    assert fn.__module__ == module.__name__ and fn.__doc__ == row[4] and fn.__doc__
    assert "%s%s" % (name, inspect.signature(fn)) == row[0].replace("_dtypes.int32", "tf.int32")


def test_generated_functions_build_their_ops():
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    relu, seg, hot, t = tf.nn.relu(x), tf.segment_sum(x, [0, 0]), tf.one_hot([2, 0], 3), tf.transpose(x)
    assert relu.op.type == "relu" and seg.op.type == "segment_sum" and seg.op.name.startswith("SegmentSum")
    assert tf.shape(x, out_type=tf.int64).dtype == tf.int64
    with tf.Session() as sess:
        r, s, h, tt = sess.run([relu, seg, hot, t])
    np.testing.assert_array_equal(r, [[1, 0], [3, 4]])
    np.testing.assert_array_equal(s, [[4, 2]])
    np.testing.assert_array_equal(h, [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(tt, [[1, 3], [-2, 4]])
