"""Finds and loads tinyflow._C, the native module that owns every call into the library (tinyflow_demo/csrc/).

Where it looks, in order: (a) inside the package (an installed tinyflow: tinyflow/_C<EXT_SUFFIX>); (b) next to
$TINYFLOW_LIB (libir.so's path or its directory: explicit, so only there); (c) <repo>/build/lib, where
`cmake --build build --target tinyflow_C` puts it beside libir.so. Library failures raise the class set by
set_error_class (errors.py: tf.errors.OpError, a TinyflowError) carrying the C++ message.
"""
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig

__all__ = ["TinyflowError", "C", "LIB_DIR", "LIB_PATH", "set_error_class"]

_BUILD_HINT = "build it with `cmake --build build --target tinyflow_C` (or set TINYFLOW_LIB to its directory)"


class TinyflowError(RuntimeError):
    """An error reported by the C++ library (the message comes from IRGetLastError)."""


def _candidates():
    """(directory to look in, the module's file name there, whether TINYFLOW_LIB chose it). A library variant
    libir_<x>.so (libir_tsan.so: scripts/tsan_test.sh) has its module _C_<x> beside it."""
    env = os.environ.get("TINYFLOW_LIB")
    name = "_C"
    if env:  # explicit: use it or fail, never silently another build
        if not os.path.isdir(env):
            variant = re.match(r"^libir(_\w+)?\.so", os.path.basename(env))
            if variant and variant.group(1):
                name += variant.group(1)
            env = os.path.dirname(env)
        return os.path.abspath(env), name + sysconfig.get_config_var("EXT_SUFFIX"), True
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "build", "lib")), name + sysconfig.get_config_var(
        "EXT_SUFFIX"), False


def _load_from(path):
    """tinyflow._C from the file `path`, loaded with RTLD_GLOBAL (op libraries and runtime-compiled CPU kernels
    resolve libir's symbols globally, as libir itself was loaded before the binding), or None when there is none."""
    if not os.path.exists(path):
        return None
    loader = importlib.machinery.ExtensionFileLoader(__package__ + "._C", path)
    spec = importlib.util.spec_from_file_location(__package__ + "._C", path, loader=loader)
    flags = sys.getdlopenflags()
    sys.setdlopenflags(flags | os.RTLD_GLOBAL)
    try:  # (creating an extension module's object dlopens it)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.setdlopenflags(flags)
    sys.modules[spec.name] = module
    return module


def _other_pythons(directory):
    """The _C modules in `directory` built for other Pythons (another EXT_SUFFIX)."""
    if not os.path.isdir(directory):
        return []
    return sorted(f for f in os.listdir(directory) if f.startswith("_C.") and f.endswith(".so"))


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    module = _load_from(os.path.join(here, "_C" + sysconfig.get_config_var("EXT_SUFFIX")))
    if module is not None:  # (a) installed: the module lies in the package
        return module, here
    directory, name, explicit = _candidates()
    path = os.path.join(directory, name)
    module = _load_from(path)
    if module is not None:
        return module, directory
    for where in (here, directory):  # (the package's, an install's, first)
        others = _other_pythons(where)
        if others:
            raise ImportError("tinyflow: found %s in %s, built for another Python, but not %s for this one (Python "
                              "%s); rebuild it with this Python: configure with -DPython3_EXECUTABLE=%s, then %s"
                              % (", ".join(others), where, name, sys.version.split()[0], sys.executable, _BUILD_HINT))
    raise ImportError("tinyflow: the native module tinyflow._C was not found (looked in the package and at %s%s); %s"
                      % (path, " from TINYFLOW_LIB" if explicit else "", _BUILD_HINT))


C, LIB_DIR = _load()
LIB_PATH = C.library_path()  # the libir.so the module runs on (op libraries and tools lie beside it)


def set_error_class(factory):
    """Failed library calls raise factory(message) from now on (errors.py: tf.errors' classes)."""
    C._set_error_class(factory)


set_error_class(TinyflowError)
