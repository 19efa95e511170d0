"""What TF's own TF1 tutorials and well-known TF1 training scripts needed beyond the basics: tf.estimator.ModeKeys
(model functions compare the mode for tf.layers' `training=`), tf.contrib.keras, FileWriter.add_run_metadata,
tensorflow.python.client.timeline and the Mechanics-101 model library tensorflow.examples.tutorials.mnist.mnist."""
import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinyflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_estimator_mode_keys_drive_layers_dropout_and_premade_estimators_are_not_supported():
    assert (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL, tf.estimator.ModeKeys.PREDICT) == \
        ("train", "eval", "infer")
    x = np.ones((64, 32), np.float32)
    train = tf.layers.dropout(tf.constant(x), rate=0.5, training=tf.estimator.ModeKeys.TRAIN == "train")
    infer = tf.layers.dropout(tf.constant(x), rate=0.5, training=tf.estimator.ModeKeys.PREDICT == "train")
    with tf.Session() as sess:
        t, i = sess.run([train, infer])
    np.testing.assert_array_equal(i, x)  # not training: the identity
    assert set(np.unique(t)) <= {0.0, 2.0} and 0.3 < (t == 0).mean() < 0.7  # training: kept ones scaled by 1/0.5
    with pytest.raises(tf.NotSupportedYetError, match="tf.estimator.DNNClassifier"):
        tf.estimator.DNNClassifier  # (tf.estimator.Estimator itself: tests/python/test_estimator.py)


def test_contrib_keras_is_tf_keras():
    assert tf.contrib.keras is tf.keras
    (x_train, y_train), (x_test, y_test) = tf.contrib.keras.datasets.mnist.load_data()
    assert x_train.shape[1:] == (28, 28) and x_train.shape[0] == y_train.shape[0] and y_test.max() == 9


def test_file_writer_add_run_metadata_accepts_a_traced_step_and_rejects_a_reused_tag(tmp_path):
    x = tf.placeholder(tf.float32, [None])
    y = x * 2.0
    options, metadata = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), tf.RunMetadata()
    writer = tf.summary.FileWriter(str(tmp_path))
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.5]}, options=options, run_metadata=metadata), [2.0, 5.0])
    writer.add_run_metadata(metadata, "step099", global_step=99)
    with pytest.raises(ValueError, match="already used"):
        writer.add_run_metadata(metadata, "step099")
    writer.close()
    with pytest.raises(RuntimeError):
        writer.add_run_metadata(metadata, "step100")


def test_timeline_chrome_trace_of_empty_and_given_step_stats():
    from tinyflow.python.client import timeline
    assert json.loads(timeline.Timeline(tf.RunMetadata().step_stats).generate_chrome_trace_format()) == \
        {"traceEvents": []}
    from types import SimpleNamespace as S
    stats = S(dev_stats=[S(device="/cpu:0", node_stats=[
        S(node_name="MatMul", all_start_micros=100, op_end_rel_micros=7, timeline_label="MatMul = MatMul(x, w)")])])
    events = json.loads(timeline.Timeline(stats).generate_chrome_trace_format())["traceEvents"]
    op = [e for e in events if e["ph"] == "X"]
    assert op == [{"name": "MatMul", "cat": "Op", "ph": "X", "pid": 0, "tid": 0, "ts": 100, "dur": 7,
                   "args": {"name": "MatMul", "op": "MatMul = MatMul(x, w)"}}]
    assert any(e["ph"] == "M" and e["args"] == {"name": "/cpu:0 Compute"} for e in events)


def test_mechanics_101_model_library_matches_numpy():
    from tinyflow.examples.tutorials.mnist import mnist
    assert (mnist.NUM_CLASSES, mnist.IMAGE_SIZE, mnist.IMAGE_PIXELS) == (10, 28, 784)
    rng = np.random.RandomState(0)
    images = rng.rand(6, 784).astype(np.float32)
    labels = np.array([0, 3, 9, 1, 3, 7], np.int32)
    images_pl, labels_pl = tf.placeholder(tf.float32, [6, 784]), tf.placeholder(tf.int32, [6])
    logits = mnist.inference(images_pl, 16, 8)
    loss = mnist.loss(logits, labels_pl)
    train_op = mnist.training(loss, 0.1)
    correct = mnist.evaluation(logits, labels_pl)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == sorted(["hidden1/weights", "hidden1/biases", "hidden2/weights", "hidden2/biases",
                            "softmax_linear/weights", "softmax_linear/biases", "global_step"])
    assert "global_step" not in [v.op.name for v in tf.trainable_variables()]
    feed = {images_pl: images, labels_pl: labels}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = {v.op.name: sess.run(v) for v in tf.trainable_variables()}
        assert w["hidden1/weights"].std() < 2.0 / math.sqrt(784) and not w["hidden1/biases"].any()
        got_logits, got_loss, got_correct = sess.run([logits, loss, correct], feed)
        h1 = np.maximum(images @ w["hidden1/weights"] + w["hidden1/biases"], 0)
        h2 = np.maximum(h1 @ w["hidden2/weights"] + w["hidden2/biases"], 0)
        ref = h2 @ w["softmax_linear/weights"] + w["softmax_linear/biases"]
        np.testing.assert_allclose(got_logits, ref, rtol=1e-4, atol=1e-5)
        shifted = ref - ref.max(1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        np.testing.assert_allclose(got_loss, -logp[np.arange(6), labels].mean(), rtol=1e-4)
        assert got_correct == (ref.argmax(1) == labels).sum()
        for _ in range(3):
            sess.run(train_op, feed)
        assert sess.run("global_step:0") == 3
        assert sess.run(loss, feed) < got_loss


def test_tinyflow_run_resolves_the_tutorial_imports(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent("""
        import tensorflow as tf
        from tensorflow.examples.tutorials.mnist import mnist
        from tensorflow.python.client import timeline
        from tensorflow.contrib import keras
        print(mnist.IMAGE_PIXELS, timeline.Timeline(None).generate_chrome_trace_format(), keras is tf.keras)
        try:
            from tensorflow.python.ops import rnn
        except ImportError as e:
            print("ImportError", "tensorflow.python.ops" in str(e))
    """))
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tinyflow_demo"), TINYFLOW_LIB=tf.LIB_PATH)
    out = subprocess.run([sys.executable, "-m", "tinyflow.run", str(program)], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ['784 {"traceEvents":[]} True', "ImportError True"]


def test_tinyflow_run_keeps_not_supported_errors_after_importing_a_contrib_submodule(tmp_path):
    # `from tensorflow.contrib import rnn` rebinds tf.contrib to the imported module: its missing names must
    # still raise NotSupportedYetError naming them, not a bare AttributeError.
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent("""
        import tensorflow as tf
        from tensorflow.contrib import rnn
        print(rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell, tf.contrib.keras is tf.keras)
        try:
            tf.contrib.learn
        except tf.NotSupportedYetError as e:
            print("NotSupportedYetError", "tf.contrib.learn" in str(e))
    """))
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tinyflow_demo"), TINYFLOW_LIB=tf.LIB_PATH)
    out = subprocess.run([sys.executable, "-m", "tinyflow.run", str(program)], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["True True", "NotSupportedYetError True"]


def _linear_model():
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable(tf.zeros([2, 1]), name="w")
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, w, step, loss, train_op


def test_supervisor_trains_checkpoints_and_restores(tmp_path):
    import time
    x, w, step, loss, train_op = _linear_model()
    tf.summary.scalar("w_sum", tf.reduce_sum(w))
    logdir = str(tmp_path)
    sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0.2, save_summaries_secs=0.2)
    assert sv.global_step is step and sv.save_path == os.path.join(logdir, "model.ckpt") and sv.is_chief
    feed = {x: np.array([[1.0, 2.0]], np.float32)}
    with sv.managed_session() as sess:
        for _ in range(5):
            sess.run(train_op, feed)
        time.sleep(0.5)  # the services save a checkpoint and write summaries meanwhile
        w_trained = sess.run(w)
    # NumPy reference of 5 gradient-descent steps: grad = 2 * (x.w - 1) * x
    ref = np.zeros((2, 1), np.float32)
    for _ in range(5):
        ref -= 0.1 * 2.0 * ((feed[x] @ ref - 1.0) * feed[x]).T
    np.testing.assert_allclose(w_trained, ref, rtol=1e-5)
    files = os.listdir(logdir)
    assert "checkpoint" in files and "model.ckpt-5.index" in files, files
    assert any(f.startswith("events.out.tfevents.") for f in files)
    assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-5")
    with tf.train.Supervisor(logdir=logdir, save_model_secs=0).managed_session() as sess:  # restores
        assert sess.run(step) == 5
        np.testing.assert_allclose(sess.run(w), ref, rtol=1e-5)
    sess = tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(checkpoint_dir=logdir))
    assert sess.run(step) == 5
    sess.close()


def test_supervisor_managed_session_errors_and_init_feed(tmp_path):
    x, w, step, loss, train_op = _linear_model()
    init_value = tf.placeholder(tf.float32, [2, 1])
    sv = tf.train.Supervisor(logdir=None, init_op=tf.group(tf.assign(w, init_value), tf.assign(step, 0)),
                             init_feed_dict={init_value: np.array([[3.0], [4.0]], np.float32)})
    with sv.managed_session() as sess:
        np.testing.assert_allclose(sess.run(w), [[3.0], [4.0]])
        raise tf.errors.OutOfRangeError(None, None, "end of data")  # a clean stop
    assert sv.should_stop()
    with pytest.raises(ValueError, match="boom"):
        with sv.managed_session() as sess:
            raise ValueError("boom")
    with sv.managed_session() as sess:  # a new session after an error: the error is not raised again
        np.testing.assert_allclose(sess.run(w), [[3.0], [4.0]])


def _sequence_ce(logits, targets):
    shifted = logits - logits.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, targets[..., None], -1)[..., 0]


@pytest.mark.parametrize("across_time,across_batch", [(True, True), (True, False), (False, True), (False, False)])
def test_contrib_seq2seq_sequence_loss_matches_numpy(across_time, across_batch):
    rng = np.random.RandomState(1)
    logits = rng.randn(4, 6, 7).astype(np.float32)
    targets = rng.randint(0, 7, (4, 6)).astype(np.int32)
    weights = (rng.rand(4, 6) > 0.3).astype(np.float32)
    ce = _sequence_ce(logits, targets) * weights
    if across_time and across_batch:
        ref = ce.sum() / (weights.sum() + 1e-12)
    elif across_time:
        ref = ce.sum(1) / (weights.sum(1) + 1e-12)
    elif across_batch:
        ref = ce.sum(0) / (weights.sum(0) + 1e-12)
    else:
        ref = ce
    lg = tf.placeholder(tf.float32, [None, 6, 7])
    loss = tf.contrib.seq2seq.sequence_loss(lg, tf.constant(targets), tf.constant(weights),
                                            average_across_timesteps=across_time, average_across_batch=across_batch)
    grad = tf.gradients(tf.reduce_sum(loss), lg)[0]
    with tf.Session() as sess:
        got, g = sess.run([loss, grad], {lg: logits})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    assert np.isfinite(g).all() and np.abs(g).sum() > 0


def test_contrib_seq2seq_sequence_loss_custom_loss_function_and_rank_errors():
    logits = np.zeros((2, 3, 4), np.float32)
    targets = np.zeros((2, 3), np.int32)
    weights = np.ones((2, 3), np.float32)
    calls = []

    def my_loss(labels, logits):
        calls.append((labels.shape.as_list(), logits.shape.as_list()))
        return tf.ones_like(tf.cast(labels, tf.float32)) * 2.0
    loss = tf.contrib.seq2seq.sequence_loss(logits, targets, weights, softmax_loss_function=my_loss)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(loss), 2.0, rtol=1e-6)
    assert calls and calls[0][0] == [6]
    with pytest.raises(ValueError, match="Logits must be"):
        tf.contrib.seq2seq.sequence_loss(np.zeros((2, 4), np.float32), targets, weights)
    with pytest.raises(tf.NotSupportedYetError):
        tf.contrib.seq2seq.sequence_loss(logits, targets, weights, average_across_timesteps=False,
                                         average_across_batch=False, sum_over_timesteps=True)


def test_device_lib_lists_the_cpu():
    from tinyflow.python.client import device_lib
    devices = device_lib.list_local_devices()
    assert [d.device_type for d in devices] == ["CPU"] and devices[0].name == "/device:CPU:0"
    assert [d.name for d in devices if d.device_type == "GPU"] == []


@pytest.mark.parametrize("name,fn", [("assert_equal", np.equal), ("assert_none_equal", np.not_equal),
                                     ("assert_less", np.less), ("assert_less_equal", np.less_equal),
                                     ("assert_greater", np.greater), ("assert_greater_equal", np.greater_equal)])
def test_binary_assertions_pass_or_fail_the_run_as_numpy_says(name, fn):
    x, y = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
    check = getattr(tf, name)(x, y, message="custom")
    assert getattr(tf.debugging, name) is getattr(tf, name)
    with tf.control_dependencies([check]):
        out = tf.identity(x)
    with tf.Session() as sess:
        for a, b in (([1.0, 2.0], [1.0, 2.0]), ([1.0, 2.0], [2.0, 3.0]), ([3.0, 2.0], [1.0, 2.0])):
            feed = {x: np.array(a, np.float32), y: np.array(b, np.float32)}
            if np.all(fn(np.array(a), np.array(b))):
                np.testing.assert_array_equal(sess.run(out, feed), a)
            else:
                with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed: custom"):
                    sess.run(out, feed)
    ok = np.all(fn(np.array([1, 2]), np.array([1, 3])))
    if ok:
        getattr(tf, name)(np.array([1, 2]), np.array([1, 3]))  # static values: checked at once
    else:
        with pytest.raises(tf.errors.InvalidArgumentError):
            getattr(tf, name)(np.array([1, 2]), np.array([1, 3]))


def test_sign_assertions_assert_op_rank_type_and_check_numerics():
    x = tf.placeholder(tf.float32, [None])
    checks = {"assert_positive": lambda v: (v > 0).all(), "assert_negative": lambda v: (v < 0).all(),
              "assert_non_negative": lambda v: (v >= 0).all(), "assert_non_positive": lambda v: (v <= 0).all()}
    ops = {k: getattr(tf, k)(x) for k in checks}
    cond = tf.placeholder(tf.bool, [])
    custom = tf.Assert(cond, ["value was", x], summarize=1)
    numerics = tf.check_numerics(x * 2.0, "doubled x")
    grad = tf.gradients(tf.reduce_sum(numerics), x)[0]
    with tf.Session() as sess:
        for values in ([1.0, 2.0], [-1.0, -2.0], [0.0, 1.0], [0.0, -1.0]):
            v = np.array(values, np.float32)
            for k, want in checks.items():
                if want(v):
                    sess.run(ops[k], {x: v})
                else:
                    with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
                        sess.run(ops[k], {x: v})
        sess.run(custom, {cond: True, x: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: value was \[1.0\.\.\.\]"):
            sess.run(custom, {cond: False, x: [1.0, 2.0]})
        np.testing.assert_allclose(sess.run([numerics, grad], {x: [1.0, 3.0]}), [[2.0, 6.0], [2.0, 2.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="doubled x : Tensor had NaN values"):
            sess.run(numerics, {x: [np.nan, 1.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had Inf values"):
            sess.run(numerics, {x: [np.inf, 1.0]})
        with pytest.raises(tf.errors.OpError) as info:  # other host-function failures stay plain OpErrors
            sess.run(tf.py_func(lambda v: v[5], [x], tf.float32), {x: [1.0]})
        assert not isinstance(info.value, tf.errors.InvalidArgumentError)
    tf.assert_rank(x, 1)
    with pytest.raises(ValueError, match="must have rank 2"):
        tf.assert_rank(x, 2)
    with pytest.raises(TypeError):
        tf.assert_type(x, tf.int32)
    tf.assert_type(x, tf.float32)
    with pytest.raises(TypeError):
        tf.assert_integer(x)


@pytest.mark.parametrize("peephole,clip", [(False, None), (True, 0.5)])
def test_contrib_rnn_lstm_block_cell_matches_numpy(peephole, clip):
    rng = np.random.RandomState(3)
    xs = rng.randn(3, 4, 5).astype(np.float32)  # [batch, time, depth]
    cell = tf.contrib.rnn.LSTMBlockCell(6, forget_bias=0.5, cell_clip=clip, use_peephole=peephole)
    state = cell.zero_state(3, tf.float32)
    outputs = []
    with tf.variable_scope("rnn"):
        for t in range(4):
            if t > 0:
                tf.get_variable_scope().reuse_variables()
            out, state = cell(tf.constant(xs[:, t]), state)
            outputs.append(out)
    names = sorted(v.op.name for v in tf.trainable_variables())
    assert names == sorted(["rnn/lstm_cell/kernel", "rnn/lstm_cell/bias"] +
                           (["rnn/lstm_cell/w_%s_diag" % g for g in "ifo"] if peephole else []))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, rng.randn(*v.shape.as_list()).astype(np.float32) * 0.5)
                  for v in tf.trainable_variables()])
        w = {v.op.name.split("/")[-1]: sess.run(v) for v in tf.trainable_variables()}
        got = sess.run(outputs)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    c, h = np.zeros((3, 6), np.float32), np.zeros((3, 6), np.float32)
    for t in range(4):
        i, j, f, o = np.split(np.concatenate([xs[:, t], h], 1) @ w["kernel"] + w["bias"], 4, axis=1)
        if peephole:
            i, f = i + w["w_i_diag"] * c, f + w["w_f_diag"] * c
        c = sig(f + 0.5) * c + sig(i) * np.tanh(j)
        if clip is not None:
            c = np.clip(c, -clip, clip)
        if peephole:
            o = o + w["w_o_diag"] * c
        h = sig(o) * np.tanh(c)
        np.testing.assert_allclose(got[t], h, rtol=1e-4, atol=1e-5)


def test_projector_config_written_as_protobuf_text(tmp_path):
    from tinyflow.projector import ProjectorConfig, visualize_embeddings
    assert tf.contrib.tensorboard.plugins.projector.ProjectorConfig is ProjectorConfig
    emb = tf.Variable(tf.zeros([4, 2]), name="emb")
    writer = tf.summary.FileWriter(str(tmp_path))
    config = ProjectorConfig()
    info = config.embeddings.add()
    info.tensor_name, info.metadata_path = emb.name, 'dir/meta "1".tsv'
    info.sprite.image_path = "sprite.png"
    info.sprite.single_image_dim.extend([28, 28])
    config.embeddings.add(tensor_name="other:0")
    visualize_embeddings(writer, config)
    with open(os.path.join(str(tmp_path), "projector_config.pbtxt")) as f:
        assert f.read() == ('embeddings {\n  tensor_name: "emb:0"\n  metadata_path: "dir/meta \\"1\\".tsv"\n'
                            '  sprite {\n    image_path: "sprite.png"\n    single_image_dim: 28\n'
                            '    single_image_dim: 28\n  }\n}\nembeddings {\n  tensor_name: "other:0"\n}\n')
    with pytest.raises(AttributeError):
        info.bogus = 1


def test_supervisor_without_logdir_restores_through_its_saver(tmp_path):
    x, w, step, loss, train_op = _linear_model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, [[5.0], [6.0]]))
        path = tf.train.Saver().save(sess, os.path.join(str(tmp_path), "model.ckpt"))
    sv = tf.train.Supervisor(summary_writer=None)  # the evaluation scripts' pattern
    assert sv.summary_writer is None and sv.save_path is None
    with sv.managed_session() as sess:
        np.testing.assert_allclose(sess.run(w), [[0.0], [0.0]])  # initialized
        sv.saver.restore(sess, path)
        np.testing.assert_allclose(sess.run(w), [[5.0], [6.0]])
    assert not any(f.startswith("events") for f in os.listdir(str(tmp_path)))
