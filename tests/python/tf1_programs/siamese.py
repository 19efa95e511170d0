"""A siamese network: two towers share their weights through tf.variable_scope(reuse=True), trained
with a contrastive loss on MNIST pairs (TF 1.x)."""
import sys

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data


def fc_layer(x, n_out, name):
    n_in = x.get_shape()[1]
    W = tf.get_variable(name + "_W", dtype=tf.float32, shape=[n_in, n_out],
                        initializer=tf.truncated_normal_initializer(stddev=0.01))
    b = tf.get_variable(name + "_b", dtype=tf.float32, initializer=tf.constant(0.01, shape=[n_out],
                                                                                dtype=tf.float32))
    return tf.nn.bias_add(tf.matmul(x, W), b)


def network(x):
    fc1 = tf.nn.relu(fc_layer(x, 256, "fc1"))
    fc2 = tf.nn.relu(fc_layer(fc1, 128, "fc2"))
    return fc_layer(fc2, 2, "fc3")


class Siamese:
    def __init__(self):
        self.x1 = tf.placeholder(tf.float32, [None, 784])
        self.x2 = tf.placeholder(tf.float32, [None, 784])
        with tf.variable_scope("siamese") as scope:
            self.o1 = network(self.x1)
            scope.reuse_variables()
            self.o2 = network(self.x2)
        self.y_ = tf.placeholder(tf.float32, [None])
        self.loss = self.loss_with_spring()

    def loss_with_spring(self):
        margin = 5.0
        labels_t = self.y_
        labels_f = tf.subtract(1.0, self.y_, name="1-yi")  # labels_ = !labels;
        eucd2 = tf.pow(tf.subtract(self.o1, self.o2), 2)
        eucd2 = tf.reduce_sum(eucd2, 1)
        eucd = tf.sqrt(eucd2 + 1e-6, name="eucd")
        C = tf.constant(margin, name="C")
        pos = tf.multiply(labels_t, eucd2, name="yi_x_eucd2")
        neg = tf.multiply(labels_f, tf.pow(tf.maximum(tf.subtract(C, eucd), 0), 2), name="Nyi_x_C-eucd_xx_2")
        losses = tf.add(pos, neg, name="losses")
        return tf.reduce_mean(losses, name="loss")


steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
mnist = input_data.read_data_sets('MNIST_data', one_hot=False)
siamese = Siamese()
train_step = tf.train.GradientDescentOptimizer(0.01).minimize(siamese.loss)
with tf.variable_scope("siamese", reuse=True):
    shared = tf.get_variable("fc1_W")  # the towers' one weight, fetched back by name

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(steps):
        batch_x1, batch_y1 = mnist.train.next_batch(128)
        batch_x2, batch_y2 = mnist.train.next_batch(128)
        batch_y = (batch_y1 == batch_y2).astype('float')
        _, loss_v = sess.run([train_step, siamese.loss], feed_dict={
            siamese.x1: batch_x1, siamese.x2: batch_x2, siamese.y_: batch_y})
        if np.isnan(loss_v):
            print('Model diverged with loss = NaN')
            sys.exit(1)
        if step % 100 == 0:
            print('step %d: loss %.3f' % (step, loss_v))
    embed = siamese.o1.eval({siamese.x1: mnist.test.images})
    labels = mnist.test.labels
    centers = np.stack([embed[labels == k].mean(0) for k in range(10)])
    nearest = np.argmin(((embed[:, None, :] - centers[None]) ** 2).sum(-1), axis=1)
    print("variables %d" % len(tf.trainable_variables()))
    print("shared %s" % shared.name)
    print("nearest-center accuracy %.4f" % (nearest == labels).mean())
