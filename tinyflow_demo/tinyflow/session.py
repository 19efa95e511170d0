"""Session: runs fetches and targets of the graph through IRSessionRun, NumPy in and out."""
import json
import os

import numpy as np

from . import dtypes as _dtypes
from ._lib import C, TinyflowError
from .framework import Operation, Tensor, TensorShape, _Symbol, get_default_graph, register_hook

__all__ = ["Session", "InteractiveSession", "get_default_session"]

_SESSION_STACK = []


def get_default_session():
    return _SESSION_STACK[-1] if _SESSION_STACK else None


def _get_session(session):
    session = session or get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. "
                         "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    return session


register_hook("session", _get_session)  # Tensor.eval, Operation.run, Variable.load (the core does not import this)


def _host_array(value, dtype=None):
    """`value` as a C-contiguous, aligned NumPy array of `dtype` (its own when None): itself when it is one."""
    arr = np.asarray(value, dtype=None if dtype is None else dtype.as_numpy_dtype)
    if dtype is None:
        arr = arr.astype(_dtypes.as_dtype(arr.dtype).as_numpy_dtype, copy=False)
    if arr.flags.c_contiguous and arr.flags.aligned:
        return arr
    return np.require(arr, requirements=("C", "A"))  # (ascontiguousarray would make a 0-d array 1-d)


def to_ndarray(value, dtype=None):
    """A new NDArray handle (tinyflow._C) holding a copy of `value` (converted to `dtype` when given)."""
    arr = _host_array(value, dtype)
    return C.ndarray_from_numpy(arr, _dtypes.as_dtype(arr.dtype).enum)


def _fetch_error(fetch, why):
    return ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)" % (fetch, why))


class _FetchPlan(object):
    """How one run's (nested) fetches map to fetched tensors, target operations and Python-side
    targets (tf.data iterator initializers): lists, tuples, namedtuples and dicts, nested, as TF."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.tensors, self.targets, self.py_targets = [], [], []
        self.structure = self._flatten(fetches)
        self.fetch_symbol = _Symbol.group([t._symbol for t in self.tensors]) if self.tensors else None
        self.target_symbol = _Symbol.group([op._symbol for op in self.targets]) if self.targets else None

    def _element(self, fetch):
        """The graph's Tensor or Operation `fetch` is or names (errors as TF's Session.run)."""
        if isinstance(fetch, str):
            try:
                return self.graph.as_graph_element(fetch)
            except KeyError as err:
                raise _fetch_error(fetch, err.args[0])
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if not isinstance(fetch, (Tensor, Operation)) and hasattr(fetch, "_as_tensor"):
            fetch = fetch._as_tensor()
        if isinstance(fetch, (Tensor, Operation)):
            if fetch.graph is not self.graph:
                raise _fetch_error(fetch, "%s %s is not an element of this graph." % (
                    "Tensor" if isinstance(fetch, Tensor) else "Operation", fetch))
            return fetch
        return None

    def _flatten(self, fetch):
        if isinstance(fetch, dict):
            return ("d", type(fetch), [(k, self._flatten(v)) for k, v in fetch.items()])
        if isinstance(fetch, (list, tuple)):
            return ("l", type(fetch), [self._flatten(v) for v in fetch])
        if hasattr(fetch, "_fetch_expand"):  # computed from tensors (a summary): fetch them, then post-process
            inputs, post = fetch._fetch_expand()
            return ("x", post, [self._flatten(t) for t in inputs])
        element = self._element(fetch)
        if isinstance(element, Operation):
            if getattr(element, "_run_in_python", None) is not None:
                if element not in self.py_targets:
                    self.py_targets.append(element)
            elif element not in self.targets:
                self.targets.append(element)
            return None
        if isinstance(element, Tensor):
            if element not in self.tensors:
                self.tensors.append(element)
            return ("t", self.tensors.index(element))
        raise TypeError("Fetch argument %r has invalid type %s, must be a string or Tensor. (Can not convert a %s "
                        "into a Tensor or Operation.)" % (fetch, type(fetch), type(fetch).__name__))

    def build(self, values, node=()):
        node = self.structure if node == () else node
        if node is None:
            return None
        if node[0] == "t":
            return values[node[1]]
        if node[0] == "x":
            return node[1]([self.build(values, v) for v in node[2]])
        if node[0] == "d":
            return node[1]((k, self.build(values, v)) for k, v in node[2])
        items = [self.build(values, v) for v in node[2]]
        if node[1] is list:
            return items
        return node[1](*items) if hasattr(node[1], "_fields") else node[1](items)  # a namedtuple takes fields


def _node_names(symbols):
    """The names of every node the graph of `symbols` holds (its placeholders, variables and ops)."""
    symbols = [s for s in symbols if s is not None]
    if not symbols:
        return set()
    group = _Symbol.group(symbols) if len(symbols) > 1 else symbols[0]
    # A single-output node's output is named as the node (only those, placeholders and variables can be fed).
    return set(C.symbol_output_names(C.symbol_internals(group.handle)))


def _feed_tensor(graph, key):
    """The graph's Tensor a feed_dict key is or names (TypeError as TF for what is not one)."""
    if isinstance(key, str):
        try:
            key = graph.as_graph_element(key if ":" in key else key + ":0", allow_operation=False)
        except (KeyError, ValueError) as err:
            raise TypeError("Cannot interpret feed_dict key as Tensor: " + str(err.args[0]))
    if not isinstance(key, Tensor) and hasattr(key, "_as_tensor"):
        key = key._as_tensor()
    if not isinstance(key, Tensor):
        raise TypeError("Cannot interpret feed_dict key as Tensor: Can not convert a %s into a Tensor."
                        % type(key).__name__)
    if key.graph is not graph:
        raise TypeError("Cannot interpret feed_dict key as Tensor: Tensor %s is not an element of this graph."
                        % key)
    return key


class _RunPlan(object):
    """What runs with the same fetches and feed keys share: fetch plan, handles, which feeds the
    fetched graph uses (TF allows feeding others: they are left out), their names, dtypes and shapes,
    and the tf.data iterators whose next element the run feeds."""

    def __init__(self, graph, fetch_plan, feed_keys):
        self.fetches = fetch_plan
        self.fetch_handle = fetch_plan.fetch_symbol.handle if fetch_plan.fetch_symbol else None
        self.target_handle = fetch_plan.target_symbol.handle if fetch_plan.target_symbol else None
        used = _node_names([fetch_plan.fetch_symbol, fetch_plan.target_symbol])
        names, self.dtypes, self.used, self.shapes, self.tensors = [], [], [], [], []
        fed = set()
        for i, key in enumerate(feed_keys):
            tensor = _feed_tensor(graph, key)
            name = _feed_name(tensor)
            if name in fed:
                raise TinyflowError("feed '%s' is given twice (as a tensor and by name)" % name)
            fed.add(name)
            if name not in used:
                continue  # TF: feeding a tensor the fetches do not need is allowed
            self.used.append(i)
            names.append(name)
            self.tensors.append(tensor)
            self.dtypes.append(tensor.dtype)
            dims = tensor.shape.dims
            self.shapes.append(None if dims is None else tuple(dims))
        # tf.data iterators whose get_next() tensors the fetches use and the run does not feed
        self.iterators = []
        for name, iterator in graph._iterator_feeds.items():
            if name in used and name not in fed and iterator not in self.iterators:
                self.iterators.append(iterator)
        # which of each iterator's components the graph uses (sess.run(x) of x, y = get_next() consumes
        # an element, as TF, but feeds only x)
        self.iterator_masks = [[n in used for n in it._feed_names()] for it in self.iterators]
        self.all_names = names + [n for it, mask in zip(self.iterators, self.iterator_masks)
                                  for n, m in zip(it._feed_names(), mask) if m]
        self.names = tuple(self.all_names)
        self.all_dtypes = self.dtypes + [d for it, mask in zip(self.iterators, self.iterator_masks)
                                         for d, m in zip(it._feed_dtypes(), mask) if m]
        self.enums = tuple(d.enum for d in self.all_dtypes)
        self.checks = []
        for dims in self.shapes:
            start = max([i + 1 for i, d in enumerate(dims or ()) if d is None] or [0])
            fast = dims is not None and all(d is None for d in dims[:start])
            self.checks.append((len(dims), start, tuple(dims[start:])) if fast else None)
        # run()'s short path: no op run in Python, no iterator, every feed's shape checked by one comparison,
        # and the fetch one tensor (its value) or only targets (None)
        structure = fetch_plan.structure
        self.simple = not fetch_plan.py_targets and not self.iterators and None not in self.checks and \
            (structure is None or structure[0] == "t") and (self.fetch_handle or self.target_handle) is not None
        self.result_index = structure[1] if structure is not None else None
        self.feeds = tuple(zip(self.used, self.checks))

    def shape_matches(self, k, shape):
        """Whether a fed shape fits feed k's static shape (None dims take any size)."""
        dims = self.shapes[k]
        return len(dims) == len(shape) and all(d is None or d == n for d, n in zip(dims, shape))

    def shape_error(self, k, arr):
        raise ValueError("Cannot feed value of shape %r for Tensor %r, which has shape %r"
                         % (arr.shape, self.tensors[k].name, str(TensorShape(list(self.shapes[k])))))


def _collective_buckets(bucket_bytes, first_bucket_bytes):
    """Session options of the allreduce buckets: the arguments, else HOROVOD_FUSION_THRESHOLD (bytes)."""
    threshold = os.environ.get("HOROVOD_FUSION_THRESHOLD")
    if bucket_bytes is None and threshold:
        try:
            bucket_bytes = int(threshold)
        except ValueError:
            raise ValueError("HOROVOD_FUSION_THRESHOLD=%r: want a number of bytes" % threshold) from None
        if first_bucket_bytes is None:
            first_bucket_bytes = bucket_bytes
    options = {}
    for key, value in (("collective_bucket_bytes", bucket_bytes),
                       ("collective_first_bucket_bytes", first_bucket_bytes)):
        if value is not None:
            if int(value) < 0:
                raise ValueError("%s must be >= 0, got %r (leave it unset for the default)" % (key, value))
            options[key] = int(value)
    return options


class Session(object):
    """A TF1-style session over IRSessionCreate; options become the session's options JSON.

    target: "cpu", "opencl" or "cuda" (also accepted: "" and "local" for cpu); fusion: fuse
    elementwise chains into generated kernels; fmax: most array inputs of one fused kernel
    (None: the library's default); dump_dir: write the IR after every pass there; profile:
    time every node of every run (stats()["nodes"], profile_table()); simplify: apply the rewrite
    rules (docs/REWRITE_RULES.md; rewrites() lists what fired) to the graph the session runs,
    gradients included (tf.gradients and minimize build them without rules): simplify=False runs
    the graph as written, as TF with grappler off; fast_math: also the rules that change special
    values (x - x -> 0, x + 0 -> x); nsz: of those, only the ones that change the sign of zero
    alone; rule_sets: names of the rule sets to apply (None: all).
    collective_bucket_bytes / collective_first_bucket_bytes: the allreduce buckets of data-parallel
    training (tinyflow.horovod; default: a 1 MB first bucket, then 25 MB as PyTorch DDP, or a quarter of
    the model's gradient bytes when that is less, so a small model overlaps several buckets; Horovod's
    HOROVOD_FUSION_THRESHOLD sets both; 0 runs every allreduce alone and synchronously).
    """

    def __init__(self, target="cpu", graph=None, config=None, fusion=True, fmax=None, dump_dir=None, seed=None,
                 is_train=True, passes=None, profile=False, simplify=True, fast_math=False, rule_sets=None,
                 collective_bucket_bytes=None, collective_first_bucket_bytes=None, nsz=False):
        from . import framework
        if framework._EAGER is not None:
            raise RuntimeError("tf.Session is not supported when eager execution is enabled: ops run as they "
                               "are written.")
        self.graph = graph or get_default_graph()
        if target in ("", "local", None) or str(target).startswith("grpc"):
            target = "cpu"
        seed = seed if seed is not None else (self.graph.seed or 0)
        self.options = {"target": target, "fusion": bool(fusion), "fmax": -1 if fmax is None else int(fmax),
                        "dump_dir": dump_dir or "", "seed": int(seed), "is_train": bool(is_train),
                        "profile": bool(profile), "simplify": bool(simplify), "fast_math": bool(fast_math),
                        "nsz": bool(nsz)}
        if passes is not None:
            self.options["passes"] = list(passes)
        if rule_sets is not None:
            self.options["rule_sets"] = list(rule_sets)
        self.options.update(_collective_buckets(collective_bucket_bytes, collective_first_bucket_bytes))
        self.handle = C.session_create(json.dumps(self.options))
        self._plans = {}
        self._last_plan = None  # (fetches, feed keys, _RunPlan) of the last run
        self._iterator_state = {}  # tf.data: Iterator -> the generator of its elements in this session
        self._default_ctx = []

    @property
    def graph_def(self):
        """The session graph's TensorFlow GraphDef (what tf.train.write_graph writes)."""
        return self.graph.as_graph_def()

    # -- running --
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` (a Tensor, Operation, name, or nested list/tuple/namedtuple/dict of them) with
        feed_dict's values replacing its keys' tensors (placeholders, or any tensor: what computes it
        does not run); returns their values in the structure of `fetches`."""
        if self.handle is None:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_dict = feed_dict or {}
        keys = tuple(feed_dict)
        last = self._last_plan  # the loop's common case: the same fetches and feed keys as the last run
        plan = last[2] if last is not None and last[0] is fetches and last[1] == keys else \
            self._run_plan(fetches, feed_dict, keys)
        if plan.simple:  # (the common training step: what the loop below does, without what it does not need)
            values = list(feed_dict.values()) if keys else ()
            arrays = []
            for i, check in plan.feeds:
                arr = values[i]
                if type(arr) is not np.ndarray:
                    arr = _host_array(arr, plan.dtypes[len(arrays)])
                if arr.ndim != check[0] or arr.shape[check[1]:] != check[2]:
                    plan.shape_error(len(arrays), arr)
                arrays.append(arr)
            out = C.session_run(self.handle, plan.fetch_handle, plan.target_handle, plan.names, plan.enums, arrays,
                                True)
            return None if plan.result_index is None else out[plan.result_index]
        for op in plan.fetches.py_targets:
            op._run_in_python(self, feed_dict)
        values = list(feed_dict.values()) if keys else ()
        arrays = []  # read in place by the run (tinyflow._C takes their buffers: no copy)
        for k, i in enumerate(plan.used):
            arr = values[i]  # (an array of another dtype or layout: tinyflow._C copies it to the feed's)
            if type(arr) is not np.ndarray:
                arr = _host_array(arr, plan.dtypes[k])
            check = plan.checks[k]  # (rank, start, dims from start): the None dims all come before start
            if check is not None:
                if arr.ndim != check[0] or arr.shape[check[1]:] != check[2]:
                    plan.shape_error(k, arr)
            elif plan.shapes[k] is not None and not plan.shape_matches(k, arr.shape):
                plan.shape_error(k, arr)
            arrays.append(arr)
        for iterator, mask in zip(plan.iterators, plan.iterator_masks):
            arrays.extend(a for a, m in zip(iterator._next_arrays(self), mask) if m)
        if plan.fetch_handle is None and plan.target_handle is None:
            return plan.fetches.build(())
        # The fetched values are NumPy arrays over the run's own result buffers (not copied).
        return plan.fetches.build(C.session_run(self.handle, plan.fetch_handle, plan.target_handle, plan.names,
                                                plan.enums, arrays, True))

    def _run_plan(self, fetches, feed_dict, keys):
        """The _RunPlan of these fetches and feed keys (cached: keys are object identities or names)."""
        key = (_fetch_key(fetches), tuple(k if isinstance(k, str) else id(k) for k in keys))
        entry = self._plans.get(key)
        if entry is None:
            entry = (_RunPlan(self.graph, _FetchPlan(self.graph, fetches), keys), fetches, keys)
            if key[0] is not None:
                self._plans[key] = entry  # keeps the keyed objects alive: ids stay unique
        self._last_plan = (fetches, keys, entry[0])
        return entry[0]

    def partial_run(self, *args, **kwargs):
        raise NotImplementedError("partial_run is not supported")

    # -- variables --
    def get_variable(self, name):
        """The stored value of variable `name` (NumPy), or None when it has none."""
        return C.session_get_variable(self.handle, name)

    def set_variable(self, name, value):
        C.session_set_variable(self.handle, name, to_ndarray(value))

    def list_variables(self):
        return C.session_list_variables(self.handle)

    # -- introspection --
    def stats(self):
        """Statistics of the last run: kernels_launched, bytes_allocated, memory_lower_bound_bytes, bind_ms,
        run_ms, pfor_fallbacks, rewrites, ...; with profile=True, nodes: [{"name", "op", "ms"}] slowest first."""
        return json.loads(C.session_stats_json(self.handle))

    def pfor_fallbacks(self):
        """The nodes of pfor bodies (parallel_for, jacobians, vectorized_map) the last run's Vectorize
        pass could not convert: each ran as a loop over the iterations. Empty when all vectorized."""
        return list(self.stats()["pfor_fallbacks"])

    def rewrites(self):
        """The rewrite rules the last run's Simplify pass applied, as "rule @ node" (empty with simplify=False)."""
        return list(self.stats()["rewrites"])

    def profile_table(self, top=None):
        """The last run's nodes, slowest first, as text: time (us), share of the run, op, name."""
        nodes = self.stats()["nodes"]
        if not nodes and self.options["profile"] is False:
            raise ValueError("profile_table needs a Session created with profile=True")
        total = sum(n["ms"] for n in nodes) or 1.0
        lines = ["%10s %6s  %-40s %s" % ("us", "%", "op", "name")]
        for n in nodes[:top]:
            lines.append("%10.1f %5.1f%%  %-40s %s" % (n["ms"] * 1e3, 100.0 * n["ms"] / total, n["op"], n["name"]))
        return "\n".join(lines)

    def last_graph(self):
        """The bound graph of the last run (a tinyflow.ir.Graph: fusion groups, kernel source, plan)."""
        from .ir import Graph
        return Graph(handle=C.session_last_graph(self.handle))

    # -- lifetime and default session --
    def close(self):
        if self.handle is not None:
            C.free(self.handle)
            self.handle = None
            self._plans.clear()
            self._last_plan = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def as_default(self):
        return _DefaultSession(self)

    def __enter__(self):
        ctx = _DefaultSession(self)
        ctx.__enter__()
        self._default_ctx.append(ctx)
        return self

    def __exit__(self, *exc):
        self._default_ctx.pop().__exit__(*exc)
        self.close()
        return False


class _DefaultSession(object):
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        _SESSION_STACK.append(self.session)
        return self.session

    def __exit__(self, *exc):
        if self.session in _SESSION_STACK:
            _SESSION_STACK.reverse()
            _SESSION_STACK.remove(self.session)
            _SESSION_STACK.reverse()
        return False


class InteractiveSession(Session):
    """A Session that installs itself as the default session on construction."""

    def __init__(self, *args, **kwargs):
        Session.__init__(self, *args, **kwargs)
        _SESSION_STACK.append(self)

    def close(self):
        if self in _SESSION_STACK:
            _SESSION_STACK.remove(self)
        Session.close(self)


def _feed_name(key):
    """The IR name a feed goes to: a placeholder, a variable, or (as TF feeds any tensor) the op whose
    single output the fed value replaces in that run (tf.placeholder_with_default)."""
    if isinstance(key, Tensor):
        if key.op.type not in ("Placeholder", "VariableV2") and len(key.op.outputs) != 1:
            raise TinyflowError("cannot feed %s: its op %s has %d outputs; only a single-output op's tensor can be fed"
                                % (key.name, key.op.name, len(key.op.outputs)))
        return key.op.name
    if isinstance(key, str):
        return key.split(":")[0]
    raise TypeError("feed_dict keys must be Tensors or names, got %r" % (key,))


def _fetch_key(fetches):
    """A hashable key of the fetch structure (object identities, names), or None when it has none."""
    if isinstance(fetches, (Tensor, Operation)) or hasattr(fetches, "_fetch_expand"):
        return id(fetches)
    if isinstance(fetches, str):
        return "name:" + fetches
    if isinstance(fetches, (list, tuple)):
        parts = [_fetch_key(f) for f in fetches]
        return None if None in parts else (type(fetches), tuple(parts))
    if isinstance(fetches, dict):
        parts = [(k, _fetch_key(v)) for k, v in fetches.items()]
        return None if any(p[1] is None for p in parts) else (type(fetches), tuple(parts))
    return None
