"""One rank of a tinyflow.horovod test job, launched by test_horovod.py under mpirun (or alone: one rank).

    hvd_worker.py train OUT_DIR --steps 100 --global-batch 128 [--optimizers sgd,adam]
    hvd_worker.py collectives OUT_DIR
    hvd_worker.py mismatch OUT_DIR --kind names|order

Each rank writes what it saw to OUT_DIR/<case>-rank<r>.npz / .json; the test compares the ranks' files.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "tinyflow_demo"))
import tinyflow as tf  # noqa: E402
import tinyflow.horovod as hvd  # noqa: E402

FEATURES, HIDDEN, CLASSES, EXAMPLES = 20, 16, 4, 1024
# float64 where the optimizer allows it (tinyflow's Adam keeps its step and lr_t in float32, so it cannot
# update float64 variables): 2 x 64 and 1 x 128 sum the batch in a different order.
DTYPES = {"sgd": tf.float64, "adam": tf.float32}


def dataset():
    """The same examples on every rank (a fixed seed): features and a label from a random linear rule."""
    rng = np.random.RandomState(7)
    x = rng.randn(EXAMPLES, FEATURES)
    y = np.argmax(x.dot(rng.randn(FEATURES, CLASSES)), axis=1).astype(np.int32)
    return x, y


def mlp(x, seed, dtype):
    """An MLP 20-16-4 whose initial values depend on `seed` (each rank passes its own: the broadcast of rank
    0's variables must make them equal)."""
    rng = np.random.RandomState(seed)
    w1 = tf.Variable(rng.randn(FEATURES, HIDDEN) * 0.3, dtype=dtype, name="w1")
    b1 = tf.Variable(rng.randn(HIDDEN) * 0.1, dtype=dtype, name="b1")
    w2 = tf.Variable(rng.randn(HIDDEN, CLASSES) * 0.3, dtype=dtype, name="w2")
    b2 = tf.Variable(rng.randn(CLASSES) * 0.1, dtype=dtype, name="b2")
    return tf.matmul(tf.tanh(tf.matmul(x, w1) + b1), w2) + b2, [w1, b1, w2, b2]


def params_digest(values):
    return hashlib.sha256(b"".join(np.ascontiguousarray(v).tobytes() for v in values)).hexdigest()


def train(args):
    """Trains the MLP with each optimizer; this rank takes its contiguous slice of every global batch (the
    same data order as one rank with the whole batch). Records every step's parameters and their hash."""
    rank, size = hvd.rank(), hvd.size()
    if args.global_batch % size:
        raise SystemExit("global batch %d does not divide over %d ranks" % (args.global_batch, size))
    local = args.global_batch // size
    xs, ys = dataset()
    out = {}
    for name in args.optimizers.split(","):
        tf.reset_default_graph()
        dtype = DTYPES[name]
        x = tf.placeholder(dtype, [None, FEATURES], name="x")
        y = tf.placeholder(tf.int32, [None], name="y")
        logits, params = mlp(x, 100 + rank, dtype)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        opt = tf.train.GradientDescentOptimizer(0.5) if name == "sgd" else tf.train.AdamOptimizer(0.01)
        train_op = hvd.DistributedOptimizer(opt).minimize(loss)
        bcast = hvd.broadcast_global_variables(0)
        history, digests, losses = [], [], []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(bcast)
            for step in range(args.steps):
                batch = np.arange(step * args.global_batch, (step + 1) * args.global_batch) % EXAMPLES
                mine = batch[rank * local:(rank + 1) * local]
                feed = {x: xs[mine].astype(dtype.as_numpy_dtype), y: ys[mine]}
                _, loss_value = sess.run([train_op, loss], feed)
                values = sess.run(params)
                history.append(np.concatenate([v.ravel() for v in values]))
                digests.append(params_digest(values))
                losses.append(float(loss_value))
        out[name + "_params"] = np.array(history)
        out[name + "_digests"] = np.array(digests)
        out[name + "_losses"] = np.array(losses)
    np.savez(os.path.join(args.out, "train-rank%d.npz" % rank), size=size, **out)


def collectives(args):
    """allgather with a different first dimension per rank, broadcast, broadcast_global_variables, and
    BroadcastGlobalVariablesHook under MonitoredTrainingSession."""
    rank, size = hvd.rank(), hvd.size()
    result = {"rank": rank, "size": size, "local_rank": hvd.local_rank(), "local_size": hvd.local_size(),
              "transport": hvd.transport()}
    mine = np.arange((rank + 1) * 3, dtype=np.float32).reshape(rank + 1, 3) + 100 * rank
    gathered = hvd.allgather(tf.constant(mine), name="gather_rows")
    shared = hvd.broadcast(tf.constant(np.full([2, 2], rank + 1, np.int64)), root_rank=size - 1)
    summed = hvd.allreduce(tf.constant(np.full([3], float(rank + 1))), op=hvd.Sum)
    averaged = hvd.allreduce(tf.constant(np.full([3], float(rank + 1))))
    v = tf.Variable(np.random.RandomState(rank).randn(4, 3), name="v")  # differs per rank
    before_and_after = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g, s, total, mean = sess.run([gathered, shared, summed, averaged])
        before_and_after.append(sess.run(v).tolist())
        sess.run(hvd.broadcast_global_variables(0))
        before_and_after.append(sess.run(v).tolist())
    result.update(gathered=g.tolist(), broadcast=s.tolist(), sum=total.tolist(), average=mean.tolist(),
                  variable=before_and_after)

    tf.reset_default_graph()
    w = tf.Variable(np.random.RandomState(10 + rank).randn(3), name="w")
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.square(w))
    train_op = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss, global_step=step)
    hooks = [hvd.BroadcastGlobalVariablesHook(0), tf.train.StopAtStepHook(last_step=3)]
    with tf.train.MonitoredTrainingSession(hooks=hooks) as mon:
        first = mon.run(w).tolist()  # right after the hook's broadcast
        while not mon.should_stop():
            mon.run(train_op)
        result["hook"] = {"first": first, "last": mon.run(w).tolist(), "steps": int(mon.run(step))}
    with open(os.path.join(args.out, "collectives-rank%d.json" % rank), "w") as f:
        json.dump(result, f)


def mismatch(args):
    """Ranks that disagree: a differently named tensor on rank 1, or two allreduces built in the other order."""
    rank = hvd.rank()
    a = tf.constant(np.ones([4]), name="a")
    b = tf.constant(np.ones([8]), name="b")
    if args.kind == "names":
        fetches = [hvd.allreduce(a, name="grad_on_rank%d" % rank)]
    else:
        first, second = (a, b) if rank == 0 else (b, a)
        fetches = [hvd.allreduce(first, name="sum_of_" + first.op.name)]
        fetches.append(hvd.allreduce(second + fetches[0][0], name="sum_of_" + second.op.name))
    with tf.Session() as sess:
        sess.run(fetches)
    with open(os.path.join(args.out, "mismatch-rank%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "completed": True}, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=["train", "collectives", "mismatch"])
    p.add_argument("out")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--global-batch", type=int, default=128)
    p.add_argument("--optimizers", default="sgd,adam")
    p.add_argument("--kind", choices=["names", "order"], default="names")
    args = p.parse_args()
    hvd.init()
    {"train": train, "collectives": collectives, "mismatch": mismatch}[args.case](args)
    hvd.shutdown()


if __name__ == "__main__":
    main()
