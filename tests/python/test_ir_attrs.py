"""tinyflow.ir.Graph.set_attr: node- and entry-indexed attributes must fit the graph."""
import pytest

import tinyflow as tf


def test_set_attr_rejects_an_indexed_attribute_of_the_wrong_size():
    x = tf.placeholder(tf.float32, [2], name="x")
    g = tf.ir.Graph(tf.exp(x))
    with pytest.raises(tf.TinyflowError, match=r"graph attribute 'shape' is indexed by entry and has 1 elements, "
                                               r"but the graph has 2 entries"):
        g.set_attr("shape", ["list_shape", ["[2]"]])
    with pytest.raises(tf.TinyflowError, match=r"graph attribute 'kernel_names' is indexed by node and has 3"):
        g.set_attr("kernel_names", ["", "", ""])
    assert "shape" not in g.attrs()
    assert "exp" in g.text()
    g.set_attr("shape", ["list_shape", ["[2]", "[2]"]])
    assert "shape=[2]" in g.text()
