#!/usr/bin/env python3
"""Training-step throughput: tinyflow (fusion on and off) against PyTorch eager on the CPU.

The same model (the demo trainer's LeNet or MLP), the same batch, the same optimizer step
(forward, backward, update); each framework runs `--warmup` steps, then `--reps` timed
repetitions of `--steps` steps; the median steps/s is reported with the ratio ours/PyTorch,
all measured in this one run.

    /usr/bin/python3 bench/train_vs_pytorch.py [--models lenet,mlp] [--optimizer adam] [--threads 2]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
import tinyflow as tf  # noqa: E402
import train as demo  # noqa: E402  (the demo trainer's models)


def batch(size, seed=0):
    rng = np.random.RandomState(seed)
    return rng.rand(size, 28, 28, 1).astype(np.float32), rng.randint(0, 10, size).astype(np.int32)


def timed(step, warmup, steps, reps):
    for _ in range(warmup):
        step()
    rates = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        rates.append(steps / (time.perf_counter() - start))
    return statistics.median(rates)


def bench_tinyflow(model, optimizer, lr, fusion, xs, ys, args):
    tf.reset_default_graph()
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [None])
    logits = demo.MODELS[model](images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = demo.make_optimizer(optimizer, lr).minimize(loss)
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        feed = {images: xs, labels: ys}
        rate = timed(lambda: sess.run(train, feed), args.warmup, args.steps, args.reps)
        sess.run(train, feed)
        kernels = sess.stats()["kernels_launched"]
    return rate, kernels


def torch_model(model):
    import torch.nn as nn
    if model == "softmax":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(7 * 7 * 32, 256), nn.ReLU(), nn.Linear(256, 10))


def bench_torch(model, optimizer, lr, xs, ys, args):
    import torch
    torch.manual_seed(0)
    net = torch_model(model)
    opt = {"sgd": lambda p: torch.optim.SGD(p, lr), "momentum": lambda p: torch.optim.SGD(p, lr, momentum=0.9),
           "adam": lambda p: torch.optim.Adam(p, lr)}[optimizer](net.parameters())
    x = torch.from_numpy(xs.transpose(0, 3, 1, 2).copy())  # NCHW, PyTorch's native layout
    y = torch.from_numpy(ys.astype(np.int64))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    return timed(step, args.warmup, args.steps, args.reps)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="lenet,mlp")
    p.add_argument("--optimizer", choices=["sgd", "momentum", "adam"], default="adam")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    xs, ys = batch(args.batch_size)
    config = torch.__config__.show()
    blas = config.split("BLAS_INFO=")[1].split(",")[0] if "BLAS_INFO=" in config else "?"
    print("PyTorch BLAS_INFO=%s (generic: the reference BLAS, slow matmuls), "
          "load average %.2f" % (blas, os.getloadavg()[0]))
    print("training step, batch %d, %s; median of %d x %d steps after %d warm-up; torch %s with %d threads"
          % (args.batch_size, args.optimizer, args.reps, args.steps, args.warmup, torch.__version__, args.threads))
    print("%-8s %-22s %10s %9s %14s" % ("model", "framework", "steps/s", "kernels", "ours/PyTorch"))
    results = {"torch_blas": blas, "batch_size": args.batch_size, "optimizer": args.optimizer, "models": {}}
    for model in args.models.split(","):
        lr = demo.DEFAULT_LR[args.optimizer]
        torch_rate = bench_torch(model, args.optimizer, lr, xs, ys, args)
        results["models"][model] = {"pytorch_steps_per_s": torch_rate}
        for fusion in (True, False):
            rate, kernels = bench_tinyflow(model, args.optimizer, lr, fusion, xs, ys, args)
            print("%-8s %-22s %10.1f %9d %14.2f" % (model, "tinyflow fusion %s" % ("on" if fusion else "off"),
                                                  rate, kernels, rate / torch_rate))
            key = "fused" if fusion else "unfused"
            results["models"][model][key + "_steps_per_s"] = rate
            results["models"][model][key + "_kernels"] = kernels
        print("%-8s %-22s %10.1f %9s %14s" % (model, "pytorch eager", torch_rate, "-", "1.00"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
