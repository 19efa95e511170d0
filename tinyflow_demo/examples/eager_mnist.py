"""MNIST with an MLP in TF 1.x eager style: tf.Variable, tf.nn, Adam's minimize(loss_fn).

The bundled digits (scripts/fetch_mnist.py: 8,000 training, 2,000 test) are read in batches of
100; each step's forward pass, gradients and Adam update run as one fused trace.

    PYTHONPATH=tinyflow_demo python3 tinyflow_demo/examples/eager_mnist.py [steps]
"""
import sys
import time

import numpy as np

import tinyflow as tf
from tinyflow.datasets import mnist

tf.enable_eager_execution()


class MLP(object):
    def __init__(self, hidden=128):
        init = tf.glorot_uniform_initializer(seed=1)
        self.w1 = tf.Variable(init([784, hidden]), name="w1")
        self.b1 = tf.Variable(tf.zeros([hidden]), name="b1")
        self.w2 = tf.Variable(init([hidden, 10]), name="w2")
        self.b2 = tf.Variable(tf.zeros([10]), name="b2")

    def __call__(self, images):
        x = tf.reshape(images, [-1, 784])
        return tf.matmul(tf.nn.relu(tf.matmul(x, self.w1) + self.b1), self.w2) + self.b2


def accuracy(model, images, labels):
    predictions = tf.cast(tf.argmax(model(images), 1), tf.int32)
    return float(tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32)))


def _batches(dataset, steps, rng):
    """`steps` shuffled batches of 100, over as many epochs as that takes."""
    while True:
        for batch in dataset.batches(100, rng):
            if steps == 0:
                return
            steps -= 1
            yield batch


def main(steps=300):
    data = mnist.load()
    model = MLP()
    optimizer = tf.train.AdamOptimizer(0.001)
    rng = np.random.RandomState(0)
    start = time.time()
    for step, (images, labels) in enumerate(_batches(data.train, steps, rng)):
        loss = lambda: tf.reduce_mean(  # noqa: E731 (TF's eager idiom: a loss function)
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=model(images)))
        optimizer.minimize(loss)
        if step % 100 == 0:
            print("step %3d  batch accuracy %.3f" % (step, accuracy(model, images, labels)))
    elapsed = time.time() - start
    print("test accuracy %.4f after %d steps (%.2f ms/step)" % (
        accuracy(model, data.test.images, data.test.labels), steps, 1000 * elapsed / steps))
    print("stats:", tf.eager_stats())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
