#!/usr/bin/env python3
"""F_max sweep of a training step (the Dali paper's Figure 1) and cold / warm / cached optimization
of its graph (Dali's Tables 1 and 7), on the byte-level Transformer, the mLSTM, LeNet or one Adam
update (tinyflow_demo/models, tinyflow_demo/train.py).

Configurations: fusion off, F_max 1..8, and unbounded (F_max 64: then only the 64 kernel arguments
bound a group; the CPU's default F_max is 8). Each runs in a new process (its peak RSS is its own):
build the step, bind it (passes and kernel compilation: the first run), run --steps more steps, and
report the median step time, the memory plan (sess.stats(): bytes_allocated and its lower bound),
the process's peak RSS (ru_maxrss: Python, the library, the variables and the plan), kernels
launched per step, fusion groups, each step's loss, and the fusions the F_max bound refused: the
Fusion pass's graph attribute "fusion_log" lines "... unique inputs N > F_max K" (one per refused
merge attempt or epilogue anchor; there is no counter besides this log).

Then the optimization of the step's graph in new processes (at the default F_max):
 - cold: empty kernel cache (IR_KERNEL_CACHE_DIR a new directory): bind = passes + gcc;
 - warm: a new process with the disk cache the cold one filled: passes + cache loads, 0 compilations;
 - rebind: a new Session on the same graph in the warm process: the passes again, kernels from the
   in-memory cache;
 - cached: the next run in the same session: the bound plan is reused (no pass, no lookup of
   kernels); its cost is the run's time outside the executor (Python's and the session's plan
   lookups, feeds, fetches), an upper bound of the lookups.

    /usr/bin/python3 bench/fmax_sweep.py --model transformer --preset small --steps 10 \\
        --json fmax_transformer.json --plot fmax_transformer.png
"""
import argparse
import collections
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
import tinyflow as tf  # noqa: E402

MODELS = ("transformer", "mlstm", "lenet", "adam")
DEFAULT_BATCH = {"transformer": 16, "mlstm": 16, "lenet": 64, "adam": 16 << 20}
#: F_max of the "unbounded" configuration: kMaxKernelInputs, the bound on a kernel's arguments.
UNBOUNDED = 64
#: (label, fusion, fmax) of every configuration, in the order they run and print.
CONFIGS = [("unfused", False, None)] + [(str(k), True, k) for k in range(1, 9)] + [("unbounded", True, UNBOUNDED)]
#: A line of "fusion_log" the F_max bound caused; groups: the refused node (or group) and its op.
FMAX_REFUSAL = re.compile(r"^(?:cannot fuse (?:reduction )?|cannot anchor the group of )?'[^']*' \(([^)]*)\).*"
                          r"unique inputs \d+ > F_max")
#: What a refusal refused, by the words of its log line: a node alone (its own inputs exceed F_max),
#: joining an elementwise group, a reduction joining its input's group, an epilogue joining its anchor.
REFUSAL_KINDS = [("alone", "is not fused"), ("reduction", "cannot fuse reduction"), ("merge", "cannot fuse"),
                 ("epilogue", "cannot anchor")]


class Step(object):
    """A model's training step: `fetches` (the loss first when `has_loss`), `feeds`, and a one-line description."""

    def __init__(self, fetches, feeds, describe, has_loss=True):
        self.fetches, self.feeds, self.describe, self.has_loss = fetches, feeds, describe, has_loss


def build_step(model, preset="small", batch=None, seq=None, dropout=0.0, seed=1):
    """The training step of `model` in a new default graph (variables seeded by `seed`). Language
    models: random bytes [batch, seq + 1], Adam at 2e-3, dropout `dropout` (0: none in the graph);
    lenet: random 28x28 images; adam: one AdamOptimizer update of a variable of `batch` floats."""
    tf.reset_default_graph()
    tf.set_random_seed(seed)
    rng = np.random.RandomState(seed)
    batch = batch or DEFAULT_BATCH[model]
    if model in ("transformer", "mlstm"):
        from models import lm
        config = dict(lm.ARCHITECTURES[model].CONFIGS[preset])
        if seq:
            config["seq_len"] = seq
        net = lm.build(model, config, dropout=dropout)
        feeds = {net.tokens: rng.randint(0, 256, (batch, config["seq_len"] + 1)).astype(np.int32),
                 net.learning_rate: 2e-3}
        if net.keep_prob is not None:
            feeds[net.keep_prob] = net.train_keep_prob
        text = "%s %s (%s), batch %d x %d bytes, Adam, dropout %g" % (
            model, preset, ", ".join("%s %s" % kv for kv in sorted(config.items())), batch, config["seq_len"], dropout)
        return Step([net.loss, net.train_op], feeds, text)
    if model == "lenet":
        from train import lenet_model
        images = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
        labels = tf.placeholder(tf.int32, [None], name="labels")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                             logits=lenet_model(images)))
        train = tf.train.AdamOptimizer(0.001).minimize(loss)
        feeds = {images: rng.rand(batch, 28, 28, 1).astype(np.float32),
                 labels: rng.randint(0, 10, batch).astype(np.int32)}
        return Step([loss, train], feeds, "LeNet training step (Adam, batch %d)" % batch)
    if model == "adam":
        w = tf.Variable(tf.zeros([batch]), name="w")
        g = tf.placeholder(tf.float32, [batch], name="g")
        train = tf.train.AdamOptimizer(0.001).apply_gradients([(g, w)])
        return Step([train], {g: rng.rand(batch).astype(np.float32)}, "Adam update of %d floats" % batch,
                    has_loss=False)
    raise ValueError("unknown model %r (one of %s)" % (model, ", ".join(MODELS)))


def fusion_report(graph):
    """Fusion groups of a bound graph and the refusals of its F_max bound, from its fusion_log."""
    log = graph.attr("fusion_log") or []
    refused = [line for line in log if "> F_max" in line]
    by_op, by_kind = collections.Counter(), collections.Counter()
    for line in refused:
        match = FMAX_REFUSAL.match(line)
        by_op[match.group(1) if match else "?"] += 1
        by_kind[next((kind for kind, words in REFUSAL_KINDS if words in line), "?")] += 1
    return {"fusion_groups": len(graph.fusion_groups() or []), "fusion_log_lines": len(log),
            "refused_fmax": len(refused), "refused_fmax_by_op": dict(by_op.most_common()),
            "refused_fmax_by_kind": dict(by_kind.most_common()),
            "refused_fmax_examples": refused[:12]}


def run_config(step_builder, fusion, fmax, steps):
    """Binds and runs `steps` + 1 training steps of step_builder() in a new session; one row of the sweep
    (times in ms, the first step's bind included in first_ms only)."""
    step = step_builder()
    with tf.Session(fusion=fusion, fmax=fmax, seed=1) as sess:
        sess.run(tf.global_variables_initializer())
        losses, times = [], []
        for _ in range(steps + 1):
            start = time.perf_counter()
            out = sess.run(step.fetches, step.feeds)
            times.append((time.perf_counter() - start) * 1e3)
            if step.has_loss:
                losses.append(float(out[0]))
        stats = sess.stats()
        row = {"kernels": stats["kernels_launched"], "plan_bytes": stats["bytes_allocated"],
               "lower_bound_bytes": stats["memory_lower_bound_bytes"],
               "no_reuse_bytes": stats["bytes_without_reuse"], "first_ms": times[0],
               "ms_per_step": float(np.median(times[1:])) if steps else None, "losses": losses}
        row.update(fusion_report(sess.last_graph()))
    return row


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def child_command(args, *extra):
    return [sys.executable, os.path.abspath(__file__), "--model", args.model, "--preset", args.preset,
            "--batch", str(args.batch or 0), "--seq", str(args.seq or 0), "--dropout", str(args.dropout)] + list(extra)


def run_child(command, env=None):
    out = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def sweep(args, configs=CONFIGS):
    """One row per configuration, each measured in a new process, --repeat rounds over all of them
    (interleaved, so that a burst of load on the machine hits one round of each, not one configuration):
    ms_per_step is the fastest round's median, ms_rounds every round's."""
    rows = [None] * len(configs)
    for _ in range(args.repeat):
        for i, (label, _, _) in enumerate(configs):
            row = run_child(child_command(args, "--steps", str(args.steps), "--config", label))
            rounds = (rows[i]["ms_rounds"] if rows[i] else []) + [row["ms_per_step"]]
            rows[i] = dict(row, config=label, ms_rounds=rounds, ms_per_step=min(rounds))
            print("  %-9s %9.2f ms  %5d kernels  plan %8.2f MiB  rss %7.1f MiB  %3d refused" % (
                label, row["ms_per_step"], row["kernels"], row["plan_bytes"] / 2.0 ** 20, row["peak_rss"] / 2.0 ** 20,
                row["refused_fmax"]), flush=True)
    return rows


def print_sweep(title, rows):
    print("\n" + title)
    print("  %-9s %10s %8s %8s %10s %10s %9s %s" % ("F_max", "ms/step", "kernels", "groups", "plan MiB", "RSS MiB",
                                                    "refused", "loss (first, last)"))
    for r in rows:
        print("  %-9s %10.2f %8d %8d %10.2f %10.1f %9d %s" % (
            r["config"], r["ms_per_step"], r["kernels"], r["fusion_groups"], r["plan_bytes"] / 2.0 ** 20,
            r.get("peak_rss", 0) / 2.0 ** 20, r["refused_fmax"],
            "%.6f, %.6f" % (r["losses"][0], r["losses"][-1]) if r["losses"] else "-"))


def bind_twice(step_builder):
    """In this process: the first run (bind) of step_builder()'s step, the next run (the plan reused),
    and a new Session on the same graph (rebind: passes again, kernels from the memory cache)."""
    step = step_builder()
    result = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = time.perf_counter()
        sess.run(step.fetches, step.feeds)
        result["first_ms"] = (time.perf_counter() - start) * 1e3
        stats = sess.stats()
        graph = sess.last_graph()
        timings = graph.pass_timings() or []
        result.update(bind_ms=stats["bind_ms"], rtc=graph.attr("rtc_stats", {}), pass_timings=timings)
        cached = []
        for _ in range(5):
            start = time.perf_counter()
            sess.run(step.fetches, step.feeds)
            wall = (time.perf_counter() - start) * 1e3
            again = sess.stats()
            cached.append({"wall_ms": wall, "run_ms": again["run_ms"], "bound": again["bound"],
                           "outside_executor_ms": wall - again["run_ms"]})
        result["cached"] = cached
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step.fetches, step.feeds)
        result["rebind_ms"] = sess.stats()["bind_ms"]
        result["rebind_rtc"] = sess.last_graph().attr("rtc_stats", {})
    return result


def compile_report(args):
    """Cold and warm binds in new processes sharing a new kernel cache directory."""
    with tempfile.TemporaryDirectory(prefix="ir-kernel-cache-") as cache:
        env = dict(os.environ, IR_KERNEL_CACHE_DIR=cache)
        cold = run_child(child_command(args, "--bind-child"), env)
        warm = run_child(child_command(args, "--bind-child"), env)
    return {"cold": cold, "warm": warm}


def summarize_compile(report):
    cold, warm = report["cold"], report["warm"]
    cached_ms = float(np.median([c["outside_executor_ms"] for c in cold["cached"]]))
    second_ms = float(np.median([c["wall_ms"] for c in cold["cached"]]))
    compile_ms = sum(t.get("ms", 0) for t in cold["pass_timings"] if t.get("pass") == "RTCGen")
    return {"cold_bind_ms": cold["bind_ms"], "cold_compile_ms": compile_ms, "cold_first_ms": cold["first_ms"],
            "cold_compilations": cold["rtc"].get("compilations"), "warm_bind_ms": warm["bind_ms"],
            "warm_compilations": warm["rtc"].get("compilations"), "warm_disk_hits": warm["rtc"].get("disk_hits"),
            "rebind_ms": warm["rebind_ms"], "cached_ms": cached_ms, "second_step_ms": second_ms,
            "cached_bound": any(c["bound"] for c in cold["cached"]),
            "cold_over_cached": cold["bind_ms"] / cached_ms, "cold_over_warm": cold["bind_ms"] / warm["bind_ms"],
            "cold_over_rebind": cold["bind_ms"] / warm["rebind_ms"],
            "cold_first_over_second_step": cold["first_ms"] / second_ms}


def print_compile(title, s):
    print("\n" + title)
    print("  cold (new process, empty kernel cache): bind %.1f ms (RTCGen %.1f ms, %s compilations), first step "
          "%.1f ms" % (s["cold_bind_ms"], s["cold_compile_ms"], s["cold_compilations"], s["cold_first_ms"]))
    print("  warm (new process, disk cache):         bind %.1f ms (%s compilations, %s disk hits)" % (
        s["warm_bind_ms"], s["warm_compilations"], s["warm_disk_hits"]))
    print("  rebind (new Session, same process):     bind %.1f ms (passes again, kernels in memory)" % s["rebind_ms"])
    print("  cached (next run, plan reused, bound=%s): %.3f ms outside the executor (step %.1f ms)" % (
        s["cached_bound"], s["cached_ms"], s["second_step_ms"]))
    print("  cold/cached %.0fx, cold/warm %.1fx, cold/rebind %.1fx, cold first step / cached step %.1fx" % (
        s["cold_over_cached"], s["cold_over_warm"], s["cold_over_rebind"], s["cold_first_over_second_step"]))


def plot(title, rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fused = [r for r in rows if r["config"] != "unfused"]
    unfused = [r for r in rows if r["config"] == "unfused"]
    labels = [r["config"] if r["config"] != "unbounded" else "%d\n(unbounded)" % UNBOUNDED for r in fused]
    x = np.arange(len(fused))
    panels = [("step time (ms, median)", "ms_per_step", 1.0), ("memory plan (MiB)", "plan_bytes", 2.0 ** -20),
              ("kernels per step", "kernels", 1.0)]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, (ylabel, key, scale) in zip(axes, panels):
        ax.plot(x, [r[key] * scale for r in fused], "o-", label="fused")
        if unfused:
            ax.axhline(unfused[0][key] * scale, color="gray", ls="--", label="fusion off")
        if key == "plan_bytes":
            ax.plot(x, [r["peak_rss"] * scale for r in fused], "s-", label="peak RSS of the process")
            ax.set_ylim(bottom=0)
        ax.set_xticks(x)
        ax.set_xticklabels(labels)
        ax.set_xlabel("F_max")
        ax.set_ylabel(ylabel)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=MODELS, default="transformer")
    p.add_argument("--preset", default="small", help="language models: dali|small|tiny")
    p.add_argument("--batch", type=int, default=0, help="batch size (adam: floats); 0: %s" % DEFAULT_BATCH)
    p.add_argument("--seq", type=int, default=0, help="language models: sequence length (0: the preset's)")
    p.add_argument("--dropout", type=float, default=0.0, help="language models: dropout rate (0: no dropout ops)")
    p.add_argument("--steps", type=int, default=10, help="timed steps per configuration (after the bind)")
    p.add_argument("--repeat", type=int, default=1, help="rounds over all configurations (the fastest counts)")
    p.add_argument("--no-compile", action="store_true", help="skip the cold/warm/cached binds")
    p.add_argument("--json", default=None)
    p.add_argument("--plot", default=None, help="PNG of step time, memory and kernels against F_max")
    p.add_argument("--config", default=None, help=argparse.SUPPRESS)  # child: one configuration
    p.add_argument("--bind-child", action="store_true", help=argparse.SUPPRESS)  # child: bind_twice
    return p.parse_args(argv)


def builder(args):
    return lambda: build_step(args.model, args.preset, args.batch or None, args.seq or None, args.dropout)


def main(argv=None):
    args = parse_args(argv)
    if args.config is not None:
        _, fusion, fmax = next(c for c in CONFIGS if c[0] == args.config)
        row = run_config(builder(args), fusion, fmax, args.steps)
        print(json.dumps(dict(row, peak_rss=peak_rss_bytes())))
        return
    if args.bind_child:
        print(json.dumps(dict(bind_twice(builder(args)), peak_rss=peak_rss_bytes())))
        return
    title = builder(args)().describe
    print("%s: %d timed steps per configuration, each in a new process, %d round(s)" % (title, args.steps, args.repeat),
          flush=True)
    results = {"model": args.model, "describe": title, "args": vars(args), "library": tf.LIB_PATH,
               "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load_before": os.getloadavg()}
    results["sweep"] = sweep(args)
    print_sweep(title, results["sweep"])
    if not args.no_compile:
        results["compile"] = compile_report(args)
        results["compile_summary"] = summarize_compile(results["compile"])
        print_compile("Optimizing the step's graph (default F_max)", results["compile_summary"])
    results["load_after"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        plot(title, results["sweep"], args.plot)
    return results


if __name__ == "__main__":
    main()
