"""Loads libir.so and wraps its C API calls: every failure raises TinyflowError with the C++ message."""
import ctypes
import os

__all__ = ["TinyflowError", "LIB", "check_call", "c_str", "c_str_array", "c_handle_array", "py_str_list"]


class TinyflowError(RuntimeError):
    """An error reported by the C++ library (the message comes from IRGetLastError)."""


def _find_library():
    env = os.environ.get("TINYFLOW_LIB")
    if env:  # explicit: use it or fail, never silently another library
        path = os.path.join(env, "libir.so") if os.path.isdir(env) else env
        if not os.path.exists(path):
            raise ImportError("tinyflow: TINYFLOW_LIB=%s but %s does not exist" % (env, path))
        return os.path.abspath(path)
    candidates = []
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "build", "lib", "libir.so"))
    for path in candidates:
        if os.path.exists(path):
            return os.path.abspath(path)
    raise ImportError("tinyflow: libir.so not found (looked at %s); build the project or set TINYFLOW_LIB"
                      % ", ".join(candidates))


LIB_PATH = _find_library()
LIB = ctypes.CDLL(LIB_PATH, ctypes.RTLD_GLOBAL)
LIB.IRGetLastError.restype = ctypes.c_char_p
_HANDLES = ctypes.POINTER(ctypes.c_void_p)
LIB.IRSymbolCreateControlFlow.argtypes = [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
    ctypes.c_uint32, _HANDLES, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32), _HANDLES, _HANDLES,
    _HANDLES]


# The class check_call raises: errors.py makes it tf.errors.OpError (a TinyflowError subclass), so
# library errors are caught both as TinyflowError and as TF's OpError.
ERROR_CLASS = TinyflowError


def check_call(ret):
    """Raises ERROR_CLASS (tf.errors.OpError) carrying the library's message when a C API call failed."""
    if ret != 0:
        raise ERROR_CLASS(LIB.IRGetLastError().decode("utf-8", "replace"))


def c_str(s):
    return s.encode("utf-8") if isinstance(s, str) else s


def c_str_array(strings):
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [c_str(s) for s in strings]
    return arr


def c_handle_array(handles):
    arr = (ctypes.c_void_p * len(handles))()
    arr[:] = [h.value if isinstance(h, ctypes.c_void_p) else h for h in handles]
    return arr


def py_str_list(size, ptr):
    return [ptr[i].decode("utf-8") for i in range(size.value)]

# Collectives (include/ir/c_api.h, tinyflow.horovod): the process group's start, end and shape.
_INT_P = ctypes.POINTER(ctypes.c_int)
LIB.IRCollectiveInit.argtypes = [ctypes.c_char_p]
LIB.IRCollectiveShutdown.argtypes = []
LIB.IRCollectiveIsInitialized.argtypes = [_INT_P]
LIB.IRCollectiveGetInfo.argtypes = [_INT_P, _INT_P, _INT_P, _INT_P, ctypes.POINTER(ctypes.c_char_p)]
LIB.IRCollectiveGetStatsJSON.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
