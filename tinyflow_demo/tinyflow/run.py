"""Runs a TensorFlow 1.x program unchanged on tinyflow:

    python3 -m tinyflow.run program.py [program arguments...]

Inside the program, `import tensorflow as tf`, `import tensorflow.compat.v1 as tf`,
`from tensorflow.examples.tutorials.mnist import input_data` and `tensorflow.<module>` imports
resolve to tinyflow and its modules, and `import horovod.tensorflow as hvd` to tinyflow.horovod
(Horovod's TF1 API, run under mpirun); nothing else changes (sys.argv, __name__ == "__main__",
relative files). An installed TensorFlow is not touched: the alias exists only in this process.
A `tensorflow.X` (or `horovod.X`) that tinyflow does not have fails with ImportError naming it.
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types

_ALIASES = {"tensorflow": "tinyflow", "tensorflow.compat.v1": "tinyflow", "tensorflow.compat": "tinyflow",
            "tensorflow.compat.v1.examples": "tinyflow.examples", "horovod": "tinyflow.horovod",
            "horovod.tensorflow": "tinyflow.horovod"}


def _target(fullname):
    """The tinyflow module name `fullname` (a tensorflow.* name) maps to."""
    best = max((k for k in _ALIASES if fullname == k or fullname.startswith(k + ".")), key=len)
    return _ALIASES[best] + fullname[len(best):]


class _Loader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        self.original_spec = None
        # tf.a.b as an attribute path of tinyflow first (tf.compat.v1, tf.contrib.rnn, tf.nn...), so the
        # import binds the very object `tf.a.b` gives; then a tinyflow submodule (tf.examples...).
        value = importlib.import_module("tinyflow") if spec.name.split(".")[0] == "tensorflow" else None
        for part in spec.name.split(".")[1:] if value is not None else []:
            value = getattr(value, part, None)
            if value is None:
                break
        if value is None:
            try:
                value = importlib.import_module(self.target)
            except ImportError:
                raise ImportError("tinyflow.run: '%s' has no tinyflow counterpart ('%s'): tinyflow implements a "
                                  "subset of TensorFlow 1.x (see tinyflow_demo/README.md)" % (spec.name, self.target),
                                  name=spec.name)
        if isinstance(value, types.ModuleType):
            self.original_spec = getattr(value, "__spec__", None)
            return value
        module = types.ModuleType(spec.name)  # a namespace object: a module holding its names
        module.__dict__.update({k: v for k, v in vars(value).items() if not k.startswith("__")})
        # The import binds this module as tf.a.b too: names it lacks go on to the namespace, so they still raise
        # its NotSupportedYetError (and names added to the namespace later are seen).
        module.__getattr__ = lambda name, _namespace=value: getattr(_namespace, name)
        return module

    def exec_module(self, module):
        if self.original_spec is not None:  # the import system set __spec__ to the alias's spec
            module.__spec__ = self.original_spec


class TensorFlowAliasFinder(importlib.abc.MetaPathFinder):
    """Maps `tensorflow`, `tensorflow.*` and `horovod.tensorflow` imports onto tinyflow for this process."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in ("tensorflow", "horovod"):
            return None
        mapped = _target(fullname)
        return importlib.util.spec_from_loader(fullname, _Loader(mapped), is_package=True)


def install():
    """Installs the alias (idempotent); after it, `import tensorflow` gives tinyflow."""
    if not any(isinstance(f, TensorFlowAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TensorFlowAliasFinder())
    for name in [n for n in sys.modules if n.split(".")[0] in ("tensorflow", "horovod")]:
        del sys.modules[name]  # an earlier real import would shadow the alias


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 0 if argv else 2
    program = argv[0]
    if not os.path.isfile(program):
        sys.stderr.write("tinyflow.run: no such program file: %s\n" % program)
        return 2
    install()
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
