#!/usr/bin/env python3
"""Imperative elementwise code on 4M float32: lazy arrays (ir-lazy-bench --only elementwise) vs PyTorch eager.

The same code, op by op: the sigmoid 1/(1+exp(-x)) and an Adam update (m, v, p written in place).
Lazy arrays record it and run it fused (kernels counted by ir-lazy-bench); PyTorch runs one kernel
per op. Both figures come from this run (ir-lazy-bench is run first, then PyTorch); ratios are
printed only against a fair peer (bench_util.py). Issue 15 goal: >= 10x.

    /usr/bin/python3 bench/eager_torch_peer.py [--build DIR] [--reps 10] [--threads 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import bench_util as bu

GOAL = 10.0
N = 1 << 22


def lazy_times(build, reps):
    """ir-lazy-bench's elementwise figures: {"sigmoid_ms", "sigmoid_kernels", "adam_ms", "adam_kernels"}."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
        subprocess.run([os.path.join(build, "bin", "ir-lazy-bench"), "--only", "elementwise", "--reps", str(reps),
                        "--json", out.name], check=True, env=env, stdout=subprocess.DEVNULL)
        with open(out.name) as f:
            return {k.split(".", 1)[1]: v for k, v in json.load(f).items()}


def torch_times(reps):
    """PyTorch eager, op by op as written (no fused torch.sigmoid, no foreach Adam): ms, medians."""
    import torch
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(N, generator=gen) * 8 - 4
    p, g, m = (torch.rand(N, generator=gen) * 0.2 - 0.1 for _ in range(3))
    v = torch.rand(N, generator=gen) * 0.01
    b1, b2, eps, step = 0.9, 0.999, 1e-8, [0]

    def sigmoid():
        return 1 / (1 + torch.exp(-x))

    def adam():
        step[0] += 1
        t = step[0]
        lr_t = 0.001 * (1 - b2 ** t) ** 0.5 / (1 - b1 ** t)
        m.mul_(b1).add_((1 - b1) * g)
        v.mul_(b2).add_((1 - b2) * g * g)
        p.sub_(lr_t * m / (torch.sqrt(v) + eps))

    with torch.no_grad():
        return {"sigmoid_ms": bu.median_ms(sigmoid, reps), "adam_ms": bu.median_ms(adam, reps)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(bu.REPO, "build"), help="build directory (default build/)")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--json", help="write the figures here")
    bu.add_peer_args(parser)
    args = parser.parse_args()
    bu.fair_allocator_or_reexec()
    peer = bu.describe_peer(args.threads)
    bu.print_peer(peer)
    print("running ir-lazy-bench --only elementwise ...", flush=True)
    ours = lazy_times(args.build, args.reps)
    print("running PyTorch eager ...", flush=True)
    theirs = torch_times(args.reps)
    print("\n4M float32     lazy ms  kernels  torch ms   torch/lazy (goal >= %gx)" % GOAL)
    result = {"peer": peer}
    for name in ("sigmoid", "adam"):
        r = bu.ratio(theirs[name + "_ms"], ours[name + "_ms"], peer)
        print("%-12s %9.3f %8d %9.3f %s" % (name, ours[name + "_ms"], ours[name + "_kernels"], theirs[name + "_ms"],
                                          bu.fmt_ratio(r, 10)))
        result[name] = {"lazy_ms": ours[name + "_ms"], "kernels": ours[name + "_kernels"],
                        "torch_ms": theirs[name + "_ms"], "ratio": r}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return bu.exit_status(peer, args)


if __name__ == "__main__":
    sys.exit(main())
