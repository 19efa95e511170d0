"""tf.estimator.TrainSpec, EvalSpec and train_and_evaluate (TF 1.x, local: one process)."""
import time

from .estimator import _info

__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate"]


class TrainSpec(tuple):
    """TrainSpec(input_fn, max_steps=None, hooks=None)."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: %s" % (input_fn,))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % max_steps)
        return tuple.__new__(cls, (input_fn, max_steps, tuple(hooks or ())))

    input_fn = property(lambda self: self[0])
    max_steps = property(lambda self: self[1])
    hooks = property(lambda self: self[2])


class EvalSpec(tuple):
    """EvalSpec(input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
    throttle_secs=600). Exporters are accepted and not run (tinyflow exports no SavedModel)."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                throttle_secs=600):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: %s" % (input_fn,))
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % steps)
        if throttle_secs < 0:
            raise ValueError("Must specify throttle_secs >= 0, given: %s" % throttle_secs)
        return tuple.__new__(cls, (input_fn, steps, name, tuple(hooks or ()), exporters, start_delay_secs,
                                   throttle_secs))

    input_fn = property(lambda self: self[0])
    steps = property(lambda self: self[1])
    name = property(lambda self: self[2])
    hooks = property(lambda self: self[3])
    exporters = property(lambda self: self[4])
    start_delay_secs = property(lambda self: self[5])
    throttle_secs = property(lambda self: self[6])


def train_and_evaluate(estimator, train_spec, eval_spec):
    """TF's local train_and_evaluate: trains to train_spec.max_steps, evaluating after each checkpoint the
    training writes (RunConfig.save_checkpoints_steps: chunks of that many steps; otherwise once the training
    ends) when throttle_secs passed since the last evaluation, and always at the end. Returns
    (the last evaluation's dict, export results: []), as TF 1.x."""
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("`train_spec` must have type `tf.estimator.TrainSpec`. Got: %s" % type(train_spec))
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("`eval_spec` must have type `tf.estimator.EvalSpec`. Got: %s" % type(eval_spec))
    chunk = estimator.config.save_checkpoints_steps
    max_steps = train_spec.max_steps
    last_eval, result = None, None
    _info("Running training and evaluation locally (non-distributed).")
    while True:
        latest = estimator.latest_checkpoint()
        start = estimator._global_step_of(latest) if latest else 0
        if max_steps is not None and start >= max_steps:
            break
        target = max_steps if not chunk else (start + chunk if max_steps is None else min(max_steps, start + chunk))
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks), max_steps=target)
        latest = estimator.latest_checkpoint()
        reached = estimator._global_step_of(latest) if latest else 0
        finished = (max_steps is not None and reached >= max_steps) or reached <= start or target is None
        if finished or last_eval is None or time.time() - last_eval >= eval_spec.throttle_secs:
            result = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, hooks=list(eval_spec.hooks),
                                        name=eval_spec.name)
            last_eval = time.time()
        if finished:
            break
    if result is None:  # training had already reached max_steps: evaluate the checkpoint there
        result = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, hooks=list(eval_spec.hooks),
                                    name=eval_spec.name)
    return result, []
