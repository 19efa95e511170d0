"""The IR under the TF-like API: graphs, pass pipelines, graph attributes, printing.

    g = tinyflow.ir.Graph([loss, train_op])
    g = g.apply_passes(["InferShape", "InferType", "Fusion", "CodeGen"],
                       {"fusion.fmax": 4}, input_shapes={"x": (64, 784)})
    g.attr("fusion_groups"), g.attr("kernel_source"), print(g.text())
"""
import json
import sys

from ._lib import C

__all__ = ["Graph", "list_ops", "list_passes", "list_pipelines", "pipeline", "pipeline_passes", "op_info",
           "infer_shape_dtype", "parse_shape"]


def _py_json(text):
    return json.loads(text)


def _typed(value):
    """A Python value as the C API's typed JSON `["type", value]` (a pass option)."""
    if isinstance(value, bool):
        return ["int", int(value)]
    if isinstance(value, int):
        return ["int", value]
    if isinstance(value, float):
        return ["double", value]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return ["list_str", list(value)]
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return ["list_int", list(value)]
    raise TypeError("cannot pass %r as a graph attribute; give [\"type\", value] JSON instead" % (value,))


class Graph(object):
    """An IR graph (IRGraphHandle). Build it from tensors/operations or a symbol; passes return new graphs."""

    def __init__(self, outputs=None, handle=None):
        if handle is None:
            from .framework import _Symbol, Operation, convert_to_tensor
            if isinstance(outputs, _Symbol):
                symbol = outputs
            else:
                items = outputs if isinstance(outputs, (list, tuple)) else [outputs]
                symbols = [x._symbol if isinstance(x, Operation) else convert_to_tensor(x)._symbol for x in items]
                symbol = symbols[0] if len(symbols) == 1 else _Symbol.group(symbols)
            handle = C.graph_create(symbol.handle)
        self.handle = handle  # (a Graph handle of tinyflow._C: the graph is freed with it)

    @staticmethod
    def load_json(text):
        return Graph(handle=C.graph_load_json(text))

    def save_json(self):
        return C.graph_save_json(self.handle)

    def to_dict(self):
        return json.loads(self.save_json())

    def attrs(self):
        """Names of the graph's attributes."""
        return C.graph_list_attrs(self.handle)

    def attr(self, key, default=None):
        """Attribute `key` as a Python value (parsed from its JSON), or `default` when absent."""
        text = C.graph_get_attr_json(self.handle, key)
        return default if text is None else _py_json(text)

    def set_attr(self, key, value):
        """Sets attribute `key`: a Python value (int, float, str, list) or `["type", value]`."""
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            value = _typed(value)
        C.graph_set_attr_json(self.handle, key, json.dumps(value))

    def set_attr_bytes(self, key, data):
        """Sets attribute `key` to raw bytes (NUL bytes allowed): a pass's binary input (a serialized GraphDef)."""
        C.graph_set_attr_bytes(self.handle, key, data)

    def input_names(self):
        d = self.to_dict()
        return [d["nodes"][i]["name"] for i in d["arg_nodes"]]

    def set_input_shapes(self, shapes, dtypes=None):
        """Seeds InferShape/InferType (`shape_inputs`/`dtype_inputs`) with {input name: shape/dtype}."""
        names = self.input_names()
        if shapes:
            unknown = set(shapes) - set(names)
            if unknown:
                raise KeyError("not inputs of this graph: %s (inputs: %s)" % (sorted(unknown), names))
            text = ["[" + ",".join("?" if d is None else str(int(d)) for d in shapes[n]) + "]" if n in shapes else "?"
                    for n in names]
            self.set_attr("shape_inputs", ["list_shape", text])
        if dtypes:
            from .dtypes import as_dtype
            self.set_attr("dtype_inputs", ["list_dtype", [as_dtype(dtypes[n]).name if n in dtypes else "unknown"
                                                          for n in names]])

    def apply_passes(self, names, options=None, input_shapes=None):
        """Runs passes in order on a copy carrying `options` (graph attributes) and returns the result."""
        src = self
        if options or input_shapes:
            src = Graph.load_json(self.save_json())
            for key, value in (options or {}).items():
                src.set_attr(key, value)
            if input_shapes:
                src.set_input_shapes(input_shapes)
        names = [names] if isinstance(names, str) else list(names)
        return Graph(handle=C.graph_apply_passes(src.handle, names))

    def apply_pipeline(self, name, on=(), options=None, input_shapes=None):
        """Runs the registered pipeline `name` (options in `on` on: e.g. "simplify", "fusion")."""
        return self.apply_passes(pipeline_passes(name, *on), options, input_shapes)

    def text(self):
        """The readable IR (IRGraphPrint format 0)."""
        return self._print(0)

    def dot(self):
        """Graphviz dot (IRGraphPrint format 1)."""
        return self._print(1)

    def _print(self, fmt):
        return C.graph_print(self.handle, fmt)

    def __str__(self):
        return self.text()

    # Convenience views of the attributes passes leave behind.
    def fusion_groups(self):
        return self.attr("fusion_groups", [])

    def kernel_source(self):
        return self.attr("kernel_source", "")

    def pass_timings(self):
        return self.attr("pass_timings", [])


def list_ops():
    return C.list_ops()


def list_passes():
    return C.list_passes()


def list_pipelines():
    """Names of the registered pass pipelines (include/ir/pipeline.h)."""
    return C.list_pipelines()


def pipeline(name):
    """A registered pipeline's printed form: "infer: InferShape, InferType"."""
    return C.pipeline(name)


# {(name, options on): passes}; op libraries may extend pipelines: load_op_library clears it.
_PIPELINE_PASSES = {}


def pipeline_passes(name, *on):
    """The passes pipeline `name` applies with the options `on` on (the others off)."""
    key = (name, tuple(sorted(on)))
    passes = _PIPELINE_PASSES.get(key)
    if passes is None:
        passes = _PIPELINE_PASSES[key] = tuple(C.pipeline_passes(name, list(key[1])))
    return passes


def op_info(name):
    """{"name", "description", "arguments": [(name, type, description)]} of a registered op."""
    from .framework import _op_handle
    return C.op_info(_op_handle(name))


def parse_shape(value):
    """A TensorShape from the library's shape text ("[?,784]", "[]", "?") or a list."""
    from .framework import TensorShape
    if value is None or value == "?":
        return TensorShape(None)
    if isinstance(value, str):
        body = value.strip().strip("[]()").replace(" ", "")
        return TensorShape([None if d in ("?", "-1") else int(d) for d in body.split(",") if d])
    return TensorShape(value)


def infer_shape_dtype(tensor):
    """(TensorShape, DType) of a tensor, from the library's InferShape and InferType passes."""
    from .dtypes import as_dtype
    from .framework import _Symbol, _op_handle
    probe = _Symbol(C.symbol_op(_op_handle("identity"), None, "__infer__", [tensor.handle]))
    g = Graph(probe).apply_pipeline("infer")
    shapes = g.attr("shape")
    dtypes = g.attr("dtype")
    dtype = dtypes[-1]
    return parse_shape(shapes[-1]), (None if dtype in (None, "unknown", -1) else as_dtype(dtype))


from . import framework as _framework  # noqa: E402 (ir is above the core, which reaches it through this hook)
_framework.register_hook("ir", sys.modules[__name__])
