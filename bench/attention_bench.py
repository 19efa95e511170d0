#!/usr/bin/env python3
"""Attention forward + backward against the sequence length: fused (the fused_attention op the
rules of src/passes/rewrite_attention_rules.cc choose) vs the unfused graph a TF1 program writes
(softmax(q k^T * scale + causal mask) v as matmul, multiply, tf.where, softmax, matmul).

For each T (S = T): the median time of a step computing o and dq, dk, dv (tf.gradients of
sum(o * w)), and the memory plan's bytes (the executor's peak intermediate memory, stats()
["bytes_allocated"]): the unfused graph holds [B, H, T, T] scores and probabilities, the fused
one only [B, H, T] log-sum-exps and per-thread tiles. Both graphs are the same TF1 program; the
unfused session runs without the attention rule set (rule_sets), the fused one with every set.

Usage: /usr/bin/python3 bench/attention_bench.py [--seq 128,256,512,1024,2048] [--batch 1] [--heads 8]
       [--depth 64] [--reps 5] [--causal 1] [--json FILE] [--plot FILE.png]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
import tinyflow as tf  # noqa: E402

UNFUSED_SETS = ["algebra", "gradient", "nn", "shape"]


def attention_step(b, h, t, d, causal):
    """The TF1 way: matmul(q, k, transpose_b=True) * scale, tf.where(causal mask), softmax, matmul."""
    tf.reset_default_graph()
    q = tf.placeholder(tf.float32, [b, h, t, d], name="q")
    k = tf.placeholder(tf.float32, [b, h, t, d], name="k")
    v = tf.placeholder(tf.float32, [b, h, t, d], name="v")
    w = tf.placeholder(tf.float32, [b, h, t, d], name="w")
    s = tf.matmul(q, k, transpose_b=True) * (1.0 / np.sqrt(d))
    if causal:
        mask = tf.matrix_band_part(tf.ones([t, t]), -1, 0)
        s = s * mask - 1e9 * (1 - mask)
    o = tf.matmul(tf.nn.softmax(s), v)
    grads = tf.gradients(tf.reduce_sum(o * w), [q, k, v])
    rng = np.random.RandomState(0)
    feeds = {x: rng.randn(b, h, t, d).astype(np.float32) for x in (q, k, v, w)}
    return [o] + grads, feeds


def measure(b, h, t, d, causal, fused, reps):
    fetches, feeds = attention_step(b, h, t, d, causal)
    sets = None if fused else UNFUSED_SETS
    with tf.Session(rule_sets=sets) as sess:
        sess.run(fetches, feeds)  # binds
        fired = [r for r in sess.rewrites() if r.startswith("attention")]
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            out = sess.run(fetches, feeds)
            times.append((time.perf_counter() - start) * 1e3)
        stats = sess.stats()
    times.sort()
    return {"ms": times[len(times) // 2], "plan_bytes": stats["bytes_allocated"], "kernels": stats["kernels_launched"],
            "rewrites": fired}, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seq", default="128,256,512,1024,2048")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--depth", type=int, default=64)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--causal", type=int, default=1)
    parser.add_argument("--json")
    parser.add_argument("--plot")
    args = parser.parse_args()
    rows = []
    print("attention fwd+bwd, B=%d H=%d D=%d causal=%d, median of %d (ms; plan MiB)" %
          (args.batch, args.heads, args.depth, args.causal, args.reps))
    print("%6s %10s %10s %8s %12s %12s %8s" % ("T", "unfused", "fused", "speedup", "unfused MiB", "fused MiB", "maxerr"))
    for t in [int(x) for x in args.seq.split(",")]:
        reps = args.reps if t <= 1024 else max(3, args.reps // 2)
        un, out_u = measure(args.batch, args.heads, t, args.depth, args.causal, False, reps)
        fu, out_f = measure(args.batch, args.heads, t, args.depth, args.causal, True, reps)
        err = max(float(np.abs(a - c).max()) for a, c in zip(out_u, out_f))
        row = {"T": t, "unfused": un, "fused": fu, "speedup": un["ms"] / fu["ms"], "max_abs_diff": err}
        rows.append(row)
        print("%6d %10.1f %10.1f %7.2fx %12.1f %12.1f %8.1e%s" %
              (t, un["ms"], fu["ms"], row["speedup"], un["plan_bytes"] / 2.0 ** 20, fu["plan_bytes"] / 2.0 ** 20, err,
               "" if fu["rewrites"] else "  (rule did not fire!)"))
        sys.stdout.flush()
    result = {"batch": args.batch, "heads": args.heads, "depth": args.depth, "causal": bool(args.causal),
              "threads": os.environ.get("OMP_NUM_THREADS"), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.plot:
        plot(rows, args)


def plot(rows, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    ts = [r["T"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.loglog(ts, [r["unfused"]["ms"] for r in rows], "o-", label="unfused graph")
    a.loglog(ts, [r["fused"]["ms"] for r in rows], "s-", label="fused_attention")
    a.set_xlabel("sequence length T")
    a.set_ylabel("ms per forward+backward")
    a.legend()
    b.loglog(ts, [r["unfused"]["plan_bytes"] / 2.0 ** 20 for r in rows], "o-", label="unfused graph")
    b.loglog(ts, [r["fused"]["plan_bytes"] / 2.0 ** 20 for r in rows], "s-", label="fused_attention")
    b.set_xlabel("sequence length T")
    b.set_ylabel("memory plan (MiB)")
    b.legend()
    fig.suptitle("attention B=%d H=%d D=%d causal=%d" % (args.batch, args.heads, args.depth, args.causal))
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    print("wrote", args.plot)


if __name__ == "__main__":
    main()
