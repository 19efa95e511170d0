#!/usr/bin/env python3
"""tinyflow eager mode (issues 15, 31): recording cost per op from Python, Session.run's overhead beyond the C++
step, and eager training steps vs graph mode and vs PyTorch eager.

The models (softmax regression, MLP 784-256-10, demo LeNet) are written once, over explicit tf.Variables, and
trained two ways: a TF 1.x eager program (tf.enable_eager_execution, tf.GradientTape, apply_gradients) and a
graph program (placeholders, minimize, Session.run); PyTorch eager runs the same layers (train_vs_pytorch.py).
Eager mode is process-wide, so each mode runs in a child process of this one, one after the other, in
`--rounds` rounds; a figure is the median over rounds of each child's median steps/s, ratios within this run.
Each step gets a new batch (4 batches cycled). Session.run's overhead is a trivial run's wall time from Python
minus the run_ms the C++ session reports for it (IRSessionGetStatsJSON), median of many runs. Goals (issue 31):
<= 0.5 us per op recorded; Session.run <= 5 us beyond the C++ step; eager within 1.1x of graph; eager >= 2x
PyTorch (ratios only against a fair peer, bench_util.py). Every call goes through tinyflow._C.

    /usr/bin/python3 bench/eager_bench.py [--build DIR] [--models softmax,mlp,lenet] [--optimizers sgd,adam]
        [--rounds 3] [--rep-seconds 0.5] [--reps 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import bench_util as bu
import train_vs_pytorch as tvp

MODES = ["graph", "eager", "torch"]
GOAL_RECORD_US, GOAL_RUN_OVERHEAD_US, GOAL_VS_GRAPH, GOAL_VS_TORCH = 0.5, 5.0, 1.1, 2.0
LR = 0.01


# ---- the models, written once over explicit parameters (both tinyflow modes) ----

def make_params(tf, model):
    """tf.Variables (deterministic initial values) in the order the forward uses them."""
    shapes = {"softmax": [[784, 10], [10]], "mlp": [[784, 256], [256], [256, 10], [10]],
              "lenet": [[5, 5, 1, 16], [16], [5, 5, 16, 32], [32], [1568, 256], [256], [256, 10], [10]]}[model]
    rng = np.random.RandomState(0)
    return [tf.Variable((rng.randn(*s) * 0.1 if len(s) > 1 else np.full(s, 0.1)).astype(np.float32))
            for s in shapes]


def forward(tf, model, p, images):
    if model == "lenet":
        h = images
        for w, b in ((p[0], p[1]), (p[2], p[3])):
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME"), b))
            h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 1568]), p[4]) + p[5])
        return tf.matmul(h, p[6]) + p[7]
    h = tf.reshape(images, [-1, 784])
    if model == "mlp":
        h = tf.nn.relu(tf.matmul(h, p[0]) + p[1])
        p = p[2:]
    return tf.matmul(h, p[0]) + p[1]


def loss_of(tf, model, params, images, labels):
    logits = forward(tf, model, params, images)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def make_optimizer(tf, name):
    return tf.train.GradientDescentOptimizer(LR) if name == "sgd" else tf.train.AdamOptimizer(LR)


def batches(size=64):
    return [tvp.batch(size, seed) for seed in range(4)]


# ---- one child process per mode: prints {"model/optimizer": steps/s, ...} as JSON on its last line ----

def eager_step(tf, model, optimizer):
    params, opt, data, i = make_params(tf, model), make_optimizer(tf, optimizer), batches(), [0]

    def step():
        xs, ys = data[i[0] % 4]
        i[0] += 1
        with tf.GradientTape() as tape:
            loss = loss_of(tf, model, params, tf.constant(xs), tf.constant(ys))
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
    return step


def graph_step(tf, model, optimizer):
    tf.reset_default_graph()
    images, labels = tf.placeholder(tf.float32, [None, 28, 28, 1]), tf.placeholder(tf.int32, [None])
    params = make_params(tf, model)
    train = make_optimizer(tf, optimizer).minimize(loss_of(tf, model, params, images, labels))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    data, i = batches(), [0]

    def step():
        xs, ys = data[i[0] % 4]
        i[0] += 1
        sess.run(train, {images: xs, labels: ys})
    step.session = sess  # kept alive with the step
    return step


def torch_step(model, optimizer):
    import torch
    torch.manual_seed(0)
    net = tvp.torch_model(model).train()
    opt = torch.optim.SGD(net.parameters(), LR) if optimizer == "sgd" else torch.optim.Adam(net.parameters(), LR)
    data = [(torch.from_numpy(xs.transpose(0, 3, 1, 2).copy()), torch.from_numpy(ys.astype(np.int64)))
            for xs, ys in batches()]  # NCHW, PyTorch's native layout
    loss_fn, i = torch.nn.CrossEntropyLoss(), [0]

    def step():
        x, y = data[i[0] % 4]
        i[0] += 1
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    return step


def record_us(tf, ops=200000):
    """Microseconds per elementwise op recorded from Python (chains of 1,000 ops, never read)."""
    x = tf.constant(np.ones(16, np.float32))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(ops // 1000):
            y = x
            for _ in range(500):
                y = y * x + x
        times.append((time.perf_counter() - start) * 1e6 / ops)
    return statistics.median(times)


def run_overhead_us(tf, runs=3000):
    """Microseconds Session.run spends beyond the C++ step: a trivial fetch with one small feed, timed from
    Python, minus the session's own run_ms for that run (median over `runs`)."""
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [4])
    y = x + 1.0
    feed = np.ones(4, np.float32)
    sess = tf.Session()
    for _ in range(100):  # bind and warm up
        sess.run(y, {x: feed})
    overheads = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(y, {x: feed})
        wall_us = (time.perf_counter() - start) * 1e6
        overheads.append(wall_us - sess.stats()["run_ms"] * 1e3)
    sess.close()
    return statistics.median(overheads)


def child(args):
    results = {}
    if args.mode == "torch":
        results["peer"] = bu.describe_peer(args.threads)
    else:
        os.environ["TINYFLOW_LIB"] = os.path.join(os.path.abspath(args.build), "lib", "libir.so")
        sys.path.insert(0, os.path.join(bu.REPO, "tinyflow_demo"))
        import tinyflow as tf
        if args.mode == "eager":
            tf.enable_eager_execution()
            results["record_us"] = record_us(tf)
        else:
            results["run_overhead_us"] = run_overhead_us(tf)
    for model in args.models.split(","):
        for optimizer in args.optimizers.split(","):
            try:
                if args.mode == "torch":
                    step = torch_step(model, optimizer)
                else:
                    step = (eager_step if args.mode == "eager" else graph_step)(tf, model, optimizer)
                runner = tvp.Runner(step)
                runner.warm_up(args.rep_seconds, args.rep_seconds)
                for _ in range(args.reps):
                    runner.rep()
            except Exception as err:  # noqa: B902 -- a model that fails is reported, the others still run
                sys.stderr.write("  %s %s/%s failed: %s\n" % (args.mode, model, optimizer, err))
                continue
            results["%s/%s" % (model, optimizer)] = statistics.median(runner.rates)
            sys.stderr.write("  %s %s/%s %.0f steps/s\n" % (args.mode, model, optimizer, results["%s/%s" % (model,
                                                                                                      optimizer)]))
    print(json.dumps(results))


# ---- the parent: rounds of children, the table ----

def run_child(mode, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--mode", mode, "--build", args.build, "--models", args.models,
           "--optimizers", args.optimizers, "--rep-seconds", str(args.rep_seconds), "--reps", str(args.reps),
           "--threads", str(args.threads)]
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, env=env, universal_newlines=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def parent(args):
    bu.fair_allocator_or_reexec()  # children inherit the tuned malloc
    rounds = {mode: [] for mode in MODES}
    for r in range(args.rounds):
        for mode in MODES:
            print("round %d/%d: %s ..." % (r + 1, args.rounds, mode), flush=True)
            try:
                rounds[mode].append(run_child(mode, args))
            except subprocess.CalledProcessError as err:
                print("  %s failed (exit %d): not measured" % (mode, err.returncode), flush=True)
    peer = rounds["torch"][0]["peer"] if rounds["torch"] else None
    if peer:
        bu.print_peer(peer)

    def med(mode, key):
        values = [run[key] for run in rounds[mode] if key in run]
        return statistics.median(values) if values else None
    rec = med("eager", "record_us")
    print("\nrecording from Python: %s us/op (goal <= %g)" % ("%.2f" % rec if rec else "-", GOAL_RECORD_US))
    over = med("graph", "run_overhead_us")
    print("Session.run beyond the C++ step: %s us (goal <= %g)" % ("%.1f" % over if over is not None else "-",
                                                                 GOAL_RUN_OVERHEAD_US))
    print("%-16s %10s %10s %10s %12s %12s" % ("steps/s", "eager", "graph", "torch", "graph/eager", "eager/torch"))
    for model in args.models.split(","):
        for optimizer in args.optimizers.split(","):
            key = "%s/%s" % (model, optimizer)
            e, g, t = med("eager", key), med("graph", key), med("torch", key)
            print("%-16s %10s %10s %10s %12s %12s" % (
                key, *("%.0f" % v if v else "-" for v in (e, g, t)),
                bu.fmt_ratio(g / e if e and g else None, 12),
                bu.fmt_ratio(bu.ratio(e, t, peer) if e and t and peer else None, 12)))
    print("goals: graph/eager <= %g, eager/torch >= %g" % (GOAL_VS_GRAPH, GOAL_VS_TORCH))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rounds, f, indent=1)
    return bu.exit_status(peer, args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--build", default=os.path.join(bu.REPO, "build"), help="build directory (default build/)")
    parser.add_argument("--models", default="softmax,mlp,lenet")
    parser.add_argument("--optimizers", default="sgd,adam")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rep-seconds", type=float, default=0.5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", help="write every round's figures here")
    bu.add_peer_args(parser)
    args = parser.parse_args()
    return child(args) if args.mode else parent(args)


if __name__ == "__main__":
    sys.exit(main())
