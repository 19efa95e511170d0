"""tf.summary: scalar, histogram, image and text summaries, merge/merge_all, and FileWriter, which writes
TensorBoard event files (`events.out.tfevents.<time>.<host>`: TFRecord-framed Event protos, encoded by
libir_tensorflow.so).

tinyflow has no string dtype: a summary op is a fetchable object. sess.run(summary, feed) runs its input
tensors and returns the serialized Summary proto (bytes), which FileWriter.add_summary takes."""
import os
import socket
import struct
import time
import zlib

import numpy as np

from . import errors
from ._lib import C
from .framework import Tensor, convert_to_tensor, get_default_graph
from .train.saver import _call
from .ops.state_ops import GraphKeys

__all__ = ["scalar", "histogram", "image", "text", "merge", "merge_all", "FileWriter", "FileWriterCache",
           "Summary"]


class SummaryTensor(object):
    """The output of a summary op: fetching it (sess.run, eval) evaluates `inputs` and yields the serialized
    Summary. `encode(values)` gives [(tag, serialized one-value Summary)]."""

    def __init__(self, name, inputs, encode):
        self.name, self._inputs, self._encode = name, list(inputs), encode

    def _fetch_expand(self):
        """The session hook (session._FetchPlan): the tensors to run, and what turns their values into bytes."""
        return self._inputs, lambda values: _serialize(self._encode(values))

    def eval(self, feed_dict=None, session=None):
        from .session import _get_session
        return _get_session(session).run(self, feed_dict)

    def __repr__(self):
        return "<tf.summary %s>" % self.name


def _serialize(tagged):
    """Concatenated one-value Summaries (how protobuf merges repeated fields); a duplicate tag is an
    InvalidArgumentError."""
    seen = set()
    for tag, _ in tagged:
        if tag in seen:
            raise errors.InvalidArgumentError("Duplicate tag %s found in summary inputs" % tag)
        seen.add(tag)
    return b"".join(b for _, b in tagged)


def _scope(name, family):
    """TF's summary_scope: the unique name (under the name scope, family first) and the tag."""
    base = name if family is None else "%s/%s" % (family, name)
    scope = get_default_graph().unique_name(base)
    return scope, scope if family is None else "%s/%s" % (family, scope)


def _register(summary, collections):
    for key in ([GraphKeys.SUMMARIES] if collections is None else collections):
        get_default_graph().add_to_collection(key, summary)
    return summary


def _shape_error(tag, values):
    return errors.InvalidArgumentError("tags and values not the same shape: [] != %s (tag '%s')"
                                       % (list(np.shape(values)), tag))


def scalar(name, tensor, collections=None, family=None):
    """A summary of one scalar value, as a float (simple_value). A non-scalar value fails when run."""
    scope, tag = _scope(name, family)
    tensor = convert_to_tensor(tensor)

    def encode(values):
        if np.ndim(values[0]) != 0:
            raise _shape_error(tag, values[0])
        return [(tag, _call(C.tf_summary_scalar, tag, float(values[0])))]
    return _register(SummaryTensor(scope, [tensor], encode), collections)


def histogram(name, values, collections=None, family=None):
    """A histogram of all of the values (any shape), in TF's default exponential buckets. NaN or Inf fails."""
    scope, tag = _scope(name, family)
    tensor = convert_to_tensor(values)

    def encode(vals):
        from .session import _host_array
        arr = np.asarray(vals[0])
        arr = _host_array(arr.astype(np.float64) if arr.dtype == np.bool_ else arr)
        return [(tag, _call(C.tf_summary_histogram, tag, arr, error_class=errors.InvalidArgumentError))]
    return _register(SummaryTensor(scope, [tensor], encode), collections)


def _png(pixels):
    """PNG bytes of an H x W x C uint8 image (C: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA), unfiltered rows, zlib."""
    height, width, channels = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, {1: 0, 2: 4, 3: 2, 4: 6}[channels], 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _to_uint8(image):
    """TF's ImageSummary conversion: floats scaled so the largest magnitude maps to 255 (to 127 around 128 when
    some are negative), non-finite pixels red; integers (tinyflow's stand-in for uint8) must lie in 0..255."""
    if not np.issubdtype(image.dtype, np.floating):
        if image.size and (image.min() < 0 or image.max() > 255):
            raise errors.InvalidArgumentError("image summary: integer pixels must lie in 0..255")
        return image.astype(np.uint8)
    finite = np.isfinite(image)
    lo = image[finite].min() if finite.any() else np.inf
    hi = image[finite].max() if finite.any() else -np.inf
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = (0.0 if top < 1e-6 else 127.0 / top), 128.0
    else:
        scale, offset = (0.0 if hi < 1e-6 else 255.0 / hi), 0.0
    out = np.where(finite, image * scale + offset, 0).astype(np.float32).astype(np.uint8)
    bad = ~finite.all(axis=-1)
    out[bad] = np.array([255, 0, 0, 255][:image.shape[-1]] if image.shape[-1] > 1 else [255], dtype=np.uint8)
    return out


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """Up to max_outputs images of a [batch, height, width, channels] tensor (channels 1, 3 or 4), PNG-encoded;
    tags "<name>/image" for one image, else "<name>/image/<i>"."""
    scope, tag = _scope(name, family)
    tensor = convert_to_tensor(tensor)
    shape = tensor.shape.as_list() if tensor.shape.dims is not None else None
    if shape is not None and (len(shape) != 4 or shape[3] not in (None, 1, 3, 4)):
        raise ValueError("Tensor must be 4-D with last dim 1, 3, or 4, not %s (image summary '%s')" % (shape, tag))

    def encode(values):
        batch = np.asarray(values[0])
        if batch.ndim != 4 or batch.shape[3] not in (1, 3, 4):
            raise errors.InvalidArgumentError("Tensor must be 4-D with last dim 1, 3, or 4, not %s (image summary "
                                              "'%s')" % (list(batch.shape), tag))
        n = min(max_outputs, batch.shape[0])
        out = []
        for i in range(n):
            pixels = _to_uint8(batch[i])
            png = _png(pixels)
            sub = "%s/image" % tag if n == 1 else "%s/image/%d" % (tag, i)
            out.append((sub, _call(C.tf_summary_image, sub, pixels.shape[0], pixels.shape[1], pixels.shape[2],
                                   png)))
        return out
    return _register(SummaryTensor(scope, [tensor], encode), collections)


def text(name, tensor, collections=None):
    """A text summary (TensorBoard's text plugin). tinyflow has no string tensors: `tensor` is a Python string
    or a (nested) list / NumPy array of strings, written as given."""
    scope, tag = _scope(name, None)
    if isinstance(tensor, Tensor):
        raise TypeError("tf.summary.text: tinyflow has no string tensors; pass a Python string or list of strings")
    arr = np.asarray(tensor, dtype=object)
    strings = [s.decode("utf-8") if isinstance(s, bytes) else str(s) for s in arr.reshape(-1)]

    def encode(values):
        return [(tag, _call(C.tf_summary_text, tag, list(arr.shape), strings))]
    return _register(SummaryTensor(scope, [], encode), collections)


def merge(inputs, collections=None, name=None):
    """One summary holding the values of all `inputs` (summaries or serialized Summary bytes)."""
    parts, tensors = [], []
    for item in inputs:
        if isinstance(item, (bytes, bytearray)):
            parts.append((None, bytes(item), 0))
            continue
        if not isinstance(item, SummaryTensor):
            raise TypeError("tf.summary.merge: inputs must be summaries, got %r" % (item,))
        parts.append((item, None, len(item._inputs)))
        tensors.extend(item._inputs)

    def encode(values):
        tagged, at = [], 0
        for item, raw, n in parts:
            tagged.extend([(None, raw)] if item is None else item._encode(values[at:at + n]))
            at += n
        return tagged
    summary = SummaryTensor(name or get_default_graph().unique_name("Merge/MergeSummary"), tensors, encode)
    for key in collections or []:
        get_default_graph().add_to_collection(key, summary)
    return summary


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of the collection `key` (filtered by scope), or None when it is empty."""
    summaries = get_default_graph().get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None


class Summary(object):
    """tf.Summary built in Python: Summary(value=[Summary.Value(tag=..., simple_value=...)]) (simple values only)."""

    class Value(object):
        def __init__(self, tag="", simple_value=None, node_name=""):
            self.tag, self.simple_value, self.node_name = tag, simple_value, node_name

    def __init__(self, value=()):
        self.value = list(value)

    def SerializeToString(self):
        for v in self.value:
            if v.simple_value is None:
                raise ValueError("tf.Summary: only simple_value values are supported (tag %r)" % v.tag)
        return _serialize([(v.tag, _call(C.tf_summary_scalar, v.tag, float(v.simple_value)))
                           for v in self.value])


class FileWriter(object):
    """Writes Event records to `logdir`/events.out.tfevents.<seconds>.<hostname><suffix>; the first holds
    file_version "brain.Event:2". Each record is written and flushed when added (flush_secs and max_queue are
    accepted). A graph is accepted but not written (tf.train.write_graph writes its GraphDef)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._path = os.path.join(self._logdir, "events.out.tfevents.%010d.%s%s"
                                  % (int(time.time()), socket.gethostname(), filename_suffix or ""))
        self._closed = False
        self._write(b"", 0, file_version=b"brain.Event:2")

    def _write(self, summary, step, file_version=None, wall_time=None):
        wall = time.time() if wall_time is None else float(wall_time)
        _call(C.tf_event_write, self._path, wall, int(step), summary, file_version)

    def get_logdir(self):
        return self._logdir

    def add_summary(self, summary, global_step=None, walltime=None):
        """Writes Event{wall_time, step, summary}: `summary` is serialized Summary bytes (what sess.run of a
        summary gives) or an object with SerializeToString (tf.Summary)."""
        if self._closed:
            raise RuntimeError("FileWriter %s is closed; call reopen() first" % self._path)
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        if not isinstance(summary, (bytes, bytearray)):
            raise TypeError("add_summary takes serialized Summary bytes (sess.run of a summary) or a tf.Summary, "
                            "got %s" % type(summary).__name__)
        self._write(bytes(summary), 0 if global_step is None else global_step, wall_time=walltime)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Accepted and ignored: nothing is written for the graph tab (tf.train.write_graph writes a GraphDef)."""

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Checks its arguments as TF does (a tag used twice is a ValueError); writes nothing: tinyflow's
        RunMetadata stays empty (per-op timings are Session(profile=True))."""
        if self._closed:
            raise RuntimeError("FileWriter %s is closed; call reopen() first" % self._path)
        tags = self.__dict__.setdefault("_run_metadata_tags", set())
        if tag in tags:
            raise ValueError("The provided tag was already used for this event type")
        tags.add(tag)

    def flush(self):
        """Nothing to do: records are written and flushed as they are added."""

    def close(self):
        self._closed = True

    def reopen(self):
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class FileWriterCache(object):
    """One FileWriter per logdir (tf.summary.FileWriterCache)."""
    _cache = {}

    @staticmethod
    def get(logdir):
        if logdir not in FileWriterCache._cache:
            FileWriterCache._cache[logdir] = FileWriter(logdir)
        return FileWriterCache._cache[logdir]

    @staticmethod
    def clear():
        for writer in FileWriterCache._cache.values():
            writer.close()
        FileWriterCache._cache.clear()
