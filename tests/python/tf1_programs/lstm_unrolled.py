"""An LSTM unrolled by hand (the pre-tf.nn.rnn way: weights for the four gates in one matmul,
tf.split into gates, a Python loop over time steps), trained on a memory task with
compute_gradients / clip_by_global_norm / apply_gradients and an exponentially decaying rate."""
import sys

import numpy as np
import tensorflow as tf

num_steps = 10
batch_size = 32
num_hidden = 32
training_steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3000


def make_batch(rng):
    # Remember the value shown at the first step, ignore the noise that follows.
    x = rng.uniform(-1, 1, size=(batch_size, num_steps, 1)).astype(np.float32)
    y = x[:, 0, :] * 0.5 + 0.25 * x[:, 1, :]
    return x, y


inputs = tf.placeholder(tf.float32, [batch_size, num_steps, 1], name="inputs")
targets = tf.placeholder(tf.float32, [batch_size, 1], name="targets")

with tf.variable_scope("lstm"):
    W = tf.get_variable("W", [1 + num_hidden, 4 * num_hidden],
                        initializer=tf.random_uniform_initializer(-0.1, 0.1))
    b = tf.get_variable("b", [4 * num_hidden], initializer=tf.zeros_initializer())
with tf.variable_scope("output"):
    W_out = tf.get_variable("W", [num_hidden, 1], initializer=tf.truncated_normal_initializer(stddev=0.1))
    b_out = tf.get_variable("b", [1], initializer=tf.constant_initializer(0.0))

c = tf.zeros([batch_size, num_hidden])
h = tf.zeros([batch_size, num_hidden])
for t, x_t in enumerate(tf.unstack(inputs, axis=1)):
    gates = tf.matmul(tf.concat([x_t, h], 1), W) + b
    i, j, f, o = tf.split(gates, 4, axis=1)
    c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
    h = tf.sigmoid(o) * tf.tanh(c)

prediction = tf.matmul(h, W_out) + b_out
loss = tf.reduce_mean(tf.square(prediction - targets))

global_step = tf.Variable(0, trainable=False, name="global_step")
learning_rate = tf.train.exponential_decay(0.01, global_step, 1000, 0.5, staircase=True)
optimizer = tf.train.AdamOptimizer(learning_rate)
grads_and_vars = optimizer.compute_gradients(loss)
grads, variables = zip(*grads_and_vars)
clipped, global_norm = tf.clip_by_global_norm(grads, 5.0)
train_op = optimizer.apply_gradients(zip(clipped, variables), global_step=global_step)

rng = np.random.RandomState(0)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    first = None
    for step in range(training_steps):
        x, y = make_batch(rng)
        _, l, norm = sess.run([train_op, loss, global_norm], {inputs: x, targets: y})
        first = l if first is None else first
        if step % 200 == 0:
            print("step %d loss %.5f grad-norm %.3f lr %.5f" % (step, l, norm, sess.run(learning_rate)))
    x, y = make_batch(rng)
    print("first loss %.5f" % first)
    print("final loss %.5f" % sess.run(loss, {inputs: x, targets: y}))
    print("global step %d" % sess.run(global_step))
