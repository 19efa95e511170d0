"""Batch normalization written by hand (tf.nn.moments, tf.train.ExponentialMovingAverage, tf.cond on
an is_training placeholder), the way TF1 code did it before tf.layers.batch_normalization."""
import sys

import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data


def batch_norm(x, n_out, phase_train, scope='bn'):
    with tf.variable_scope(scope):
        beta = tf.Variable(tf.constant(0.0, shape=[n_out]), name='beta', trainable=True)
        gamma = tf.Variable(tf.constant(1.0, shape=[n_out]), name='gamma', trainable=True)
        batch_mean, batch_var = tf.nn.moments(x, [0], name='moments')
        ema = tf.train.ExponentialMovingAverage(decay=0.9)

        def mean_var_with_update():
            ema_apply_op = ema.apply([batch_mean, batch_var])
            with tf.control_dependencies([ema_apply_op]):
                return tf.identity(batch_mean), tf.identity(batch_var)

        mean, var = tf.cond(phase_train, mean_var_with_update,
                            lambda: (ema.average(batch_mean), ema.average(batch_var)))
        normed = tf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-3)
    return normed


steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
mnist = input_data.read_data_sets('MNIST_data', one_hot=True)
x = tf.placeholder(tf.float32, [None, 784])
y_ = tf.placeholder(tf.float32, [None, 10])
phase_train = tf.placeholder(tf.bool, name='phase_train')

w1 = tf.Variable(tf.truncated_normal([784, 100], stddev=0.1))
z1 = tf.matmul(x, w1)
h1 = tf.nn.relu(batch_norm(z1, 100, phase_train, scope='bn1'))
w2 = tf.Variable(tf.truncated_normal([100, 100], stddev=0.1))
h2 = tf.nn.relu(batch_norm(tf.matmul(h1, w2), 100, phase_train, scope='bn2'))
w3 = tf.Variable(tf.truncated_normal([100, 10], stddev=0.1))
b3 = tf.Variable(tf.zeros([10]))
y = tf.matmul(h2, w3) + b3

cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
train_step = tf.train.GradientDescentOptimizer(0.1).minimize(cross_entropy)
correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(steps):
        batch = mnist.train.next_batch(60)
        sess.run(train_step, feed_dict={x: batch[0], y_: batch[1], phase_train: True})
        if i % 100 == 0:
            print('step %d, loss %.4f' % (i, sess.run(cross_entropy, {x: batch[0], y_: batch[1],
                                                                       phase_train: False})))
    # Inference uses the moving averages: one example at a time gives the same answers as the batch.
    acc = sess.run(accuracy, {x: mnist.test.images, y_: mnist.test.labels, phase_train: False})
    single = sess.run(y, {x: mnist.test.images[:1], phase_train: False})
    batch = sess.run(y, {x: mnist.test.images[:10], phase_train: False})
    print('test accuracy %.4f' % acc)
    print('single-vs-batch max difference %.6f' % abs(single[0] - batch[0]).max())
