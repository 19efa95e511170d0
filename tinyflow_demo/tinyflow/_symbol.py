"""IR symbols through tinyflow._C: op handles (cached by name), _Symbol (holds a Symbol handle, freed with it:
groups, outputs, attributes) and variable symbols (a graph input or a placeholder of an op's inputs)."""

from ._lib import C


_OP_HANDLES = {}


def _op_handle(name):
    handle = _OP_HANDLES.get(name)
    if handle is None:
        handle = _OP_HANDLES[name] = C.op_handle(name)
    return handle


class _Symbol(object):
    """Holds a Symbol handle of tinyflow._C (the library's symbol is freed with the handle)."""
    __slots__ = ["handle"]

    def __init__(self, handle):
        self.handle = handle

    @staticmethod
    def group(symbols):
        return _Symbol(C.symbol_group([s.handle for s in symbols]))

    def output(self, index):
        return _Symbol(C.symbol_output(self.handle, index))

    def num_outputs(self):
        return C.symbol_num_outputs(self.handle)

    def set_attrs(self, attrs):
        C.symbol_set_attrs(self.handle, {k: str(v) for k, v in attrs.items()})


def _variable_symbol(name, attrs):
    return _Symbol(C.symbol_variable(name, {k: str(v) for k, v in attrs.items()}))
