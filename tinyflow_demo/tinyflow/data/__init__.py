"""tf.data over in-memory arrays: Datasets are Python pipelines of NumPy elements; an Iterator's
get_next() tensors are placeholders that Session.run feeds with the iterator's next element
whenever the fetches need them (one element per run, however many of them are fetched), and
tf.errors.OutOfRangeError ends the data. map and filter trace their function once on
placeholders of the element (as TF traces a graph function) and run it in the session per element.

    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(1000, seed=0).batch(64).repeat()
    x, y = dataset.make_one_shot_iterator().get_next()

Elements are tuples, namedtuples and dicts of arrays (a list is one array, as TF converts it).
"""
import itertools

import numpy as np

from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import framework as _framework
from .. import nest as _nest
from ..framework import Tensor, TensorShape, _constant_array, convert_to_tensor, get_default_graph, placeholder

__all__ = ["Dataset", "Iterator"]


def _is_structure(x):
    return isinstance(x, (tuple, dict))


def _normalize(value):
    """The element structure with every leaf a NumPy array of its TF dtype (lists are leaves)."""
    if isinstance(value, dict):
        return type(value)((k, _normalize(v)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Tensor) and _framework._EAGER is not None:
        return np.asarray(value.numpy())  # an eager tensor: its value
    if isinstance(value, Tensor):
        return value  # a graph tensor (a placeholder fed at the initializer's run): evaluated then
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fiub":
        arr = np.asarray(value)
        return arr if arr.dtype != np.float16 else arr.astype(np.float32)
    return _constant_array(value, None, None)[0]  # Python floats: float32, ints: int32 (as TF)


def _flatten(structure):
    return _nest.flatten(structure) if _is_structure(structure) else [structure]


def _pack(structure, flat):
    return _nest.pack_sequence_as(structure, flat) if _is_structure(structure) else flat[0]


class Dataset(object):
    """A sequence of elements (a structure of arrays) with the TF 1.x Dataset methods."""

    def __init__(self, structure, dtypes, shapes):
        self._structure = structure  # the element structure (leaves: anything)
        self._dtypes = list(dtypes)  # per flattened component
        self._shapes = [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]

    # -- what an element is --
    @property
    def output_types(self):
        return _pack(self._structure, self._dtypes)

    @property
    def output_shapes(self):
        return _pack(self._structure, self._shapes)

    @property
    def output_classes(self):
        return _pack(self._structure, [Tensor] * len(self._dtypes))

    def _elements(self, context):
        """A generator of flat lists of arrays (one per run of an iterator: `context` is that run's)."""
        raise NotImplementedError

    # -- sources --
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of the arrays (all of the same first dimension)."""
        value = _normalize(tensors)
        flat = _flatten(value)
        if any(isinstance(a, Tensor) for a in flat):
            return _TensorSource(value, flat, slices=True)
        if any(a.ndim == 0 for a in flat):
            raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        if len(set(a.shape[0] for a in flat)) > 1:
            raise ValueError("Dimensions %s in the components of from_tensor_slices are not equal: they must all "
                             "have the same first dimension" % [a.shape[0] for a in flat])
        return _Slices(value, flat)

    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element: `tensors`."""
        value = _normalize(tensors)
        flat = _flatten(value)
        if any(isinstance(a, Tensor) for a in flat):
            return _TensorSource(value, flat, slices=False)
        return _Generated(value, [_dtypes.as_dtype(a.dtype) for a in flat], [a.shape for a in flat], lambda: [flat])

    @staticmethod
    def range(*args):
        """The int64 values of range(*args) (start, stop, step as Python's range)."""
        values = list(range(*[int(a) for a in args]))
        return _Generated(0, [_dtypes.int64], [[]], lambda: ([np.array(v, np.int64)] for v in values))

    @staticmethod
    def zip(datasets):
        """Elements of the datasets (a tuple or dict of them) side by side, as long as the shortest."""
        return _Zip(datasets)

    # -- transformations --
    def batch(self, batch_size, drop_remainder=False):
        return _Batch(self, int(batch_size), bool(drop_remainder))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        return _Shuffle(self, int(buffer_size), seed, reshuffle_each_iteration)

    def repeat(self, count=None):
        return _Repeat(self, None if count is None or int(count) < 0 else int(count))

    def take(self, count):
        count = int(count)
        return _Transformed(self, lambda ctx: itertools.islice(self._elements(ctx), None if count < 0 else count))

    def skip(self, count):
        count = int(count)
        return _Transformed(self, lambda ctx: itertools.islice(self._elements(ctx), None if count < 0 else count,
                                                                None))

    def prefetch(self, buffer_size):
        return self  # elements are produced when a run needs them

    def cache(self, filename=""):
        return self  # in-memory sources: nothing to recompute

    def concatenate(self, dataset):
        if [d.name for d in self._dtypes] != [d.name for d in dataset._dtypes]:
            raise TypeError("Types of the datasets to concatenate differ: %s and %s"
                            % (self.output_types, dataset.output_types))
        shapes = [a.merge_with(b) if a.is_compatible_with(b) else TensorShape(None)
                  for a, b in zip(self._shapes, dataset._shapes)]
        return _Transformed(self, lambda ctx: itertools.chain(self._elements(ctx), dataset._elements(ctx)),
                            shapes=shapes)

    def map(self, map_func, num_parallel_calls=None):
        """map_func traced once on placeholders of the element (a tuple element gives one argument per
        component), run in the session for each element."""
        if _framework._EAGER is not None:  # eager: the function runs on each element's tensors
            return _EagerMap.make(self, map_func, predicate=False)
        return _Map(self, map_func, predicate=False)

    def filter(self, predicate):
        """The elements for which predicate (traced like map's function) gives a scalar True."""
        if _framework._EAGER is not None:
            return _EagerMap.make(self, predicate, predicate=True)
        return _Map(self, predicate, predicate=True)

    # -- iterators --
    def __iter__(self):
        """In eager mode: the elements as EagerTensors (tf.contrib.eager.Iterator)."""
        if _framework._EAGER is None:
            raise RuntimeError("dataset.__iter__() is only supported when eager execution is enabled.")
        return EagerIterator(self)

    def make_one_shot_iterator(self):
        if _framework._EAGER is not None:
            return EagerIterator(self)
        return Iterator(self, one_shot=True)

    def make_initializable_iterator(self, shared_name=None):
        return Iterator(self, one_shot=False)


class _Slices(Dataset):
    def __init__(self, value, flat):
        Dataset.__init__(self, value, [_dtypes.as_dtype(a.dtype) for a in flat], [a.shape[1:] for a in flat])
        self._flat = flat

    def _elements(self, context):
        for i in range(self._flat[0].shape[0]):
            yield [a[i] for a in self._flat]


class _TensorSource(Dataset):
    """from_tensor_slices / from_tensors of graph tensors (TF's pattern for large NumPy arrays:
    placeholders fed when the iterator's initializer runs): evaluated once per initialization."""

    def __init__(self, value, flat, slices):
        self._tensors = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in flat]
        shapes = [t.shape.dims for t in self._tensors]
        if slices and any(s is not None and len(s) == 0 for s in shapes):
            raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        Dataset.__init__(self, value, [t.dtype for t in self._tensors],
                         [None if s is None else (s[1:] if slices else s) for s in shapes])
        self._slices = slices

    def _elements(self, context):
        session = context["session"]
        arrays = [np.asarray(a) for a in session.run(self._tensors, feed_dict=context.get("feed_dict"))]
        if not self._slices:
            yield arrays
            return
        if len(set(a.shape[0] for a in arrays)) > 1:
            raise _errors.InvalidArgumentError(
                None, None, "from_tensor_slices: the components' first dimensions differ: %s" % [a.shape[0]
                                                                                              for a in arrays])
        for i in range(arrays[0].shape[0]):
            yield [a[i] for a in arrays]


class _Generated(Dataset):
    def __init__(self, structure, dtypes, shapes, make):
        Dataset.__init__(self, structure, dtypes, shapes)
        self._make = make

    def _elements(self, context):
        return iter(self._make())


class _Transformed(Dataset):
    """The input's element spec (or `shapes`), elements from make(context)."""

    def __init__(self, source, make, shapes=None):
        Dataset.__init__(self, source._structure, source._dtypes, shapes or source._shapes)
        self._make = make

    def _elements(self, context):
        return self._make(context)


class _Zip(Dataset):
    def __init__(self, datasets):
        if not _is_structure(datasets):
            raise TypeError("Dataset.zip takes a tuple or dict of datasets")
        self._parts = _flatten(datasets)
        structure = _pack(datasets, [d._structure for d in self._parts])
        Dataset.__init__(self, structure, [t for d in self._parts for t in d._dtypes],
                         [s for d in self._parts for s in d._shapes])

    def _elements(self, context):
        for parts in zip(*[d._elements(context) for d in self._parts]):
            yield [a for part in parts for a in part]


class _Batch(Dataset):
    def __init__(self, source, batch_size, drop_remainder):
        if batch_size <= 0:
            raise ValueError("batch_size must be positive, got %d" % batch_size)
        lead = batch_size if drop_remainder else None
        Dataset.__init__(self, source._structure, source._dtypes,
                         [TensorShape(None if s.dims is None else [lead] + s.dims) for s in source._shapes])
        self._source, self._size, self._drop = source, batch_size, drop_remainder

    def _elements(self, context):
        rows = []
        for element in self._source._elements(context):
            rows.append(element)
            if len(rows) == self._size:
                yield self._stack(rows)
                rows = []
        if rows and not self._drop:
            yield self._stack(rows)

    def _stack(self, rows):
        try:
            return [np.stack(column) for column in zip(*rows)]
        except ValueError as err:
            raise _errors.InvalidArgumentError("Cannot batch tensors with different shapes: %s" % err)


class _Shuffle(Dataset):
    def __init__(self, source, buffer_size, seed, reshuffle):
        if buffer_size <= 0:
            raise ValueError("buffer_size must be greater than zero, got %d" % buffer_size)
        Dataset.__init__(self, source._structure, source._dtypes, source._shapes)
        self._source, self._buffer, self._reshuffle = source, buffer_size, reshuffle
        graph_seed = get_default_graph().seed
        if seed is None and graph_seed is None:
            seed = np.random.randint(2 ** 31 - 1)
        self._seed = (0 if seed is None else int(seed), 0 if graph_seed is None else int(graph_seed))

    def _elements(self, context):
        # TF's buffer: fill `buffer_size` elements, emit a random one and put the next in its place.
        epoch = context.setdefault(id(self), 0)
        context[id(self)] = epoch + 1
        rng = np.random.RandomState(list(self._seed) + ([epoch] if self._reshuffle else []))
        buffer = []
        for element in self._source._elements(context):
            buffer.append(element)
            if len(buffer) == self._buffer:
                i = rng.randint(len(buffer))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        while buffer:
            i = rng.randint(len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()


class _Repeat(Dataset):
    def __init__(self, source, count):
        Dataset.__init__(self, source._structure, source._dtypes, source._shapes)
        self._source, self._count = source, count

    def _elements(self, context):
        epochs = itertools.count() if self._count is None else range(self._count)
        for _ in epochs:
            produced = False
            for element in self._source._elements(context):
                produced = True
                yield element
            if not produced:
                return


class _Map(Dataset):
    """map / filter: the function traced on placeholders of the element, run per element."""

    def __init__(self, source, func, predicate):
        self._source, self._predicate = source, predicate
        self._inputs = [placeholder(d, s.dims, name="map_arg") for d, s in zip(source._dtypes, source._shapes)]
        args = _pack(source._structure, self._inputs)
        out = func(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") else func(args)
        if isinstance(out, list):
            out = tuple(out)
        if predicate:
            out = convert_to_tensor(out)
            if out.dtype != _dtypes.bool or out.shape.dims not in (None, []):
                raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor, got %s "
                                 "of shape %s" % (out.dtype.name, out.shape))
            self._outputs = [out]
            Dataset.__init__(self, source._structure, source._dtypes, source._shapes)
            return
        outputs = [convert_to_tensor(t) for t in _flatten(out)]
        self._outputs = outputs
        Dataset.__init__(self, _pack(out, list(range(len(outputs)))), [t.dtype for t in outputs],
                         [t.shape for t in outputs])

    def _elements(self, context):
        session = context["session"]
        for element in self._source._elements(context):
            values = session.run(self._outputs, dict(zip(self._inputs, element)))
            if not self._predicate:
                yield [np.asarray(v) for v in values]
            elif bool(values[0]):
                yield element


class Iterator(object):
    """An iterator over a Dataset in each Session; get_next() gives the element's tensors."""

    def __init__(self, dataset, one_shot):
        from ..ops.state_ops import no_op
        self._dataset, self._one_shot = dataset, one_shot
        graph = get_default_graph()
        self._placeholders = [placeholder(d, s.dims, name="IteratorGetNext")
                              for d, s in zip(dataset._dtypes, dataset._shapes)]
        for p in self._placeholders:
            graph._iterator_feeds[p.op.name] = self
        self._names = [p.op.name for p in self._placeholders]
        self._next = _pack(dataset._structure, self._placeholders)
        if not one_shot:
            self.initializer = no_op(name="MakeIterator")
            self.initializer._run_in_python = self._initialize

    output_types = property(lambda self: self._dataset.output_types)
    output_shapes = property(lambda self: self._dataset.output_shapes)
    output_classes = property(lambda self: self._dataset.output_classes)

    def get_next(self, name=None):
        """The next element's tensors (a run that needs them takes one element)."""
        return self._next

    def _initialize(self, session, feed_dict=None):
        context = {"session": session, "feed_dict": feed_dict}
        session._iterator_state[self] = self._dataset._elements(context)

    def _feed_names(self):
        return self._names

    def _feed_dtypes(self):
        return self._dataset._dtypes

    def _next_arrays(self, session):
        """The next element as arrays to feed (OutOfRangeError at the end)."""
        state = session._iterator_state.get(self)
        if state is None:
            if not self._one_shot:
                raise _errors.FailedPreconditionError(
                    "GetNext() failed because the iterator has not been initialized. Ensure that you have run the "
                    "initializer operation for this iterator before getting the next element.")
            self._initialize(session)
            state = session._iterator_state[self]
        try:
            element = next(state)
        except StopIteration:
            session._iterator_state[self] = iter(())
            raise _errors.OutOfRangeError("End of sequence")
        return [np.require(np.asarray(v, dtype=d.as_numpy_dtype), requirements=("C", "A"))
                for v, d in zip(element, self._dataset._dtypes)]


# ---- eager mode: iteration and map/filter over EagerTensors (tf.contrib.eager.Iterator) ----

def _require_eager(what):
    if _framework._EAGER is None:
        raise RuntimeError("%s can only be used when eager execution is enabled (tf.enable_eager_execution())"
                           % what)


class EagerIterator(object):
    """tfe.Iterator(dataset): the dataset's elements as EagerTensors, one per next()."""

    def __init__(self, dataset):
        _require_eager("tf.contrib.eager.Iterator")
        self._dataset = dataset
        self._elements = dataset._elements({"session": None, "eager": True})
        self._done = False

    output_types = property(lambda self: self._dataset.output_types)
    output_shapes = property(lambda self: self._dataset.output_shapes)
    output_classes = property(lambda self: self._dataset.output_classes)

    def __iter__(self):
        return self

    def __next__(self):
        from ..framework import constant
        if self._done:
            raise StopIteration
        try:
            element = next(self._elements)
        except StopIteration:
            self._done = True
            raise
        from ..queue_input import _storable  # (uint8 labels: int32 while the core has no uint8)
        tensors = [constant(_storable(np.asarray(a, dtype=d.as_numpy_dtype)))
                   for a, d in zip(element, self._dataset._dtypes)]
        structure = self._dataset._structure
        if isinstance(structure, (tuple, dict)):
            return _nest.pack_sequence_as(structure, tensors)
        return tensors[0]

    next = __next__  # TF 1.x's Python 2 name

    def get_next(self, name=None):
        """The next element; tf.errors.OutOfRangeError at the end (as TF's eager iterator)."""
        try:
            return self.__next__()
        except StopIteration:
            raise _errors.OutOfRangeError(None, None, "End of sequence")


class _EagerMap(object):
    """Dataset.map / filter in eager mode: the function runs on each element's EagerTensors (data.py)."""

    @staticmethod
    def make(source, func, predicate):

        def apply(element):
            from ..framework import constant
            from ..queue_input import _storable
            args = _pack(source._structure, [constant(_storable(np.asarray(a, dtype=d.as_numpy_dtype)))
                                             for a, d in zip(element, source._dtypes)])
            out = func(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") else func(args)
            return tuple(out) if isinstance(out, list) else out

        class _Mapped(Dataset):
            def _elements(self, context):
                for element in source._elements(context):
                    out = apply(element)
                    if predicate:
                        if bool(np.asarray(out)):
                            yield element
                    else:
                        yield [np.asarray(t) for t in _flatten(out)]

        if predicate:
            return _Mapped(source._structure, source._dtypes, source._shapes)
        first = next(iter(source._elements({"session": None, "eager": True})), None)
        if first is None:  # an empty source: the spec stays the source's
            return _Mapped(source._structure, source._dtypes, source._shapes)
        out = apply(first)
        flat = _flatten(out)
        return _Mapped(_pack(out, list(range(len(flat)))), [t.dtype for t in flat], [t.shape for t in flat])
