"""TF1 compatibility shims that let real TF1 scripts run unchanged: the protocol-buffer configs
(tf.ConfigProto, tf.GPUOptions, tf.RunOptions, tf.RunMetadata, tf.GraphOptions, tf.OptimizerOptions),
tf.device, tf.test, version strings, tf.compat.v1 and tf.disable_v2_behavior, and the error for TF
names tinyflow does not have (NotSupportedYetError).

The configs are plain records: any of TF's fields may be given as keyword arguments, read and set
(config.gpu_options.allow_growth = True); tinyflow's sessions accept them and run on the CPU or the
session's target whatever device they name (soft placement).
"""
import contextlib
import unittest

import numpy as np

__all__ = ["ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions", "RunOptions", "RunMetadata",
           "device", "NotSupportedYetError", "not_supported", "VERSION", "GIT_VERSION", "COMPILER_VERSION",
           "as_bytes", "as_text", "disable_v2_behavior", "enable_v2_behavior", "disable_eager_execution", "test", "TestCase"]

VERSION = "1.15.0"
GIT_VERSION = "v1.15.0-tinyflow"
COMPILER_VERSION = "tinyflow"


class _Message(object):
    """A protocol-buffer-like record: `_fields` maps each field to its default (a class: a sub-message made
    on first access, as protobuf does); unknown fields raise ValueError / AttributeError as protobuf does."""

    _fields = {}

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if key not in self._fields:
                raise ValueError('Protocol message %s has no "%s" field.' % (type(self).__name__, key))
            setattr(self, key, value)

    def __getattr__(self, name):
        fields = type(self)._fields
        if name.startswith("_") or name not in fields:
            raise AttributeError("%s has no field '%s'" % (type(self).__name__, name))
        default = fields[name]
        value = default() if isinstance(default, type) else (dict(default) if isinstance(default, dict) else default)
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        if name not in type(self)._fields:
            raise AttributeError("Assignment not allowed (no field \"%s\" in protocol message object)." % name)
        object.__setattr__(self, name, value)

    def CopyFrom(self, other):  # noqa: N802 (protobuf's name)
        self.__dict__.clear()
        self.__dict__.update(other.__dict__)

    def SerializeToString(self):  # noqa: N802
        return repr(self).encode("utf-8")

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __ne__(self, other):
        return not self.__eq__(other)

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in sorted(self.__dict__.items())))


class GPUOptions(_Message):
    """tf.GPUOptions: accepted; tinyflow's device targets manage their own memory."""
    _fields = {"per_process_gpu_memory_fraction": 0.0, "allow_growth": False, "visible_device_list": "",
               "allocator_type": "", "deferred_deletion_bytes": 0, "polling_active_delay_usecs": 0,
               "polling_inactive_delay_msecs": 0, "force_gpu_compatible": False, "experimental": None}


class OptimizerOptions(_Message):
    """tf.OptimizerOptions: accepted (tinyflow always optimizes: rewrite rules, fusion)."""
    L1, L0 = 0, -1  # opt_level
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2  # global_jit_level
    _fields = {"do_common_subexpression_elimination": True, "do_constant_folding": True,
               "max_folded_constant_in_bytes": 0, "do_function_inlining": True, "opt_level": 0,
               "global_jit_level": 0}


class GraphOptions(_Message):
    """tf.GraphOptions: accepted."""
    _fields = {"optimizer_options": OptimizerOptions, "enable_bfloat16_sendrecv": False, "build_cost_model": 0,
               "build_cost_model_after": 0, "infer_shapes": False, "place_pruned_graph": False,
               "enable_recv_scheduling": False, "timeline_step": 0, "rewrite_options": None}


class ConfigProto(_Message):
    """tf.ConfigProto: every TF field accepted; intra_op_parallelism_threads and the device options do not
    change how tinyflow runs (its kernels size their thread pools themselves)."""
    _fields = {"device_count": {}, "intra_op_parallelism_threads": 0, "inter_op_parallelism_threads": 0,
               "use_per_session_threads": False, "session_inter_op_thread_pool": None, "placement_period": 0,
               "device_filters": None, "gpu_options": GPUOptions, "allow_soft_placement": False,
               "log_device_placement": False, "graph_options": GraphOptions, "operation_timeout_in_ms": 0,
               "rpc_options": None, "cluster_def": None, "isolate_session_state": False, "experimental": None}


class RunOptions(_Message):
    """tf.RunOptions: accepted by Session.run(options=...); tracing is Session(profile=True) in tinyflow."""
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _fields = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0,
               "output_partition_graphs": False, "debug_options": None,
               "report_tensor_allocations_upon_oom": False, "experimental": None}


class RunMetadata(_Message):
    """tf.RunMetadata: accepted by Session.run(run_metadata=...); left empty."""
    _fields = {"step_stats": None, "cost_graph": None, "partition_graphs": list, "function_graphs": list}


@contextlib.contextmanager
def device(device_name_or_function):
    """tf.device: accepted for any device string or function; ops run on the session's target (soft placement)."""
    if device_name_or_function is not None and not isinstance(device_name_or_function, str) \
            and not callable(device_name_or_function):
        raise TypeError("tf.device expects a device string or function, got %r" % (device_name_or_function,))
    yield


def as_bytes(bytes_or_text, encoding="utf-8"):
    """tf.compat.as_bytes: text encoded, bytes unchanged; TypeError for anything else."""
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def as_text(bytes_or_text, encoding="utf-8"):
    """tf.compat.as_text (and as_str): bytes decoded, text unchanged; TypeError for anything else."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def disable_v2_behavior():
    """A no-op: tinyflow is TF 1.x."""


def enable_v2_behavior():
    raise NotSupportedYetError("tinyflow does not support tf.enable_v2_behavior yet: it is TensorFlow 1.x "
                               "(use tf.enable_eager_execution for eager mode)")


def disable_eager_execution():
    """Graph mode, tinyflow's default: a no-op unless tf.enable_eager_execution() ran, which it undoes."""
    from .. import framework
    if framework._EAGER is not None:
        raise ValueError("tf.disable_eager_execution must be called at program startup, before eager ops ran.")


class NotSupportedYetError(AttributeError):
    """A TF name tinyflow does not have (tf.X, tf.nn.X, ...): an AttributeError, as TF raises for missing names."""


def not_supported(module_name, name):
    """The NotSupportedYetError for `<module_name>.<name>`."""
    return NotSupportedYetError("%s.%s is not part of tinyflow (TensorFlow 1.x API subset); see "
                                "tinyflow_demo/README.md for what is supported" % (module_name, name))


class TestCase(unittest.TestCase):
    """tf.test.TestCase: unittest.TestCase with TF's session helpers and array assertions."""

    def session(self, graph=None, config=None):
        from ..session import Session
        return Session(graph=graph, config=config)

    test_session = cached_session = session

    def evaluate(self, tensors):
        from ..session import get_default_session
        return get_default_session().run(tensors)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 (TF's name)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=msg or "")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        np.testing.assert_array_equal(a, b, err_msg=msg or "")


class _Namespace(object):
    """A module-like namespace (tf.test, tf.compat) whose missing names raise NotSupportedYetError."""

    def __init__(self, qualified_name, **members):
        self.__dict__.update(members)
        self._qualified_name = qualified_name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_supported(self._qualified_name, name)


test = _Namespace("tf.test", TestCase=TestCase, is_gpu_available=lambda cuda_only=False,
                  min_cuda_compute_capability=None: False, is_built_with_cuda=lambda: False,
                  gpu_device_name=lambda: "", main=lambda argv=None: unittest.main(argv=argv))
