"""The core's hooks: what the layers above the core provide to it, installed when they are imported.

The core (framework, static_shapes, dtypes, tensor_shape...) imports no module above it; where it needs one
(Tensor.eval needs a session, Tensor.shape the library's inference), it calls the hook that module registered:
  "session":   session.py's _get_session(session) -> the Session that Tensor.eval and Operation.run use
  "graph_def": graph_def.py's GraphDef(graph), which Graph.as_graph_def returns
  "ir":        the ir module (graphs and passes: shape/dtype inference of new tensors)
"""

_HOOKS = {}


def register_hook(name, value):
    """Installs `value` as the core's hook `name`; the module that provides it calls this when imported."""
    _HOOKS[name] = value


def hook(name):
    """The hook `name`; RuntimeError naming it when the module providing it was not imported."""
    value = _HOOKS.get(name)
    if value is None:
        raise RuntimeError("tinyflow: the core's %r hook is not installed (its module registers it on import); "
                           "import tinyflow, not a core module alone" % name)
    return value
