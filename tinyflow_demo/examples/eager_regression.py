"""Linear regression in TF 1.x eager style: a GradientTape and an optimizer, no graph, no session.

Every op below records a lazy array; the optimizer's apply_gradients runs the whole step (forward,
gradients, update of both variables) as one fused trace, compiled at the first step and reused by
the later ones even though the data and the learning rate change every step.

    PYTHONPATH=tinyflow_demo python3 tinyflow_demo/examples/eager_regression.py
"""
import numpy as np

import tinyflow as tf

tf.enable_eager_execution()

TRUE_W, TRUE_B = np.array([[3.0], [-1.5]], np.float32), 0.7


def main(steps=200, batch=128):
    rng = np.random.RandomState(0)
    W = tf.Variable(tf.zeros([2, 1]), name="W")
    b = tf.Variable(0.0, name="b")
    for step in range(steps):
        xs = rng.randn(batch, 2).astype(np.float32)
        ys = xs.dot(TRUE_W) + TRUE_B + 0.01 * rng.randn(batch, 1).astype(np.float32)
        optimizer = tf.train.GradientDescentOptimizer(0.2 * 0.99 ** step)  # a decaying learning rate
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(xs, W) + b - ys))
        grads = tape.gradient(loss, [W, b])
        optimizer.apply_gradients(zip(grads, [W, b]))
        if step % 50 == 0:
            print("step %3d  loss %.5f" % (step, loss))
    stats = tf.eager_stats()
    print("W=%s b=%.3f (true W=%s b=%.3f)" % (W.numpy().ravel(), b.numpy(), TRUE_W.ravel(), TRUE_B))
    print("traces compiled %d, cache hits %d, misses %d, kernels launched %d" % (
        stats["traces_compiled"], stats["cache_hits"], stats["cache_misses"], stats["kernels_launched"]))


if __name__ == "__main__":
    main()
