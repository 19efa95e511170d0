"""tf.train: optimizers (optimizer.py, training_ops.py), Saver and checkpoint files (saver.py,
checkpoint_state.py), learning-rate schedules, moving averages, MonitoredTrainingSession and hooks, Supervisor.

This __init__ holds optimizer.py's names (Optimizer, GradientDescentOptimizer, ... get_global_step); the
package's __init__ adds the other modules' public names to it (tf.train.Saver, tf.train.exponential_decay...).
"""
from .optimizer import *  # noqa: F401,F403
from .optimizer import __all__  # noqa: F401
