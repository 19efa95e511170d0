"""tf.train.MonitoredTrainingSession and hooks: stop at a step, hook fetches merged into the run,
logging, checkpoints saved and restored on restart, summaries, tf.data exhaustion ends the loop."""
import os

import numpy as np
import pytest

import tinyflow as tf


def linear_model():
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(tf.zeros([2, 1]), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, y, w, loss, step, train


DATA_X = np.random.RandomState(0).rand(16, 2).astype(np.float32)
DATA_Y = DATA_X.dot(np.array([[2.0], [-1.0]], np.float32))


def test_stop_at_step_and_hook_values(tmp_path):
    x, y, w, loss, step, train = linear_model()
    seen = []

    class Recorder(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"loss": loss, "step": step})

        def after_run(self, run_context, run_values):
            seen.append((run_values.results["step"], run_values.results["loss"]))

    hooks = [tf.train.StopAtStepHook(last_step=25), Recorder(),
             tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=10)]
    runs = 0
    with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
        while not sess.should_stop():
            out = sess.run(train, {x: DATA_X, y: DATA_Y})
            assert out is None
            runs += 1
    assert runs == 25
    steps = [s for s, _ in seen]  # the hook saw each run's step (read before or after that run's update)
    assert steps[0] in (0, 1) and steps == list(range(steps[0], steps[0] + 25))
    assert seen[-1][1] < seen[0][1]


def test_checkpoints_are_saved_and_restored_on_restart(tmp_path):
    ckpt = str(tmp_path)
    x, y, w, loss, step, train = linear_model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=5, save_summaries_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=12)]) as sess:
        while not sess.should_stop():
            sess.run(train, {x: DATA_X, y: DATA_Y})
        w_end = sess.run(w)
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-12")
    tf.reset_default_graph()
    x, y, w, loss, step, train = linear_model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=100,
                                           hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
        assert sess.run(step) == 12  # restored, not re-initialized
        np.testing.assert_allclose(sess.run(w), w_end)
        n = 0
        while not sess.should_stop():
            sess.run(train, {x: DATA_X, y: DATA_Y})
            n += 1
    assert n == 3


def test_summaries_and_out_of_range_end_the_loop(tmp_path):
    data = tf.data.Dataset.from_tensor_slices((DATA_X, DATA_Y)).batch(4).repeat(2)
    bx, by = data.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([2, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(bx, w) - by))
    tf.summary.scalar("loss", loss)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    runs = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2) as sess:
        while not sess.should_stop():
            sess.run(train)
            runs += 1
    assert runs == 8  # 16 rows / 4 per batch, twice
    assert any(f.startswith("events.out.tfevents.") for f in os.listdir(str(tmp_path)))


def test_nan_hook_and_feed_conflict():
    x, y, w, loss, step, train = linear_model()
    bad = tf.log(tf.constant(-1.0))
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        with tf.train.MonitoredTrainingSession(hooks=[tf.train.NanTensorHook(bad)]) as sess:
            sess.run(train, {x: DATA_X, y: DATA_Y})

    class Feeder(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, feed_dict={x: DATA_X})

    with tf.train.MonitoredTrainingSession(hooks=[Feeder()]) as sess:
        sess.run(train, {y: DATA_Y})  # x comes from the hook
        with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
            sess.run(train, {x: DATA_X, y: DATA_Y})


def test_coordinator_and_queue_runners():
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        assert tf.train.start_queue_runners(sess, coord=coord) == []  # no queue runners in the graph
    assert not coord.should_stop()
    coord.request_stop()
    assert coord.should_stop()
    coord.join([])
