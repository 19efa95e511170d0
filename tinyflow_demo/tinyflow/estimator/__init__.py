"""tf.estimator (TF 1.x): Estimator with model_fn / EstimatorSpec, RunConfig, ModeKeys, inputs.numpy_input_fn,
TrainSpec / EvalSpec / train_and_evaluate. The premade estimators (DNNClassifier, LinearRegressor, ...),
SavedModel export and pandas_input_fn raise NotSupportedYetError."""
import types as _types

from . import inputs as _inputs
from .estimator import Estimator, EstimatorSpec, ModeKeys
from .run_config import RunConfig
from .training import EvalSpec, TrainSpec, train_and_evaluate
from ..compat import _Namespace

inputs = _Namespace("tf.estimator.inputs", numpy_input_fn=_inputs.numpy_input_fn,
                    pandas_input_fn=_inputs.pandas_input_fn)
export = _Namespace("tf.estimator.export")
__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TrainSpec", "EvalSpec", "train_and_evaluate",
           "inputs", "export"]
del _types
