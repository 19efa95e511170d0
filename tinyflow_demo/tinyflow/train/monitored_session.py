"""tf.train.MonitoredTrainingSession and its hooks (TF 1.x): a session that initializes (or restores
from checkpoint_dir), runs hooks around every run (their fetches merged into the same run), saves
checkpoints and summaries, counts steps, and stops when a hook asks or the input is exhausted."""
import os
import sys
import time

import numpy as np

from .. import errors as _errors
from ..framework import get_default_graph
from ..queue_runner import Coordinator, start_queue_runners
from ..session import Session

__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "StopAtStepHook",
           "LoggingTensorHook", "NanTensorHook", "NanLossDuringTrainingError", "CheckpointSaverHook",
           "SummarySaverHook", "StepCounterHook", "FinalOpsHook", "FeedFnHook", "Scaffold", "MonitoredSession",
           "SingularMonitoredSession", "MonitoredTrainingSession", "Coordinator", "start_queue_runners",
           "SecondOrStepTimer", "ChiefSessionCreator"]


class SessionRunHook(object):
    """Called around session creation and every run; before_run may return SessionRunArgs to add
    fetches (and feeds) to the same run."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(object):
    def __init__(self, fetches, feed_dict=None, options=None):
        self.fetches, self.feed_dict, self.options = fetches, feed_dict, options


class SessionRunValues(object):
    def __init__(self, results, options=None, run_metadata=None):
        self.results, self.options, self.run_metadata = results, options, run_metadata


class SessionRunContext(object):
    def __init__(self, original_args, session):
        self.original_args, self.session = original_args, session
        self._stop_requested = False

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


class SecondOrStepTimer(object):
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one given)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps must be given")
        self._secs, self._steps = every_secs, every_steps
        self._last_time = self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if step == self._last_step:
            return False
        if self._secs is not None:
            return time.time() >= self._last_time + self._secs
        return step >= self._last_step + self._steps

    def update_last_triggered_step(self, step):
        now = time.time()
        elapsed = None if self._last_time is None else (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


def _tf():
    """The tinyflow package (tf.train.Saver, tf.summary, tf.logging live on it)."""
    return sys.modules[__package__.partition(".")[0]]


def _log_info(fmt, *args):
    _tf().logging.info(fmt, *args)


def _global_step_tensor():
    step = _tf().train.get_global_step()
    if step is None:
        raise RuntimeError("Global step should be created to use this hook (tf.train.get_or_create_global_step())")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop after `num_steps` more steps or at global step `last_step`."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._step_tensor = _global_step_tensor()

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._step_tensor)

    def after_run(self, run_context, run_values):
        # As TF: the fetched step may be read before or after this run's update; when it is near
        # the end, read the step again to be sure.
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._step_tensor)) >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a dict tag -> tensor, or a list) every N steps or seconds."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        if isinstance(tensors, dict):
            self._tags, self._tensors = list(tensors), tensors
        else:
            tensors = list(tensors)
            self._tags = [getattr(t, "name", str(t)) for t in tensors]
            self._tensors = dict(zip(self._tags, tensors))
        if every_n_iter is None and every_n_secs is None and not at_end:
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        self._timer = None if every_n_iter is None and every_n_secs is None else \
            SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        self._at_end, self._formatter = at_end, formatter
        self._iter = 0

    def begin(self):
        # TF's _as_graph_element: a name "softmax_tensor" means its tensor "softmax_tensor:0"
        graph = get_default_graph()
        self._tensors = {tag: graph.as_graph_element(t if ":" in t else t + ":0") if isinstance(t, str) else t
                         for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should = self._timer is not None and self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._tensors) if self._should else None

    def _log(self, values, elapsed=None):
        if self._formatter:
            text = self._formatter(values)
        else:
            text = ", ".join("%s = %s" % (tag, values[tag]) for tag in self._tags)
        if elapsed is not None:
            text += " (%.3f sec)" % elapsed[0]
        _log_info("%s", text)

    def after_run(self, run_context, run_values):
        if self._should:
            elapsed = self._timer.update_last_triggered_step(self._iter)
            self._log(run_values.results, elapsed)
        self._iter += 1

    def end(self, session):
        if self._at_end:
            self._log(session.run(self._tensors))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss, self._fail = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail:
                raise NanLossDuringTrainingError
            sys.stderr.write("Model diverged with loss = NaN.\n")
            run_context.request_stop()


class FeedFnHook(SessionRunHook):
    def __init__(self, feed_fn):
        self._feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self._feed_fn())


class FinalOpsHook(SessionRunHook):
    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._ops, self._feed = final_ops, final_ops_feed_dict
        self.final_ops_values = None

    def end(self, session):
        if self._ops is not None:
            self.final_ops_values = session.run(self._ops, feed_dict=self._feed)


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint (tf.train.Saver) every N steps or seconds, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None):
        self._dir, self._basename = checkpoint_dir, checkpoint_basename
        self._saver, self._scaffold = saver, scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []

    def begin(self):
        self._step_tensor = _global_step_tensor()

    def _get_saver(self):
        if self._saver is None:
            self._saver = self._scaffold.saver if self._scaffold is not None else None
        if self._saver is None:
            self._saver = _tf().train.Saver()
        return self._saver

    def after_create_session(self, session, coord):
        self._save(session, int(session.run(self._step_tensor)))

    def before_run(self, run_context):
        return SessionRunArgs(self._step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):  # the fetched step may be stale
            step = int(run_context.session.run(self._step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._save(run_context.session, step)

    def end(self, session):
        step = int(session.run(self._step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)

    def _save(self, session, step):
        self._timer.update_last_triggered_step(step)
        for listener in self._listeners:
            listener.before_save(session, step)
        _log_info("Saving checkpoints for %d into %s.", step, os.path.join(self._dir, self._basename))
        self._get_saver().save(session, os.path.join(self._dir, self._basename), global_step=step)
        for listener in self._listeners:
            listener.after_save(session, step)


class SummarySaverHook(SessionRunHook):
    """Writes the merged summaries every N steps or seconds to output_dir's event file."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._dir, self._writer, self._scaffold, self._op = output_dir, summary_writer, scaffold, summary_op

    def begin(self):
        summary = _tf().summary
        if self._writer is None and self._dir:
            self._writer = summary.FileWriter(self._dir, get_default_graph())
        if self._op is None:
            self._op = self._scaffold.summary_op if self._scaffold is not None else None
        if self._op is None:
            self._op = summary.merge_all()
        self._step_tensor = _global_step_tensor()

    def after_create_session(self, session, coord):
        self._step = int(session.run(self._step_tensor))  # the step the next run reports

    def before_run(self, run_context):
        self._fetch = self._op is not None and self._timer.should_trigger_for_step(self._step)
        fetches = {"step": self._step_tensor}
        if self._fetch:
            fetches["summary"] = self._op
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        step = int(run_values.results["step"])
        if self._fetch and self._writer is not None:
            self._timer.update_last_triggered_step(step)
            self._writer.add_summary(run_values.results["summary"], step)
        self._step = step + 1

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Logs global steps per second every N steps."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        self._timer = SecondOrStepTimer(every_steps=None if every_n_secs else every_n_steps,
                                        every_secs=every_n_secs)

    def begin(self):
        self._step_tensor = _global_step_tensor()

    def before_run(self, run_context):
        return SessionRunArgs(self._step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            elapsed = self._timer.update_last_triggered_step(step)
            if elapsed is not None and elapsed[0] > 0:
                _log_info("global_step/sec: %g", elapsed[1] / elapsed[0])


class Scaffold(object):
    """What a monitored session needs to set up a graph: init/local-init ops, a saver, init feeds."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None):
        self.init_op, self.init_feed_dict, self.init_fn = init_op, init_feed_dict, init_fn
        self.local_init_op, self.summary_op, self.saver = local_init_op, summary_op, saver
        self.ready_op, self.ready_for_local_init_op = ready_op, ready_for_local_init_op

    def finalize(self):
        from ..ops import state_ops as _state
        if self.init_op is None:
            self.init_op = _state.global_variables_initializer()
        if self.local_init_op is None:
            self.local_init_op = _state.local_variables_initializer()
        return self

    @staticmethod
    def default_local_init_op():
        from ..ops import state_ops as _state
        return _state.local_variables_initializer()


class _MonitoredSessionBase(object):
    def __init__(self, session_creator, hooks, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._sess, self._coord = session_creator(), Coordinator()
        self._threads = start_queue_runners(self._sess, self._coord)  # as TF's SessionManager
        for h in self._hooks:
            h.after_create_session(self._sess, self._coord)
        self._stop = False
        self._closed = False
        self._grace = stop_grace_period_secs

    @property
    def graph(self):
        return self._sess.graph if hasattr(self._sess, "graph") else get_default_graph()

    def should_stop(self):
        return self._stop or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredSession")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        extra, feeds = {}, dict(feed_dict or {})
        for i, h in enumerate(self._hooks):
            args = h.before_run(context)
            if args is None:
                continue
            if args.feed_dict:
                overlap = set(args.feed_dict) & set(feeds)
                if overlap:
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user: %s" % sorted(
                        getattr(t, "name", str(t)) for t in overlap))
                feeds.update(args.feed_dict)
            if args.fetches is not None:
                extra[i] = args.fetches
        try:
            outputs = self._sess.run({"caller": fetches, "hooks": extra}, feed_dict=feeds or None, options=options,
                                     run_metadata=run_metadata)
        except _errors.OutOfRangeError:
            self._stop = True
            raise
        for i, h in enumerate(self._hooks):
            h.after_run(context, SessionRunValues(outputs["hooks"].get(i)))
        if context.stop_requested:
            self._stop = True
        return outputs["caller"]

    def run_step_fn(self, step_fn):
        class _StepContext(object):
            def __init__(ctx, sess):
                ctx.session = sess

            def run_with_hooks(ctx, *args, **kwargs):
                return self.run(*args, **kwargs)

            def request_stop(ctx):
                self._stop = True
        return step_fn(_StepContext(self._sess))

    def raw_session(self):
        return self._sess

    def _stop_threads(self):
        self._coord.request_stop()
        try:
            self._coord.join(self._threads, stop_grace_period_secs=self._grace)
        finally:
            self._threads = []

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            for h in self._hooks:
                h.end(self._sess)
        finally:
            try:
                self._stop_threads()
            finally:
                self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is _errors.OutOfRangeError or (exc_type is not None and issubclass(exc_type,
                                                                                        _errors.OutOfRangeError)):
            exc = None
        if exc is None:
            self.close()
            return True if exc_type is not None else None
        self._closed = True  # an error: close without running the hooks' end()
        try:
            self._coord.request_stop()
            self._coord.join(self._threads, stop_grace_period_secs=self._grace, ignore_live_threads=True)
        except Exception:  # noqa: B902 (the error being raised is the one to report)
            pass
        self._sess.close()
        return False


def _session_creator(scaffold, checkpoint_dir, config, master):
    def create():
        scaffold.finalize()
        sess = Session(config=config) if config is not None else Session()
        restored = False
        if checkpoint_dir:
            latest = _tf().train.latest_checkpoint(checkpoint_dir)
            if latest:
                saver = scaffold.saver or _tf().train.Saver()
                scaffold.saver = saver
                saver.restore(sess, latest)
                restored = True
        if not restored:
            sess.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(scaffold, sess)
        sess.run(scaffold.local_init_op)
        return sess
    return create


class ChiefSessionCreator(object):
    """tf.train.ChiefSessionCreator: create_session() initializes the scaffold's model or restores it from
    checkpoint_filename_with_path / the latest checkpoint of checkpoint_dir (MonitoredSession's default)."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold, self._config = scaffold or Scaffold(), config
        self._checkpoint_dir, self._checkpoint_file = checkpoint_dir, checkpoint_filename_with_path

    def create_session(self):
        if self._checkpoint_file:
            self._scaffold.finalize()
            sess = Session(config=self._config) if self._config is not None else Session()
            (self._scaffold.saver or _tf().train.Saver()).restore(sess, self._checkpoint_file)
            sess.run(self._scaffold.local_init_op)
            return sess
        return _session_creator(self._scaffold, self._checkpoint_dir, self._config, None)()


class MonitoredSession(_MonitoredSessionBase):
    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120, scaffold=None,
                 checkpoint_dir=None, config=None):
        if hasattr(session_creator, "create_session"):  # TF's SessionCreator objects
            session_creator = session_creator.create_session
        creator = session_creator if callable(session_creator) else _session_creator(
            scaffold or Scaffold(), checkpoint_dir, config, None)
        super(MonitoredSession, self).__init__(creator, hooks, stop_grace_period_secs)


class SingularMonitoredSession(MonitoredSession):
    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        super(SingularMonitoredSession, self).__init__(None, hooks, stop_grace_period_secs, scaffold, checkpoint_dir,
                                                       config)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=600, save_summaries_steps=100,
                             save_summaries_secs=None, config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=None,
                             summary_dir=None):
    """TF1's MonitoredTrainingSession: initializes or restores from checkpoint_dir, and on the chief
    saves checkpoints (every save_checkpoint_secs or _steps) and summaries, and logs steps/sec."""
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if is_chief:
        all_hooks += list(chief_only_hooks or [])
        summary_dir = summary_dir or checkpoint_dir
        has_step = _tf().train.get_global_step() is not None
        if has_step and log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(every_n_steps=log_step_count_steps))
        if has_step and summary_dir and (save_summaries_steps or save_summaries_secs):
            all_hooks.append(SummarySaverHook(save_steps=None if save_summaries_secs else save_summaries_steps,
                                              save_secs=save_summaries_secs, output_dir=summary_dir,
                                              scaffold=scaffold))
        if has_step and checkpoint_dir and (save_checkpoint_secs or save_checkpoint_steps):
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=None if save_checkpoint_steps else
                                                 save_checkpoint_secs, save_steps=save_checkpoint_steps,
                                                 scaffold=scaffold))
    return MonitoredSession(None, all_hooks, stop_grace_period_secs, scaffold,
                            checkpoint_dir if is_chief or checkpoint_dir else None, config)
