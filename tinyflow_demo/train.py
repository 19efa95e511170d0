#!/usr/bin/env python3
"""Trains an MNIST classifier with tinyflow, written against TensorFlow 1.x's API.

    PYTHONPATH=tinyflow_demo /usr/bin/python3 tinyflow_demo/train.py            # LeNet + Adam
    ... train.py --model softmax --optimizer sgd --lr 0.5 --epochs 5
    ... train.py --no-fusion --fmax 4 --target opencl --data-dir ~/mnist --out runs/x
    ... train.py --model transformer|mlstm ...    # byte-level language models on text: train_lm.py

Writes metrics.json and curves.png into --out (default .cache/runs/<model>-<timestamp>).

Data-parallel over MPI (tinyflow.horovod; detected from the launcher, or --horovod):

    mpirun --allow-run-as-root -np 2 /usr/bin/python3 tinyflow_demo/train.py --epochs 1

Rank r of N trains on the examples r::N (each rank a batch of --batch-size: the global batch is N times
larger), gradients are averaged over the ranks, every rank starts from rank 0's variables, the test set's
correct counts are summed over the ranks, and only rank 0 prints and writes its files.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinyflow as tf  # noqa: E402
from tinyflow.datasets import mnist  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LR = {"sgd": 0.1, "momentum": 0.05, "adam": 0.002}
DEFAULT_LR_SOFTMAX = {"sgd": 0.5, "momentum": 0.1, "adam": 0.01}


# ---- models (plain TF1 code) ----

def weight(shape, name):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1), name=name)


def bias(shape, name):
    return tf.Variable(tf.constant(0.1, shape=shape), name=name)


def softmax_model(images):
    x = tf.reshape(images, [-1, 784])
    return tf.matmul(x, tf.Variable(tf.zeros([784, 10]), name="W")) + tf.Variable(tf.zeros([10]), name="b")


def mlp_model(images):
    x = tf.reshape(images, [-1, 784])
    h = tf.nn.relu(tf.matmul(x, weight([784, 256], "W1")) + bias([256], "b1"))
    return tf.matmul(h, weight([256, 10], "W2")) + bias([10], "b2")


def lenet_model(images):
    """conv5x5x16 SAME - pool - conv5x5x32 SAME - pool - fc256 - fc10."""
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, weight([5, 5, 1, 16], "conv1_W"), strides=[1, 1, 1, 1],
                                               padding="SAME"), bias([16], "conv1_b")))
    h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, weight([5, 5, 16, 32], "conv2_W"), strides=[1, 1, 1, 1],
                                               padding="SAME"), bias([32], "conv2_b")))
    h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    h = tf.reshape(h, [-1, 7 * 7 * 32])
    h = tf.nn.relu(tf.matmul(h, weight([7 * 7 * 32, 256], "fc1_W")) + bias([256], "fc1_b"))
    return tf.matmul(h, weight([256, 10], "fc2_W")) + bias([10], "fc2_b")


def conv_relu_pool(x, in_ch, out_ch, name):
    """conv5x5 SAME + bias + relu, then 2x2 max pooling."""
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, weight([5, 5, in_ch, out_ch], name + "_W"), strides=[1, 1, 1, 1],
                                               padding="SAME"), bias([out_ch], name + "_b")))
    return tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def deep_mnist_model(images, keep_prob=0.5):
    """TensorFlow's "Deep MNIST for experts": conv5x5x32 - pool - conv5x5x64 - pool - fc1024 - dropout - fc10.

    keep_prob is a Python number: dropout is active in every session created with is_train=True,
    including the demo's evaluation passes (a fed keep_prob is issue 16)."""
    h = conv_relu_pool(conv_relu_pool(images, 1, 32, "conv1"), 32, 64, "conv2")
    h = tf.reshape(h, [-1, 7 * 7 * 64])
    h = tf.nn.relu(tf.matmul(h, weight([7 * 7 * 64, 1024], "fc1_W")) + bias([1024], "fc1_b"))
    h = tf.nn.dropout(h, keep_prob)
    return tf.matmul(h, weight([1024, 10], "fc2_W")) + bias([10], "fc2_b")


MODELS = {"softmax": softmax_model, "mlp": mlp_model, "lenet": lenet_model, "deep_mnist": deep_mnist_model}
LANGUAGE_MODELS = ("transformer", "mlstm")  # trained by train_lm.py on text (--model transformer|mlstm)


def make_optimizer(name, lr):
    if name == "sgd":
        return tf.train.GradientDescentOptimizer(lr)
    if name == "momentum":
        return tf.train.MomentumOptimizer(lr, momentum=0.9)
    return tf.train.AdamOptimizer(lr)


# ---- progress output ----

class Progress(object):
    """A \\r-updated line on a terminal; otherwise a line every `every` seconds."""

    def __init__(self, total, epoch, epochs, every=10.0, metric="acc"):
        self.total, self.epoch, self.epochs, self.every, self.metric = total, epoch, epochs, every, metric
        self.tty = sys.stdout.isatty()
        self.start = self.last = time.time()

    def update(self, step, loss, acc):
        now = time.time()
        if not self.tty and now - self.last < self.every and step != self.total:
            return
        if self.tty and now - self.last < 0.1 and step != self.total:
            return
        self.last = now
        rate = step / max(now - self.start, 1e-9)
        width = 24
        filled = int(width * step / self.total)
        line = "epoch %d/%d [%s%s] %d/%d  %.1f steps/s  loss %.4f  %s %.3f" % (
            self.epoch, self.epochs, "=" * filled, "." * (width - filled), step, self.total, rate, loss, self.metric,
            acc)
        if self.tty:
            sys.stdout.write("\r" + line)
            if step == self.total:
                sys.stdout.write("\n")
        else:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()


# ---- training ----

def evaluate(sess, accuracy_sum, images_ph, labels_ph, dataset, batch_size=500, reduce_counts=None):
    """Test accuracy; with reduce_counts (data-parallel: each rank holds a shard of the test set) the
    ranks' correct and total counts summed over the ranks."""
    correct = 0.0
    for xs, ys in dataset.batches(batch_size, drop_last=False):
        correct += sess.run(accuracy_sum, {images_ph: xs, labels_ph: ys})
    counts = np.array([correct, dataset.num_examples], np.float64)
    if reduce_counts is not None:
        counts = reduce_counts(sess, counts)
    return counts[0] / counts[1]


# ---- data-parallel training (tinyflow.horovod) ----

def launched_by_mpirun():
    """Whether an MPI launcher (Open MPI's or MPICH's) started this process."""
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))


def shard(dataset, rank, size, equal=True):
    """Rank `rank`'s examples rank::size of `dataset`; with `equal`, every rank's shard cut to the same
    length (so every rank runs the same number of steps: the steps' allreduces must pair up)."""
    part = mnist.DataSet.__new__(mnist.DataSet)
    count = dataset.num_examples // size if equal else None
    part.images, part.labels = dataset.images[rank::size][:count], dataset.labels[rank::size][:count]
    return part


def fusion_summary(graph):
    groups = graph.fusion_groups() or []
    names = [n for n in (graph.attr("kernel_names") or []) if n]
    return {"fusion_groups": len(groups), "generated_kernels": len(set(names)),
            "fused_nodes": sum(len(g.get("members", [])) for g in groups if isinstance(g, dict))}


def plot(metrics, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    steps = metrics["step_loss"]
    ax1.plot(np.arange(1, len(steps) + 1), steps, lw=0.5, alpha=0.4, label="per step")
    if len(steps) >= 20:
        k = max(len(steps) // 50, 5)
        smooth = np.convolve(steps, np.ones(k) / k, mode="valid")
        ax1.plot(np.arange(k, len(steps) + 1), smooth, label="moving average (%d)" % k)
    ax1.set_xlabel("step")
    ax1.set_ylabel("training loss")
    ax1.set_yscale("log")
    ax1.legend()
    epochs = [e["epoch"] for e in metrics["epochs"]]
    ax2.plot(epochs, [e["train_accuracy"] for e in metrics["epochs"]], "o-", label="train")
    ax2.plot(epochs, [e["test_accuracy"] for e in metrics["epochs"]], "s-", label="test")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("accuracy")
    ax2.legend()
    a = metrics["args"]
    fig.suptitle("tinyflow %s / %s on %s (fusion %s)" % (a["model"], a["optimizer"], a["target"],
                                                         "off" if a["no_fusion"] else "on"))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS) + list(LANGUAGE_MODELS), default="lenet",
                   help="an MNIST model, or a byte-level language model (see train_lm.py --help)")
    p.add_argument("--optimizer", choices=["sgd", "momentum", "adam"], default="adam")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=None, help="default: sgd 0.1, momentum 0.05, adam 0.002 (softmax: 0.5, 0.1, 0.01)")
    p.add_argument("--lr-decay", type=float, default=0.8, help="learning rate factor per epoch")
    p.add_argument("--target", choices=["cpu", "opencl", "cuda"], default="cpu")
    p.add_argument("--no-fusion", action="store_true", help="run every op's own kernel (no Fusion/CodeGen)")
    p.add_argument("--fmax", type=int, default=None, help="most array inputs of one fused kernel")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data-dir", default=None, help="directory of MNIST IDX files (default: scripts/fetch_mnist.py)")
    p.add_argument("--limit-train", type=int, default=None, help="use only the first N training digits")
    p.add_argument("--out", default=None, help="output directory (default .cache/runs/<model>-<timestamp>)")
    p.add_argument("--horovod", action="store_true", help="data-parallel over MPI (default: when mpirun started it)")
    return p.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    model = argparse.ArgumentParser(add_help=False)
    model.add_argument("--model")
    if model.parse_known_args(argv)[0].model in LANGUAGE_MODELS:
        import train_lm  # the byte-level language models: their own options (train_lm.py --help)
        return train_lm.main(argv)
    args = parse_args(argv)
    lr = args.lr if args.lr is not None else (DEFAULT_LR_SOFTMAX if args.model == "softmax" else DEFAULT_LR)[args.optimizer]
    hvd = None
    if args.horovod or launched_by_mpirun():
        import tinyflow.horovod as hvd
        hvd.init()
    rank, size = (hvd.rank(), hvd.size()) if hvd else (0, 1)
    chief = rank == 0
    log = print if chief else (lambda *a, **k: None)
    out_dir = args.out or os.path.join(REPO, ".cache", "runs", "%s-%s" % (args.model, time.strftime("%Y%m%d-%H%M%S")))
    if chief:
        os.makedirs(out_dir, exist_ok=True)
    data = mnist.load(args.data_dir, limit_train=args.limit_train)
    log("data: %d train / %d test digits from %s" % (data.train.num_examples, data.test.num_examples,
                                                     data.directory))
    reduce_counts = None
    if hvd:
        data.train, data.test = shard(data.train, rank, size), shard(data.test, rank, size, equal=False)
        counts_ph = tf.placeholder(tf.float64, [2], name="eval_counts")
        counts_sum = hvd.allreduce(counts_ph, op=hvd.Sum, name="eval_counts_sum")
        reduce_counts = lambda sess, counts: sess.run(counts_sum, {counts_ph: counts})  # noqa: E731
        log("data-parallel over %s: %d ranks, %d training digits each, global batch %d" % (
            hvd.transport(), size, data.train.num_examples, args.batch_size * size))

    tf.set_random_seed(args.seed)
    images = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    logits = MODELS[args.model](images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    correct = tf.cast(tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), labels), tf.float32)
    accuracy = tf.reduce_mean(correct)
    correct_sum = tf.reduce_sum(correct)
    learning_rate = tf.placeholder(tf.float32, [], name="learning_rate")  # decayed per epoch
    optimizer = make_optimizer(args.optimizer, learning_rate)
    train_op = (hvd.DistributedOptimizer(optimizer) if hvd else optimizer).minimize(loss)
    broadcast = hvd.broadcast_global_variables(0) if hvd else None

    rng = np.random.RandomState(args.seed + rank)
    steps_per_epoch = data.train.num_examples // args.batch_size
    metrics = {"args": vars(args), "lr": lr, "library": tf.LIB_PATH, "epochs": [], "step_loss": [], "ranks": size}
    log("model %s, optimizer %s (lr %g), batch %d, %d steps/epoch, target %s, fusion %s%s" % (
        args.model, args.optimizer, lr, args.batch_size, steps_per_epoch, args.target,
        "off" if args.no_fusion else "on", "" if args.fmax is None else " (fmax %d)" % args.fmax))
    started = time.time()
    with tf.Session(target=args.target, fusion=not args.no_fusion, fmax=args.fmax, seed=args.seed) as sess:
        sess.run(tf.global_variables_initializer())
        if broadcast is not None:
            sess.run(broadcast)
        train_seconds = 0.0
        for epoch in range(1, args.epochs + 1):
            progress = Progress(steps_per_epoch, epoch, args.epochs) if chief else None
            losses, accs = [], []
            epoch_start = time.time()
            epoch_lr = lr * args.lr_decay ** (epoch - 1)
            for step, (xs, ys) in enumerate(data.train.batches(args.batch_size, rng), 1):
                _, step_loss, step_acc = sess.run([train_op, loss, accuracy], {images: xs, labels: ys,
                                                                           learning_rate: epoch_lr})
                losses.append(float(step_loss))
                accs.append(float(step_acc))
                if progress:
                    progress.update(step, np.mean(losses[-50:]), np.mean(accs[-50:]))
                if epoch == 1 and step == 1:
                    train_stats = sess.stats()
                    train_graph = sess.last_graph()
                    metrics["train_step"] = {"kernels_launched": train_stats["kernels_launched"],
                                             "bind_ms": train_stats["bind_ms"],
                                             "bytes_allocated": train_stats["bytes_allocated"],
                                             "bytes_without_reuse": train_stats["bytes_without_reuse"],
                                             "host_fallbacks": train_stats["host_fallbacks"]}
                    metrics["train_step"].update(fusion_summary(train_graph))
                    epoch_start = time.time()  # leave the one-time binding and compilation out of the rate
            seconds = time.time() - epoch_start
            train_seconds += seconds
            test_acc = evaluate(sess, correct_sum, images, labels, data.test, reduce_counts=reduce_counts)
            record = {"epoch": epoch, "loss": float(np.mean(losses)), "train_accuracy": float(np.mean(accs)),
                      "test_accuracy": float(test_acc), "seconds": seconds, "lr": epoch_lr,
                      "steps_per_s": (len(losses) - (1 if epoch == 1 else 0)) / max(seconds, 1e-9)}
            metrics["epochs"].append(record)
            metrics["step_loss"].extend(losses)
            log("epoch %d: loss %.4f  train acc %.4f  test acc %.4f  %.1f steps/s  (%.1fs)" % (
                epoch, record["loss"], record["train_accuracy"], test_acc, record["steps_per_s"], seconds))
    metrics["test_accuracy"] = metrics["epochs"][-1]["test_accuracy"]
    metrics["total_seconds"] = time.time() - started
    metrics["steps_per_s"] = float(np.median([e["steps_per_s"] for e in metrics["epochs"]]))
    if not chief:
        return metrics
    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    plot(metrics, os.path.join(out_dir, "curves.png"))
    ts = metrics.get("train_step", {})
    print("final test accuracy %.4f  (%.1f steps/s, %.0fs total; a training step launches %s kernels, "
          "%s fusion groups)" % (metrics["test_accuracy"], metrics["steps_per_s"], metrics["total_seconds"],
                                 ts.get("kernels_launched"), ts.get("fusion_groups")))
    print("wrote %s and %s" % (os.path.join(out_dir, "metrics.json"), os.path.join(out_dir, "curves.png")))
    return metrics


if __name__ == "__main__":
    main()
