#!/usr/bin/env python3
"""Trains a byte-level language model with tinyflow on English text (TensorFlow 1.x's API):

    PYTHONPATH=tinyflow_demo /usr/bin/python3 tinyflow_demo/train.py --model transformer   # or train_lm.py
    ... train.py --model mlstm --preset small --epochs 4 --steps 100
    ... train.py --model transformer --preset dali --batch-size 16 --no-fusion --target opencl

The text is the nlp-corpus@4.4.0 npm package's English sentences (MIT), fetched once by
scripts/fetch_text.py; held-out documents give the evaluation's bits per character. Each epoch is
--steps Adam steps on random windows of seq_len + 1 bytes, then the loss and bits per character on
--eval-windows fixed held-out windows. At the end a sample (seeded, at --temperature) is printed.
Writes metrics.json, curves.png and sample.txt into --out (default .cache/runs/<model>-<timestamp>).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinyflow as tf  # noqa: E402
from models import lm, mlstm, text, transformer  # noqa: E402
from train import Progress, fusion_summary  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = {"transformer": transformer.CONFIGS, "mlstm": mlstm.CONFIGS}
DEFAULTS = {"transformer": dict(preset="small", batch_size=16, lr=2e-3),
            "mlstm": dict(preset="small", batch_size=16, lr=2e-3)}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(lm.ARCHITECTURES), default="transformer")
    p.add_argument("--preset", default=None, help="transformer: dali|small|tiny, mlstm: dali|small|tiny "
                                                  "(default small)")
    p.add_argument("--hidden", type=int, default=None, help="override the preset's hidden size")
    p.add_argument("--seq-len", type=int, default=None, help="override the preset's sequence length")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--steps", type=int, default=100, help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=None, help="default 16")
    p.add_argument("--lr", type=float, default=None, help="Adam's learning rate (default 2e-3)")
    p.add_argument("--lr-decay", type=float, default=0.8, help="learning rate factor per epoch")
    p.add_argument("--dropout", type=float, default=0.1, help="dropout rate while training")
    p.add_argument("--clip", type=float, default=1.0, help="gradients' global norm clip")
    p.add_argument("--eval-windows", type=int, default=128, help="held-out windows per evaluation")
    p.add_argument("--sample-length", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--prompt", default="The ")
    p.add_argument("--target", choices=["cpu", "opencl", "cuda"], default="cpu")
    p.add_argument("--no-fusion", action="store_true", help="run every op's own kernel (no Fusion/CodeGen)")
    p.add_argument("--fmax", type=int, default=None, help="most array inputs of one fused kernel")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data-dir", default=None, help="directory of train.txt and valid.txt "
                                                    "(default: scripts/fetch_text.py)")
    p.add_argument("--out", default=None, help="output directory (default .cache/runs/<model>-<timestamp>)")
    args = p.parse_args(argv)
    for key, value in DEFAULTS[args.model].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.preset not in PRESETS[args.model]:
        p.error("--preset for %s: one of %s" % (args.model, ", ".join(sorted(PRESETS[args.model]))))
    return args


def plot(metrics, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    steps = np.array(metrics["step_loss"]) / np.log(2.0)
    ax1.plot(np.arange(1, len(steps) + 1), steps, lw=0.5, alpha=0.4, label="training, per step")
    if len(steps) >= 20:
        k = max(len(steps) // 50, 5)
        ax1.plot(np.arange(k, len(steps) + 1), np.convolve(steps, np.ones(k) / k, mode="valid"),
                 label="training, moving average (%d)" % k)
    evals = metrics["evals"]
    ax1.plot([e["step"] for e in evals], [e["bpc"] for e in evals], "s-", label="held-out")
    ax1.set_xlabel("step")
    ax1.set_ylabel("bits per character")
    ax1.legend()
    ax2.plot([e["step"] for e in evals], [e["loss"] for e in evals], "s-", label="held-out loss (nats)")
    ax2.set_xlabel("step")
    ax2.set_ylabel("cross-entropy (nats)")
    ax2.legend()
    a = metrics["args"]
    fig.suptitle("tinyflow %s (%s) on nlp-corpus, %s (fusion %s)" % (a["model"], a["preset"], a["target"],
                                                                   "off" if a["no_fusion"] else "on"))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    config = dict(PRESETS[args.model][args.preset])
    if args.hidden is not None:
        config["hidden"] = args.hidden
    if args.seq_len is not None:
        config["seq_len"] = args.seq_len
    out_dir = args.out or os.path.join(REPO, ".cache", "runs", "%s-%s" % (args.model, time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(out_dir, exist_ok=True)
    train_data, valid_data, directory = text.load(args.data_dir)
    seq_len = config["seq_len"]
    held_out = text.eval_windows(valid_data, seq_len + 1, args.eval_windows)
    print("data: %d training bytes, %d held-out bytes (%d windows evaluated) from %s"
          % (len(train_data), len(valid_data), len(held_out), directory))

    tf.set_random_seed(args.seed)
    model = lm.build(args.model, config, clip=args.clip, dropout=args.dropout)
    params = sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())
    print("model %s (%s: %s), %d parameters, batch %d x %d bytes, Adam lr %g, dropout %g, %d steps/epoch, "
          "target %s, fusion %s%s" % (args.model, args.preset, ", ".join("%s %s" % kv for kv in sorted(config.items())),
                                       params, args.batch_size, seq_len, args.lr, args.dropout, args.steps,
                                       args.target, "off" if args.no_fusion else "on",
                                       "" if args.fmax is None else " (fmax %d)" % args.fmax))
    metrics = {"args": vars(args), "config": config, "parameters": params, "library": tf.LIB_PATH,
               "epochs": [], "evals": [], "step_loss": []}
    rng = np.random.RandomState(args.seed)
    started = time.time()
    with tf.Session(target=args.target, fusion=not args.no_fusion, fmax=args.fmax, seed=args.seed) as sess:
        sess.run(tf.global_variables_initializer())
        loss0, bpc0 = model.evaluate(sess, held_out, args.batch_size)
        metrics["evals"].append({"step": 0, "loss": loss0, "bpc": bpc0})
        print("before training: held-out loss %.4f  bpc %.3f" % (loss0, bpc0))
        step_count = 0
        for epoch in range(1, args.epochs + 1):
            progress = Progress(args.steps, epoch, args.epochs, metric="bpc")
            losses = []
            epoch_start = time.time()
            epoch_lr = args.lr * args.lr_decay ** (epoch - 1)
            for step in range(1, args.steps + 1):
                batch = text.random_windows(train_data, args.batch_size, seq_len + 1, rng)
                losses.append(model.train_step(sess, batch, epoch_lr))
                progress.update(step, np.mean(losses[-20:]), np.mean(losses[-20:]) / np.log(2.0))
                if epoch == 1 and step == 1:
                    stats = sess.stats()
                    metrics["train_step"] = {k: stats.get(k) for k in ("kernels_launched", "bind_ms", "bytes_allocated",
                                                                       "bytes_without_reuse", "host_fallbacks")}
                    metrics["train_step"].update(fusion_summary(sess.last_graph()))
                    epoch_start = time.time()  # leave the one-time binding and compilation out of the rate
            seconds = time.time() - epoch_start
            step_count += len(losses)
            eval_start = time.time()
            loss, bpc = model.evaluate(sess, held_out, args.batch_size)
            record = {"epoch": epoch, "step": step_count, "train_loss": float(np.mean(losses)),
                      "train_bpc": float(np.mean(losses) / np.log(2.0)), "loss": loss, "bpc": bpc,
                      "seconds": seconds, "eval_seconds": time.time() - eval_start, "lr": epoch_lr,
                      "steps_per_s": (len(losses) - (1 if epoch == 1 else 0)) / max(seconds, 1e-9)}
            metrics["epochs"].append(record)
            metrics["evals"].append({"step": step_count, "loss": loss, "bpc": bpc})
            metrics["step_loss"].extend(losses)
            print("epoch %d: train loss %.4f (%.3f bpc)  held-out loss %.4f  bpc %.3f  %.2f steps/s  (%.1fs)" % (
                epoch, record["train_loss"], record["train_bpc"], loss, bpc, record["steps_per_s"], seconds))
        sample = model.sample(sess, args.prompt.encode("utf-8"), args.sample_length, args.temperature, args.seed)
    metrics["bpc"] = metrics["evals"][-1]["bpc"]
    metrics["total_seconds"] = time.time() - started
    metrics["steps_per_s"] = float(np.median([e["steps_per_s"] for e in metrics["epochs"]]))
    metrics["sample"] = (args.prompt.encode("utf-8") + sample).decode("utf-8", errors="replace")
    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    with open(os.path.join(out_dir, "sample.txt"), "w", encoding="utf-8") as f:
        f.write(metrics["sample"] + "\n")
    plot(metrics, os.path.join(out_dir, "curves.png"))
    ts = metrics.get("train_step", {})
    print("sample (temperature %g, seed %d):\n%s" % (args.temperature, args.seed, metrics["sample"]))
    print("final held-out bpc %.3f (from %.3f; %.2f steps/s, %.0fs total; a training step launches %s kernels, "
          "%s fusion groups)" % (metrics["bpc"], bpc0, metrics["steps_per_s"], metrics["total_seconds"],
                                 ts.get("kernels_launched"), ts.get("fusion_groups")))
    print("wrote %s, curves.png and sample.txt" % os.path.join(out_dir, "metrics.json"))
    return metrics


if __name__ == "__main__":
    main()
