"""tf.estimator.inputs: numpy_input_fn (pandas_input_fn is not supported: tinyflow does not depend on pandas)."""
import collections

import numpy as np

__all__ = ["numpy_input_fn", "pandas_input_fn"]


def _check_arrays(x, y):
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        arrays = dict((k, np.asarray(v)) for k, v in x.items())
    else:
        arrays = {"__x__": np.asarray(x)}
    if y is not None:
        if isinstance(y, dict):
            overlap = set(y) & set(arrays)
            if overlap:
                raise ValueError("%s duplicate keys are found in both x and y: %s" % (len(overlap), sorted(overlap)))
            arrays.update((k, np.asarray(v)) for k, v in y.items())
        else:
            arrays["__y__"] = np.asarray(y)
    lengths = set(a.shape[0] if a.ndim else None for a in arrays.values())
    if None in lengths:
        raise ValueError("numpy_input_fn: every array needs a first (example) dimension")
    if len(lengths) != 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                         "length. Lengths: %s" % sorted(lengths))
    return arrays


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input_fn giving (features, labels) batches of the arrays: x a dict of arrays (features a dict) or an
    array (features a tensor), y an array, a dict of arrays or None (features only). num_epochs=None repeats
    forever; the last batch may be smaller; shuffle must be given (as TF asks), reshuffling each epoch."""
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                         "True for training); got %s" % (shuffle,))
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 or None, got %s" % num_epochs)
    arrays = _check_arrays(x, y)
    x_keys = list(x) if isinstance(x, dict) else None
    y_keys = list(y) if isinstance(y, dict) else None

    def input_fn():
        from ..data import Dataset
        from ..queue_input import _storable
        data = collections.OrderedDict((k, _storable(v) if v.dtype != np.float16 else v.astype(np.float32))
                                       for k, v in arrays.items())
        size = next(iter(data.values())).shape[0]
        dataset = Dataset.from_tensor_slices(dict(data))
        if shuffle:
            dataset = dataset.shuffle(max(int(queue_capacity), size))
        dataset = dataset.repeat(num_epochs).batch(int(batch_size))
        batch = dataset.make_one_shot_iterator().get_next()
        features = {k: batch[k] for k in x_keys} if x_keys is not None else batch["__x__"]
        if y is None:
            return features
        labels = {k: batch[k] for k in y_keys} if y_keys is not None else batch["__y__"]
        return features, labels

    return input_fn


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    from ..compat import NotSupportedYetError
    raise NotSupportedYetError("tf.estimator.inputs.pandas_input_fn is not supported by tinyflow (no pandas); use "
                               "numpy_input_fn with {column: frame[column].values}")
