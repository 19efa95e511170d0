"""tf.train.write_graph / tf.io.write_graph, Graph.as_graph_def and Session.graph_def: a graph as a
TensorFlow GraphDef, written by libir_tensorflow's exporter (frontends/tensorflow, ir_tf/export.h: the
inverse of its importer), so TensorFlow and ir-tf-run read it. Every operation of the graph is written,
named as here; an op the exporter has no TensorFlow form for (control flow, gradient-only ops) is an
error naming it."""
import os

from ._lib import C
from .framework import register_hook

__all__ = ["GraphDef", "write_graph"]


def _serialized(graph, as_text):
    """The graph's GraphDef bytes (text format when as_text)."""
    from . import ir
    from .framework import _Symbol
    ops = [op for op in graph._ops.values() if op._body is None and getattr(op, "_symbol", None) is not None]
    if not ops:
        return b""
    group = _Symbol.group([op._symbol for op in ops])
    handle = ir.Graph(group)
    return C.tf_graphdef_export(handle.handle, bool(as_text))


class GraphDef(object):
    """A graph's GraphDef (tinyflow has no protobuf classes): SerializeToString() gives the binary form,
    str() the text form, as a TF GraphDef's do."""

    def __init__(self, graph):
        self._graph = graph

    def SerializeToString(self):  # noqa: N802 (TF's name)
        return _serialized(self._graph, False)

    def __str__(self):
        return _serialized(self._graph, True).decode("utf-8")

    @property
    def node(self):
        raise NotImplementedError("tinyflow's GraphDef has no protobuf fields: write it with tf.train.write_graph "
                                  "or take SerializeToString()")


register_hook("graph_def", GraphDef)  # Graph.as_graph_def (the core does not import this module)


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the GraphDef of a tf.Graph (or of graph.as_graph_def() / sess.graph_def) to logdir/name, the
    text format when as_text, else binary; creates logdir; returns the path, as TF."""
    from .framework import Graph
    if isinstance(graph_or_graph_def, Graph):
        graph_or_graph_def = GraphDef(graph_or_graph_def)
    if not isinstance(graph_or_graph_def, GraphDef):
        raise TypeError("write_graph takes a tf.Graph or its GraphDef, got %r" % (graph_or_graph_def,))
    data = str(graph_or_graph_def).encode("utf-8") if as_text else graph_or_graph_def.SerializeToString()
    if logdir and not os.path.isdir(logdir):
        os.makedirs(logdir)
    path = os.path.join(logdir, name)
    with open(path, "wb") as f:
        f.write(data)
    return path
