#!/usr/bin/env python3
"""Rewrite rules (issue 14): what the Simplify pass removes, and what it makes faster.

1. Op nodes before fusion, rules off vs on:
   (a) the real TensorFlow graphs in ../shared/tf_graphs (imported in process by the TFImport
       pass of libir_tensorflow.so, as tests/frontends/tensorflow/real_graphs_test.cc imports
       them: same outputs and feed shapes), after TFImport, InferShape, InferType, FoldConstants
       (TFSession's pipeline before fusion) against the same followed by Simplify;
   (b) tinyflow training graphs (softmax regression with the hand-written cross-entropy, and
       tinyflow_demo/train.py's MLP and LeNet with its loss): the bound graph of a session with
       fusion=False. Rules off is Session(simplify=False), which reaches the gradients too
       (they are built without rules; the session applies them when it binds the graph); rules
       on is the default. Each side builds its own graph.
2. Step time, median of --reps repetitions (bench_util.median_ms), rules off / rules on (fusion on),
   off and on as in 1b:
   (a) a training step of softmax regression (784 -> 10, batch 100) written as the "MNIST for
       ML beginners" tutorial writes it: y = softmax(xW + b), -reduce_sum(y_ * log(y), [1]);
   (b) the Lift thesis's TensorFlow subgraph: a matrix-vector product written as
       reduce_sum(W * x, 1) followed by a softmax written out, exp(z) / reduce_sum(exp(z)).

Goals (issue 14, reported, not asserted): >= 15% fewer nodes, >= 1.3x faster with rules on.
Prints the tables; writes nothing.

    /usr/bin/python3 bench/rules_bench.py [--reps 9] [--build DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

import bench_util as bu

TF_GRAPHS = os.environ.get("TF_GRAPHS_DIR", os.path.join(bu.REPO, "..", "shared", "tf_graphs"))
DL4J = "dl4j-test-resources/"
# (file, outputs, feeds) as real_graphs_test.cc imports them; SavedModels are left out.
TF_CASES = [
    (DL4J + "mnist_00/model.txt", ["^GradientDescent", "Mean", "Mean_1"], {"input": [100, 784], "target": [100, 10]}),
    (DL4J + "mnist_00/frozen_model.pb", ["output"], {"input": [100, 784]}),
    (DL4J + "mlp_00/model.txt", ["output"], {"input": [4, 5]}),
    (DL4J + "conv_0/model.txt", ["output"], {"image": [4, 28, 28, 3]}),
    (DL4J + "conv_0/frozen_model.pb", ["output"], {"image": [4, 28, 28, 3]}),
    ("tensorflow-onnx/regression/checkpoint/model.meta", ["^GradientDescent", "pred"], {"X": [5], "Y": [5]}),
    ("tensorflow-onnx/regression/graphdef/frozen.pb", ["pred"], {"X": [5]}),
    ("tensorflow-rust/regression/model.pb", ["^train"], {"x": [100], "y": [100]}),
]


def load_tinyflow(build):
    if build:
        os.environ["TINYFLOW_LIB"] = os.path.join(os.path.abspath(build), "lib", "libir.so")
    sys.path.insert(0, os.path.join(bu.REPO, "tinyflow_demo"))
    import tinyflow
    return tinyflow


def op_nodes(graph):
    return sum(1 for node in graph.to_dict()["nodes"] if node["op"] != "null")


# ---- 1a. real TensorFlow graphs ----

def length_delimited_field(data, number):
    """The first length-delimited field `number` of a serialized protobuf message (a MetaGraphDef's graph_def)."""
    def varint(pos):
        value, shift = 0, 0
        while True:
            byte = data[pos]
            value |= (byte & 0x7F) << shift
            pos, shift = pos + 1, shift + 7
            if byte < 0x80:
                return value, pos
    pos = 0
    while pos < len(data):
        key, pos = varint(pos)
        wire = key & 7
        if wire == 0:
            _, pos = varint(pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            size, pos = varint(pos)
            if key >> 3 == number:
                return data[pos:pos + size]
            pos += size
        else:
            raise ValueError("unexpected wire type %d" % wire)
    raise ValueError("no field %d" % number)


def binary_graph_def(path):
    """The binary GraphDef of a .pb, a .meta (field 2) or a text GraphDef (encoded by protoc with our .protos)."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".meta"):
        return length_delimited_field(data, 2)
    if path.endswith((".txt", ".pbtxt")):
        proto_dir = os.path.join(bu.REPO, "frontends", "tensorflow", "proto")
        return subprocess.run(["protoc", "--encode=ir.tfproto.GraphDef", "-I", proto_dir, "ir_tf_graph.proto"],
                              input=data, stdout=subprocess.PIPE, check=True).stdout
    return data


def import_tf_graph(tf, path, outputs, feeds):
    from tinyflow.framework import _Symbol
    graph = tf.ir.Graph(_Symbol.group([]))  # an empty graph carrying the GraphDef for the TFImport pass
    graph.set_attr_bytes("tf.graph_def", binary_graph_def(path))
    graph.set_attr("tf.outputs", ["list_str", outputs])
    graph.set_attr("tf.feed_names", ["list_str", list(feeds)])
    graph.set_attr("tf.feed_shapes", ["list_shape", ["[%s]" % ",".join(map(str, s)) for s in feeds.values()]])
    return graph.apply_passes(["TFImport", "InferShape", "InferType", "FoldConstants"])


def tf_graph_rows(tf, build):
    lib = os.path.join(os.path.abspath(build or os.path.join(bu.REPO, "build")), "lib", "libir_tensorflow.so")
    if not os.path.exists(lib) or not os.path.isdir(TF_GRAPHS):
        print("(no %s or no %s: skipping the TensorFlow graphs)" % (lib, TF_GRAPHS))
        return []
    if shutil.which("protoc") is None:
        print("(no protoc: text GraphDefs are skipped)")
    tf.load_op_library(lib)
    rows = []
    for name, outputs, feeds in TF_CASES:
        path = os.path.join(TF_GRAPHS, name)
        if not os.path.exists(path) or (path.endswith(".txt") and shutil.which("protoc") is None):
            continue
        before = import_tf_graph(tf, path, outputs, feeds)
        after = before.apply_passes(["Simplify"])
        rows.append(("tf: " + name.replace(DL4J, ""), op_nodes(before), op_nodes(after),
                     [r.split(" @ ")[0] for r in after.attr("simplify.fired", [])]))
    return rows


# ---- 1b. tinyflow models ----

def hand_written_softmax_regression(tf, batch=100):
    x = tf.placeholder(tf.float32, [batch, 784])
    y_ = tf.placeholder(tf.float32, [batch, 10])
    W, b = tf.Variable(tf.zeros([784, 10])), tf.Variable(tf.zeros([10]))
    y = tf.nn.softmax(tf.matmul(x, W) + b)
    cross_entropy = tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(y), reduction_indices=[1]))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
    rng = np.random.RandomState(0)
    feeds = {x: rng.rand(batch, 784).astype(np.float32),
             y_: np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=batch)]}
    return train, feeds


def demo_model(tf, model_fn, batch=64):
    images = tf.placeholder(tf.float32, [batch, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [batch])
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=model_fn(images)))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    rng = np.random.RandomState(0)
    return train, {images: rng.rand(batch, 28, 28, 1).astype(np.float32),
                   labels: rng.randint(0, 10, size=batch).astype(np.int32)}


def build_graph(tf, build):
    """A fresh default graph holding build(tf) and its gradients (built without rules: the
    session's `simplify` decides them)."""
    tf.reset_default_graph()
    return build(tf)


def bound_nodes(tf, build, simplify):
    fetch, feeds = build_graph(tf, build)
    with tf.Session(fusion=False, simplify=simplify) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(fetch, feeds)
        return op_nodes(sess.last_graph()), [r.split(" @ ")[0] for r in sess.rewrites()]


def tinyflow_rows(tf):
    sys.path.insert(0, os.path.join(bu.REPO, "tinyflow_demo"))
    import train as demo
    builders = [("tinyflow: softmax regression (hand-written xent)", hand_written_softmax_regression),
                ("tinyflow: MLP (train.py)", lambda tf: demo_model(tf, demo.mlp_model)),
                ("tinyflow: LeNet (train.py)", lambda tf: demo_model(tf, demo.lenet_model))]
    rows = []
    for name, build in builders:
        off, _ = bound_nodes(tf, build, False)
        on, fired = bound_nodes(tf, build, True)
        rows.append((name, off, on, fired))
    return rows


def print_node_table(rows):
    print("%-52s %6s %6s %7s  %s" % ("graph (op nodes before fusion)", "off", "on", "fewer", "rules fired (count)"))
    total_off = total_on = 0
    for name, off, on, fired in rows:
        total_off, total_on = total_off + off, total_on + on
        counts = {}
        for rule in fired:
            counts[rule] = counts.get(rule, 0) + 1
        print("%-52s %6d %6d %6.1f%%  %s" % (name, off, on, 100.0 * (off - on) / max(off, 1),
                                             ", ".join("%s x%d" % kv for kv in sorted(counts.items()))))
    if rows:
        print("%-52s %6d %6d %6.1f%%  (goal >= 15%%)" % ("all", total_off, total_on,
                                                         100.0 * (total_off - total_on) / max(total_off, 1)))


# ---- 2. step times ----

def lift_matvec_softmax(tf, n=2048):
    W = tf.placeholder(tf.float32, [n, n])
    x = tf.placeholder(tf.float32, [n])
    e = tf.exp(tf.reduce_sum(W * x, 1))
    y = e / tf.reduce_sum(e)
    rng = np.random.RandomState(0)
    return y, {W: (rng.rand(n, n) / n).astype(np.float32), x: rng.rand(n).astype(np.float32)}


def step_ms(tf, build, simplify, reps):
    fetch, feeds = build_graph(tf, build)
    with tf.Session(simplify=simplify) as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(fetch, feeds)  # binds and compiles
        return bu.median_ms(lambda: sess.run(fetch, feeds), reps), value


def time_rows(tf, reps):
    rows = []
    for name, build in [("softmax regression training step (hand-written xent, batch 100)",
                         hand_written_softmax_regression),
                        ("Lift: reduce_sum(W * x, 1) -> exp / sum exp (W 2048x2048)", lift_matvec_softmax)]:
        off, off_value = step_ms(tf, build, False, reps)
        on, on_value = step_ms(tf, build, True, reps)
        if off_value is not None:
            np.testing.assert_allclose(on_value, off_value, rtol=1e-4, atol=1e-6)  # same numbers
        rows.append((name, off, on))
    print("%-66s %9s %9s %7s" % ("step time (median ms)", "rules off", "rules on", "speedup"))
    for name, off, on in rows:
        print("%-66s %9.3f %9.3f %6.2fx" % (name, off, on, off / on))
    print("(goal >= 1.3x)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--build", default=None, help="build directory (default: tinyflow's own lookup)")
    args = parser.parse_args(argv)
    tf = load_tinyflow(args.build)
    print_node_table(tinyflow_rows(tf) + tf_graph_rows(tf, args.build))
    print()
    time_rows(tf, args.reps)


if __name__ == "__main__":
    main()
