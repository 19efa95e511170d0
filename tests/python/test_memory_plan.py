"""Memory plans of training graphs: fused plans need no more than unfused ones and stay near the
max-live lower bound (stats()["memory_lower_bound_bytes"])."""
import os
import sys

import numpy as np
import pytest

import tinyflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "tinyflow_demo"))
import train as demo  # noqa: E402


def _plan(model, optimizer, fusion):
    tf.reset_default_graph()
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [None])
    logits = demo.MODELS[model](images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = demo.make_optimizer(optimizer, demo.DEFAULT_LR[optimizer]).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(16, 28, 28, 1).astype(np.float32), labels: rng.randint(0, 10, 16).astype(np.int32)}
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        stats = sess.stats()
    return stats["bytes_allocated"], stats["memory_lower_bound_bytes"]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("model", ["softmax", "mlp", "lenet"])
def test_fused_plan_needs_no_more_than_unfused(model, optimizer):
    fused, fused_bound = _plan(model, optimizer, True)
    unfused, unfused_bound = _plan(model, optimizer, False)
    assert 0 < fused_bound <= fused and 0 < unfused_bound <= unfused
    assert fused <= unfused


# LeNet's plan (fused or not) is 1.1-1.4x its lower bound: the pool's slots are whole buffers,
# and a slot sized for a large activation sits half used where an arena with offsets would
# pack two smaller values. Strict xfail, so fixing it is noticed.
_LENET = pytest.mark.xfail(strict=True, reason="slot pool fragments LeNet's plan (needs offset planning)")


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("model", ["softmax", "mlp", pytest.param("lenet", marks=_LENET)])
def test_fused_plan_is_near_the_lower_bound(model, optimizer):
    fused, fused_bound = _plan(model, optimizer, True)
    assert fused <= 1.1 * fused_bound
