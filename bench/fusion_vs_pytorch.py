#!/usr/bin/env python3
"""Fused kernels of ir vs PyTorch eager on the same workloads, measured in one run.

Runs build/bin/ir-fusion-bench --only ops (fused and unfused, with STREAM figures) and the
same workloads in PyTorch (2 threads, OPENBLAS_NUM_THREADS=1): each written op by op as in
the ir graph, and PyTorch's own fused/native op where it has one. Medians of --reps runs.

Usage: /usr/bin/python3 bench/fusion_vs_pytorch.py [--n ELEMENTS] [--reps R]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from bench_util import REPO, median_ms  # noqa: E402  (sets OPENBLAS_NUM_THREADS)


def torch_workloads(n, reps):
    import torch
    torch.set_num_threads(2)
    torch.manual_seed(0)
    cols = 1024
    rows = n // cols
    x = torch.rand(n) * 2 - 1
    x2 = x.view(rows, cols)
    gamma, beta = torch.rand(cols), torch.rand(cols)
    w, m, g = torch.rand(n), torch.rand(n), torch.rand(n)
    v = torch.rand(n) * 0.9 + 0.1

    def adam_ops():
        m.mul_(0.9).add_(g * 0.1)
        v.mul_(0.999).add_(g * g * 0.001)
        w.sub_(m / (v.sqrt() + 1e-8) * 1e-3)

    param = torch.nn.Parameter(w.clone())
    param.grad = g.clone()
    opt = torch.optim.Adam([param], lr=1e-3, foreach=True)

    def softmax_ops():
        e = torch.exp(x2 - x2.max(dim=1, keepdim=True).values)
        return e / e.sum(dim=1, keepdim=True)

    def layernorm_ops():
        c = x2 - x2.mean(dim=1, keepdim=True)
        var = (c * c).mean(dim=1, keepdim=True)
        return c * torch.rsqrt(var + 1e-5) * gamma + beta

    return {
        "sigmoid as 4 ops": (median_ms(lambda: 1.0 / (torch.exp(-x) + 1.0), reps),
                             median_ms(lambda: torch.sigmoid(x), reps), "torch.sigmoid"),
        "Adam update (w, m, v)": (median_ms(adam_ops, reps), median_ms(opt.step, reps), "optim.Adam foreach"),
        "softmax as 5 ops": (median_ms(softmax_ops, reps), median_ms(lambda: torch.softmax(x2, dim=1), reps),
                             "torch.softmax"),
        "layer norm as 9 ops": (median_ms(layernorm_ops, reps),
                                median_ms(lambda: torch.nn.functional.layer_norm(x2, (cols,), gamma, beta), reps),
                                "F.layer_norm"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=16 << 20)
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    bench = os.path.join(REPO, "build", "bin", "ir-fusion-bench")
    if not os.path.exists(bench):
        sys.exit("build first: scripts/build.sh (missing %s)" % bench)
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("PyTorch is not installed (apt-get install python3-torch)")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([bench, "--n", str(args.n), "--reps", str(args.reps), "--only", "ops", "--json", out.name],
                       check=True)
        ours = json.load(open(out.name))
    theirs = torch_workloads(args.n, args.reps)
    print("\n%-24s %9s %9s %12s %12s %20s" % ("workload", "ir fused", "torch ops", "ops/fused", "torch native",
                                               "native/fused"))
    for w in ours["workloads"]:
        ops_ms, native_ms, native = theirs[w["name"]]
        print("%-24s %7.2fms %7.2fms %11.2fx %10.2fms %11.2fx (%s)" % (
            w["name"], w["fused_ms"], ops_ms, ops_ms / w["fused_ms"], native_ms, native_ms / w["fused_ms"], native))
    print("(ratios > 1: ir's fused kernel is faster; PyTorch 1.13 eager, 2 threads)")
    if args.json:
        for w in ours["workloads"]:
            ops_ms, native_ms, native = theirs[w["name"]]
            w.update({"torch_ops_ms": ops_ms, "torch_native_ms": native_ms, "torch_native": native})
        with open(args.json, "w") as f:
            json.dump(ours, f, indent=1)


if __name__ == "__main__":
    main()
