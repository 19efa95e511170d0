"""tf.train's queue-based input pipeline (TF 1.x): input_producer, string_input_producer, range_input_producer,
slice_input_producer, batch, shuffle_batch, batch_join, shuffle_batch_join. Each builds queues (queue_input.py)
and adds a QueueRunner to the graph's QUEUE_RUNNERS collection, which tf.train.start_queue_runners starts.

    image, label = tf.train.slice_input_producer([images, labels], num_epochs=2, shuffle=True)
    x, y = tf.train.shuffle_batch([image, label], batch_size=64, capacity=1000, min_after_dequeue=500)
    coord = tf.train.Coordinator(); threads = tf.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop(): sess.run(train_op)
    except tf.errors.OutOfRangeError: pass
    finally: coord.request_stop(); coord.join(threads)

num_epochs counts epochs per session (TF keeps the count in a local variable; tinyflow keeps it with the
queue's elements, so tf.local_variables_initializer() is accepted and not needed). string_input_producer holds
its strings host-side (tinyflow's core has no string tensors): the queue works, but reading its file names in
the graph (tf.WholeFileReader, tf.read_file) is not supported.
"""
import numpy as np

from . import dtypes as _dtypes
from . import errors as _errors
from .framework import Tensor, TensorShape, convert_to_tensor, get_default_graph, name_scope
from .queue_input import (FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue, _host_value, _no_eager, _run,
                          _storable)
from .queue_runner import QueueRunner, add_queue_runner

__all__ = ["input_producer", "string_input_producer", "range_input_producer", "slice_input_producer", "batch",
           "shuffle_batch", "batch_join", "shuffle_batch_join"]


def _producer_enqueue(queue, values, dtypes, num_epochs, shuffle, seed, name):
    """An op that enqueues one epoch of the rows of `values` (per component: a tensor evaluated per epoch, or host
    values; the same rows of all) per run, shuffled when asked; OutOfRangeError after num_epochs epochs (in that
    session)."""
    from .ops.state_ops import no_op
    graph_seed = get_default_graph().seed
    if seed is None and graph_seed is None:
        seed = np.random.randint(2 ** 31 - 1)
    seeds = [0 if seed is None else int(seed), 0 if graph_seed is None else int(graph_seed)]
    op = no_op(name=name)
    epochs = {}  # session id -> (epochs done, rng)
    tensors = [v for v in values if isinstance(v, Tensor)]

    def run(session, feed_dict=None):
        done, rng = epochs.get(id(session), (0, None))
        if rng is None:
            rng = np.random.RandomState(seeds)
        if num_epochs is not None and done >= num_epochs:
            raise _errors.OutOfRangeError(None, None, "%s: reached the limit of %d epoch(s)" % (name, num_epochs))
        epochs[id(session)] = (done + 1, rng)
        evaluated = iter(_run(session, tensors, feed_dict) if tensors else [])
        arrays = [_host_value(next(evaluated) if isinstance(v, Tensor) else v, d) for v, d in zip(values, dtypes)]
        if any(a.ndim == 0 for a in arrays):
            raise _errors.InvalidArgumentError(None, None, "%s: the input must have rank >= 1" % name)
        if len(set(a.shape[0] for a in arrays)) != 1:
            raise _errors.InvalidArgumentError(None, None, "%s: the inputs' first dimensions differ: %s"
                                               % (name, [a.shape[0] for a in arrays]))
        order = rng.permutation(arrays[0].shape[0]) if shuffle else np.arange(arrays[0].shape[0])
        queue._put(session, [[a[i] for a in arrays] for i in order])

    op._run_in_python = run
    return op


def _host_input(value):
    """(dtype, host array) of a non-tensor input: NumPy arrays keep their dtype, Python numbers get TF's."""
    host = np.asarray(value)
    if host.dtype.kind in "OSU":
        return _dtypes.string, _host_value(host, _dtypes.string)
    if isinstance(value, np.ndarray):
        host = _storable(host)
        return _dtypes.as_dtype(host.dtype), host
    dtype = _dtypes.float32 if host.dtype.kind == "f" else _dtypes.as_dtype(
        np.int32 if host.dtype.kind in "iu" else host.dtype)
    return dtype, host.astype(dtype.as_numpy_dtype)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue fed with the rows of input_tensor, epoch after epoch (shuffled within each when shuffle),
    num_epochs times (None: forever), by a QueueRunner."""
    _no_eager("tf.train.input_producer")
    if num_epochs is not None and int(num_epochs) <= 0:
        raise ValueError("num_epochs must be > 0 not %s." % num_epochs)
    with name_scope(name or "input_producer"):
        if isinstance(input_tensor, Tensor):
            dtype, dims = input_tensor.dtype, input_tensor.shape.dims
            shape = element_shape if element_shape is not None else (None if dims is None else dims[1:])
            values = input_tensor
        else:
            dtype, values = _host_input(input_tensor)
            shape = element_shape if element_shape is not None else list(values.shape[1:])
        queue = FIFOQueue(capacity, [dtype], shapes=None if shape is None else [shape], name="fifo_queue")
        enqueue = _producer_enqueue(queue, [values], [dtype], None if num_epochs is None else int(num_epochs),
                                    shuffle, seed, queue.name + "_enqueue_epoch")
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
    return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    """A queue of the strings (file names), held host-side: see the module's note on string tensors."""
    if isinstance(string_tensor, Tensor):
        raise NotImplementedError("string_input_producer of a tensor: tinyflow has no string tensors; pass the file "
                                  "names as a Python list")
    strings = list(string_tensor)
    if not strings:
        raise ValueError("string_input_producer requires a non-null input tensor")
    return input_producer(np.array(strings, dtype=object), [], num_epochs, shuffle, seed, capacity, shared_name,
                          None, name or "input_producer", cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """A queue of the int32s 0 .. limit-1, epoch after epoch."""
    if isinstance(limit, Tensor):
        from .ops.array_ops import range as _range
        values = _range(limit)
    else:
        values = np.arange(int(limit), dtype=np.int32)
    return input_producer(values, [], num_epochs, shuffle, seed, capacity, shared_name, None,
                          name or "input_producer")


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """One row of each tensor of tensor_list per dequeue (the same row of all), epoch after epoch."""
    from .ops.array_ops import gather
    _no_eager("tf.train.slice_input_producer")
    if not tensor_list:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    if num_epochs is not None and int(num_epochs) <= 0:
        raise ValueError("num_epochs must be > 0 not %s." % num_epochs)
    if not any(isinstance(t, Tensor) for t in tensor_list):
        # in-memory arrays: the rows themselves go through one queue (TF gathers them by a queue of indices;
        # the elements are the same, without a graph run per element)
        inputs = [_host_input(t) for t in tensor_list]
        if any(a.ndim == 0 for _, a in inputs):
            raise ValueError("slice_input_producer: every input needs a first dimension to slice")
        if len(set(a.shape[0] for _, a in inputs)) != 1:
            raise ValueError("All input tensors must have the same size in the 0th dimension: %s"
                             % [a.shape[0] for _, a in inputs])
        with name_scope(name or "input_producer"):
            queue = FIFOQueue(capacity, [d for d, _ in inputs], shapes=[list(a.shape[1:]) for _, a in inputs],
                              name="fifo_queue")
            enqueue = _producer_enqueue(queue, [a for _, a in inputs], [d for d, _ in inputs],
                                        None if num_epochs is None else int(num_epochs), shuffle, seed,
                                        queue.name + "_enqueue_epoch")
            add_queue_runner(QueueRunner(queue, [enqueue]))
            out = queue.dequeue()
            return list(out) if isinstance(out, list) else [out]
    tensors = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in tensor_list]
    dims = tensors[0].shape.dims
    with name_scope(name or "input_producer"):
        if dims is None or dims[0] is None:
            from .ops.array_ops import shape as _shape
            size = _shape(tensors[0])[0]
        else:
            size = dims[0]
            for t in tensors[1:]:
                if t.shape.dims is not None and t.shape.dims[0] not in (None, size):
                    raise ValueError("All input tensors must have the same size in the 0th dimension: %s vs %s"
                                     % (size, t.shape.dims[0]))
        queue = range_input_producer(size, num_epochs, shuffle, seed, capacity, shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensors]


def _as_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original(original, dequeued):
    """TF's _as_original_type: a dict by (sorted) keys, else what the queue's dequeue gives (one tensor for
    one component, as TF)."""
    if isinstance(original, dict):
        if not isinstance(dequeued, (list, tuple)):
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _batch_join(tensors_list, batch_size, capacity, enqueue_many, shapes, dynamic_pad, allow_smaller_final_batch,
                name, shuffle=False, min_after_dequeue=0, seed=None):
    _no_eager("tf.train.batch")
    if int(batch_size) <= 0:
        raise ValueError("batch_size must be positive, got %s" % batch_size)
    lists = [[t if isinstance(t, Tensor) else convert_to_tensor(t) for t in _as_list(ts)] for ts in tensors_list]
    first = lists[0]
    if any(len(ts) != len(first) for ts in lists):
        raise ValueError("Expected all inputs of a join to have the same number of tensors")
    dtypes = [t.dtype for t in first]
    for ts in lists[1:]:
        if [t.dtype for t in ts] != dtypes:
            raise TypeError("Expected all inputs of a join to have the same dtypes: %s vs %s"
                            % ([d.name for d in dtypes], [t.dtype.name for t in ts]))
    if shapes is None:
        shapes = []
        for t in first:
            dims = t.shape.dims
            if dims is None or (enqueue_many and not dims):
                shapes.append(TensorShape(None))
            else:
                shapes.append(TensorShape(dims[1:] if enqueue_many else dims))
    else:
        shapes = [TensorShape(s) for s in shapes]
    if not dynamic_pad and any(s.dims is None or None in s.dims for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % [str(s) for s in shapes])
    with name_scope(name):
        if shuffle:
            queue = RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes, seed=seed)
        elif dynamic_pad:
            queue = PaddingFIFOQueue(capacity, dtypes, [s.dims or [] for s in shapes])
        else:
            queue = FIFOQueue(capacity, dtypes, shapes)
        enqueue_ops = [queue.enqueue_many(ts) if enqueue_many else queue.enqueue(ts) for ts in lists]
        add_queue_runner(QueueRunner(queue, enqueue_ops))
        if allow_smaller_final_batch:
            return queue.dequeue_up_to(batch_size, name="fifo_queue_DequeueUpTo")
        return queue.dequeue_many(batch_size)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """tensors (a list, tuple or dict of tensors, or one tensor) batched in order by num_threads threads;
    one tensor when there is one component (as TF)."""
    out = _batch_join([tensors] * int(num_threads), batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                      allow_smaller_final_batch, name or "batch")
    return _as_original(tensors, out)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """batch over several lists of tensors, one enqueuing thread per list."""
    out = _batch_join(list(tensors_list), batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                      allow_smaller_final_batch, name or "batch_join")
    return _as_original(tensors_list[0], out)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """batch through a RandomShuffleQueue: each batch drawn at random from at least min_after_dequeue
    elements (until the input ends)."""
    out = _batch_join([tensors] * int(num_threads), batch_size, capacity, enqueue_many, shapes, False,
                      allow_smaller_final_batch, name or "shuffle_batch", True, min_after_dequeue, seed)
    return _as_original(tensors, out)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    out = _batch_join(list(tensors_list), batch_size, capacity, enqueue_many, shapes, False,
                      allow_smaller_final_batch, name or "shuffle_batch_join", True, min_after_dequeue, seed)
    return _as_original(tensors_list[0], out)
