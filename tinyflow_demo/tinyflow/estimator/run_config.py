"""tf.estimator.RunConfig (TF 1.x): where and how often an Estimator checkpoints, logs and seeds."""

__all__ = ["RunConfig"]

_USE_DEFAULT = object()
_FIELDS = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
           "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours", "log_step_count_steps",
           "train_distribute", "device_fn", "protocol", "eval_distribute", "experimental_distribute",
           "experimental_max_worker_delay_secs", "session_creation_timeout_secs")


class RunConfig(object):
    """RunConfig(model_dir=None, tf_random_seed=None, save_summary_steps=100, save_checkpoints_steps=None,
    save_checkpoints_secs=600 unless steps are given, session_config=None, keep_checkpoint_max=5,
    keep_checkpoint_every_n_hours=10000, log_step_count_steps=100, ...). The distribution and device
    arguments are accepted and must be None (tinyflow trains in one process). Read-only properties;
    replace(**kwargs) makes a changed copy, as TF's."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_secs and save_checkpoints_steps.")
        for key, value in (("train_distribute", train_distribute), ("eval_distribute", eval_distribute),
                           ("experimental_distribute", experimental_distribute)):
            if value is not None:
                from ..compat import NotSupportedYetError
                raise NotSupportedYetError("RunConfig(%s=...): tinyflow's Estimator trains in one process (use "
                                           "tinyflow.horovod for data parallelism)" % key)
        for key, value in (("save_summary_steps", save_summary_steps), ("keep_checkpoint_max", keep_checkpoint_max),
                           ("log_step_count_steps", log_step_count_steps),
                           ("save_checkpoints_steps", save_checkpoints_steps),
                           ("save_checkpoints_secs", save_checkpoints_secs)):
            if value is not None and value < 0:
                raise ValueError("%s should be >= 0, given: %s" % (key, value))
        values = dict(locals())
        self._values = {k: values[k] for k in _FIELDS}

    def __getattr__(self, name):
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError("'RunConfig' object has no attribute '%s'" % name)

    # what TF's RunConfig reports for a single local process
    task_type, task_id, num_ps_replicas, num_worker_replicas, is_chief, master = "worker", 0, 0, 1, True, ""
    cluster_spec, evaluation_master, global_id_in_cluster, service = None, "", 0, None

    def replace(self, **kwargs):
        unknown = set(kwargs) - set(_FIELDS)
        if unknown:
            raise ValueError("Replacing %s is not supported. Allowed properties are %s." % (sorted(unknown),
                                                                                          list(_FIELDS)))
        values = dict(self._values)
        values.update(kwargs)
        steps, secs = values.pop("save_checkpoints_steps"), values.pop("save_checkpoints_secs")
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs and steps is not None:
            secs = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs and secs is not None:
            steps = None
        return RunConfig(save_checkpoints_steps=steps, save_checkpoints_secs=secs, **values)

    def __repr__(self):
        return "{%s}" % ", ".join("'%s': %r" % (k, self._values[k]) for k in _FIELDS)
