#!/usr/bin/env python3
"""Single ops of ir (CPU kernels, fusion off) vs the same ops in PyTorch eager, one run.

Runs build/bin/ir-ops-bench, then each op in PyTorch with 2 threads (OPENBLAS_NUM_THREADS=1),
and prints the median times and the ratio torch/ir (> 1: ir is faster).

Usage: /usr/bin/python3 bench/ops_vs_pytorch.py [--reps R] [--build DIR]
"""
import argparse
import json
import os
import subprocess
import sys

import bench_util as bu
from bench_util import REPO, median_ms  # noqa: E402  (sets OPENBLAS_NUM_THREADS)


def sparse_xent(logits, labels):
    """TensorFlow's SparseSoftmaxCrossEntropyWithLogits in PyTorch: the loss and its backprop."""
    import torch
    log_p = torch.log_softmax(logits, dim=1)
    loss = -log_p.gather(1, labels[:, None])[:, 0]
    backprop = log_p.exp_()
    backprop[torch.arange(len(labels)), labels] -= 1
    return loss, backprop


def torch_cases():
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(2)
    n = 4 << 20
    r = lambda *shape: torch.rand(*shape) * 2 - 1  # noqa: E731
    a, b = r(n), r(n)
    m, row, col = r(4096, 1024), r(1024), r(4096, 1)
    labels = (torch.arange(4096) * 7919) % 1024
    small, batch = r(64 << 10), r(64, 1024)  # the sizes of a training step's small ops
    sq = r(2048, 2048)
    k1, k2 = r(1024, 1024), r(1024, 1024)
    x64 = r(64, 1024)
    # PyTorch convolutions are NCHW; the ir cases are NHWC with the same sizes.
    c1, w1 = r(64, 1, 28, 28), r(6, 1, 5, 5)
    c2, w2 = r(64, 6, 14, 14), r(16, 6, 5, 5)
    c3, w3 = r(32, 64, 56, 56), r(64, 64, 3, 3)
    p = r(64, 32, 28, 28)
    return {
        "add 4M": lambda: a + b,
        "add broadcast 4096x1024 + 1024": lambda: m + row,
        "multiply 4M": lambda: a * b,
        "multiply broadcast 4096x1024 * 4096x1": lambda: m * col,
        "multiply_scalar 4M": lambda: a * 0.5,
        "exp 4M": lambda: torch.exp(a),
        "tanh 4M": lambda: torch.tanh(a),
        "erf 4M": lambda: torch.erf(a),
        "sigmoid 4M": lambda: torch.sigmoid(a),
        "relu 4M": lambda: torch.relu(a),
        "relu 64K": lambda: torch.relu(small),
        "sigmoid 64K": lambda: torch.sigmoid(small),
        "add broadcast 64x1024 + 1024": lambda: batch + row,
        "relu_grad 4M": lambda: torch.ops.aten.threshold_backward(a, b, 0),
        "sigmoid_grad 4M": lambda: torch.ops.aten.sigmoid_backward(a, b),
        "tanh_grad 4M": lambda: torch.ops.aten.tanh_backward(a, b),
        "sum rows 4096x1024": lambda: m.sum(dim=1),
        "sum cols 4096x1024": lambda: m.sum(dim=0),
        "max rows 4096x1024": lambda: m.max(dim=1).values,
        "argmax rows 4096x1024": lambda: m.argmax(dim=1),
        "softmax 4096x1024": lambda: torch.softmax(m, dim=1),
        "log_softmax 4096x1024": lambda: torch.log_softmax(m, dim=1),
        "sparse softmax xent 4096x1024": lambda: sparse_xent(m, labels),
        "transpose 2048x2048": lambda: sq.t().contiguous(),
        "matmul 1024^3": lambda: k1 @ k2,
        "matmul 64x1024x1024": lambda: x64 @ k2,
        "conv2d LeNet-1 b64 28x28x1 5x5x6 SAME": lambda: F.conv2d(c1, w1, padding=2),
        "conv2d LeNet-2 b64 14x14x6 5x5x16 VALID": lambda: F.conv2d(c2, w2),
        "conv2d b32 56x56x64 3x3x64 SAME": lambda: F.conv2d(c3, w3, padding=1),
        "max_pool2d b64 28x28x32 2x2/2": lambda: F.max_pool2d(p, 2, 2),
        "avg_pool2d b64 28x28x32 3x3/1 SAME": lambda: F.avg_pool2d(p, 3, 1, padding=1, count_include_pad=False),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--build", default=os.path.join(REPO, "build"), help="the build directory to take ir from")
    bu.add_peer_args(parser)
    args = parser.parse_args()
    bu.fair_allocator_or_reexec()
    bench = os.path.join(args.build, "bin", "ir-ops-bench")
    if not os.path.exists(bench):
        sys.exit("build first: scripts/build.sh (missing %s)" % bench)
    try:
        peer = bu.describe_peer(args.threads)
        cases = torch_cases()
    except ImportError:
        sys.exit("PyTorch is not installed (apt-get install python3-torch)")
    bu.print_peer(peer)
    ours = json.loads(subprocess.run([bench, "--reps", str(args.reps)], check=True, stdout=subprocess.PIPE,
                                     text=True).stdout)
    print("\n%-44s %10s %10s %12s" % ("op", "ir ms", "torch ms", "torch/ir"))
    results = {}
    for name, ms in ours.items():
        theirs = median_ms(cases[name], args.reps)
        results[name] = {"ir_ms": ms, "torch_ms": theirs}
        print("%-44s %10.3f %10.3f %11sx" % (name, ms, theirs, bu.fmt_ratio(bu.ratio(theirs, ms, peer))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(results, peer=peer), f, indent=1)
    print("(> 1: ir is faster. ir runs each op through a Session with fusion off: its times include\n"
          " the executor's per-run overhead and a fresh output array, as PyTorch's include its own.)")
    return bu.exit_status(peer, args)


if __name__ == "__main__":
    sys.exit(main())
