"""Epilogue fusion on the demo trainer's MLP and LeNet training steps: the bias adds and relus of
every layer join their matmul/conv2d, the relu gradient joins the matmul gradient before it;
kernel counts per step drop (pinned here) and the numbers stay those of the unfused step."""
import os
import sys

import numpy as np
import pytest

import tinyflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
import train as demo  # noqa: E402  (the demo trainer's models)

# model: (epilogue groups, kernels per step with SGD, with Adam); measured before epilogue fusion
# at this batch: MLP 27 / 28, LeNet 47 / 48 (the loss's mean and its scalar epilogue are one row kernel).
# Per model: epilogue groups, kernels per SGD and per Adam step, with the default rewrite rules
# (before the rules: 5/41/42 and 3/23/24; Simplify merges equal subexpressions, drops
# collapse_sum_like to the same shape, turns matmul + bias into bias_add and the mean's head
# gradient into one divide_scalar). Adam's two more than before issue 31: TF's beta1_power / beta2_power
# updates (two scalar kernels after lr_t reads the powers; the step count they replaced fused into lr_t's).
EXPECTED = {"mlp": (2, 16, 19), "lenet": (4, 33, 36)}


@pytest.mark.parametrize("model", sorted(EXPECTED))
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_step_epilogues(model, optimizer):
    rng = np.random.RandomState(3)
    xs, ys = rng.rand(16, 28, 28, 1).astype(np.float32), rng.randint(0, 10, 16).astype(np.int32)
    results = []
    for fusion in (False, True):
        tf.reset_default_graph()
        tf.set_random_seed(0)
        images = tf.placeholder(tf.float32, [None, 28, 28, 1])
        labels = tf.placeholder(tf.int32, [None])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                           logits=demo.MODELS[model](images)))
        train = demo.make_optimizer(optimizer, 0.05).minimize(loss)
        with tf.Session(fusion=fusion, seed=1) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss], {images: xs, labels: ys})[1] for _ in range(3)]
            groups = sess.last_graph().attr("fusion_groups") if fusion else []
            kernels = sess.stats()["kernels_launched"]
            results.append((losses, sess.run(tf.trainable_variables()), kernels, groups))
    (unfused, w_unfused, _, _), (fused, w_fused, kernels, groups) = results
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-5)
    for a, b in zip(w_fused, w_unfused):
        # Adam divides by sqrt(v): a gradient near 0 rounded differently moves a weight by ~lr * 1e-3.
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    epilogues, sgd_kernels, adam_kernels = EXPECTED[model]
    assert sum(g["kind"] == "epilogue" for g in groups) == epilogues
    assert kernels == (sgd_kernels if optimizer == "sgd" else adam_kernels)
