"""tf.estimator.Estimator (TF 1.x): a model_fn, a model_dir of checkpoints, and train / evaluate / predict,
each in a graph of its own (as TF builds one per call), restoring the latest checkpoint of model_dir.

train runs a MonitoredTrainingSession (checkpoints every save_checkpoints_steps or _secs and at the end, the
loss and step logged every log_step_count_steps, global_step/sec); evaluate runs the eval_metric_ops' update
ops over the input (or `steps` batches) and returns their values with 'loss' and 'global_step'; predict
yields the predictions one example at a time.
"""
import contextlib
import inspect
import os
import sys
import tempfile
import time

import numpy as np

from .run_config import RunConfig

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys"]


def _tf():
    return sys.modules[__name__.split(".")[0]]


class ModeKeys(object):
    """tf.estimator.ModeKeys: the mode strings model functions compare against."""
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


class EstimatorSpec(tuple):
    """tf.estimator.EstimatorSpec(mode, predictions, loss, train_op, eval_metric_ops, export_outputs, ...):
    what a model_fn returns. TRAIN needs loss and train_op, EVAL loss, PREDICT predictions (ValueError as TF).
    export_outputs and scaffold are accepted (tinyflow exports no SavedModel)."""

    _fields = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
               "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        tf = _tf()
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError("mode=%r is not one of ModeKeys.TRAIN, EVAL, PREDICT" % (mode,))
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        if loss is not None:
            loss = tf.convert_to_tensor(loss)
            if loss.shape.ndims not in (None, 0) and loss.shape.as_list() not in ([1], [1, 1]):
                raise ValueError("Loss must be scalar, given: %s" % loss)
            if loss.shape.ndims:
                loss = tf.reshape(loss, [])
        metrics = dict(eval_metric_ops or {})
        for key, value in metrics.items():
            if not (isinstance(value, (tuple, list)) and len(value) == 2):
                raise TypeError("Values of eval_metric_ops must be (metric_value, update_op) tuples, given: %s for "
                                "key: %s" % (value, key))
        return tuple.__new__(cls, (mode, predictions, loss, train_op, metrics, export_outputs,
                                   tuple(training_chief_hooks or ()), tuple(training_hooks or ()), scaffold,
                                   tuple(evaluation_hooks or ()), tuple(prediction_hooks or ())))

    def _replace(self, **kwargs):
        values = dict(zip(self._fields, self))
        values.update(kwargs)
        return EstimatorSpec(**values)


for _i, _field in enumerate(EstimatorSpec._fields):
    setattr(EstimatorSpec, _field, property(lambda self, i=_i: tuple.__getitem__(self, i)))


def _arg_names(fn):
    if hasattr(fn, "func") and hasattr(fn, "args"):  # functools.partial
        return [a for a in _arg_names(fn.func)[len(fn.args):] if a not in (fn.keywords or {})]
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    return [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _info(fmt, *args):
    _tf().logging.info(fmt, *args)


class Estimator(object):
    """tf.estimator.Estimator(model_fn, model_dir=None, config=None, params=None, warm_start_from=None).

    model_fn(features, labels, mode, params, config) (labels, mode, params and config only when its
    signature names them) returns an EstimatorSpec. Without a model_dir (here or in config) checkpoints go to
    a new temporary directory, as TF's, and the log says which."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if not callable(model_fn):
            raise ValueError("model_fn must be callable, got %r" % (model_fn,))
        if config is None:
            _info("Using default config.")
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError("config must be an instance of `RunConfig`, but provided %s." % (config,))
        if model_dir is not None and config.model_dir is not None and \
                os.path.abspath(model_dir) != os.path.abspath(config.model_dir):
            raise ValueError("`model_dir` are set both in constructor and `RunConfig`, but with different values. In "
                             "constructor: '%s', in `RunConfig`: '%s' " % (model_dir, config.model_dir))
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            _tf().logging.warning("Using temporary folder as model directory: %s", model_dir)
        model_dir = str(model_dir)
        if not os.path.isdir(model_dir):
            os.makedirs(model_dir)
        self._config = config.replace(model_dir=model_dir)
        self._model_dir = model_dir
        self._model_fn = model_fn
        self._params = dict(params or {})
        self._warm_start_from = warm_start_from
        if "params" not in _arg_names(model_fn) and params:
            raise ValueError("model_fn (%s) does not include params argument, but params (%s) are passed to "
                             "Estimator." % (model_fn, params))
        _info("Using config: %s", self._config)

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # -- checkpoints --
    def latest_checkpoint(self):
        return _tf().train.latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        return [name for name, _ in _tf().train.list_variables(self._checkpoint_or_fail())]

    def get_variable_value(self, name):
        return _tf().train.load_variable(self._checkpoint_or_fail(), name)

    def _checkpoint_or_fail(self):
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError("Could not find trained model in model_dir: %s." % self._model_dir)
        return path

    def _global_step_of(self, path):
        try:
            return int(_tf().train.load_variable(path, "global_step"))
        except Exception:  # noqa: B902 (a checkpoint without a global step counts as step 0)
            return 0

    # -- building --
    def _optional_args(self, names, mode):
        """mode, params and config for an input_fn or model_fn that names them (TF passes only those)."""
        given = {"mode": mode, "params": self._params, "config": self._config}
        return {name: value for name, value in given.items() if name in names}

    def _call_input_fn(self, input_fn, mode):
        tf = _tf()
        result = input_fn(**self._optional_args(_arg_names(input_fn), mode))
        if isinstance(result, tf.data.Dataset):
            result = result.make_one_shot_iterator().get_next()
        if isinstance(result, (tuple, list)) and not hasattr(result, "_fields"):
            if len(result) == 2:
                return result[0], result[1]
            if len(result) == 1:
                return result[0], None
            raise ValueError("input_fn should return (features, labels) or features; got %d values" % len(result))
        return result, None

    def _call_model_fn(self, features, labels, mode):
        names = _arg_names(self._model_fn)
        kwargs = self._optional_args(names, mode)
        if "labels" in names:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        _info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec. Given: %s" % (spec,))
        _info("Done calling model_fn.")
        return spec

    def _graph(self):
        tf = _tf()
        graph = tf.Graph()
        if self._config.tf_random_seed is not None:
            graph.seed = int(self._config.tf_random_seed)
        return graph

    def _session_config(self):
        return self._config.session_config

    # -- train --
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains for `steps` more steps or up to global step `max_steps` (or until input_fn's data ends)."""
        tf = _tf()
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % steps)
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % max_steps)
        if max_steps is not None:
            latest = self.latest_checkpoint()
            if latest is not None and self._global_step_of(latest) >= max_steps:
                _info("Skipping training since max_steps has already saved.")
                return self
        graph = self._graph()
        with graph.as_default():
            global_step = tf.train.get_or_create_global_step()
            features, labels = self._call_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
            loss = spec.loss
            all_hooks = list(hooks or []) + list(spec.training_hooks)
            all_hooks.append(tf.train.NanTensorHook(loss))
            if self._config.log_step_count_steps:
                with tf.control_dependencies([spec.train_op]):  # the step this run reached, as TF's log shows
                    step_after = tf.identity(global_step)
                all_hooks.append(tf.train.LoggingTensorHook({"loss": loss, "step": step_after},
                                                            every_n_iter=self._config.log_step_count_steps,
                                                            formatter=_loss_formatter))
            if steps is not None or max_steps is not None:
                all_hooks.append(tf.train.StopAtStepHook(num_steps=steps, last_step=max_steps))
            scaffold = spec.scaffold or tf.train.Scaffold()
            if scaffold.saver is None:
                config = self._config
                scaffold.saver = tf.train.Saver(max_to_keep=config.keep_checkpoint_max,
                                                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours)
            chief_hooks = list(spec.training_chief_hooks)
            every_steps, every_secs = self._config.save_checkpoints_steps, self._config.save_checkpoints_secs
            if every_steps or every_secs:
                _info("Create CheckpointSaverHook.")
                chief_hooks.append(tf.train.CheckpointSaverHook(
                    self._model_dir, save_secs=None if every_steps else every_secs, save_steps=every_steps,
                    scaffold=scaffold, listeners=saving_listeners))
            loss_value = None
            with tf.train.MonitoredTrainingSession(
                    checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=all_hooks,
                    chief_only_hooks=chief_hooks, save_checkpoint_secs=None, save_checkpoint_steps=None,
                    save_summaries_steps=self._config.save_summary_steps, config=self._session_config(),
                    log_step_count_steps=self._config.log_step_count_steps) as sess:
                while not sess.should_stop():
                    _, loss_value = sess.run([spec.train_op, loss])
        if loss_value is not None:
            _info("Loss for final step: %s.", loss_value)
        return self

    @contextlib.contextmanager
    def _restored_session(self, tf, checkpoint, hooks, what):
        """A session with the variables of `checkpoint` (initialized when None), local variables initialized, the
        queue runners started and the hooks told; the runners are stopped and the session closed afterwards."""
        config = self._session_config()
        sess = tf.Session(config=config) if config is not None else tf.Session()
        coord = tf.train.Coordinator()
        threads = []
        try:
            sess.run(tf.global_variables_initializer())
            if checkpoint is not None:
                _info("Restoring parameters from %s", checkpoint)
                tf.train.Saver().restore(sess, checkpoint)
            else:
                _info("Could not find trained model in model_dir: %s, running initialization to %s.",
                      self._model_dir, what)
            sess.run(tf.local_variables_initializer())
            threads = tf.train.start_queue_runners(sess, coord)
            for h in hooks:
                h.after_create_session(sess, coord)
            yield sess
        finally:
            coord.request_stop()
            try:
                coord.join(threads, stop_grace_period_secs=5, ignore_live_threads=True)
            finally:
                sess.close()

    # -- evaluate --
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """The eval_metric_ops' values after running their updates over input_fn's data (or `steps` batches),
        with 'loss' (its mean over the batches) and 'global_step' (the checkpoint's)."""
        tf = _tf()
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % steps)
        checkpoint = checkpoint_path or self.latest_checkpoint()
        graph = self._graph()
        with graph.as_default():
            global_step = tf.train.get_or_create_global_step()
            features, labels = self._call_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            metrics = dict(spec.eval_metric_ops)
            if "loss" not in metrics:
                metrics["loss"] = tf.metrics.mean(spec.loss)
            values = {k: v[0] for k, v in metrics.items()}
            updates = [v[1] for v in metrics.values()]
            all_hooks = list(hooks or []) + list(spec.evaluation_hooks)
            for h in all_hooks:
                h.begin()
            _info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            with self._restored_session(tf, checkpoint, all_hooks, "evaluate") as sess:
                done = 0
                while steps is None or done < steps:
                    try:
                        if _run_with_hooks(tf, sess, updates, all_hooks)[1]:
                            break
                    except tf.errors.OutOfRangeError:
                        break
                    done += 1
                    if steps is not None and (done == steps or done % max(1, steps // 10) == 0):
                        _info("Evaluation [%d/%d]", done, steps)
                results = sess.run(values)  # NumPy scalars, as TF's
                results["global_step"] = np.int64(sess.run(global_step))
                for h in all_hooks:
                    h.end(sess)
        _info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S", time.gmtime()))
        _info("Saving dict for global step %d: %s", results["global_step"],
              ", ".join("%s = %s" % (k, results[k]) for k in sorted(results)))
        return results

    # -- predict --
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yields the predictions of each example (a dict when the model_fn's predictions is one, else an
        array), until input_fn's data ends."""
        tf = _tf()
        checkpoint = checkpoint_path or self.latest_checkpoint()
        graph = self._graph()
        with graph.as_default():
            tf.train.get_or_create_global_step()
            features, _ = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            predictions = spec.predictions
            if isinstance(predictions, dict) and predict_keys is not None:
                keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
                missing = [k for k in keys if k not in predictions]
                if missing:
                    raise ValueError("Expected to run at least one output from %s, provided %s."
                                     % (sorted(predictions), keys))
                predictions = {k: predictions[k] for k in keys}
            all_hooks = list(hooks or []) + list(spec.prediction_hooks)
            for h in all_hooks:
                h.begin()
            with self._restored_session(tf, checkpoint, all_hooks, "predict") as sess:
                stop = False
                while not stop:
                    try:
                        batch, stop = _run_with_hooks(tf, sess, predictions, all_hooks)
                    except tf.errors.OutOfRangeError:
                        break
                    if not yield_single_examples:
                        yield batch
                        continue
                    if isinstance(batch, dict):
                        sizes = set(np.shape(v)[0] if np.ndim(v) else None for v in batch.values())
                        if len(sizes) != 1 or None in sizes:
                            raise ValueError("Batch length of predictions should be same. %s" % sorted(
                                (k, np.shape(v)) for k, v in batch.items()))
                        for i in range(sizes.pop()):
                            yield {k: v[i] for k, v in batch.items()}
                    else:
                        for row in np.asarray(batch):
                            yield row
                for h in all_hooks:
                    h.end(sess)

    def export_savedmodel(self, *args, **kwargs):
        raise _tf().NotSupportedYetError("tf.estimator.Estimator.export_savedmodel is not supported by tinyflow "
                                         "(it writes no SavedModel); checkpoints are in %s" % self._model_dir)

    export_saved_model = export_savedmodel


def _loss_formatter(values):
    return "loss = %s, step = %s" % (values["loss"], values["step"])


def _run_with_hooks(tf, sess, fetches, hooks):
    """One run of fetches with the hooks' before_run fetches merged in and after_run called: (the fetches' values,
    whether a hook asked to stop)."""
    context = tf.train.SessionRunContext(tf.train.SessionRunArgs(fetches), sess)
    extra, feeds = {}, {}
    for i, h in enumerate(hooks):
        args = h.before_run(context)
        if args is not None:
            if args.fetches is not None:
                extra[i] = args.fetches
            feeds.update(args.feed_dict or {})
    out = sess.run({"fetches": fetches, "hooks": extra}, feed_dict=feeds or None)
    for i, h in enumerate(hooks):
        h.after_run(context, tf.train.SessionRunValues(out["hooks"].get(i)))
    return out["fetches"], context.stop_requested

