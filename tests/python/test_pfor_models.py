"""Per-example gradients (a pfor over the examples of tf.gradients of each example's loss) of softmax
regression, an MLP, LeNet-small and the demo's LeNet: forward and backward equal the loop of
single-example runs, and the Vectorize pass leaves no fallback loop (issue 13)."""
import os
import sys

import numpy as np
import pytest

import tinyflow as tf
from tinyflow import parallel_for as pfor_ops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tinyflow_demo"))
import train as demo  # noqa: E402

N = 3  # examples


def _var(shape, name):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1, seed=len(name)), name=name)


def softmax_regression():
    params = {"W": _var([784, 10], "W"), "b": _var([10], "b")}
    return params, lambda x: tf.matmul(tf.reshape(x, [-1, 784]), params["W"]) + params["b"]


def mlp():
    params = {"W1": _var([784, 32], "W1"), "b1": _var([32], "b1"), "W2": _var([32, 10], "W2"),
              "b2": _var([10], "b2")}

    def model(x):
        h = tf.nn.relu(tf.matmul(tf.reshape(x, [-1, 784]), params["W1"]) + params["b1"])
        return tf.matmul(h, params["W2"]) + params["b2"]
    return params, model


def lenet_small():
    """conv5x5 1->6 VALID, maxpool 2, conv5x5 6->16 VALID, maxpool 2, fc 256->120, fc 10."""
    shapes = {"c1": [5, 5, 1, 6], "c1b": [6], "c2": [5, 5, 6, 16], "c2b": [16], "f1": [256, 120], "f1b": [120],
              "f2": [120, 10], "f2b": [10]}
    params = {k: _var(s, k) for k, s in shapes.items()}

    def conv_pool(x, w, b):
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, params[w], [1, 1, 1, 1], "VALID"), params[b]))
        return tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")

    def model(x):
        h = tf.reshape(conv_pool(conv_pool(x, "c1", "c1b"), "c2", "c2b"), [-1, 256])
        h = tf.nn.relu(tf.matmul(h, params["f1"]) + params["f1b"])
        return tf.matmul(h, params["f2"]) + params["f2b"]
    return params, model


def demo_lenet(monkeypatch):
    """train.lenet_model, its weight/bias helpers memoized by name so that every call shares them."""
    made = {}

    def shared(helper):
        def make(shape, name):
            if name not in made:
                made[name] = helper(shape, name)
            return made[name]
        return make
    monkeypatch.setattr(demo, "weight", shared(demo.weight))
    monkeypatch.setattr(demo, "bias", shared(demo.bias))
    demo.lenet_model(tf.placeholder(tf.float32, [1, 28, 28, 1]))  # creates the variables
    return made, demo.lenet_model


def _loss(logits, labels):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def _per_example(model, params, x, labels):
    """pfor over the examples: (logits, loss, gradients of each param) of each example alone."""
    names = sorted(params)

    def loop_fn(i):
        logits = model(tf.expand_dims(tf.gather(x, i), 0))
        loss = _loss(logits, tf.expand_dims(tf.gather(labels, i), 0))
        return {"logits": logits, "loss": loss, "grads": dict(zip(names, tf.gradients(loss, [params[k] for k in names])))}
    return pfor_ops.pfor(loop_fn, N)


def _single(model, params):
    """The oracle: one example's (logits, loss, gradients) through placeholders of batch 1, and the
    magnitudes that bound the gradients' rounding errors (_magnitudes)."""
    x1, y1 = tf.placeholder(tf.float32, [1, 28, 28, 1]), tf.placeholder(tf.int32, [1])
    first_op = len(tf.get_default_graph().get_operations())
    logits = model(x1)
    loss = _loss(logits, y1)
    names = sorted(params)
    magnitudes, roundings = _magnitudes(loss, params, tf.get_default_graph().get_operations()[first_op:])
    # The logits' last layer, matmul(h, W) + b: its magnitude |h| |W| + |b|.
    h, w = logits.op.inputs[0].op.inputs
    magnitudes["logits"] = tf.matmul(tf.abs(h), tf.abs(w)) + tf.abs(logits.op.inputs[1])
    return x1, y1, {"logits": logits, "loss": loss, "magnitudes": magnitudes,
                    "grads": dict(zip(names, tf.gradients(loss, [params[k] for k in names])))}, roundings


def _magnitudes(loss, params, ops):
    """For each parameter, the magnitude of its gradient's last reduction in the graph of `ops`: a
    weight's gradient is sum_t a_t d_t over the layer's input a and the gradient d of its output y,
    so the magnitude is the same reduction of |a| and |d| (the gradient of <op(|a|, w), |d|>, a and
    d held fixed); a bias's is sum_t |d_t|. Also the most roundings a gradient accumulates: every
    layer's forward and backward contraction, the softmax's sum of 10, the longest last reduction."""
    magnitudes, roundings, longest = {}, 10, 1
    for name, p in params.items():
        op = next(o for o in ops if any(t is p for t in o.inputs) and o.type in ("matmul", "conv2d", "add",
                                                                              "bias_add"))
        y, a = op.outputs[0], next(t for t in op.inputs if t is not p)
        d = tf.abs(tf.stop_gradient(tf.gradients(loss, [y])[0]))
        shape = p.shape.as_list()
        if op.type in ("add", "bias_add"):
            magnitudes[name] = tf.reduce_sum(d, axis=list(range(len(y.shape.as_list()) - 1)))
            continue
        a = tf.abs(tf.stop_gradient(a))
        if op.type == "matmul":
            wy = tf.matmul(a, p)
            roundings += shape[0] + shape[1]
        else:  # stride 1 (these models'): SAME keeps the image size, VALID shrinks it
            padding = "SAME" if y.shape.as_list()[1] == a.shape.as_list()[1] else "VALID"
            wy = tf.nn.conv2d(a, p, [1, 1, 1, 1], padding)
            roundings += shape[0] * shape[1] * (shape[2] + shape[3])
            longest = max(longest, y.shape.as_list()[1] * y.shape.as_list()[2])
        magnitudes[name] = tf.gradients(tf.reduce_sum(wy * d), [p])[0]
    return magnitudes, roundings + longest


def _gamma(k):
    """Higham's gamma_k = k u / (1 - k u) for float32 (u = 2^-24): the bound of k roundings."""
    u = 2.0 ** -24
    return k * u / (1 - k * u)


def _expect_within_bound(got, want, magnitude, roundings, what):
    """|got - want| <= 2 gamma_K max(magnitude): two float32 evaluations of one gradient that sum in
    other orders each lie within gamma_K (K roundings) of the exact value, relative to the magnitude
    of the computation (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1); normwise, as
    in tests/passes/vectorize_models_test.cc, since an element's upstream factors carry errors
    relative to their own magnitudes."""
    bound = 2 * _gamma(roundings) * np.max(magnitude)
    worst = np.max(np.abs(got.astype(np.float64) - want))
    assert worst <= bound, "%s: differs by %g, more than %g" % (what, worst, bound)


@pytest.mark.parametrize("name", ["softmax", "mlp", "lenet_small", "demo_lenet"])
def test_per_example_gradients_equal_the_loop_without_fallbacks(name, monkeypatch):
    builders = {"softmax": softmax_regression, "mlp": mlp, "lenet_small": lenet_small,
                "demo_lenet": lambda: demo_lenet(monkeypatch)}
    params, model = builders[name]()
    x, labels = tf.placeholder(tf.float32, [N, 28, 28, 1]), tf.placeholder(tf.int32, [N])
    vec = _per_example(model, params, x, labels)
    x1, y1, one, roundings = _single(model, params)
    rng = np.random.RandomState(5)
    xv, yv = rng.rand(N, 28, 28, 1).astype(np.float32), rng.randint(0, 10, N).astype(np.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(vec, {x: xv, labels: yv})
        fallbacks = sess.pfor_fallbacks()
        loop = [sess.run(one, {x1: xv[k:k + 1], y1: yv[k:k + 1]}) for k in range(N)]
    for i in range(N):
        # The forward pass has fewer roundings than the backward one: `roundings` bounds both. The
        # loss moves by at most 2 max|d logits| (its gradient in the logits, softmax - one-hot, sums
        # to at most 2 in magnitude), and rounds itself (a sum of 10 exps, a log, a subtraction).
        _expect_within_bound(got["logits"][i], loop[i]["logits"][0], loop[i]["magnitudes"]["logits"], roundings,
                             "logits of example %d" % i)
        logits_bound = 2 * _gamma(roundings) * np.max(loop[i]["magnitudes"]["logits"])
        loss_bound = 2 * logits_bound + 2 * _gamma(13) * (abs(loop[i]["loss"]) + np.max(np.abs(loop[i]["logits"])))
        assert abs(got["loss"][i] - loop[i]["loss"]) <= loss_bound, (i, got["loss"][i], loop[i]["loss"], loss_bound)
    for k in params:
        assert got["grads"][k].shape == (N,) + tuple(params[k].shape.as_list())
        for i in range(N):
            _expect_within_bound(got["grads"][k][i], loop[i]["grads"][k], loop[i]["magnitudes"][k], roundings,
                                 "%s of example %d" % (k, i))
    assert fallbacks == [], "ops the Vectorize pass ran as loops: %s" % fallbacks
