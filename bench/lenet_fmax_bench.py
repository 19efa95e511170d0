#!/usr/bin/env python3
"""F_max sweep on the LeNet training step and on the Adam update of a 16M-float variable, and
cold vs warm compilation / binding of the LeNet training graph.

For each F_max in 1..8 (and fusion off): time per step (median), kernels launched per step,
and the memory plan's bytes (the executor's peak intermediate memory). Then, for LeNet:
 - cold bind: a new process with an empty kernel cache (passes + gcc),
 - warm bind: a new process with the disk cache filled by the cold one (passes + cache load;
   compilations must be 0),
 - cached re-optimization: a second run of the same step in the same session (the bound
   plan is reused: no pass runs).

Usage: /usr/bin/python3 bench/lenet_fmax_bench.py [--steps N] [--batch B] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
import tinyflow as tf  # noqa: E402
from train import lenet_model  # noqa: E402


def lenet_step(batch):
    tf.reset_default_graph()
    tf.set_random_seed(1)
    images = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    logits = lenet_model(images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.AdamOptimizer(0.001).minimize(loss)
    rng = np.random.RandomState(0)
    feeds = {images: rng.rand(batch, 28, 28, 1).astype(np.float32), labels: rng.randint(0, 10, batch).astype(np.int32)}
    return [train, loss], feeds


def adam_step(n):
    tf.reset_default_graph()
    w = tf.Variable(tf.zeros([n]), name="w")
    g = tf.placeholder(tf.float32, [n], name="g")
    train = tf.train.AdamOptimizer(0.001).apply_gradients([(g, w)])
    feeds = {g: np.random.RandomState(1).rand(n).astype(np.float32)}
    return [train], feeds


def sweep(build, steps, fmaxes):
    rows = []
    for fmax in fmaxes:
        fetches, feeds = build()
        with tf.Session(fusion=fmax is not None, fmax=fmax) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(fetches, feeds)  # binds and compiles
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                sess.run(fetches, feeds)
                times.append((time.perf_counter() - start) * 1e3)
            stats = sess.stats()
        times.sort()
        rows.append({"fmax": fmax or 0, "ms_per_step": times[len(times) // 2],
                     "kernels": stats["kernels_launched"], "plan_bytes": stats["bytes_allocated"]})
    return rows


def print_sweep(title, rows):
    print("\n" + title)
    print("  %-8s %12s %9s %14s" % ("F_max", "ms/step", "kernels", "plan MiB"))
    for r in rows:
        print("  %-8s %12.2f %9d %14.1f" % (r["fmax"] or "unfused", r["ms_per_step"], r["kernels"],
                                           r["plan_bytes"] / 2.0 ** 20))


def bind_in_new_process(cache_dir, batch):
    """Runs one LeNet training step in a fresh process; returns its first-run statistics."""
    code = ("import json, os, sys, time\n"
            "sys.argv = ['x']\n"
            "sys.path.insert(0, %r)\n"
            "import lenet_fmax_bench as b\n"
            "fetches, feeds = b.lenet_step(%d)\n"
            "with b.tf.Session() as sess:\n"
            "    sess.run(b.tf.global_variables_initializer())\n"
            "    start = time.perf_counter()\n"
            "    sess.run(fetches, feeds)\n"
            "    first = (time.perf_counter() - start) * 1e3\n"
            "    stats = sess.stats()\n"
            "    rtc = sess.last_graph().attr('rtc_stats', {})\n"
            "    start = time.perf_counter()\n"
            "    sess.run(fetches, feeds)\n"
            "    second = (time.perf_counter() - start) * 1e3\n"
            "    again = sess.stats()\n"
            "print(json.dumps({'first_ms': first, 'bind_ms': stats['bind_ms'], 'rtc': rtc, 'second_ms': second,\n"
            "                  'second_bound': again['bound'], 'second_run_ms': again['run_ms']}))\n"
            % (os.path.dirname(os.path.abspath(__file__)), batch))
    env = dict(os.environ, IR_KERNEL_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--adam-n", type=int, default=16 << 20)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    fmaxes = [None, 1, 2, 3, 4, 5, 6, 7, 8]
    results = {}
    results["lenet_sweep"] = sweep(lambda: lenet_step(args.batch), args.steps, fmaxes)
    print_sweep("LeNet training step (Adam, batch %d)" % args.batch, results["lenet_sweep"])
    results["adam_sweep"] = sweep(lambda: adam_step(args.adam_n), max(5, args.steps // 4), fmaxes)
    print_sweep("Adam update of %d floats" % args.adam_n, results["adam_sweep"])

    with tempfile.TemporaryDirectory() as cache:
        cold = bind_in_new_process(cache, args.batch)
        warm = bind_in_new_process(cache, args.batch)
    results["compile"] = {"cold": cold, "warm": warm}
    print("\nLeNet training graph, first step of a new process (bind = passes + kernels):")
    for name, r in (("cold (empty kernel cache)", cold), ("warm (disk cache)", warm)):
        print("  %-26s bind %8.1f ms  first step %8.1f ms  compilations %d, disk hits %d" % (
            name, r["bind_ms"], r["first_ms"], r["rtc"].get("compilations", -1), r["rtc"].get("disk_hits", -1)))
    print("  cached re-optimization: the second step reuses the bound plan (bound=%s): %.1f ms vs %.1f ms cold "
          "first step (%.0fx)" % (cold["second_bound"], cold["second_ms"], cold["first_ms"],
                                  cold["first_ms"] / cold["second_ms"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
