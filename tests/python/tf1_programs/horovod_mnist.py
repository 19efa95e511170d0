"""Data-parallel MNIST with Horovod's TensorFlow 1.x API, in the shape of Horovod's own TF1 MNIST example
(examples/tensorflow/tensorflow_mnist.py of Horovod 0.19-0.21): keras.datasets.mnist per rank, a two-conv
tf.layers model, hvd.DistributedOptimizer around Adam with the learning rate scaled by hvd.size(),
hvd.BroadcastGlobalVariablesHook(0), StopAtStepHook(last_step=steps // hvd.size()), LoggingTensorHook and
MonitoredTrainingSession checkpointing on rank 0 only.

    mpirun -np 2 python3 -m tinyflow.run horovod_mnist.py [--steps 20000] [--batch-size 100]
"""
import argparse
import errno
import os

import numpy as np
import tensorflow as tf
import horovod.tensorflow as hvd
from tensorflow import keras

layers = tf.layers

tf.logging.set_verbosity(tf.logging.INFO)

parser = argparse.ArgumentParser(description="Tensorflow MNIST Example")
parser.add_argument("--steps", type=int, default=20000, help="training steps over all ranks (default: 20000)")
parser.add_argument("--batch-size", type=int, default=100, help="batch size of each rank (default: 100)")
args = parser.parse_args()


def conv_model(feature, target, mode):
    """Two conv layers (32 and 64 5x5 filters, each max-pooled), a 1024-unit dense layer with dropout, logits."""
    target = tf.one_hot(tf.cast(target, tf.int32), 10, 1, 0)
    feature = tf.reshape(feature, [-1, 28, 28, 1])

    with tf.variable_scope("conv_layer1"):
        h_conv1 = layers.conv2d(feature, 32, kernel_size=[5, 5], activation=tf.nn.relu, padding="SAME")
        h_pool1 = tf.nn.max_pool(h_conv1, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    with tf.variable_scope("conv_layer2"):
        h_conv2 = layers.conv2d(h_pool1, 64, kernel_size=[5, 5], activation=tf.nn.relu, padding="SAME")
        h_pool2 = tf.nn.max_pool(h_conv2, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        h_pool2_flat = tf.reshape(h_pool2, [-1, 7 * 7 * 64])

    h_fc1 = layers.dropout(layers.dense(h_pool2_flat, 1024, activation=tf.nn.relu), rate=0.5,
                           training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = layers.dense(h_fc1, 10, activation=None)
    loss = tf.losses.softmax_cross_entropy(target, logits)
    return tf.argmax(logits, 1), loss


def train_input_generator(x_train, y_train, batch_size=64):
    """Endless shuffled batches (every rank shuffles with its own numpy state: its own data order)."""
    assert len(x_train) == len(y_train)
    while True:
        order = np.random.permutation(len(x_train))
        x_train, y_train = x_train[order], y_train[order]
        for start in range(0, len(x_train) - batch_size + 1, batch_size):
            yield x_train[start:start + batch_size], y_train[start:start + batch_size]


def main(_):
    hvd.init()

    # Several ranks on one file system may race to create the dataset cache directory.
    cache_dir = os.path.join(os.path.expanduser("~"), ".keras", "datasets")
    if not os.path.exists(cache_dir):
        try:
            os.makedirs(cache_dir)
        except OSError as e:
            if not (e.errno == errno.EEXIST and os.path.isdir(cache_dir)):
                raise

    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data("MNIST-data-%d" % hvd.rank())
    x_train = np.reshape(x_train, (-1, 784)) / 255.0
    x_test = np.reshape(x_test, (-1, 784)) / 255.0

    with tf.name_scope("input"):
        image = tf.placeholder(tf.float32, [None, 784], name="image")
        label = tf.placeholder(tf.float32, [None], name="label")
    predict, loss = conv_model(image, label, tf.estimator.ModeKeys.TRAIN)

    # The effective batch is size() times larger: scale the learning rate with it.
    opt = tf.train.AdamOptimizer(0.001 * hvd.size())
    opt = hvd.DistributedOptimizer(opt)

    global_step = tf.train.get_or_create_global_step()
    train_op = opt.minimize(loss, global_step=global_step)

    hooks = [
        # Every rank starts from rank 0's initial (or restored) variables.
        hvd.BroadcastGlobalVariablesHook(0),
        # Each step trains on size() batches at once: fewer steps per rank.
        tf.train.StopAtStepHook(last_step=args.steps // hvd.size()),
        tf.train.LoggingTensorHook(tensors={"step": global_step, "loss": loss}, every_n_iter=10),
    ]

    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = str(hvd.local_rank())

    # Only rank 0 writes checkpoints, so ranks do not overwrite each other's.
    checkpoint_dir = "./checkpoints" if hvd.rank() == 0 else None
    batches = train_input_generator(x_train, y_train, batch_size=args.batch_size)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks, config=config) as mon_sess:
        while not mon_sess.should_stop():
            image_, label_ = next(batches)
            mon_sess.run(train_op, feed_dict={image: image_, label: label_})


if __name__ == "__main__":
    tf.app.run()
