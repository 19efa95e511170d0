"""Saving and restoring with tf.train.Saver (TF 1.x): train a model, checkpoint it every few steps
with a global step suffix and max_to_keep, then build the graph again in a new process-like fresh
graph, restore the latest checkpoint and check the predictions are the same."""
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf

ckpt_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
if os.path.exists(ckpt_dir):
    shutil.rmtree(ckpt_dir)
os.makedirs(ckpt_dir)
rng = np.random.RandomState(1)
x_data = rng.rand(256, 3).astype(np.float32)
y_data = x_data.dot(np.array([[1.0], [-2.0], [0.5]], np.float32)) + 0.3


def build():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("linear"):
        w = tf.get_variable("weights", [3, 1], initializer=tf.random_normal_initializer(stddev=0.1))
        b = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(pred - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
    return x, y, pred, loss, train, step


with tf.Graph().as_default():
    x, y, pred, loss, train, step = build()
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(300):
            sess.run(train, {x: x_data, y: y_data})
            if (i + 1) % 100 == 0:
                path = saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=step)
                print("saved %s" % os.path.basename(path))
        expected = sess.run(pred, {x: x_data[:5]})
        print("loss %.6f" % sess.run(loss, {x: x_data, y: y_data}))

print("latest %s" % os.path.basename(tf.train.latest_checkpoint(ckpt_dir)))
state = tf.train.get_checkpoint_state(ckpt_dir)
print("kept %s" % " ".join(os.path.basename(p) for p in state.all_model_checkpoint_paths))
print("index files %d" % len([f for f in os.listdir(ckpt_dir) if f.endswith(".index")]))

with tf.Graph().as_default():
    x, y, pred, loss, train, step = build()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(ckpt_dir))
        got = sess.run(pred, {x: x_data[:5]})
        print("restored step %d" % sess.run(step))
        print("max difference %.8f" % np.abs(got - expected).max())
        reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(ckpt_dir))
        print("keys %s" % " ".join(sorted(reader.get_variable_to_shape_map())))
