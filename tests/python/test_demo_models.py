"""The demo trainer's model table (tinyflow_demo/train.py MODELS): each model trains one step,
fused equal to unfused (Deep-MNIST includes dropout with a Python keep_prob)."""
import numpy as np
import pytest

import tinyflow as tf
import train as demo


def losses(model, fusion, steps=2, batch=8):
    tf.reset_default_graph()
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [None])
    logits = demo.MODELS[model](images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(batch, 28, 28, 1).astype(np.float32), labels: rng.randint(0, 10, batch).astype(np.int32)}
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        return [float(sess.run([train, loss], feed)[1]) for _ in range(steps)]


@pytest.mark.parametrize("model", ["deep_mnist"])
def test_model_trains_and_fusion_matches(model):
    fused, unfused = losses(model, True), losses(model, False)
    assert np.all(np.isfinite(fused))
    np.testing.assert_allclose(fused, unfused, rtol=1e-4)
    assert fused[1] != fused[0]  # the step updated the variables
