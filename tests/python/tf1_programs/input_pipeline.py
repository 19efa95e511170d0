"""An input pipeline with tf.data over in-memory NumPy arrays, tf.app.flags, tf.logging, a
piecewise-constant learning rate and Momentum (TF 1.x style)."""
import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

flags = tf.app.flags
flags.DEFINE_integer("epochs", 3, "Epochs over the training set.")
flags.DEFINE_integer("batch_size", 100, "Batch size.")
flags.DEFINE_boolean("verbose", False, "Log every 50 steps.")
FLAGS = flags.FLAGS


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO if FLAGS.verbose else tf.logging.WARN)
    mnist = input_data.read_data_sets("/tmp/mnist", one_hot=False)
    features = mnist.train.images
    labels = mnist.train.labels.astype(np.int64)

    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    dataset = dataset.shuffle(buffer_size=1000, seed=0).batch(FLAGS.batch_size).repeat(FLAGS.epochs)
    iterator = dataset.make_one_shot_iterator()
    images, targets = iterator.get_next()

    hidden = tf.layers.dense(images, 128, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 10, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    lr = tf.train.piecewise_constant(global_step, [60, 90], [0.1, 0.05, 0.01])
    train_op = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, global_step=global_step)

    test_x = tf.placeholder(tf.float32, [None, 784])
    with tf.variable_scope("", reuse=True):
        test_hidden = tf.nn.relu(tf.matmul(test_x, tf.get_variable("hidden/kernel")) + tf.get_variable("hidden/bias"))
        test_logits = tf.matmul(test_hidden, tf.get_variable("logits/kernel")) + tf.get_variable("logits/bias")

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        steps = 0
        while True:
            try:
                _, l, step = sess.run([train_op, loss, global_step])
            except tf.errors.OutOfRangeError:
                break
            steps += 1
            if step % 50 == 0:
                tf.logging.info("step %d loss %.4f lr %.3f", step, l, sess.run(lr))
        predicted = sess.run(test_logits, {test_x: mnist.test.images}).argmax(1)
        print("examples %d" % mnist.train.num_examples)
        print("steps %d" % steps)
        print("accuracy %.4f" % (predicted == mnist.test.labels).mean())


if __name__ == "__main__":
    tf.app.run()
