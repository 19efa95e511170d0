"""The `checkpoint` state file of a checkpoint directory: a tensorflow.CheckpointState in protobuf's
text format, read and written as TensorFlow's checkpoint_management does (its text_format parser and
printer, restricted to that one message)."""
import math
import os
import re
import warnings

from .. import tf_logging as logging

__all__ = ["CheckpointState", "get_checkpoint_state", "update_checkpoint_state"]

# CheckpointState's fields and their kinds (checkpoint_state.proto).
_FIELDS = {"model_checkpoint_path": ("string", False), "all_model_checkpoint_paths": ("string", True),
           "all_model_checkpoint_timestamps": ("double", True), "last_preserved_timestamp": ("double", False)}


class CheckpointState(object):
    """model_checkpoint_path (the latest), all_model_checkpoint_paths (oldest first) and their timestamps."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(), all_model_checkpoint_timestamps=(),
                 last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self):
        return _state_text(self)


class ParseError(Exception):
    """text_format.ParseError: the file is not a CheckpointState in text format (line:column: why)."""


# protobuf's text_format Tokenizer: whitespace and '#' comments between tokens; a token is an
# identifier, a number, a quoted string (ending at its quote or, unterminated, at the end of the line)
# or one other character.
_SKIP = re.compile(r"(\s|(#.*$))+", re.MULTILINE)
_TOKEN = re.compile("|".join([r"[a-zA-Z_][0-9a-zA-Z_+-]*", r"([0-9+-]|(\.[0-9]))[0-9a-zA-Z_.+-]*"] + [
    r"{q}[^{q}\n\\]*((\\.)+[^{q}\n\\]*)*({q}|\\?$)".format(q=q) for q in ("'", '"')]), re.MULTILINE)
_CUNESCAPE_HEX = re.compile(r"(\\+)x([0-9a-fA-F])(?![0-9a-fA-F])")


class _Tokenizer(object):
    def __init__(self, text):
        self._text, self._pos, self.token = text, 0, ""
        self._next()

    def _next(self):
        skip = _SKIP.match(self._text, self._pos)
        if skip:
            self._pos = skip.end()
        self._start = self._pos
        match = _TOKEN.match(self._text, self._pos)
        self.token = match.group(0) if match else self._text[self._pos:self._pos + 1]
        self._pos += len(self.token)

    def error(self, message):
        line = self._text.count("\n", 0, self._start)
        column = self._start - (self._text.rfind("\n", 0, self._start) + 1)
        return ParseError("%d:%d : %s" % (line + 1, column + 1, message))

    def at_end(self):
        return not self.token

    def try_consume(self, token):
        if self.token == token:
            self._next()
            return True
        return False

    def consume(self, token):
        if not self.try_consume(token):
            raise self.error("Expected \"%s\"." % token)

    def consume_identifier_or_number(self):
        if not re.match(r"\w+$", self.token):
            raise self.error("Expected identifier or number, got %s." % self.token)
        name = self.token
        self._next()
        return name

    def consume_string(self):
        """Adjacent quoted strings concatenated, C-unescaped, decoded as UTF-8 (a proto3 string)."""
        parts = [self._single_string()]
        while self.token and self.token[0] in "'\"":
            parts.append(self._single_string())
        try:
            return b"".join(parts).decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.error("%s" % e)

    def _single_string(self):
        text = self.token
        if not text or text[0] not in "'\"":
            raise self.error("Expected string but found: %r" % text)
        if len(text) < 2 or text[-1] != text[0]:
            raise self.error("String missing ending quote: %r" % text)
        try:
            value = _cunescape(text[1:-1])
        except ValueError as e:  # e.g. a truncated \x or \u escape
            raise self.error(str(e))
        self._next()
        return value

    def consume_float(self):
        try:
            value = _parse_float(self.token)
        except ValueError as e:
            raise self.error(str(e))
        self._next()
        return value


def _cunescape(text):
    """protobuf's text_encoding.CUnescape: C escapes (\\n, \\ooo, \\xhh, \\uhhhh...) to bytes."""
    def hex_digit(m):  # \xh (one digit) means \x0h, unless the backslash is itself escaped
        return m.group(1) + "x0" + m.group(2) if len(m.group(1)) & 1 else m.group(0)
    with warnings.catch_warnings():  # an unknown escape (\\q) stays as it is, as in protobuf, without a warning
        warnings.simplefilter("ignore", DeprecationWarning)
        unescaped = _CUNESCAPE_HEX.sub(hex_digit, text).encode("utf-8").decode("unicode_escape")
    return unescaped.encode("raw_unicode_escape")


def _parse_float(text):
    """text_format.ParseFloat: Python's float syntax, inf/infinity/nan in any case, an 'f' suffix."""
    try:
        return float(text)
    except ValueError:
        if re.match(r"-?inf(inity)?f?$", text, re.IGNORECASE):
            return -math.inf if text[0] == "-" else math.inf
        if re.match(r"nanf?$", text, re.IGNORECASE):
            return math.nan
        try:
            return float(text.rstrip("fF"))
        except ValueError:
            raise ValueError("Couldn't parse float: %s" % text)


def _parse_state(text):
    """text_format.Merge(text, CheckpointState()); raises ParseError."""
    state, tokens = CheckpointState(), _Tokenizer(text)
    while not tokens.at_end():
        name = tokens.consume_identifier_or_number()
        if name not in _FIELDS:
            raise tokens.error('Message type "tensorflow.CheckpointState" has no field named "%s".' % name)
        kind, repeated = _FIELDS[name]
        tokens.consume(":")
        read = tokens.consume_string if kind == "string" else tokens.consume_float
        if repeated and tokens.try_consume("["):  # the short form: name: [v1, v2]
            values = []
            if not tokens.try_consume("]"):
                while True:
                    values.append(read())
                    if tokens.try_consume("]"):
                        break
                    tokens.consume(",")
            getattr(state, name).extend(values)
        elif repeated:
            getattr(state, name).append(read())
        else:
            setattr(state, name, read())
        if not tokens.try_consume(","):
            tokens.try_consume(";")
    return state


def _cescape(value):
    """text_encoding.CEscape(utf-8 bytes, as_utf8=False), as text_format prints a string field."""
    named = {ord("\n"): r"\n", ord("\r"): r"\r", ord("\t"): r"\t", ord('"'): r"\"", ord("'"): r"\'",
             ord("\\"): r"\\"}
    return "".join(named.get(b) or (chr(b) if 32 <= b < 127 else "\\%03o" % b) for b in value.encode("utf-8"))


def _state_text(state):
    lines = ['model_checkpoint_path: "%s"' % _cescape(state.model_checkpoint_path)]
    lines += ['all_model_checkpoint_paths: "%s"' % _cescape(p) for p in state.all_model_checkpoint_paths]
    lines += ["all_model_checkpoint_timestamps: %r" % t for t in state.all_model_checkpoint_timestamps]
    if state.last_preserved_timestamp:
        lines.append("last_preserved_timestamp: %r" % state.last_preserved_timestamp)
    return "\n".join(lines) + "\n"


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None, latest_filename=None,
                            save_relative_paths=False):
    """Writes the state file (atomically) in TF's text format; with save_relative_paths, paths inside save_dir
    are written relative to it."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if save_relative_paths:
        rel = lambda p: os.path.relpath(p, save_dir) if os.path.isabs(p) else p  # noqa: E731
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    path = os.path.join(save_dir, latest_filename or "checkpoint")
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_state_text(CheckpointState(model_checkpoint_path, paths)))
    os.replace(tmp, path)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """tf.train.get_checkpoint_state: the CheckpointState of `checkpoint_dir` (relative paths joined to it), or
    None when it has no state file, one that cannot be read or one that does not parse (both logged, as TF
    does); ValueError when it names no model_checkpoint_path. Bytes that are not UTF-8 are a parse error
    too (logged, None): TF's file_io.read_file_to_string raises UnicodeDecodeError there, outside the try
    that makes parse errors None, so a damaged state file would stop a program that TF means to go on."""
    path = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    if not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            content = f.read()
    except OSError as e:  # TF's errors.OpError: a directory, no permission...
        logging.warning("%s: %s", type(e).__name__, e)
        logging.warning("%s: Checkpoint ignored", path)
        return None
    return _state_of(content, checkpoint_dir, path)


def _state_of(content, checkpoint_dir, path):
    """get_checkpoint_state's result for the bytes `content` of the state file `path`."""
    try:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError("byte %d: the file is not UTF-8 text (%s)" % (e.start, e.reason))
        state = _parse_state(text)
    except ParseError as e:
        logging.warning("%s: %s", type(e).__name__, e)
        logging.warning("%s: Checkpoint ignored", path)
        return None
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from " + checkpoint_dir)
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
                                        for p in state.all_model_checkpoint_paths]
    return state
