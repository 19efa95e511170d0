"""Queue-based input (TF 1.x): tf.FIFOQueue, tf.RandomShuffleQueue, tf.PaddingFIFOQueue, tf.train.QueueRunner,
tf.train.Coordinator and tf.train.start_queue_runners.

A queue's elements live in Python, one store per Session (as TF keeps a queue resource per session). An
enqueue op is an Operation that Session.run runs in Python: it evaluates its value tensors in the same
session (a run of its own, which may dequeue from another queue) and appends them, blocking while the queue
is full. A dequeue's tensors are placeholders that Session.run feeds with the next element (or batch) when
the fetches need them, exactly once per run however many fetches use them (the mechanism of tf.data's
iterators, data.py); it blocks until enough elements are there, and raises tf.errors.OutOfRangeError once
the queue is closed with too few. QueueRunner threads run enqueue ops until their input ends, then close
the queue; Coordinator.request_stop cancels them (queue_runner.py).

Components of dtype tf.string are held host-side: a queue may carry them (string_input_producer's file
names), but dequeuing them into the graph needs string tensors, which tinyflow's core does not have
(NotSupportedYetError names the queue).
"""
import threading
import weakref

import numpy as np

from . import dtypes as _dtypes
from . import errors as _errors
from . import framework as _framework
from .compat import NotSupportedYetError
from .framework import Tensor, TensorShape, convert_to_tensor, get_default_graph, placeholder

__all__ = ["QueueBase", "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue"]

_POLL_SECS = 0.05  # how often a blocked enqueue/dequeue looks whether its session was closed
_STORES = weakref.WeakKeyDictionary()  # Session -> {queue: _Store}
_STORES_LOCK = threading.Lock()


def _no_eager(what):
    if _framework._EAGER is not None:
        raise RuntimeError("%s: queues are not supported when eager execution is enabled (use tf.data)" % what)


class _Store(object):
    """One queue's elements in one session."""

    def __init__(self):
        self.items = []  # each a list of arrays, one per component
        self.closed = False
        self.cancelled = False
        self.cond = threading.Condition()


def _store(session, queue):
    with _STORES_LOCK:
        stores = _STORES.setdefault(session, {})
        store = stores.get(queue)
        if store is None:
            store = stores[queue] = _Store()
        return store


def _run(session, fetches, feed_dict=None):
    """session.run without instance-level wrappers: tf.train.Supervisor serializes a session's runs with a lock,
    and an enqueue blocked under it would deadlock the dequeue waiting for it."""
    return type(session).run(session, fetches, feed_dict=feed_dict)


def _check_session(session, what):
    if getattr(session, "handle", True) is None:
        raise _errors.CancelledError(None, None, "%s was cancelled: its session was closed" % what)


def _host_value(value, dtype):
    """A component value as a NumPy array of dtype (strings as an object array of bytes)."""
    if dtype == _dtypes.string:
        arr = np.asarray(value, dtype=object)
        return np.vectorize(lambda s: s.encode("utf-8") if isinstance(s, str) else bytes(s), otypes=[object])(arr) \
            if arr.size else arr
    return np.asarray(value, dtype=dtype.as_numpy_dtype)


def _storable(arr):
    """arr, or while the core cannot hold its integer dtype (uint8 MNIST labels, int16 audio), the same values
    widened to int32 (int64 for 32/64-bit unsigned), so programs feeding them run; unchanged once the core has
    the dtype."""
    if arr.dtype.kind in "iub" and arr.dtype != np.bool_ and not _dtypes.as_dtype(arr.dtype).is_supported:
        return arr.astype(np.int64 if arr.dtype.itemsize >= 4 else np.int32)
    return arr


class QueueBase(object):
    """TF's QueueBase: a queue of tuples of `dtypes` components (named by `names` when given)."""

    _kind = "FIFOQueue"

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue",
                 min_after_dequeue=0, seed=None, pad=False):
        _no_eager("tf.%s" % self._kind)
        if not isinstance(dtypes, (list, tuple)):
            dtypes = [dtypes]
        self._dtypes = [_dtypes.as_dtype(d) for d in dtypes]
        if shapes is not None:
            if not isinstance(shapes, (list, tuple)) or (shapes and not isinstance(shapes[0], (list, tuple,
                                                                                               TensorShape))):
                shapes = [shapes]
            if len(shapes) != len(self._dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]
        else:
            self._shapes = [TensorShape(None) for _ in self._dtypes]
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        self._capacity = int(capacity) if capacity is not None and int(capacity) > 0 else None
        self._min_after_dequeue = int(min_after_dequeue)
        self._pad = pad
        graph = get_default_graph()
        self._name = graph.unique_name(name)
        self._graph = graph
        graph_seed = graph.seed
        if seed is None and graph_seed is None:
            seed = np.random.randint(2 ** 31 - 1)
        self._seed = (0 if seed is None else int(seed), 0 if graph_seed is None else int(graph_seed))

    # -- what it holds --
    name = property(lambda self: self._name)
    dtypes = property(lambda self: list(self._dtypes))
    shapes = property(lambda self: list(self._shapes))
    names = property(lambda self: self._names)
    queue_ref = property(lambda self: self)

    def _store(self, session):
        store = _store(session, self)
        if not hasattr(store, "rng"):
            store.rng = np.random.RandomState(list(self._seed))
        return store

    # -- graph ops --
    def _components(self, vals, many):
        """vals (a list/tuple, a dict by names, or one value) as a list of per-component tensors or host arrays."""
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue.  Dictionary: (%s), "
                                 "Queue: (%s)" % (sorted(vals.keys()), sorted(self._names)))
            vals = [vals[k] for k in self._names]
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d components to enqueue in %s, got %d" % (len(self._dtypes), self._name,
                                                                                 len(vals)))
        parts = []
        for value, dtype, shape in zip(vals, self._dtypes, self._shapes):
            if dtype == _dtypes.string:
                if isinstance(value, Tensor):
                    raise NotSupportedYetError("%s: enqueuing a tf.string tensor is not supported (tinyflow's core "
                                               "has no string tensors); give the strings as Python values" % self._name)
                parts.append(_host_value(value, dtype))
                continue
            tensor = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtype)
            if tensor.dtype != dtype:
                raise TypeError("%s: component of dtype %s enqueued into a queue of %s" % (self._name,
                                                                                       tensor.dtype.name, dtype.name))
            dims = tensor.shape.dims
            element = dims[1:] if (many and dims is not None) else dims
            if element is not None and not shape.is_compatible_with(TensorShape(element)):
                raise ValueError("Shape %s of an enqueued component is incompatible with the queue's %s (%s)"
                                 % (TensorShape(element), shape, self._name))
            parts.append(tensor)
        return parts

    def _enqueue_op(self, vals, many, name):
        from .ops.state_ops import no_op
        _no_eager("enqueue")
        parts = self._components(vals, many)
        tensors = [p for p in parts if isinstance(p, Tensor)]
        op = no_op(name=name or ("%s_%s" % (self._name, "EnqueueMany" if many else "enqueue")))

        direct = _direct_dequeue(tensors)

        def run(session, feed_dict=None):
            if direct is not None and not feed_dict:  # straight from another queue: take its element here
                element = direct[0]._next_arrays(session)
                values = [element[i] for i in direct[1]]
            else:
                values = _run(session, tensors, feed_dict) if tensors else []
            it = iter(values)
            arrays = [_host_value(next(it), d) if isinstance(p, Tensor) else p for p, d in zip(parts, self._dtypes)]
            if many:
                sizes = set(a.shape[0] if a.ndim else -1 for a in arrays)
                if len(sizes) != 1 or -1 in sizes:
                    raise _errors.InvalidArgumentError(None, None, "%s: enqueue_many's components must have the same "
                                                                   "first dimension, got %s" % (self._name, sizes))
                elements = [[a[i] for a in arrays] for i in range(sizes.pop())]
            else:
                elements = [arrays]
            self._put(session, elements)

        op._run_in_python = run
        return op

    def enqueue(self, vals, name=None):
        """An op that adds one element (blocks while the queue is full)."""
        return self._enqueue_op(vals, False, name)

    def enqueue_many(self, vals, name=None):
        """An op that adds the elements sliced from vals along dimension 0."""
        return self._enqueue_op(vals, True, name)

    def _put(self, session, elements):
        store = self._store(session)
        with store.cond:
            for element in elements:
                while True:
                    if store.closed:
                        raise _errors.CancelledError(None, None, "%s '%s' is closed." % (self._kind, self._name))
                    if self._capacity is None or len(store.items) < self._capacity:
                        break
                    store.cond.wait(_POLL_SECS)
                    _check_session(session, "Enqueue into %s" % self._name)
                store.items.append(element)
                store.cond.notify_all()

    def _dequeue(self, n, up_to, name):
        _no_eager("dequeue")
        if any(d == _dtypes.string for d in self._dtypes):
            raise NotSupportedYetError("%s: dequeuing tf.string components into the graph is not supported "
                                       "(tinyflow's core has no string tensors)" % self._name)
        feeder = _Dequeue(self, n, up_to, name or ("%s_Dequeue%s" % (self._name, "" if n is None else "Many")))
        tensors = feeder.tensors
        if self._names:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    def dequeue(self, name=None):
        """The next element's tensors (a run that needs them takes one element)."""
        return self._dequeue(None, False, name)

    def dequeue_many(self, n, name=None):
        """n elements stacked along a new dimension 0 (OutOfRangeError when closed with fewer)."""
        if any(s.dims is None or None in s.dims for s in self._shapes) and not self._pad:
            raise ValueError("Queue %s: dequeue_many requires the components to have fully defined shapes (give "
                             "the queue shapes)" % self._name)
        return self._dequeue(int(n), False, name)

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but after close() the last batch may be smaller."""
        return self._dequeue(int(n), True, name)

    def _take(self, session, n, up_to):
        """n elements (one when n is None), taken one by one as they arrive (so a batch may exceed the capacity,
        as in TF), each while more than min_after_dequeue remain unless closed; when the queue closes with too
        few, the ones taken go back to its front and OutOfRangeError is raised (dequeue_up_to: the rest)."""
        store = self._store(session)
        want = 1 if n is None else n
        taken = []
        with store.cond:
            while len(taken) < want:
                if store.items and (len(store.items) > self._min_after_dequeue or store.closed):
                    taken.append(self._pop(store))
                    store.cond.notify_all()
                    continue
                if store.closed:
                    if up_to and taken:
                        break
                    store.items[0:0] = taken
                    raise _errors.OutOfRangeError(
                        None, None, "%s '%s' is closed and has insufficient elements (requested %d, current size %d)"
                        % (self._kind, self._name, want, len(store.items)))
                store.cond.wait(_POLL_SECS)
                try:
                    _check_session(session, "Dequeue from %s" % self._name)
                except _errors.CancelledError:
                    store.items[0:0] = taken
                    raise
        return taken

    def _pop(self, store):
        return store.items.pop(0)

    def size(self, name=None):
        """An int32 scalar: the number of elements in the queue when the run happens."""
        return _HostScalar(lambda s: np.int32(len(self._store(s).items)), _dtypes.int32,
                           name or self._name + "_Size").tensor

    def is_closed(self, name=None):
        return _HostScalar(lambda s: np.bool_(self._store(s).closed), _dtypes.bool,
                           name or self._name + "_IsClosed").tensor

    def close(self, cancel_pending_enqueues=False, name=None):
        """An op that closes the queue: later enqueues fail; dequeues drain it, then raise OutOfRangeError."""
        from .ops.state_ops import no_op
        op = no_op(name=name or self._name + "_Close")

        def run(session, feed_dict=None):
            store = self._store(session)
            with store.cond:
                store.closed = True
                store.cancelled = store.cancelled or bool(cancel_pending_enqueues)
                store.cond.notify_all()
        op._run_in_python = run
        return op


class FIFOQueue(QueueBase):
    """tf.FIFOQueue(capacity, dtypes, shapes=None, names=None): elements in first-in first-out order."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        QueueBase.__init__(self, capacity, dtypes, shapes, names, shared_name, name)


class PaddingFIFOQueue(QueueBase):
    """tf.PaddingFIFOQueue: a FIFOQueue whose dequeue_many pads components of unknown dims with zeros."""
    _kind = "PaddingFIFOQueue"

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        QueueBase.__init__(self, capacity, dtypes, shapes, names, shared_name, name, pad=True)


class RandomShuffleQueue(QueueBase):
    """tf.RandomShuffleQueue: dequeues a random element, keeping at least min_after_dequeue in the queue
    until it is closed."""
    _kind = "RandomShuffleQueue"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        if min_after_dequeue >= capacity:
            raise ValueError("min_after_dequeue (%d) must be less than capacity (%d)" % (min_after_dequeue, capacity))
        QueueBase.__init__(self, capacity, dtypes, shapes, names, shared_name, name, min_after_dequeue, seed)

    def _pop(self, store):
        i = store.rng.randint(len(store.items))
        store.items[i], store.items[-1] = store.items[-1], store.items[i]
        return store.items.pop()


def _direct_dequeue(tensors):
    """(feeder, component indices) when every tensor is a component of one single-element dequeue (and the
    enqueue can take that element without a graph run), else None."""
    if not tensors:
        return None
    graph = tensors[0].graph
    feeders = set(id(graph._iterator_feeds.get(t.op.name)) for t in tensors)
    feeder = graph._iterator_feeds.get(tensors[0].op.name)
    if len(feeders) != 1 or not isinstance(feeder, _Dequeue) or feeder._n is not None:
        return None
    names = feeder._feed_names()
    return feeder, [names.index(t.op.name) for t in tensors]


class _Feeder(object):
    """Placeholders Session.run feeds through graph._iterator_feeds (session.py's _RunPlan): _next_arrays is
    called once per run that needs any of them."""

    def _register(self, dtypes, shapes, name):
        graph = get_default_graph()
        self.tensors = [placeholder(d, s, name=name) for d, s in zip(dtypes, shapes)]
        self._names = [t.op.name for t in self.tensors]
        self._dtypes = list(dtypes)
        for t in self.tensors:
            graph._iterator_feeds[t.op.name] = self

    def _feed_names(self):
        return self._names

    def _feed_dtypes(self):
        return self._dtypes


class _Dequeue(_Feeder):
    def __init__(self, queue, n, up_to, name):
        self._queue, self._n, self._up_to = queue, n, up_to
        lead = [] if n is None else [None if up_to else n]
        shapes = [None if s.dims is None else lead + s.dims for s in queue._shapes]
        self._register(queue._dtypes, shapes, name)

    def _next_arrays(self, session):
        elements = self._queue._take(session, self._n, self._up_to)
        columns = list(zip(*elements))
        out = []
        for k, dtype in enumerate(self._dtypes):
            if self._n is None:
                value = np.asarray(columns[k][0], dtype=dtype.as_numpy_dtype)
            else:
                value = _stack(columns[k], dtype, self._queue._pad, self._queue._name)
            out.append(np.require(value, requirements=("C", "A")))
        return out


def _stack(rows, dtype, pad, queue_name):
    rows = [np.asarray(r, dtype=dtype.as_numpy_dtype) for r in rows]
    shapes = set(r.shape for r in rows)
    if len(shapes) > 1:
        if not pad:
            raise _errors.InvalidArgumentError(None, None, "%s: elements of different shapes %s cannot be batched "
                                                           "(use dynamic_pad=True)" % (queue_name, sorted(shapes)))
        full = tuple(max(dims) for dims in zip(*shapes))
        rows = [np.pad(r, [(0, f - d) for f, d in zip(full, r.shape)], mode="constant") for r in rows]
    return np.stack(rows)


class _HostScalar(_Feeder):
    def __init__(self, fn, dtype, name):
        self._fn = fn
        self._register([dtype], [[]], name)
        self.tensor = self.tensors[0]

    def _next_arrays(self, session):
        return [np.asarray(self._fn(session), dtype=self._dtypes[0].as_numpy_dtype)]
