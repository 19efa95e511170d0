"""Variables and state: initializers, assign, group, collections."""
import builtins
import re

from .. import framework as _framework
from ..framework import Operation, Tensor, apply_op, convert_to_tensor, get_default_graph

__all__ = ["global_variables", "all_variables", "trainable_variables", "local_variables",
           "global_variables_initializer", "initialize_all_variables", "variables_initializer",
           "local_variables_initializer", "assign", "assign_add", "assign_sub", "group", "no_op", "tuple",
           "GraphKeys", "get_collection", "get_collection_ref", "add_to_collection", "add_to_collections",
           "model_variables", "moving_average_variables"]


class GraphKeys(object):
    """TF's standard collection names (tf.GraphKeys): the keys of Graph.collections."""
    GLOBAL_VARIABLES = VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    METRIC_VARIABLES = "metric_variables"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    SAVERS = "savers"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"


def get_collection(key, scope=None):
    """The values in collection `key` of the default graph (a copy), filtered as TF does: with a
    `scope`, only values whose `name` matches the regex from its start."""
    values = get_default_graph().get_collection(key)
    if scope is None:
        return values
    return [v for v in values if hasattr(v, "name") and re.match(scope, v.name)]


def get_collection_ref(key):
    """The collection's list itself: appending to it adds to the collection (as in TF)."""
    return get_default_graph().collections.setdefault(key, [])


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    for name in ([names] if isinstance(names, str) else set(names)):
        add_to_collection(name, value)


def model_variables(scope=None):
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def _in_scope(variables, scope):
    """TF's collection filter: the variables whose name matches the regex scope from its start."""
    return variables if scope is None else [v for v in variables if re.match(scope, v.name)]


def global_variables(scope=None):
    return _in_scope(get_default_graph().get_collection("variables"), scope)


all_variables = global_variables


def trainable_variables(scope=None):
    return _in_scope(get_default_graph().get_collection("trainable_variables"), scope)


def local_variables(scope=None):
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def no_op(name=None):
    if _framework._EAGER is not None:  # nothing to run later: everything ran when it was recorded
        return None
    return apply_op("no_op", [], name=name or "NoOp").op


def group(*inputs, **kwargs):
    """One operation that runs after all of `inputs` (tensors or operations)."""
    if _framework._EAGER is not None:
        return None
    name = kwargs.get("name") or "group_deps"
    flat = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, builtins.tuple)) else [x])
    if not flat:
        return no_op(name)
    tensors = [x.outputs[0] if isinstance(x, Operation) else convert_to_tensor(x) for x in flat]
    return apply_op("group", tensors, name=name).op


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001
    return list(tensors)


def variables_initializer(var_list, name="init"):
    if _framework._EAGER is not None:  # eager variables hold their value from the start
        return None
    var_list = list(var_list)
    return group(*[v.initializer for v in var_list], name=name) if var_list else no_op(name)


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    """Initializes the LOCAL_VARIABLES collection (metrics' totals and counts)."""
    return variables_initializer(local_variables(), name="init_local")


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    if _framework._EAGER is not None:
        return ref.assign(value)
    return apply_op("assign", [ref, _framework._assigned_value(ref, value, "Assign")], name=name or "Assign")


def assign_add(ref, value, use_locking=None, name=None):
    if _framework._EAGER is not None:
        return ref.assign_add(value)
    return apply_op("assign_add", [ref, _framework._assigned_value(ref, value, "AssignAdd")], name=name or "AssignAdd")


def assign_sub(ref, value, use_locking=None, name=None):
    if _framework._EAGER is not None:
        return ref.assign_sub(value)
    return apply_op("assign_sub", [ref, _framework._assigned_value(ref, value, "AssignSub")], name=name or "AssignSub")


_ = Tensor
