#!/usr/bin/env python3
"""Training-step throughput: tinyflow with fusion on and off against PyTorch eager on the CPU.

For every batch size x model x optimizer: the same model (the demo trainer's MODELS, and the
same layers in PyTorch), the same batch, the same step (forward, backward, update). The three
runs are interleaved: `--reps` rounds, each timing one repetition of every framework, a
repetition lasting about `--rep-seconds` (steps per repetition are calibrated on the warm-up).
Reported: median steps/s, kernels launched per step, minor page faults per step, and the ratios
fused/unfused and fused/PyTorch -- the latter only against a fair PyTorch peer (bench_util.py).

    /usr/bin/python3 bench/train_vs_pytorch.py [--models softmax,mlp,lenet,deep_mnist]
        [--optimizers sgd,adam] [--batch-sizes 64,256] [--reps 5] [--build DIR] [--json FILE]

The byte-level language models of tinyflow_demo/models (--models transformer,mlstm) run Adam on
--lm-batch windows of --preset's sequence length (no dropout, gradients clipped to norm 1), PyTorch's
twin (bench/lm_torch_peer.py) starting from tinyflow's initial weights (the first losses must agree);
each framework runs in its own process, which gives each its own peak RSS (VmHWM). (Until the
frontend's protos were renamed ir_tf_*.proto, package ir.tfproto, tinyflow and Debian's torch aborted
in one process: torch loads OpenCV's dnn module, which registers its own tensor_shape.proto.)
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np

import bench_util as bu

MODELS = ["softmax", "mlp", "lenet", "deep_mnist"]
LM_MODELS = ["transformer", "mlstm"]
FRAMEWORKS = ["fused", "unfused", "torch"]
GOAL_VS_TORCH = 2.5  # issue 11, goal 6


def load_tinyflow(build):
    if build:
        os.environ["TINYFLOW_LIB"] = os.path.join(os.path.abspath(build), "lib", "libir.so")
    sys.path.insert(0, os.path.join(bu.REPO, "tinyflow_demo"))
    import tinyflow
    import train
    return tinyflow, train


def batch(size, seed=0):
    rng = np.random.RandomState(seed)
    return rng.rand(size, 28, 28, 1).astype(np.float32), rng.randint(0, 10, size).astype(np.int32)


class Runner(object):
    """One framework's training step, timed a repetition at a time."""

    def __init__(self, step, kernels=None):
        self.step, self.kernels, self.steps, self.rates, self.faults = step, kernels, 1, [], []

    def warm_up(self, seconds, rep_seconds):
        """Runs steps for about `seconds` (at least 2), then sets the steps per repetition."""
        self.step()
        start, n = time.perf_counter(), 0
        while n < 2 or time.perf_counter() - start < seconds:
            self.step()
            n += 1
        per_step = (time.perf_counter() - start) / n
        self.steps = int(min(max(rep_seconds / per_step, 1), 5000))

    def rep(self):
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        for _ in range(self.steps):
            self.step()
        self.rates.append(self.steps / (time.perf_counter() - start))
        self.faults.append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / float(self.steps))

    def result(self):
        return {"steps_per_s": statistics.median(self.rates), "rates": self.rates, "steps_per_rep": self.steps,
                "kernels": self.kernels() if self.kernels else None,
                "minor_faults_per_step": statistics.median(self.faults)}


def tinyflow_runners(tf, demo, model, optimizer, lr, xs, ys):
    """Fused and unfused sessions over one graph (their own variables each)."""
    tf.reset_default_graph()
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [None])
    logits = demo.MODELS[model](images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = demo.make_optimizer(optimizer, lr).minimize(loss)
    feed = {images: xs, labels: ys}
    runners, sessions = {}, []
    for fusion in (True, False):
        sess = tf.Session(fusion=fusion)
        sess.run(tf.global_variables_initializer())
        sessions.append(sess)
        runners["fused" if fusion else "unfused"] = Runner(
            lambda s=sess: s.run(train, feed), lambda s=sess: s.stats()["kernels_launched"])
    return runners, sessions


def torch_model(model):
    import torch.nn as nn

    def conv_pool(cin, cout):
        return [nn.Conv2d(cin, cout, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2)]
    if model == "softmax":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    if model == "lenet":
        return nn.Sequential(*conv_pool(1, 16), *conv_pool(16, 32), nn.Flatten(),
                             nn.Linear(7 * 7 * 32, 256), nn.ReLU(), nn.Linear(256, 10))
    if model == "deep_mnist":
        return nn.Sequential(*conv_pool(1, 32), *conv_pool(32, 64), nn.Flatten(), nn.Linear(7 * 7 * 64, 1024),
                             nn.ReLU(), nn.Dropout(0.5), nn.Linear(1024, 10))
    raise ValueError("unknown model %s" % model)


def torch_runner(model, optimizer, lr, xs, ys):
    import torch
    torch.manual_seed(0)
    net = torch_model(model).train()
    opt = {"sgd": lambda p: torch.optim.SGD(p, lr), "momentum": lambda p: torch.optim.SGD(p, lr, momentum=0.9),
           "adam": lambda p: torch.optim.Adam(p, lr)}[optimizer](net.parameters())
    x = torch.from_numpy(xs.transpose(0, 3, 1, 2).copy())  # NCHW, PyTorch's native layout
    y = torch.from_numpy(ys.astype(np.int64))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    return Runner(step)


def bench_row(tf, demo, model, optimizer, batch_size, args):
    lr = (demo.DEFAULT_LR_SOFTMAX if model == "softmax" else demo.DEFAULT_LR)[optimizer]
    xs, ys = batch(batch_size)
    runners, sessions = tinyflow_runners(tf, demo, model, optimizer, lr, xs, ys)
    runners["torch"] = torch_runner(model, optimizer, lr, xs, ys)
    try:
        for name in FRAMEWORKS:
            runners[name].warm_up(args.warmup_seconds, args.rep_seconds)
        for _ in range(args.reps):  # interleaved: drift of the machine hits every framework alike
            for name in FRAMEWORKS:
                runners[name].rep()
        return {name: runners[name].result() for name in FRAMEWORKS}
    finally:
        for sess in sessions:
            sess.close()


def lm_text(length, seed=0):
    """Deterministic English-like bytes (the bench's timing does not depend on the text's content)."""
    words = b"the of and to in is was that for it with as his on be at by this had not are but from".split()
    rng = np.random.RandomState(seed)
    return np.frombuffer(b" ".join(words[i] for i in rng.randint(0, len(words), length // 3)), np.uint8)[:length]


def lm_tinyflow(tf, architecture, config, fusion):
    """(lm.LanguageModel without dropout, its initialized session) in a new default graph."""
    from models import lm
    tf.reset_default_graph()
    tf.set_random_seed(0)
    model = lm.LanguageModel(architecture, config, clip=1.0, dropout=0.0)
    sess = tf.Session(fusion=fusion, seed=0)
    sess.run(tf.global_variables_initializer())
    return model, sess


def lm_batch(config, batch_size):
    sys.path.insert(0, os.path.join(bu.REPO, "tinyflow_demo"))
    from models import text  # (numpy only: no tinyflow)
    return text.random_windows(lm_text(200000), batch_size, config["seq_len"] + 1, np.random.RandomState(1))


def lm_config(architecture, args):
    """The preset's config; read from the module's source, since importing tinyflow_demo/models' modules
    imports tinyflow, and tinyflow (libir_tensorflow's protobuf files) and torch abort in one process."""
    import ast
    source = open(os.path.join(bu.REPO, "tinyflow_demo", "models", architecture + ".py")).read()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CONFIGS":
            configs = eval(compile(ast.Expression(node.value), "CONFIGS", "eval"), {"__builtins__": {}, "dict": dict})
            config = dict(configs[args.preset])
            if args.seq_len:
                config["seq_len"] = args.seq_len
            return config
    raise ValueError("no CONFIGS in models/%s.py" % architecture)


def peak_rss_kib():
    """This process' peak RSS: VmHWM (ru_maxrss would count the parent's: Linux keeps it across fork and exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def lm_child(args):
    """In a fresh process, one framework's language-model step: warm-up, --reps timed repetitions, kernels
    per step, the first loss, peak RSS (VmHWM); a JSON line on stdout. The fused run writes the
    initial weights to --lm-init, which the unfused and PyTorch runs read (the same start for all)."""
    architecture, framework = args.lm_child.split(":")
    config = json.loads(args.lm_config)
    xs = lm_batch(config, args.lm_batch)
    lr = 1e-3
    if framework == "torch":
        import torch
        import lm_torch_peer
        torch.set_num_threads(args.threads)
        with np.load(args.lm_init) as f:
            initial = {k.replace("|", "/"): f[k] for k in f.files}
        base = peak_rss_kib()
        trainer = lm_torch_peer.Trainer(architecture, config, initial, lr)
        first = float(trainer.loss(xs))
        runner = Runner(lambda: trainer.step(xs))
    else:
        tf, _ = load_tinyflow(args.build)
        base = peak_rss_kib()
        model, sess = lm_tinyflow(tf, architecture, config, framework == "fused")
        variables = {v.name.split(":")[0]: v for v in tf.trainable_variables()}
        if framework == "fused":
            values = sess.run(list(variables.values()))
            np.savez(args.lm_init, **{k.replace("/", "|"): v for k, v in zip(variables, values)})
        else:
            with np.load(args.lm_init) as f:
                for k in f.files:
                    variables[k.replace("|", "/")].load(f[k], sess)
        first = float(sess.run(model.loss, {model.tokens: xs}))
        runner = Runner(lambda: sess.run(model.train_op, {model.tokens: xs, model.learning_rate: lr}),
                        lambda: sess.stats()["kernels_launched"])
    runner.warm_up(args.warmup_seconds, args.rep_seconds)
    for _ in range(args.reps):
        runner.rep()
    result = runner.result()
    result.update(first_loss=first, peak_rss_kib=peak_rss_kib(),
                  base_rss_kib=base)
    print(json.dumps(result))


def lm_row(architecture, args):
    """fused, unfused and PyTorch, each in its own process (see lm_child), one after the other, --lm-rounds times."""
    import subprocess
    import tempfile
    config = lm_config(architecture, args)
    row = {"config": config}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.lm_rounds):  # rounds of fused, unfused, torch: load drift hits all three
            for framework in FRAMEWORKS:
                cmd = [sys.executable, os.path.abspath(__file__), "--lm-child", "%s:%s" % (architecture, framework),
                       "--lm-init", os.path.join(tmp, "initial.npz"), "--lm-config", json.dumps(config),
                       "--lm-batch", str(args.lm_batch), "--threads", str(args.threads), "--reps", str(args.reps),
                       "--rep-seconds", str(args.rep_seconds), "--warmup-seconds", str(args.warmup_seconds)]
                cmd += ["--build", args.build] if args.build else []
                out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout.decode()
                result = json.loads(out.strip().splitlines()[-1])
                if framework in row:  # a later round: its rates join the median, its peak RSS the maximum
                    result["rates"] = row[framework]["rates"] + result["rates"]
                    result["steps_per_s"] = statistics.median(result["rates"])
                    result["peak_rss_kib"] = max(result["peak_rss_kib"], row[framework]["peak_rss_kib"])
                row[framework] = result
    return row


def print_lm_table(rows, args, peer):
    print("\nlanguage models, preset %s, batch %d, Adam: steps/s (median), kernels per step, peak RSS MiB "
          "(each framework's own process), first loss" % (args.preset, args.lm_batch))
    print("%-11s %8s %8s %8s %11s %20s %8s %9s  %s" % ("model", "fused", "unfused", "torch", "kernels f/u",
                                                      "peak RSS f/u/t", "f/unf", "f/torch", "first loss f/u/t"))
    for model, r in rows:
        f, u, t = (r[k]["steps_per_s"] for k in FRAMEWORKS)
        rss = "/".join("%.0f" % (r[k].get("peak_rss_kib", float("nan")) / 1024.0) for k in FRAMEWORKS)
        print("%-11s %8.2f %8.2f %8.2f %5d/%-5d %20s %8.2f %9s  %s" % (
            model, f, u, t, r["fused"]["kernels"], r["unfused"]["kernels"], rss, f / u,
            bu.fmt_ratio(bu.ratio(f, t, peer)), "/".join("%.5f" % r[k]["first_loss"] for k in FRAMEWORKS)))


def print_table(batch_size, rows, peer):
    print("\ntraining step, batch %d: steps/s (median), kernels per step, minor page faults per step" % batch_size)
    print("%-11s %-5s %9s %9s %9s %8s %10s %8s %9s" % ("model", "opt", "fused", "unfused", "torch", "kernels",
                                                        "faults f/t", "f/unf", "f/torch"))
    worst = None
    for (model, optimizer), r in rows:
        f, u, t = (r[k]["steps_per_s"] for k in FRAMEWORKS)
        vs_torch = bu.ratio(f, t, peer)
        if vs_torch is not None:
            worst = vs_torch if worst is None else min(worst, vs_torch)
        print("%-11s %-5s %9.1f %9.1f %9.1f %4d/%-4d %4.0f/%-5.0f %8.2f %9s%s" % (
            model, optimizer, f, u, t, r["fused"]["kernels"], r["unfused"]["kernels"],
            r["fused"]["minor_faults_per_step"], r["torch"]["minor_faults_per_step"], f / u, bu.fmt_ratio(vs_torch),
            "" if vs_torch is None or vs_torch >= GOAL_VS_TORCH else "  < %.1f" % GOAL_VS_TORCH))
    if worst is not None:
        print("lowest fused/torch at batch %d: %.2f (goal 6: >= %.1f on every row)" % (batch_size, worst,
                                                                                         GOAL_VS_TORCH))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--optimizers", default="sgd,adam", help="comma-separated: sgd, momentum, adam")
    p.add_argument("--batch-sizes", default="64,256")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per framework (median)")
    p.add_argument("--rep-seconds", type=float, default=0.4, help="about how long one repetition lasts")
    p.add_argument("--warmup-seconds", type=float, default=0.3)
    p.add_argument("--build", default=None, help="build directory whose lib/libir.so to use (default: build/)")
    p.add_argument("--json", default=None, help="also write every figure and the peer's description here")
    p.add_argument("--preset", default="small", help="the language models' preset (tiny, small, dali)")
    p.add_argument("--seq-len", type=int, default=None, help="override the language models' sequence length")
    p.add_argument("--lm-batch", type=int, default=16, help="the language models' batch (windows)")
    p.add_argument("--lm-rounds", type=int, default=2,
                   help="rounds of the language models' three processes (their rates' median)")
    p.add_argument("--lm-child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--lm-init", default=None, help=argparse.SUPPRESS)
    p.add_argument("--lm-config", default=None, help=argparse.SUPPRESS)
    bu.add_peer_args(p)
    args = p.parse_args()
    for model in args.models.split(","):
        if model not in MODELS + LM_MODELS:
            p.error("unknown model %s (known: %s)" % (model, ", ".join(MODELS + LM_MODELS)))
    for opt in args.optimizers.split(","):
        if opt not in ("sgd", "momentum", "adam"):
            p.error("unknown optimizer %s" % opt)
    return args


def main():
    args = parse_args()
    bu.fair_allocator_or_reexec()
    if args.lm_child:
        return lm_child(args)
    lm_models = [m for m in args.models.split(",") if m in LM_MODELS]
    mnist_models = [m for m in args.models.split(",") if m in MODELS]
    tf, demo = load_tinyflow(args.build) if mnist_models else (None, None)
    peer = bu.describe_peer(args.threads)
    bu.print_peer(peer)
    library = tf.LIB_PATH if tf else os.environ.get("TINYFLOW_LIB", args.build or "build/")
    print("tinyflow library %s; each figure the median of %d repetitions of ~%.1f s (interleaved for the MNIST "
          "models; the language models' frameworks each in a fresh process)" % (library, args.reps, args.rep_seconds))
    results = {"peer": peer, "library": library, "reps": args.reps, "rep_seconds": args.rep_seconds,
               "goal_fused_vs_torch": GOAL_VS_TORCH, "batches": {}}
    if lm_models:
        rows = []
        for model in lm_models:
            sys.stderr.write("%s (%s, batch %d) ...\n" % (model, args.preset, args.lm_batch))
            sys.stderr.flush()
            rows.append((model, lm_row(model, args)))
        print_lm_table(rows, args, peer)
        sys.stdout.flush()
        results["language_models"] = [dict(model=m, preset=args.preset, batch=args.lm_batch, **r) for m, r in rows]
    for batch_size in [int(b) for b in args.batch_sizes.split(",")] if mnist_models else []:
        rows = []
        for model in mnist_models:
            for optimizer in args.optimizers.split(","):
                sys.stderr.write("batch %d, %s, %s ...\n" % (batch_size, model, optimizer))
                sys.stderr.flush()
                rows.append(((model, optimizer), bench_row(tf, demo, model, optimizer, batch_size, args)))
        print_table(batch_size, rows, peer)
        sys.stdout.flush()
        results["batches"][str(batch_size)] = [dict(model=m, optimizer=o, **r) for (m, o), r in rows]
        for row in results["batches"][str(batch_size)]:
            row["fused_vs_unfused"] = row["fused"]["steps_per_s"] / row["unfused"]["steps_per_s"]
            row["fused_vs_torch"] = bu.ratio(row["fused"]["steps_per_s"], row["torch"]["steps_per_s"], peer)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return bu.exit_status(peer, args)


if __name__ == "__main__":
    sys.exit(main())
