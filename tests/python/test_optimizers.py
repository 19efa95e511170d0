"""Each optimizer's update (graph ops, fused or not) against a NumPy reference over a few steps."""
import numpy as np
import pytest

import tinyflow as tf

X = np.random.RandomState(2).randn(8, 3).astype(np.float32)
W0 = np.random.RandomState(3).randn(3, 2).astype(np.float32)
B0 = np.array([0.5, -0.5], np.float32)


def loss_and_grads(w, b):
    """loss = mean((X w + b)^2) and its gradients, in float64."""
    y = X.astype(np.float64) @ w + b
    dy = 2 * y / y.size
    return (y ** 2).mean(), X.T @ dy, dy.sum(0)


def sgd(lr):
    def step(p, g, s, t):
        return p - lr * g
    return step


def momentum(lr, mu):
    def step(p, g, s, t):
        s["a"] = mu * s.get("a", 0) + g
        return p - lr * s["a"]
    return step


def adam(lr, b1=0.9, b2=0.999, eps=1e-8):
    def step(p, g, s, t):
        s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return p - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
    return step


OPTIMIZERS = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(0.1), sgd(0.1)),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), momentum(0.1, 0.9)),
    "adam": (lambda: tf.train.AdamOptimizer(0.05), adam(0.05)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_numpy(name, fusion):
    make, ref_step = OPTIMIZERS[name]
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(W0, name="w")
    b = tf.Variable(B0, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
    train = make().minimize(loss)
    pw, pb = W0.astype(np.float64), B0.astype(np.float64)
    sw, sb = {}, {}
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        for t in range(1, 4):
            ref_loss, gw, gb = loss_and_grads(pw, pb)
            _, got_loss = sess.run([train, loss], {x: X})
            np.testing.assert_allclose(got_loss, ref_loss, rtol=1e-5)
            pw, pb = ref_step(pw, gw, sw, t), ref_step(pb, gb, sb, t)
            got_w, got_b = sess.run([w, b])
            np.testing.assert_allclose(got_w, pw, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(got_b, pb, rtol=1e-5, atol=1e-6)


def test_compute_and_apply_gradients_with_global_step():
    x = tf.constant(X)
    w = tf.Variable(W0)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    step = tf.train.get_or_create_global_step()
    opt = tf.train.GradientDescentOptimizer(0.5)
    grads_and_vars = opt.compute_gradients(loss, var_list=[w])
    assert grads_and_vars[0][1] is w
    train = opt.apply_gradients([(g * 0.0, v) for g, v in grads_and_vars], global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run(step) == 2
        np.testing.assert_allclose(sess.run(w), W0)


def test_adam_update_of_each_variable_is_one_fused_kernel():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(W0, name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    with tf.Session(fusion=True) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: X})
        groups = sess.last_graph().fusion_groups()
    update = [g for g in groups if "w/adam_assign" in g["members"]]
    assert len(update) == 1, groups
    members = update[0]["members"]
    assert {"w/adam_assign_m", "w/adam_assign_v", "w/adam_m", "w/adam_v", "w/adam_new"} <= set(members)
