#!/usr/bin/env python3
"""Fused kernels of ir vs PyTorch eager on the same workloads, measured in one run.

Runs <build>/bin/ir-fusion-bench --only ops: per workload the fused and unfused times, kernel
counts and bytes, and STREAM triad / in-place update measured in the same run (the fraction of
STREAM a fused kernel reaches). Then the same workloads in PyTorch: written op by op as in the
ir graph (where this script knows the graph), and PyTorch's own native op (torch.softmax,
F.layer_norm, ...). A workload this script has no PyTorch peer for is printed without a ratio;
so is every workload when the PyTorch peer is unfair (bench_util.py). Medians of --reps runs.

Usage: /usr/bin/python3 bench/fusion_vs_pytorch.py [--build DIR] [--n ELEMENTS] [--reps R] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import bench_util as bu

#: Workloads compared with the in-place STREAM loop when ir-fusion-bench's JSON does not say.
IN_PLACE = {"Adam update (w, m, v)"}


def torch_tensors(n):
    import torch
    torch.manual_seed(0)
    cols = 1024
    x = torch.rand(n) * 2 - 1
    t = {"x": x, "x2": x.view(n // cols, cols), "cols": cols, "gamma": torch.rand(cols), "beta": torch.rand(cols),
         "w": torch.rand(n), "m": torch.rand(n), "g": torch.rand(n), "v": torch.rand(n) * 0.9 + 0.1,
         "labels": torch.randint(0, cols, (n // cols,))}
    t["dy"] = torch.rand_like(t["x2"])
    return t


def sigmoid_peer(t):
    import torch
    x = t["x"]
    return (lambda: 1.0 / (torch.exp(-x) + 1.0)), (lambda: torch.sigmoid(x)), "torch.sigmoid"


def adam_peer(t):
    import torch
    w, m, v, g = t["w"], t["m"], t["v"], t["g"]

    def ops():
        m.mul_(0.9).add_(g * 0.1)
        v.mul_(0.999).add_(g * g * 0.001)
        w.sub_(m / (v.sqrt() + 1e-8) * 1e-3)
    param = torch.nn.Parameter(w.clone())
    param.grad = g.clone()
    return ops, torch.optim.Adam([param], lr=1e-3, foreach=True).step, "optim.Adam foreach"


def softmax_peer(t):
    import torch
    x2 = t["x2"]

    def ops():
        e = torch.exp(x2 - x2.max(dim=1, keepdim=True).values)
        return e / e.sum(dim=1, keepdim=True)
    return ops, (lambda: torch.softmax(x2, dim=1)), "torch.softmax"


def log_softmax_peer(t):
    import torch
    return None, (lambda: torch.log_softmax(t["x2"], dim=1)), "torch.log_softmax"


def layer_norm_peer(t):
    import torch
    import torch.nn.functional as F
    x2, gamma, beta, cols = t["x2"], t["gamma"], t["beta"], t["cols"]

    def ops():
        c = x2 - x2.mean(dim=1, keepdim=True)
        var = (c * c).mean(dim=1, keepdim=True)
        return c * torch.rsqrt(var + 1e-5) * gamma + beta
    return ops, (lambda: F.layer_norm(x2, (cols,), gamma, beta)), "F.layer_norm"


def layer_norm_backward_peer(t):
    import torch
    import torch.nn.functional as F
    x = t["x2"].clone().requires_grad_()
    gamma, beta = t["gamma"].clone().requires_grad_(), t["beta"].clone().requires_grad_()
    y = F.layer_norm(x, (t["cols"],), gamma, beta)
    return None, (lambda: torch.autograd.grad(y, [x, gamma, beta], t["dy"], retain_graph=True)), \
        "F.layer_norm backward"


def xent_peer(t):
    import torch
    import torch.nn.functional as F
    logits = t["x2"].clone().requires_grad_()

    def step():
        return torch.autograd.grad(F.cross_entropy(logits, t["labels"]), [logits])
    return None, step, "F.cross_entropy fwd+bwd"


#: (words that must all occur in the lower-cased workload name, peer), most specific first.
PEERS = [(("layer norm", "backward"), layer_norm_backward_peer), (("layer norm", "dx"), layer_norm_backward_peer),
         (("log", "softmax"), log_softmax_peer),
         (("xent",), xent_peer), (("cross", "entropy"), xent_peer), (("softmax",), softmax_peer),
         (("layer norm",), layer_norm_peer), (("sigmoid",), sigmoid_peer), (("adam",), adam_peer)]


def peer_for(name):
    """The PyTorch peer builder of an ir-fusion-bench workload, or None for one this script does not know."""
    lower = name.lower()
    for words, peer in PEERS:
        if all(w in lower for w in words):
            return peer
    return None


def torch_times(workloads, n, reps):
    """{name: (ops_ms or None, native_ms, native name)} for the workloads that have a peer."""
    tensors = torch_tensors(n)
    times = {}
    for w in workloads:
        peer = peer_for(w["name"])
        if peer is None:
            continue
        ops, native, native_name = peer(tensors)
        times[w["name"]] = (bu.median_ms(ops, reps) if ops else None, bu.median_ms(native, reps), native_name)
    return times


def stream_fraction(w, ours):
    if "stream_fraction" in w:
        return w["stream_fraction"]
    in_place = w.get("in_place", w["name"] in IN_PLACE)
    stream = ours["stream_update_gbs"] if in_place else ours["stream_triad_gbs"]
    return w["min_bytes"] / w["fused_ms"] / 1e6 / stream


def run_fusion_bench(bench, n, reps):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([bench, "--n", str(n), "--reps", str(reps), "--only", "ops", "--json", out.name], check=True)
        with open(out.name) as f:
            return json.load(f)


def print_table(ours, theirs, peer):
    print("\n%-26s %9s %9s %9s %7s %7s %9s %8s %9s %8s" % (
        "workload", "kernels", "fused ms", "unfus ms", "f/unf", "STREAM", "torch ops", "ops/f", "native", "nat/f"))
    for w in ours["workloads"]:
        ops_ms, native_ms, native = theirs.get(w["name"], (None, None, "no PyTorch peer"))
        ops_ratio = bu.ratio(ops_ms, w["fused_ms"], peer) if ops_ms else None
        native_ratio = bu.ratio(native_ms, w["fused_ms"], peer) if native_ms else None
        print("%-26s %4d/%-4d %9.2f %9.2f %6.2fx %6.0f%% %9s %8s %9s %8s  (%s)" % (
            w["name"], w["fused_kernels"], w["unfused_kernels"], w["fused_ms"], w["unfused_ms"],
            w["unfused_ms"] / w["fused_ms"], 100 * w["stream_fraction"],
            "%.2f" % ops_ms if ops_ms else "-", bu.fmt_ratio(ops_ratio), "%.2f" % native_ms if native_ms else "-",
            bu.fmt_ratio(native_ratio), native))
    print("(STREAM: the fused kernel's minimal bytes / time over STREAM triad, or the in-place update loop for\n"
          " in-place workloads, measured in the same run: triad %.1f GB/s, update %.1f GB/s; ratios > 1: ir's\n"
          " fused kernel is faster; PyTorch eager, %d threads)" % (ours["stream_triad_gbs"],
                                                                  ours["stream_update_gbs"], peer["threads"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=16 << 20)
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--build", default=os.path.join(bu.REPO, "build"), help="build directory (default build/)")
    bu.add_peer_args(parser)
    args = parser.parse_args()
    bench = os.path.join(args.build, "bin", "ir-fusion-bench")
    if not os.path.exists(bench):
        sys.exit("build first: scripts/build.sh (missing %s)" % bench)
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("PyTorch is not installed (apt-get install python3-torch)")
    bu.fair_allocator_or_reexec()
    peer = bu.describe_peer(args.threads)
    bu.print_peer(peer)
    sys.stdout.flush()
    ours = run_fusion_bench(bench, args.n, args.reps)
    for w in ours["workloads"]:
        w["stream_fraction"] = stream_fraction(w, ours)
    theirs = torch_times(ours["workloads"], args.n, args.reps)
    print_table(ours, theirs, peer)
    if args.json:
        for w in ours["workloads"]:
            if w["name"] in theirs:
                ops_ms, native_ms, native = theirs[w["name"]]
                w.update({"torch_ops_ms": ops_ms, "torch_native_ms": native_ms, "torch_native": native,
                          "native_vs_fused": bu.ratio(native_ms, w["fused_ms"], peer)})
        ours["peer"] = peer
        with open(args.json, "w") as f:
            json.dump(ours, f, indent=1)
    return bu.exit_status(peer, args)


if __name__ == "__main__":
    sys.exit(main())
