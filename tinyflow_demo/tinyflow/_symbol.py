"""IR symbols through the C API: op handles (cached by name), _Symbol (owns an IRSymbolHandle: groups,
outputs, attributes) and variable symbols (a graph input or a placeholder of an op's inputs)."""

import ctypes

from ._lib import LIB, c_handle_array, c_str, c_str_array, check_call


_OP_HANDLES = {}


def _op_handle(name):
    handle = _OP_HANDLES.get(name)
    if handle is None:
        handle = ctypes.c_void_p()
        check_call(LIB.IRGetOpHandle(c_str(name), ctypes.byref(handle)))
        _OP_HANDLES[name] = handle
    return handle


class _Symbol(object):
    """Owns an IRSymbolHandle."""
    __slots__ = ["handle"]

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        try:
            if LIB is not None and self.handle:
                LIB.IRSymbolFree(self.handle)
        except Exception:  # interpreter shutdown
            pass

    @staticmethod
    def group(symbols):
        out = ctypes.c_void_p()
        check_call(LIB.IRSymbolCreateGroup(len(symbols), c_handle_array([s.handle for s in symbols]),
                                           ctypes.byref(out)))
        return _Symbol(out)

    def output(self, index):
        out = ctypes.c_void_p()
        check_call(LIB.IRSymbolGetOutput(self.handle, index, ctypes.byref(out)))
        return _Symbol(out)

    def num_outputs(self):
        n = ctypes.c_uint32()
        check_call(LIB.IRSymbolGetNumOutputs(self.handle, ctypes.byref(n)))
        return n.value

    def set_attrs(self, attrs):
        keys = list(attrs.keys())
        check_call(LIB.IRSymbolSetAttrs(self.handle, len(keys), c_str_array(keys),
                                        c_str_array([str(attrs[k]) for k in keys])))


def _variable_symbol(name, attrs):
    handle = ctypes.c_void_p()
    check_call(LIB.IRSymbolCreateVariable(c_str(name), ctypes.byref(handle)))
    symbol = _Symbol(handle)
    symbol.set_attrs(attrs)
    return symbol
