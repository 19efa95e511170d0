#!/usr/bin/env python3
"""The kernels e^x and tanh dominate (softmax, log-softmax, softmax cross-entropy, exp, tanh,
sigmoid, erf) as a fraction of STREAM triad and against PyTorch, for one or more builds of ir
in ONE run (say main's build before a change and this tree's after it), so that their ratios
share the machine's state.

Per build: ir-fusion-bench --only rows (STREAM triad and the row workloads written op by op,
fused into generated kernels) and ir-ops-bench (the opaque softmax ops and the elementwise ops,
fusion off); the builds alternate `--rounds` times and each figure is the best round (a shared
machine's noise only slows a run down). PyTorch runs the same ops once per round (2 threads).
"% STREAM" is the bytes a perfect kernel moves (inputs read once, outputs written once) over the
time, over the best triad of all rounds (on a shared machine a round's own triad swings 2-3x).

Usage: /usr/bin/python3 bench/vector_math_vs_pytorch.py [--build DIR ...] [--rounds N] [--reps R]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import bench_util as bu
from bench_util import REPO, median_ms  # noqa: E402  (sets OPENBLAS_NUM_THREADS)

N = 4 << 20
ROWS, COLS = 4096, 1024
#: ir-ops-bench case -> (bytes a perfect kernel moves, PyTorch case name)
OPS = {
    "exp 4M": 8 * N,
    "tanh 4M": 8 * N,
    "sigmoid 4M": 8 * N,
    "erf 4M": 8 * N,
    "softmax 4096x1024": 8 * ROWS * COLS,
    "log_softmax 4096x1024": 8 * ROWS * COLS,
    # logits read, backprop written, labels read and loss written (one value per row each).
    "sparse softmax xent 4096x1024": 8 * ROWS * COLS + 16 * ROWS,
}
#: ir-fusion-bench row workloads (its own byte counts).
ROW_WORKLOADS = ["softmax as 5 ops", "log-softmax as 6 ops", "softmax-xent fwd+bwd", "layer norm as 9 ops"]


def torch_cases():
    import torch
    torch.set_num_threads(2)
    r = lambda *shape: torch.rand(*shape) * 2 - 1  # noqa: E731
    a, m = r(N), r(ROWS, COLS)
    labels = (torch.arange(ROWS) * 7919) % COLS
    y = torch.rand(ROWS, COLS)
    gamma, beta = r(COLS), r(COLS)

    def sparse_xent():
        log_p = torch.log_softmax(m, dim=1)
        loss = -log_p.gather(1, labels[:, None])[:, 0]
        backprop = log_p.exp_()
        backprop[torch.arange(ROWS), labels] -= 1
        return loss, backprop

    def dense_xent():  # the fused workload's math: loss and softmax - y
        log_p = torch.log_softmax(m, dim=1)
        return -(y * log_p).sum(dim=1), log_p.exp_() - y

    return {
        "exp 4M": lambda: torch.exp(a),
        "tanh 4M": lambda: torch.tanh(a),
        "sigmoid 4M": lambda: torch.sigmoid(a),
        "erf 4M": lambda: torch.erf(a),
        "softmax 4096x1024": lambda: torch.softmax(m, dim=1),
        "log_softmax 4096x1024": lambda: torch.log_softmax(m, dim=1),
        "sparse softmax xent 4096x1024": sparse_xent,
        "softmax as 5 ops": lambda: torch.softmax(m, dim=1),
        "log-softmax as 6 ops": lambda: torch.log_softmax(m, dim=1),
        "softmax-xent fwd+bwd": dense_xent,
        "layer norm as 9 ops": lambda: torch.nn.functional.layer_norm(m, (COLS,), gamma, beta, 1e-5),
    }


def run_build(build, reps):
    """{name: ms} of the ops and the row workloads, and the triad GB/s of the same run."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([os.path.join(build, "bin", "ir-fusion-bench"), "--n", str(ROWS * COLS), "--reps", str(reps),
                        "--only", "rows", "--json", f.name], check=True, stdout=subprocess.DEVNULL)
        rows = json.load(open(f.name))
    out = {w["name"]: (w["fused_ms"], w["min_bytes"]) for w in rows["workloads"] if w["name"] in ROW_WORKLOADS}
    bench = os.path.join(build, "bin", "ir-ops-bench")
    for name, nbytes in OPS.items():
        text = subprocess.run([bench, "--reps", str(reps), "--only", name], check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout
        got = json.loads(text)
        if name in got:  # an older build may lack a case (erf)
            out[name] = (got[name], nbytes)
    return out, rows["stream_triad_gbs"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", help="a build directory (repeat; default: build/)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--json", default=None, help="also write the results here")
    bu.add_peer_args(parser)
    args = parser.parse_args()
    builds = args.build or [os.path.join(REPO, "build")]
    bu.fair_allocator_or_reexec()
    try:
        peer = bu.describe_peer(args.threads)
        cases = torch_cases()
    except ImportError:
        sys.exit("PyTorch is not installed (apt-get install python3-torch)")
    bu.print_peer(peer)
    best = {b: {} for b in builds}  # build -> name -> (ms, bytes, triad of that round)
    torch_best, triads = {}, []
    for _ in range(args.rounds):
        for b in builds:
            ours, triad = run_build(b, args.reps)
            triads.append(triad)
            for name, (ms, nbytes) in ours.items():
                if name not in best[b] or ms < best[b][name][0]:
                    best[b][name] = (ms, nbytes, triad)
        for name, fn in cases.items():
            torch_best[name] = min(torch_best.get(name, float("inf")), median_ms(fn, args.reps))
    print("STREAM triad over the rounds: %s GB/s" % ", ".join("%.1f" % t for t in triads))
    head = "%-32s" % "case" + "".join(" | %8s %7s %7s" % ("ms", "STREAM", "torch/") for _ in builds)
    print("\n" + "".join("%-32s" % "") + "".join(" | %-24s" % os.path.relpath(b, REPO)[-24:] for b in builds))
    print(head + " | %8s" % "torch ms")
    results = {}
    for name in list(OPS) + ROW_WORKLOADS:
        line = "%-32s" % name
        for b in builds:
            if name not in best[b]:
                line += " | %24s" % "-"
                continue
            ms, nbytes, _ = best[b][name]
            frac = nbytes / ms / 1e6 / max(triads)
            r = bu.ratio(torch_best[name], ms, peer)
            line += " | %8.2f %6.0f%% %6sx" % (ms, 100 * frac, bu.fmt_ratio(r, 6))
            results.setdefault(name, {})[b] = {"ms": ms, "stream_fraction": frac, "torch_over_ir": r}
        line += " | %8.2f" % torch_best[name]
        results.setdefault(name, {})["torch_ms"] = torch_best[name]
        print(line)
    print("(fused rows: ir-fusion-bench's graphs, one generated kernel per row group; the others: one op, fusion\n"
          " off. torch/: torch ms over ir ms, > 1: ir is faster. Best of %d rounds each.)" % args.rounds)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "triads": triads, "peer": peer}, f, indent=1)
    return bu.exit_status(peer, args)


if __name__ == "__main__":
    sys.exit(main())
