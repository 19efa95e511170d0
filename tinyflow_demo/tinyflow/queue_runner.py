"""tf.train.Coordinator, QueueRunner, LooperThread, add_queue_runner and start_queue_runners (TF 1.x): the
threads that fill queues (queue_input.py). Runner threads are daemons, so a program that exits without
joining them does not hang; a closed session ends the ones blocked on its queues."""
import contextlib
import sys
import threading
import time
import weakref

from . import errors as _errors
from . import framework as _framework
from .compat import NotSupportedYetError
from .framework import get_default_graph
from .queue_input import _run

__all__ = ["QueueRunner", "Coordinator", "start_queue_runners", "add_queue_runner", "LooperThread"]


class Coordinator(object):
    """tf.train.Coordinator: threads stop together. request_stop(ex) asks every thread to stop (an exception
    other than clean_stop_exception_types, default OutOfRangeError, is re-raised by join); join waits for the
    threads, then stop_grace_period_secs more once a stop was requested, and raises RuntimeError naming the
    threads still running unless ignore_live_threads."""

    def __init__(self, clean_stop_exception_types=None):
        self._clean = tuple(clean_stop_exception_types) if clean_stop_exception_types is not None else \
            (_errors.OutOfRangeError,)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info = None
        self._registered = set()
        self._joined = False

    def _filter(self, ex):
        if isinstance(ex, tuple):
            ex = ex[1]
        if isinstance(ex, self._clean):
            return None
        return ex

    def request_stop(self, ex=None):
        with self._lock:
            ex = self._filter(ex) if ex is not None else None
            if self._joined:
                if ex is not None:  # TF: an exception after join is raised right away
                    raise ex
                return
            if ex is not None and self._exc_info is None:
                self._exc_info = ex
            self._stop_event.set()

    def should_stop(self):
        return self._stop_event.is_set()

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def wait_for_stop(self, timeout=None):
        """True once a stop was requested (waits up to timeout seconds; None: until then)."""
        return self._stop_event.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context that requests a stop with any exception raised in it (and swallows it)."""
        try:
            yield
        except Exception:  # noqa: B902 (TF: every exception stops the threads)
            self.request_stop(ex=sys.exc_info()[1])

    def register_thread(self, thread):
        with self._lock:
            self._registered.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        with self._lock:
            threads = set(self._registered) | set(threads or [])
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.time() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.time()))
        alive = sorted(t.name for t in threads if t.is_alive())
        with self._lock:
            self._joined = True
            self._registered = set()
            exc = self._exc_info
        if exc is not None:
            raise exc
        if alive and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: %s" % " ".join(alive))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        with self._lock:
            if self._exc_info is not None:
                raise self._exc_info


class LooperThread(threading.Thread):
    """tf.train.LooperThread: calls target(*args) every timer_interval_secs until the coordinator stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        threading.Thread.__init__(self)
        self.daemon = True
        self._coord, self._interval = coord, timer_interval_secs
        self._target_fn, self._args, self._kwargs = target, args or (), kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target, args, kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            while not self._coord.should_stop():
                start = time.time()
                self.run_loop()
                if self._interval:
                    self._coord.wait_for_stop(max(0.0, self._interval - (time.time() - start)))

    def run_loop(self):
        if self._target_fn is not None:
            self._target_fn(*self._args, **self._kwargs)


class QueueRunner(object):
    """tf.train.QueueRunner: threads running each of enqueue_ops until the input ends
    (queue_closed_exception_types, default OutOfRangeError and CancelledError); the last one to end closes
    the queue. With a coordinator, a stop request cancels the queue (cancel_op)."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None, queue_closed_exception_types=None,
                 queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise NotSupportedYetError("QueueRunner(queue_runner_def=...): tinyflow has no QueueRunnerDef protos")
        if not enqueue_ops:
            raise ValueError("Must provide enqueue_ops.")
        self._queue, self._enqueue_ops = queue, list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._closed_types = tuple(queue_closed_exception_types or (_errors.OutOfRangeError, _errors.CancelledError))
        self._lock = threading.Lock()
        self._runs = weakref.WeakKeyDictionary()  # session -> enqueue threads still running
        self._exceptions = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: list(self._enqueue_ops))
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._closed_types)

    @property
    def name(self):
        return self._queue.name

    @property
    def exceptions_raised(self):
        return list(self._exceptions)

    def _run(self, sess, enqueue_op, coord):
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                if getattr(sess, "handle", True) is None:
                    break  # the session was closed under us
                try:
                    _run(sess, enqueue_op)
                except self._closed_types:
                    with self._lock:
                        self._runs[sess] -= 1
                        decremented = True
                        if self._runs[sess] == 0:
                            try:
                                _run(sess, self._close_op)
                            except Exception:  # noqa: B902 (closing is best effort, as TF's)
                                pass
                    return
        except RuntimeError as exc:
            if getattr(sess, "handle", True) is None:
                return  # "Attempted to use a closed Session": the program finished without stopping us
            self._fail(exc, coord)
        except Exception as exc:  # noqa: B902 (reported to the coordinator)
            self._fail(exc, coord)
        finally:
            if not decremented:
                with self._lock:
                    self._runs[sess] = self._runs.get(sess, 1) - 1

    def _fail(self, exc, coord):
        self._exceptions.append(exc)
        if coord is not None:
            coord.request_stop(exc)
        else:
            from . import tf_logging
            tf_logging.error("Exception in QueueRunner: %s", exc)
            raise exc

    def _close_on_stop(self, sess, coord):
        coord.wait_for_stop()
        try:
            if getattr(sess, "handle", True) is not None:
                _run(sess, self._cancel_op)
        except Exception:  # noqa: B902 (TF only logs it)
            pass

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """The runner's threads for sess (none when they run already): one per enqueue op, plus one that
        cancels the queue when coord stops."""
        with self._lock:
            if self._runs.get(sess, 0) > 0:
                return []
            self._runs[sess] = len(self._enqueue_ops)
            self._exceptions = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), name="QueueRunnerThread-%s-%s"
                                    % (self.name, op.name)) for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                            name="QueueRunnerCloseThread-%s" % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection="queue_runners"):
    """tf.train.add_queue_runner: adds qr to the graph's QUEUE_RUNNERS collection."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection="queue_runners"):
    """tf.train.start_queue_runners: starts the threads of every QueueRunner in the graph's collection for sess
    (default: the default session); returns them."""
    from .session import get_default_session
    if _framework._EAGER is not None:
        raise RuntimeError("Queues are not compatible with eager execution.")
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    raw = sess.raw_session() if hasattr(sess, "raw_session") else sess
    graph = getattr(raw, "graph", None) or get_default_graph()
    threads = []
    for qr in graph.get_collection(collection):
        threads.extend(qr.create_threads(raw, coord=coord, daemon=daemon, start=start))
    return threads
