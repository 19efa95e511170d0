"""Minimal protobuf text-format reader for TensorFlow GraphDef .pbtxt files.

Pure Python (numpy only for tensors), independent of the C++ importer, so the
oracles and the structure report do not share code with the thing they check.

parse(text) -> Msg: a message is a list of (field, value) pairs where value is a
scalar (str / int / float / bool / enum name) or a nested Msg.
"""
import re

import numpy as np

_TOKEN = re.compile(
    r'\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[{}:<>\[\],]|[^\s{}:<>\[\],"\']+')

_DTYPES = {
    "DT_FLOAT": np.float32, "DT_DOUBLE": np.float64, "DT_INT32": np.int32,
    "DT_INT64": np.int64, "DT_BOOL": np.bool_, "DT_HALF": np.float16,
    "DT_UINT8": np.uint8, "DT_INT8": np.int8, "DT_INT16": np.int16,
}
_VAL_FIELD = {np.float32: "float_val", np.float64: "double_val", np.int32: "int_val",
              np.int64: "int64_val", np.bool_: "bool_val", np.float16: "half_val",
              np.uint8: "int_val", np.int8: "int_val", np.int16: "int_val"}


class Msg(list):
    """A parsed message: an ordered list of (field, value) pairs."""

    def get(self, field, default=None):
        """First value of `field`, or `default`."""
        for k, v in self:
            if k == field:
                return v
        return default

    def all(self, field):
        """Every value of a repeated `field`, in order."""
        return [v for k, v in self if k == field]


def _unescape(body):
    """C-style unescape of a text-format string literal body, to bytes."""
    out, i = bytearray(), 0
    raw = body.encode("latin-1")
    while i < len(raw):
        c = raw[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        n = chr(raw[i + 1])
        if n in "01234567":
            j = i + 1
            while j < len(raw) and j < i + 4 and chr(raw[j]) in "01234567":
                j += 1
            out.append(int(raw[i + 1:j], 8) & 0xFF)
            i = j
        elif n == "x":
            j = i + 2
            while j < len(raw) and j < i + 4 and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j], 16))
            i = j
        else:
            out.extend({"n": b"\n", "t": b"\t", "r": b"\r", "a": b"\a", "b": b"\b",
                        "f": b"\f", "v": b"\v"}.get(n, n.encode("latin-1")))
            i += 2
    return bytes(out)


def _scalar(tok):
    """Convert a scalar token to bytes (strings), bool, int, float or enum name."""
    if tok[0] in "\"'":
        return _unescape(tok[1:-1])
    if tok in ("true", "True"):
        return True
    if tok in ("false", "False"):
        return False
    try:
        return int(tok, 0)
    except ValueError:
        pass
    try:
        return float(tok.rstrip("fF")) if tok not in ("inf", "nan") else float(tok)
    except ValueError:
        return tok


def parse(text):
    """Parse a whole text-format message (e.g. a GraphDef) into a Msg."""
    toks = [t for t in _TOKEN.findall(text) if not t.isspace() and not t.startswith("#")]
    return _parse_fields(toks, 0, None)[0]


def _parse_fields(toks, pos, closer):
    msg = Msg()
    while pos < len(toks) and toks[pos] != closer:
        name = toks[pos]
        pos += 1
        if toks[pos] == ":":
            pos += 1
        if toks[pos] in "{<":
            sub, pos = _parse_fields(toks, pos + 1, "}" if toks[pos] == "{" else ">")
            msg.append((name, sub))
            pos += 1
        elif toks[pos] == "[":
            pos += 1
            while toks[pos] != "]":
                if toks[pos] != ",":
                    msg.append((name, _scalar(toks[pos])))
                pos += 1
            pos += 1
        else:
            val = _scalar(toks[pos])
            pos += 1
            # adjacent string literals concatenate
            while isinstance(val, bytes) and pos < len(toks) and toks[pos][0] in "\"'":
                val += _scalar(toks[pos])
                pos += 1
            msg.append((name, val))
    return msg, pos


def attr(node, key):
    """The AttrValue message of `key` on a NodeDef, or None."""
    for a in node.all("attr"):
        if a.get("key") == key.encode():
            return a.get("value")
    return None


def shape_of(shape_msg):
    """TensorShapeProto -> tuple of dims (-1 unknown) or None for unknown rank."""
    if shape_msg is None or shape_msg.get("unknown_rank"):
        return None
    return tuple(d.get("size", 0) for d in shape_msg.all("dim"))


def tensor_value(tensor):
    """TensorProto -> numpy array (tensor_content or repeated *_val, broadcast)."""
    dt = _DTYPES[tensor.get("dtype")]
    shape = shape_of(tensor.get("tensor_shape")) or ()
    content = tensor.get("tensor_content")
    if content is not None:
        return np.frombuffer(content, dtype=np.dtype(dt).newbyteorder("<")).astype(dt).reshape(shape)
    vals = tensor.all(_VAL_FIELD[dt])
    n = int(np.prod(shape)) if shape else 1
    if not vals:
        return np.zeros(shape, dt)
    arr = np.array(vals, dtype=dt)
    if arr.size < n:  # TF repeats the last value to fill the tensor
        arr = np.concatenate([arr, np.repeat(arr[-1:], n - arr.size)])
    return arr.reshape(shape)


def load(path):
    """Read and parse a .pbtxt GraphDef file."""
    with open(path, "rb") as f:
        return parse(f.read().decode("latin-1"))


def nodes(graph):
    """{name: NodeDef} of the top-level graph, in file order."""
    return {n.get("name").decode(): n for n in graph.all("node")}


def const(graph, name):
    """Value of the Const node `name` in the top-level graph."""
    node = nodes(graph)[name]
    assert node.get("op") == b"Const", name
    return tensor_value(attr(node, "value").get("tensor"))
