"""tf.feature_column (TF 1.x), its dense numeric part: numeric_column and input_layer, what custom model_fns
written after TF's "Creating Custom Estimators" guide use. Categorical, bucketized, embedding and crossed
columns raise NotSupportedYetError (tinyflow has no string or sparse tensors)."""
import collections

import numpy as np

from . import dtypes as _dtypes

__all__ = ["numeric_column", "input_layer"]


class _NumericColumn(collections.namedtuple("_NumericColumn", ["key", "shape", "default_value", "dtype",
                                                               "normalizer_fn"])):
    """A dense feature features[key] of `shape` per example."""

    @property
    def name(self):
        return self.key

    def _dense(self, features):
        from .ops.array_ops import reshape
        from .ops.math_ops import cast
        if self.key not in features:
            raise ValueError("The feature '%s' of numeric_column is not in the features: %s"
                             % (self.key, sorted(features)))
        value = cast(features[self.key], _dtypes.float32)
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return reshape(value, [-1, int(np.prod(self.shape))])


def numeric_column(key, shape=(1,), default_value=None, dtype=_dtypes.float32, normalizer_fn=None):
    """tf.feature_column.numeric_column: features[key], cast to float32 (after normalizer_fn) by input_layer."""
    if not isinstance(key, str):
        raise ValueError("key must be a string. Given: %r" % (key,))
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if not shape or any(d <= 0 for d in shape):
        raise ValueError("shape dimensions must be greater than 0. shape: %s, key: %s" % (shape, key))
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError("dtype must be convertible to float. dtype: %s, key: %s" % (dtype.name, key))
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError("normalizer_fn must be a callable. Given: %r" % (normalizer_fn,))
    return _NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """The columns' values side by side, [batch, sum of their sizes] float32, ordered by column name (as TF)."""
    from .ops.array_ops import concat
    columns = list(feature_columns) if isinstance(feature_columns, (list, tuple, set)) else [feature_columns]
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    for column in columns:
        if not isinstance(column, _NumericColumn):
            from .compat import NotSupportedYetError
            raise NotSupportedYetError("tf.feature_column.input_layer: tinyflow supports numeric_column only, "
                                       "given %r" % (column,))
    parts = [column._dense(features) for column in sorted(columns, key=lambda c: c.name)]
    return parts[0] if len(parts) == 1 else concat(parts, axis=1)
