"""tf.train.Saver and checkpoint utilities: TensorFlow's checkpoint V2 format (`<prefix>.index` +
`<prefix>.data-00000-of-00001`, written and read by libir_tensorflow.so) and the `checkpoint` state
file in TF's text format, so TF reads tinyflow's checkpoints and tinyflow restores TF's."""
import glob
import os
import time

import numpy as np

from .. import errors
from .. import tf_logging as logging
from .._lib import C, TinyflowError
from .checkpoint_state import CheckpointState, get_checkpoint_state, update_checkpoint_state
from ..framework import Tensor, Variable, get_default_graph

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "list_variables",
           "load_variable", "NewCheckpointReader", "CheckpointState", "update_checkpoint_state"]

# TensorFlow DataType numbers of the dtypes a checkpoint holds, and their NumPy types.
_TF_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8, 9: np.int64,
              10: np.bool_}
_TF_NAMES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 9: "int64", 10: "bool",
             7: "string"}
_TF_OF_NAME = {"float32": 1, "float64": 2, "int32": 3, "int64": 9, "bool": 10}


def _call(fn, *args, error_class=None):
    """Calls tinyflow._C's `fn` (libir_tensorflow's file formats); a library failure raises `error_class`
    (default: by the message, DataLossError for corrupt data, else OpError)."""
    try:
        return fn(*args)
    except TinyflowError as err:
        msg = str(err)
        if error_class is None:
            error_class = errors.DataLossError if ("CRC" in msg or "corrupt" in msg or "truncated" in msg
                                                   or "not a table" in msg) else errors.OpError
        if type(err) is error_class:
            raise
        raise error_class(msg) from None


def _prefix_exists(prefix):
    return os.path.isfile(prefix + ".index")


def _resolve(ckpt_dir_or_file):
    """A checkpoint prefix from a directory (its latest checkpoint) or a prefix; NotFoundError when none."""
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise errors.NotFoundError("Unsuccessful TensorSliceReader constructor: Failed to find any matching files "
                                       "for %s (no checkpoint state in that directory)" % ckpt_dir_or_file)
        return prefix
    if not _prefix_exists(ckpt_dir_or_file):
        raise errors.NotFoundError("Unsuccessful TensorSliceReader constructor: Failed to find any matching files "
                                   "for %s" % ckpt_dir_or_file)
    return ckpt_dir_or_file


class NewCheckpointReader(object):
    """tf.train.NewCheckpointReader: the tensors of a checkpoint (by prefix) as NumPy arrays."""

    def __init__(self, filepattern):
        self._prefix = _resolve(filepattern)
        self._shapes, self._dtypes = {}, {}
        for name, tf_dtype, dims in _call(C.tf_checkpoint_list, self._prefix):
            self._shapes[name] = dims
            self._dtypes[name] = tf_dtype

    def has_tensor(self, tensor_str):
        return tensor_str in self._shapes

    def get_variable_to_shape_map(self):
        return {k: list(v) for k, v in self._shapes.items()}

    def get_variable_to_dtype_map(self):
        """Name -> dtype name ("float32", "int8", ...; TF returns DType objects)."""
        return {k: _TF_NAMES.get(v, "DataType(%d)" % v) for k, v in self._dtypes.items()}

    def get_tensor(self, tensor_str):
        """The value of `tensor_str` in its stored dtype. NotFoundError when the checkpoint lacks it."""
        if tensor_str not in self._shapes:
            raise errors.NotFoundError("Key %s not found in checkpoint" % tensor_str)
        value = _call(C.tf_checkpoint_read, self._prefix, tensor_str)
        stored = _TF_DTYPES.get(self._dtypes[tensor_str])
        return np.asarray(value).astype(stored, copy=False) if stored is not None else value

    def debug_string(self):
        return "".join("%s (%s) %s\n" % (k, self.get_variable_to_dtype_map()[k], self._shapes[k])
                       for k in sorted(self._shapes)).encode("utf-8")


def list_variables(ckpt_dir_or_file):
    """tf.train.list_variables: sorted [(name, shape)] of a checkpoint (a prefix or a directory)."""
    shapes = NewCheckpointReader(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    """tf.train.load_variable: the value of `name` ("dense/kernel" or "dense/kernel:0") in a checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return NewCheckpointReader(ckpt_dir_or_file).get_tensor(name)


def checkpoint_exists(checkpoint_prefix):
    """tf.train.checkpoint_exists: whether a V2 checkpoint (its .index) or a V1 file matches the prefix."""
    return _prefix_exists(checkpoint_prefix) or bool(glob.glob(checkpoint_prefix))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """tf.train.latest_checkpoint: the prefix of the newest checkpoint in `checkpoint_dir`, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        logging.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def _var_name(var):
    """The checkpoint name of a variable: its op name (TF's "dense/kernel", without ":0")."""
    if isinstance(var, Tensor):
        return var.op.name
    raise TypeError("Variable to save is not a Variable: %r" % (var,))


def _delete_checkpoint(prefix):
    for path in glob.glob(glob.escape(prefix) + ".data-?????-of-?????") + [prefix + ".index", prefix + ".meta"]:
        try:
            os.remove(path)
        except OSError:
            pass


def _fallbacks(named_vars, reader):
    """Values of variables a checkpoint lacks but can derive from another key it has (a variable's
    _checkpoint_fallback = (key, convert): older tinyflow Adam checkpoints hold "Adam/step", not TF's
    beta1_power / beta2_power)."""
    values = {}
    for name, var in named_vars.items():
        fallback = getattr(var, "_checkpoint_fallback", None)
        if fallback is not None and not reader.has_tensor(name) and reader.has_tensor(fallback[0]):
            values[name] = fallback[1](reader.get_tensor(fallback[0]))
    return values


class Saver(object):
    """tf.train.Saver: saves and restores variables in TF's checkpoint V2 format.

    var_list: None (all global variables, and the SAVEABLE_OBJECTS ones), a list of variables (saved under
    their op names) or a dict name -> variable. max_to_keep: checkpoints kept (older ones are deleted; None
    or 0 keeps all); keep_checkpoint_every_n_hours: additionally keep one per that many hours.
    save_relative_paths: write the state file's paths relative to its directory. sharded is accepted and
    ignored (one shard). write_meta_graph is accepted, but no .meta is written: tinyflow cannot export a
    MetaGraphDef.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=None, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        from .. import framework
        if framework._EAGER is not None:
            raise RuntimeError("tf.train.Saver is not supported when eager execution is enabled. Use "
                               "tf.train.Checkpoint instead.")
        if reshape:
            raise NotImplementedError("Saver(reshape=True) is not supported")
        self._var_list = var_list
        self._max_to_keep = max_to_keep
        self._keep_every_n_hours = keep_checkpoint_every_n_hours
        self._next_keep_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._last_checkpoints = []  # [(prefix, time)], oldest first
        self._vars = None
        if not defer_build:
            self.build()

    def build(self):
        """Resolves var_list into name -> variable; ValueError for no variables or a duplicate name."""
        var_list = self._var_list
        if var_list is None:
            graph = get_default_graph()
            var_list = graph.get_collection("variables") + graph.get_collection("saveable_objects")
        if isinstance(var_list, dict):
            named = dict(var_list)
        else:
            named = {}
            for var in var_list:
                name = _var_name(var)
                if name in named and named[name] is not var:
                    raise ValueError("At least two variables have the same name: %s" % name)
                named[name] = var
        for name, var in named.items():
            if not isinstance(var, Variable):
                raise TypeError("Variable to save is not a Variable: %r (key %s)" % (var, name))
        if not named and not self._allow_empty:
            raise ValueError("No variables to save")
        self._vars = named

    @property
    def last_checkpoints(self):
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopts the existing ones of `checkpoint_paths` (e.g. from get_checkpoint_state) as last_checkpoints."""
        now = time.time()
        self._last_checkpoints = [(p, now) for p in checkpoint_paths if checkpoint_exists(p)]

    def _session_value(self, sess, name, var):
        value = sess.get_variable(var.op.name)
        if value is None:
            raise errors.FailedPreconditionError("Attempting to use uninitialized value %s (saving %s)"
                                                 % (var.op.name, name))
        return np.asarray(value)

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes the variables' values at `save_path` ("path-STEP" with a global_step: an int, or a tensor or
        variable whose value is read); updates the state file and deletes checkpoints beyond max_to_keep.
        Returns the checkpoint prefix."""
        if self._vars is None:
            raise RuntimeError("Saver(defer_build=True): call build() before save()")
        if latest_filename and os.path.basename(latest_filename) != latest_filename:
            raise ValueError("'latest_filename' collides with 'save_path': '%s' and '%s'" % (latest_filename,
                                                                                                save_path))
        if global_step is not None:
            step = int(sess.run(global_step)) if isinstance(global_step, Tensor) else int(global_step)
            save_path = ("%s-%08d" if self._pad_step_number else "%s-%d") % (save_path, step)
        save_dir = os.path.dirname(save_path) or "."
        if not os.path.isdir(save_dir):
            raise ValueError("Parent directory of %s doesn't exist, can't save." % save_path)
        from ..session import _host_array
        names = sorted(self._vars)
        values = [_host_array(self._session_value(sess, n, self._vars[n])) for n in names]
        _call(C.tf_checkpoint_write, save_path, names, values, None)
        self._record(save_path)
        if write_state:
            update_checkpoint_state(save_dir, save_path, self.last_checkpoints, latest_filename,
                                    self._save_relative_paths)
        return save_path

    def _record(self, prefix):
        """Adds `prefix` to last_checkpoints and deletes the oldest beyond max_to_keep (TF's rule, with
        keep_checkpoint_every_n_hours sparing one per period)."""
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix] + [(prefix, time.time())]
        if not self._max_to_keep:
            return
        while len(self._last_checkpoints) > self._max_to_keep:
            oldest, stamp = self._last_checkpoints.pop(0)
            if self._keep_every_n_hours and stamp > self._next_keep_time:
                self._next_keep_time += self._keep_every_n_hours * 3600
                continue
            _delete_checkpoint(oldest)

    def restore(self, sess, save_path):
        """Sets the variables to the values in the checkpoint at `save_path`. NotFoundError names the keys the
        checkpoint lacks; InvalidArgumentError a shape or dtype that differs from the variable's."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if self._vars is None:
            raise RuntimeError("Saver(defer_build=True): call build() before restore()")
        if not _prefix_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: %s" % save_path)
        reader = NewCheckpointReader(save_path)
        fallback = _fallbacks(self._vars, reader)
        missing = sorted(n for n in self._vars if not reader.has_tensor(n) and n not in fallback)
        if missing:
            raise errors.NotFoundError("Key %s not found in checkpoint %s (restoring %d variable(s); the checkpoint "
                                       "has: %s)" % (", ".join(missing), save_path, len(self._vars),
                                                     ", ".join(sorted(reader.get_variable_to_shape_map()))))
        shapes, dtypes = reader.get_variable_to_shape_map(), reader._dtypes
        values = {}
        for name, var in sorted(self._vars.items()):
            if name in fallback:
                values[var.op.name] = np.asarray(fallback[name], dtype=var.dtype.as_numpy_dtype)
                continue
            if _TF_OF_NAME.get(var.dtype.name) != dtypes[name]:
                raise errors.InvalidArgumentError(
                    "tensor_name = %s; expected dtype %s does not equal original dtype %s (checkpoint %s)"
                    % (name, var.dtype.name, _TF_NAMES.get(dtypes[name], dtypes[name]), save_path))
            want = var.shape.as_list() if var.shape.dims is not None else None
            if want is not None and (len(want) != len(shapes[name]) or
                                     any(w is not None and w != s for w, s in zip(want, shapes[name]))):
                raise errors.InvalidArgumentError(
                    "Assign requires shapes of both tensors to match. lhs shape= %s rhs shape= %s (variable %s, "
                    "checkpoint %s)" % (want, shapes[name], var.op.name, save_path))
            values[var.op.name] = reader.get_tensor(name).astype(var.dtype.as_numpy_dtype)
        for name, value in values.items():
            sess.set_variable(name, value)

    def to_proto(self, export_scope=None):
        raise NotImplementedError("Saver.to_proto: tinyflow has no SaverDef export")

    def export_meta_graph(self, *args, **kwargs):
        raise NotImplementedError("export_meta_graph: tinyflow cannot export a MetaGraphDef")
