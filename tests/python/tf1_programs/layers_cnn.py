"""A small CNN written with tf.layers, tf.losses and tf.metrics (TensorFlow 1.x style), trained
with Adam and a global step, evaluated with streaming accuracy."""
import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

tf.app.flags.DEFINE_integer("train_steps", 1000, "Number of training steps.")
tf.app.flags.DEFINE_integer("batch_size", 64, "Batch size.")
tf.app.flags.DEFINE_float("learning_rate", 1e-3, "Adam learning rate.")
tf.app.flags.DEFINE_string("data_dir", "/tmp/mnist_data", "MNIST directory.")
FLAGS = tf.app.flags.FLAGS


def cnn_model(images, is_training):
    input_layer = tf.reshape(images, [-1, 28, 28, 1])
    conv1 = tf.layers.conv2d(inputs=input_layer, filters=16, kernel_size=[5, 5], padding="same",
                             activation=tf.nn.relu)
    pool1 = tf.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)
    conv2 = tf.layers.conv2d(inputs=pool1, filters=32, kernel_size=[5, 5], padding="same", activation=tf.nn.relu)
    pool2 = tf.layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)
    pool2_flat = tf.layers.flatten(pool2)
    dense = tf.layers.dense(inputs=pool2_flat, units=256, activation=tf.nn.relu)
    dropout = tf.layers.dropout(inputs=dense, rate=0.4, training=is_training)
    return tf.layers.dense(inputs=dropout, units=10)


def main(unused_argv):
    tf.logging.set_verbosity(tf.logging.INFO)
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=False)
    images = tf.placeholder(tf.float32, [None, 784], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    is_training = tf.placeholder_with_default(False, shape=[], name="is_training")

    logits = cnn_model(images, is_training)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(loss, global_step=global_step)
    predictions = tf.argmax(logits, axis=1)
    accuracy, update_accuracy = tf.metrics.accuracy(labels=labels, predictions=predictions)

    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for _ in range(FLAGS.train_steps):
            xs, ys = mnist.train.next_batch(FLAGS.batch_size)
            _, step, loss_value = sess.run([train_op, global_step, loss],
                                           feed_dict={images: xs, labels: ys, is_training: True})
            if step % 100 == 0:
                tf.logging.info("step %d, loss = %.4f", step, loss_value)
        for start in range(0, mnist.test.num_examples, 500):
            sess.run(update_accuracy, feed_dict={images: mnist.test.images[start:start + 500],
                                                 labels: mnist.test.labels[start:start + 500]})
        print("global_step %d" % sess.run(global_step))
        print("accuracy %.4f" % sess.run(accuracy))
        print("variables %s" % " ".join(sorted(v.op.name for v in tf.trainable_variables())))


if __name__ == "__main__":
    tf.app.run()
