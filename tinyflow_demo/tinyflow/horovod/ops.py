"""Horovod's collective ops as graph ops: the library's registered `allreduce`, `allgather` and
`broadcast` (src/ops/collective.cc), whose gradients, shapes and bucketing the library provides.

Each op carries a `tensor_name` that every rank must give the same collective: the engine matches
ranks' collectives by it and reports a mismatch naming the tensors. The name is made from the
input's op name as Horovod makes it ("HorovodAllreduce_<name>"), numbered when the same base
repeats in a graph, so it is the same on every rank that builds the same graph in the same order.
"""
import re

from ..ops import math_ops as _math
from ..compat import NotSupportedYetError
from ..framework import apply_op, convert_to_tensor, get_default_graph
from ..ops.state_ops import assign, global_variables, group

__all__ = ["Average", "Sum", "Adasum", "Compression", "allreduce", "allgather", "broadcast", "broadcast_variables",
           "broadcast_global_variables"]

#: Reduction ops (Horovod's values).
Average, Sum, Adasum = 0, 1, 2
_REDUCE_OP = {Average: "average", Sum: "sum"}


class _NoneCompressor(object):
    """No compression: the tensor as it is."""

    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


class _FP16Compressor(object):
    """Horovod's fp16 compression: the library has no half-precision dtype, so it cannot be built."""

    @staticmethod
    def compress(tensor):
        raise NotSupportedYetError("hvd.Compression.fp16 is not supported by tinyflow: its core has no float16 "
                                   "dtype (tf.float16 is an alias of float32); use hvd.Compression.none")

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


class Compression(object):
    """Gradient compression for allreduce: `none` (the default) or `fp16` (not supported: no half dtype)."""
    none = _NoneCompressor
    fp16 = _FP16Compressor


def _collective_name(prefix, tensor, name):
    """The tensor_name of a new collective: `name`, or prefix + the input's op name; numbered per graph when it
    repeats (deterministic: every rank building the same graph in the same order gets the same names)."""
    graph = get_default_graph()
    base = name or "%s_%s" % (prefix, tensor.op.name if getattr(tensor, "op", None) is not None else "tensor")
    base = re.sub(r"[^A-Za-z0-9_.\-/]", "_", base)
    counts = graph.__dict__.setdefault("_horovod_tensor_names", {})
    count = counts.get(base, 0)
    counts[base] = count + 1
    return base if count == 0 else "%s_%d" % (base, count)


def _reduce_op(average, op):
    if average is not None and op is not None:
        raise ValueError("The op parameter supersedes average. Please provide only one of them.")
    if op is None:
        op = Sum if average is False else Average
    if op == Adasum:
        raise NotSupportedYetError("hvd.Adasum is not supported by tinyflow: allreduce reduces by hvd.Sum or "
                                   "hvd.Average")
    if op not in _REDUCE_OP:
        raise ValueError("hvd.allreduce: op must be hvd.Sum or hvd.Average, got %r" % (op,))
    return op


def allreduce(tensor, average=None, device_dense="", device_sparse="", compression=Compression.none, op=None,
              prescale_factor=1.0, postscale_factor=1.0, name=None):
    """The elementwise sum (op=hvd.Sum) or mean (op=hvd.Average, the default; or average=True/False) of
    `tensor` over every rank; every rank gets the same bits. prescale/postscale_factor multiply the
    tensor before and the result after the reduction. Its gradient is the allreduce of the gradient."""
    op = _reduce_op(average, op)
    tensor = convert_to_tensor(tensor)
    tensor_name = _collective_name("HorovodAllreduce", tensor, name)
    value, ctx = compression.compress(tensor)
    if prescale_factor != 1.0:
        value = _math.multiply(value, float(prescale_factor))
    reduced = apply_op("allreduce", [value], {"reduce_op": _REDUCE_OP[op], "tensor_name": tensor_name},
                       name=tensor_name)
    if postscale_factor != 1.0:
        reduced = _math.multiply(reduced, float(postscale_factor))
    return compression.decompress(reduced, ctx)


def allgather(tensor, name=None):
    """Every rank's `tensor` concatenated along the first dimension in rank order (first dimensions may
    differ between ranks; the others must agree)."""
    tensor = convert_to_tensor(tensor)
    tensor_name = _collective_name("HorovodAllgather", tensor, name)
    return apply_op("allgather", [tensor], {"tensor_name": tensor_name}, name=tensor_name)


def broadcast(tensor, root_rank, name=None):
    """Rank `root_rank`'s value of `tensor` on every rank (shapes and dtypes must agree)."""
    tensor = convert_to_tensor(tensor)
    tensor_name = _collective_name("HorovodBroadcast", tensor, name)
    return apply_op("broadcast", [tensor], {"root_rank": int(root_rank), "tensor_name": tensor_name},
                    name=tensor_name)


def broadcast_variables(variables, root_rank):
    """One op assigning to each of `variables` its value on rank `root_rank`."""
    variables = list(variables)
    return group(*[assign(var, broadcast(var, root_rank, name="HorovodBroadcast_" + var.op.name))
                   for var in variables])


def broadcast_global_variables(root_rank):
    """One op assigning to every global variable its value on rank `root_rank` (run it after the
    initializer, or use BroadcastGlobalVariablesHook) so that every rank starts from the same model."""
    from .. import framework
    if framework._EAGER is not None:
        raise RuntimeError("hvd.broadcast_global_variables() does not support eager execution. "
                           "Please use `hvd.broadcast_variables(<model/optimizer variables>)` instead.")
    return broadcast_variables(global_variables(), root_rank)
