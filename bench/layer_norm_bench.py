"""Layer norm forward + backward over the last axis, [rows, C] float32: the layer_norm op (what
tf.contrib.layers.layer_norm builds) vs the tf.nn.moments formula a TF1 program writes by hand,
fused and unfused. Prints ms per step (median), kernels per step and GB/s of the op's minimum
traffic (forward: read x, write y; backward: read dy and x, write dx); the fetched outputs
copied to numpy are included in every form.

    TINYFLOW_LIB=build/lib/libir.so PYTHONPATH=tinyflow_demo OMP_WAIT_POLICY=PASSIVE \\
        /usr/bin/python3 bench/layer_norm_bench.py --rows 8192 --cols 512
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import median_ms  # noqa: E402

import tinyflow as tf  # noqa: E402


def build(form, rows, cols):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [rows, cols])
    dy = tf.placeholder(tf.float32, [rows, cols])
    if form == "op":
        y = tf.contrib.layers.layer_norm(x, begin_norm_axis=-1)
    else:
        with tf.variable_scope("LayerNorm"):
            beta = tf.get_variable("beta", [cols], initializer=tf.zeros_initializer())
            gamma = tf.get_variable("gamma", [cols], initializer=tf.ones_initializer())
        mean, var = tf.nn.moments(x, axes=[-1], keep_dims=True)
        y = (x - mean) * tf.rsqrt(var + 1e-12) * gamma + beta
    grads = tf.gradients(y, [x] + tf.trainable_variables(), grad_ys=dy)
    return x, dy, y, grads


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--cols", type=int, default=512)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    xs = rng.randn(args.rows, args.cols).astype(np.float32)
    dys = rng.randn(args.rows, args.cols).astype(np.float32)
    mb = xs.nbytes / 1e6
    print("layer norm [%d, %d] float32, %d threads" % (args.rows, args.cols, int(os.environ.get("OMP_NUM_THREADS", 0))
                                                       or os.cpu_count()))
    print("%-22s %10s %8s %10s %8s %9s" % ("form", "fwd ms", "kernels", "fwd+bwd ms", "kernels", "bwd GB/s"))
    for form, fusion in (("op", True), ("moments", True), ("moments", False)):
        x, dy, y, grads = build(form, args.rows, args.cols)
        with tf.Session(fusion=fusion) as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: xs, dy: dys}
            fwd = median_ms(lambda: sess.run(y, feed), args.reps)
            kf = sess.stats()["kernels_launched"]
            step = median_ms(lambda: sess.run(grads, feed), args.reps)
            kb = sess.stats()["kernels_launched"]
        bwd_gbs = 3 * mb / 1e3 / (max(step - fwd, 1e-6) / 1e3)
        print("%-22s %10.3f %8d %10.3f %8d %9.1f" % ("%s%s" % (form, "" if fusion else " (unfused)"), fwd, kf, step,
                                                     kb, bwd_gbs))


if __name__ == "__main__":
    main()
