"""tf.train.Supervisor (TF 1.x): initializes or restores a session for training and runs its standard services.

`Supervisor(logdir=...)` takes its defaults from the graph as TF does: init_op = global_variables_initializer(),
local_init_op = local_variables_initializer(), saver = Saver() (when the graph has variables), summary_op =
tf.summary.merge_all(), global_step = the GLOBAL_STEP collection's variable or the tensor "global_step:0", a
FileWriter on logdir. `managed_session()` / `prepare_or_wait_for_session()` restore the latest checkpoint of
logdir or run init_op (with init_feed_dict) and init_fn, then local_init_op; on the chief with a logdir they
start the standard services: threads that save a checkpoint (logdir/model.ckpt-<step>) at once and every save_model_secs
and compute and write summary_op every save_summaries_secs (a session's runs are serialized with a lock
while the services run). `stop()` stops and joins them and re-raises an error a service or the managed
block reported; OutOfRangeError ends a managed session cleanly. The graph is not finalized (tinyflow's
Graph.finalize is a no-op). The standard services start the graph's queue runners too, as TF's.
"""
import contextlib
import functools
import os
import sys
import threading
import time

from .. import errors as _errors
from ..framework import get_default_graph
from ..session import Session

__all__ = ["Supervisor"]


def _tf():
    return sys.modules[__package__.partition(".")[0]]


class _Looper(threading.Thread):
    """Calls `target` every `interval` seconds (first call after `interval`, or at once if `now`) until the
    supervisor stops; an exception stops the supervisor and is re-raised by Supervisor.stop()."""

    def __init__(self, sv, interval, target, now=False):
        super(_Looper, self).__init__(daemon=True)
        self._sv, self._interval, self._target, self._now = sv, float(interval), target, now

    def run(self):
        try:
            if self._now and not self._sv._stop_event.is_set():
                self._target()
            while not self._sv._stop_event.wait(self._interval):
                self._target()
        except Exception as e:  # noqa: BLE001 (reported through the coordinator, as TF's services do)
            self._sv.request_stop(e)


class Supervisor(object):
    """tf.train.Supervisor: session initialization / recovery plus periodic checkpoints and summaries."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT, is_chief=True,
                 init_op=USE_DEFAULT, init_feed_dict=None, local_init_op=USE_DEFAULT, logdir=None,
                 summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120, checkpoint_basename="model.ckpt",
                 session_manager=None, summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        tf = _tf()
        self._graph = graph or get_default_graph()
        with self._graph.as_default():
            self._is_chief = is_chief
            self._logdir = logdir
            self._init_op = tf.global_variables_initializer() if init_op is Supervisor.USE_DEFAULT else init_op
            self._local_init_op = tf.local_variables_initializer() if local_init_op is Supervisor.USE_DEFAULT \
                else local_init_op
            self._init_feed_dict, self._init_fn = init_feed_dict, init_fn
            self._ready_op = None if ready_op is Supervisor.USE_DEFAULT else ready_op
            self._ready_for_local_init_op = None if ready_for_local_init_op is Supervisor.USE_DEFAULT \
                else ready_for_local_init_op
            if saver is Supervisor.USE_DEFAULT:
                savers = self._graph.get_collection(tf.GraphKeys.SAVERS)
                saver = savers[0] if savers else (tf.train.Saver() if tf.global_variables() else None)
            self._saver = saver
            self._summary_op = tf.summary.merge_all() if summary_op is Supervisor.USE_DEFAULT else summary_op
            if global_step is Supervisor.USE_DEFAULT:
                global_step = tf.train.get_global_step(self._graph)
                if global_step is None:
                    try:
                        global_step = self._graph.get_tensor_by_name("global_step:0")
                    except (KeyError, ValueError):
                        global_step = None
            self._global_step = global_step
        self._save_summaries_secs, self._save_model_secs = save_summaries_secs, save_model_secs
        self._recovery_wait_secs, self._stop_grace_secs = recovery_wait_secs, stop_grace_secs
        self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        if summary_writer is Supervisor.USE_DEFAULT:
            summary_writer = tf.summary.FileWriter(logdir) if (is_chief and logdir) else None
        self._summary_writer = summary_writer
        self._session_manager = session_manager
        self._coord = tf.train.Coordinator()
        self._stop_event = threading.Event()
        self._threads = []
        self._lock = threading.RLock()

    # --- properties (TF's names) ---
    is_chief = property(lambda self: self._is_chief)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    local_init_op = property(lambda self: self._local_init_op)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)
    session_manager = property(lambda self: self._session_manager)

    # --- sessions ---
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False, max_wait_secs=7200,
                                    start_standard_services=True):
        """A session with the model restored from logdir's latest checkpoint or initialized."""
        tf = _tf()
        self._stop_event.clear()
        self._coord.clear_stop()
        with self._graph.as_default():
            sess = Session(graph=self._graph, config=config)
            latest = tf.train.latest_checkpoint(self._logdir) if (self._logdir and self._saver) else None
            if latest:
                self._saver.restore(sess, latest)
            else:
                if wait_for_checkpoint and not self._is_chief:
                    raise _errors.DeadlineExceededError(None, None, "no checkpoint in %s" % self._logdir)
                if self._init_op is not None:
                    sess.run(self._init_op, feed_dict=self._init_feed_dict)
                if self._init_fn is not None:
                    self._init_fn(sess)
            if self._local_init_op is not None:
                sess.run(self._local_init_op)
        if start_standard_services and self._is_chief:
            self.start_standard_services(sess)
        return sess

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True, close_summary_writer=True):
        """Yields a prepared session; on exit stops the services (re-raising what they or the block raised,
        except OutOfRangeError, a clean stop) and closes the session."""
        sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                start_standard_services=start_standard_services)
        try:
            yield sess
        except Exception as e:  # noqa: BLE001 (TF: recorded by the coordinator, re-raised by stop())
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    def _serialize_runs(self, sess):
        """Services run on threads: make this session's runs take the supervisor's lock."""
        if getattr(sess.run, "_tinyflow_supervised", False):
            return
        unlocked = sess.run

        @functools.wraps(unlocked)
        def run(*args, **kwargs):
            with self._lock:
                return unlocked(*args, **kwargs)
        run._tinyflow_supervised = True
        sess.run = run

    def start_standard_services(self, sess):
        """Checkpoint (every save_model_secs) and summary (every save_summaries_secs) threads; the chief only,
        with a logdir. Returns the started threads."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because only chief "
                               "supervisors can write events.")
        threads = []
        if self._logdir:
            if self._save_model_secs and self._saver is not None:
                threads.append(_Looper(self, self._save_model_secs, lambda: self._save_checkpoint(sess), now=True))
            if self._save_summaries_secs and self._summary_writer is not None and self._summary_op is not None:
                threads.append(_Looper(self, self._save_summaries_secs, lambda: self._write_summary(sess), now=True))
        if threads:
            self._serialize_runs(sess)
        for t in threads:
            t.start()
        self._threads.extend(threads)
        return threads + self.start_queue_runners(sess)

    def _step(self, sess):
        return _tf().train.global_step(sess, self._global_step) if self._global_step is not None else None

    def _save_checkpoint(self, sess):
        with self._lock:
            self._saver.save(sess, self._save_path, global_step=self._global_step)

    def _write_summary(self, sess):
        with self._lock:
            summary, step = sess.run(self._summary_op), self._step(sess)
        self._summary_writer.add_summary(summary, step)

    def summary_computed(self, sess, summary, global_step=None):
        """Writes `summary` (what sess.run of a summary op gave) at global_step (default: the global step)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = self._step(sess)
        self._summary_writer.add_summary(summary, global_step)

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the threads of queue_runners (default: the graph's QUEUE_RUNNERS) under the supervisor's
        coordinator (stop() joins them); returns them."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection("queue_runners")
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._threads.extend(threads)
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a thread calling target(*args, **kwargs) every timer_interval_secs until the supervisor stops."""
        t = _Looper(self, timer_interval_secs, lambda: target(*(args or ()), **(kwargs or {})), now=True)
        t.start()
        self._threads.append(t)
        return t

    # --- stopping ---
    def request_stop(self, ex=None):
        self._coord.request_stop(ex)
        self._stop_event.set()

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._stop_event.wait()

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops and joins the service threads (and `threads`), closes the summary writer, and re-raises the
        first error reported to the coordinator."""
        self.request_stop()
        joined = self._threads + list(threads or [])
        self._threads = []
        try:
            self._coord.join(joined, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()
