"""tf.estimator (TF 1.x): Estimator with a model_fn, train / evaluate / predict with checkpoints in model_dir,
RunConfig, numpy_input_fn, TrainSpec / EvalSpec / train_and_evaluate."""
import logging
import os

import numpy as np
import pytest

import tinyflow as tf

W_TRUE = np.array([[2.0], [-3.0]], np.float32)


def _data(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2).astype(np.float32)
    return x, (x @ W_TRUE + 0.5 + 0.1 * rng.randn(n, 1)).astype(np.float32)


def linear_model_fn(features, labels, mode, params):
    x = features["x"]
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(x, w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "double": 2.0 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
        loss, global_step=tf.train.get_global_step())
    metrics = {"mae": tf.metrics.mean_absolute_error(labels, pred)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _numpy_sgd(x, y, lr, steps):
    w, b = np.zeros([2, 1], np.float64), np.zeros([1], np.float64)
    for _ in range(steps):
        err = x @ w + b - y
        w -= lr * 2 * x.T @ err / len(x)
        b -= lr * 2 * err.mean(0)
    return w, b


def test_train_matches_numpy_sgd_and_resumes_from_its_checkpoint(tmp_path):
    x, y = _data()
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    full_batch = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=64, num_epochs=None, shuffle=False)
    est.train(full_batch, steps=30)
    assert est.get_variable_value("global_step") == 30
    w, b = _numpy_sgd(x.astype(np.float64), y.astype(np.float64), 0.1, 30)
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-4, atol=1e-5)
    est.train(full_batch, steps=20)  # a new graph, restored from model.ckpt-30
    w, b = _numpy_sgd(x.astype(np.float64), y.astype(np.float64), 0.1, 50)
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(est.get_variable_value("b"), b, rtol=1e-4, atol=1e-5)
    assert est.latest_checkpoint() == os.path.join(str(tmp_path), "model.ckpt-50")
    est.train(full_batch, max_steps=50)  # reached: skipped
    assert est.get_variable_value("global_step") == 50
    assert set(est.get_variable_names()) >= {"w", "b", "global_step"}


def test_evaluate_and_predict(tmp_path):
    x, y = _data()
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=16, num_epochs=None, shuffle=True),
              max_steps=300)
    x_test, y_test = _data(40, seed=1)
    result = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x_test}, y_test, batch_size=40, shuffle=False))
    assert result["global_step"] == 300
    assert set(result) == {"loss", "mae", "global_step"}
    w, b = est.get_variable_value("w"), est.get_variable_value("b")
    pred = x_test @ w + b
    np.testing.assert_allclose(result["loss"], np.mean((pred - y_test) ** 2), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(result["mae"], np.mean(np.abs(pred - y_test)), rtol=1e-4, atol=1e-6)
    assert result["loss"] < 0.03  # the noise's variance is 0.01
    steps_result = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x_test}, y_test, batch_size=10,
                                                                   num_epochs=None, shuffle=False), steps=2)
    np.testing.assert_allclose(steps_result["mae"], np.mean(np.abs(pred[:20] - y_test[:20])), rtol=1e-4)
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x_test}, batch_size=16, shuffle=False)))
    assert len(preds) == 40 and sorted(preds[0]) == ["double", "y"]
    np.testing.assert_allclose(np.stack([p["y"] for p in preds]), pred, rtol=1e-5, atol=1e-5)
    only = next(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x_test}, shuffle=False), predict_keys=["y"]))
    assert list(only) == ["y"]
    with pytest.raises(ValueError, match="Expected to run at least one output"):
        next(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x_test}, shuffle=False), predict_keys=["nope"]))


def test_tensor_predictions_dataset_input_fn_and_config(tmp_path):
    seen = {}

    def model_fn(features, labels, mode, config):
        seen["model_dir"] = config.model_dir
        logits = tf.layers.dense(features, 3, name="logits")
        classes = tf.argmax(logits, axis=1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=classes)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                          eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, classes)})

    rng = np.random.RandomState(0)
    centers = np.array([[3, 0], [0, 3], [-3, -3]], np.float32)
    labels = rng.randint(0, 3, 300).astype(np.int32)
    feats = (centers[labels] + 0.5 * rng.randn(300, 2)).astype(np.float32)

    def train_input():
        return tf.data.Dataset.from_tensor_slices((feats, labels)).shuffle(300, seed=0).repeat().batch(32)

    def eval_input():
        return tf.data.Dataset.from_tensor_slices((feats, labels)).batch(100)

    config = tf.estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=1, save_checkpoints_steps=40,
                                    keep_checkpoint_max=2)
    est = tf.estimator.Estimator(model_fn, config=config)
    est.train(train_input, steps=120)
    assert seen["model_dir"] == str(tmp_path)
    indexes = sorted(f for f in os.listdir(str(tmp_path)) if f.endswith(".index"))
    assert indexes == ["model.ckpt-120.index", "model.ckpt-80.index"]  # every 40 steps, the newest 2 kept
    result = est.evaluate(eval_input)
    assert result["accuracy"] > 0.95 and result["global_step"] == 120
    classes = np.array(list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(feats).batch(64))))
    assert classes.shape == (300,)
    np.testing.assert_allclose(np.mean(classes == labels), result["accuracy"], atol=1e-6)
    # TF's Adam slot and power names land in the Estimator's checkpoints
    assert {"beta1_power", "beta2_power", "logits/kernel/Adam", "logits/kernel/Adam_1"} <= \
        set(est.get_variable_names())


def test_temporary_model_dir_and_logs(caplog):
    x, y = _data()
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est = tf.estimator.Estimator(linear_model_fn, params={"lr": 0.1},
                                     config=tf.estimator.RunConfig(log_step_count_steps=5))
        est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=8, shuffle=False), steps=12)
    text = caplog.text
    assert "Using temporary folder as model directory: %s" % est.model_dir in text
    assert os.path.isdir(est.model_dir) and est.latest_checkpoint().endswith("model.ckpt-8")  # 1 epoch: 8 steps
    assert "loss = " in text and "step = 1" in text and "step = 6" in text
    assert "Saving checkpoints for 8 into" in text and "Loss for final step:" in text


def test_train_and_evaluate(tmp_path):
    x, y = _data()
    est = tf.estimator.Estimator(linear_model_fn, params={"lr": 0.1},
                                 config=tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=25))
    train_spec = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=16,
                                                                           num_epochs=None, shuffle=True),
                                        max_steps=100)
    eval_spec = tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn({"x": x}, y, shuffle=False), steps=None,
                                      throttle_secs=0)
    result, exports = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    assert exports == [] and result["global_step"] == 100 and result["loss"] < 0.05
    with pytest.raises(TypeError, match="TrainSpec"):
        tf.estimator.train_and_evaluate(est, eval_spec, eval_spec)


def test_argument_checks():
    x, y = _data()
    with pytest.raises(ValueError, match="shuffle must be provided"):
        tf.estimator.inputs.numpy_input_fn({"x": x}, y)
    with pytest.raises(ValueError, match="mismatched"):
        tf.estimator.inputs.numpy_input_fn({"x": x}, y[:10], shuffle=False)
    with pytest.raises(ValueError, match="duplicate keys"):
        tf.estimator.inputs.numpy_input_fn({"x": x}, {"x": y}, shuffle=False)
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.estimator.RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=10)
    config = tf.estimator.RunConfig(save_checkpoints_steps=10)
    assert config.save_checkpoints_secs is None and config.replace(save_checkpoints_secs=5).save_checkpoints_steps \
        is None
    assert tf.estimator.RunConfig().save_checkpoints_secs == 600
    with pytest.raises(ValueError, match="Missing train_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing predictions"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
    est = tf.estimator.Estimator(linear_model_fn, params={"lr": 0.1})
    with pytest.raises(ValueError, match="both steps and max_steps"):
        est.train(lambda: None, steps=1, max_steps=1)
    with pytest.raises(ValueError, match="does not include params"):
        tf.estimator.Estimator(lambda features, labels, mode: None, params={"a": 1})
    with pytest.raises(tf.NotSupportedYetError, match="pandas_input_fn"):
        tf.estimator.inputs.pandas_input_fn(None, shuffle=False)
    with pytest.raises(tf.NotSupportedYetError, match="tf.estimator.DNNClassifier"):
        tf.estimator.DNNClassifier


def test_numpy_input_fn_batches_and_features_only():
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    feats = tf.estimator.inputs.numpy_input_fn(x, batch_size=4, num_epochs=1, shuffle=False)()
    assert isinstance(feats, tf.Tensor)
    with tf.Session() as sess:
        sizes = []
        while True:
            try:
                sizes.append(len(sess.run(feats)))
            except tf.errors.OutOfRangeError:
                break
    assert sizes == [4, 4, 2]


def test_evaluate_and_predict_run_the_hooks(tmp_path):
    class Counter(tf.train.SessionRunHook):
        def __init__(self, tensor=None):
            self.calls, self.values, self.ended, self.tensor = 0, [], False, tensor

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.train.get_global_step())

        def after_run(self, run_context, run_values):
            self.calls += 1
            self.values.append(int(run_values.results))

        def end(self, session):
            self.ended = True

    x, y = _data(40)
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=40, num_epochs=None, shuffle=False),
              steps=3)
    hook = Counter()
    est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=10, shuffle=False), hooks=[hook])
    assert hook.calls == 4 and hook.values == [3] * 4 and hook.ended  # one run per batch, the restored step
    hook = Counter()
    assert len(list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=16, shuffle=False),
                                hooks=[hook]))) == 40
    assert hook.calls == 3 and hook.ended


def test_numpy_input_fn_of_uint8_labels():
    # MNIST's labels are uint8 (input_data, one_hot=False): the batches carry them (as int32 while the core
    # has no uint8) and programs cast them
    labels = np.array([3, 1, 4, 1, 5], np.uint8)
    _, batch = tf.estimator.inputs.numpy_input_fn({"x": np.zeros([5, 1], np.float32)}, labels, batch_size=5,
                                                  shuffle=False)()
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.cast(batch, tf.int64)), labels)


def test_queue_based_input_fn(tmp_path):
    # TF 1.0-1.3 style input_fn: slice_input_producer + batch; the Estimator's sessions start the queue runners
    x, y = _data(32)

    def input_fn(num_epochs):
        def fn():
            xi, yi = tf.train.slice_input_producer([x, y], num_epochs=num_epochs, shuffle=False)
            xb, yb = tf.train.batch([xi, yi], batch_size=8)
            return {"x": xb}, yb
        return fn

    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    est.train(input_fn(None), steps=40)
    assert est.get_variable_value("global_step") == 40
    result = est.evaluate(input_fn(1))  # one epoch: 4 batches, then OutOfRangeError ends it
    w, b = est.get_variable_value("w"), est.get_variable_value("b")
    np.testing.assert_allclose(result["mae"], np.mean(np.abs(x @ w + b - y)), rtol=1e-4)


def test_feature_columns_in_a_custom_estimator(tmp_path):
    # TF's "Creating Custom Estimators": numeric feature columns into tf.feature_column.input_layer
    rng = np.random.RandomState(0)
    feats = {"b_len": rng.rand(50).astype(np.float32), "a_wid": rng.rand(50, 2).astype(np.float64)}
    target = (2 * feats["b_len"] - feats["a_wid"][:, 0] + 3 * feats["a_wid"][:, 1]).astype(np.float32)
    columns = [tf.feature_column.numeric_column("b_len"), tf.feature_column.numeric_column("a_wid", shape=[2])]

    def model_fn(features, labels, mode, params):
        net = tf.feature_column.input_layer(features, params["feature_columns"])
        pred = tf.squeeze(tf.layers.dense(net, 1, use_bias=False, kernel_initializer=tf.zeros_initializer(),
                                          name="linear"), 1)
        loss = tf.losses.mean_squared_error(labels, pred)
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=pred)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"feature_columns": columns})
    est.train(tf.estimator.inputs.numpy_input_fn(feats, target, batch_size=50, num_epochs=None, shuffle=False),
              steps=400)
    # input_layer orders the columns by name: a_wid (2 values), then b_len
    np.testing.assert_allclose(est.get_variable_value("linear/kernel")[:, 0], [-1.0, 3.0, 2.0], atol=0.05)
    with pytest.raises(ValueError, match="shape dimensions"):
        tf.feature_column.numeric_column("x", shape=[0])
    with pytest.raises(tf.NotSupportedYetError, match="tf.feature_column.categorical_column_with_vocabulary_list"):
        tf.feature_column.categorical_column_with_vocabulary_list
