"""Queue-based input in the style of TensorFlow 1.x's "Threading and Queues" / "Reading data" guides
(fully_connected_reader.py): slice_input_producer over in-memory arrays, tf.train.shuffle_batch with several
threads, a Coordinator and start_queue_runners, training until OutOfRangeError ends the epochs."""
import time

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

flags = tf.app.flags
flags.DEFINE_integer("num_epochs", 2, "Number of epochs to run trainer.")
flags.DEFINE_integer("batch_size", 100, "Batch size.")
flags.DEFINE_float("learning_rate", 0.5, "Initial learning rate.")
flags.DEFINE_string("data_dir", "/tmp/mnist_data", "MNIST directory.")
FLAGS = flags.FLAGS


def inputs(images, labels, batch_size, num_epochs):
    """Reads input data num_epochs times through a queue."""
    with tf.name_scope("input"):
        image, label = tf.train.slice_input_producer([images, labels], num_epochs=num_epochs, shuffle=True)
        image = tf.cast(image, tf.float32) * (1.0 / 255) - 0.5 if image.dtype == tf.uint8 else image
        # Shuffle the examples and collect them into batch_size batches (uses a RandomShuffleQueue).
        images_batch, sparse_labels = tf.train.shuffle_batch(
            [image, label], batch_size=batch_size, num_threads=2, capacity=1000 + 3 * batch_size,
            min_after_dequeue=1000)
        return images_batch, sparse_labels


def run_training():
    mnist = input_data.read_data_sets(FLAGS.data_dir)
    with tf.Graph().as_default():
        images, labels = inputs(mnist.train.images, mnist.train.labels.astype(np.int32), FLAGS.batch_size,
                                FLAGS.num_epochs)
        weights = tf.Variable(tf.zeros([784, 10]), name="weights")
        biases = tf.Variable(tf.zeros([10]), name="biases")
        logits = tf.matmul(images, weights) + biases
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
        test_x = tf.placeholder(tf.float32, [None, 784])
        test_pred = tf.argmax(tf.matmul(test_x, weights) + biases, 1)

        init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
        sess = tf.Session()
        sess.run(init_op)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            step = 0
            while not coord.should_stop():
                start_time = time.time()
                _, loss_value = sess.run([train_op, loss])
                duration = time.time() - start_time
                if step % 100 == 0:
                    print("Step %d: loss = %.2f (%.3f sec)" % (step, loss_value, duration))
                step += 1
        except tf.errors.OutOfRangeError:
            print("Done training for %d epochs, %d steps." % (FLAGS.num_epochs, step))
        finally:
            coord.request_stop()
        coord.join(threads)
        predicted = sess.run(test_pred, {test_x: mnist.test.images})
        print("test accuracy %.4f" % np.mean(predicted == mnist.test.labels))
        print("train examples %d" % mnist.train.num_examples)
        print("threads alive %d" % sum(t.is_alive() for t in threads))
        sess.close()


def main(_):
    run_training()


if __name__ == "__main__":
    tf.app.run()
