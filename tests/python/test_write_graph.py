"""tf.train.write_graph / tf.io.write_graph (text and binary) and Graph.as_graph_def: the GraphDef a
graph writes is read back by the project's TensorFlow importer (ir-tf-run), whose results must be
tinyflow's."""
import os
import subprocess

import numpy as np
import pytest

import tinyflow as tf
from tinyflow._lib import LIB_PATH

IR_TF_RUN = os.path.join(os.path.dirname(os.path.dirname(LIB_PATH)), "bin", "ir-tf-run")
needs_importer = pytest.mark.skipif(not os.path.exists(IR_TF_RUN), reason="ir-tf-run is not built")


def _import_and_run(path, feeds, fetches, tmp_path, init="init"):
    """fetches (tensor names) of the GraphDef at `path` run by ir-tf-run after `init`, fed `feeds`."""
    out = tmp_path / ("out_" + os.path.basename(path).replace(".", "_"))
    out.mkdir()
    args = [IR_TF_RUN, "--graph", str(path), "--out", str(out)]
    if init:
        args += ["--init", init]
    for name, value in feeds.items():
        np.save(str(tmp_path / (name + ".npy")), value)
        args += ["--feed", "%s=%s" % (name, tmp_path / (name + ".npy"))]
    for name in fetches:
        args += ["--fetch", name]
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode == 0, proc.stdout
    return [np.load(str(out / (name.replace("/", "_").replace(":", "_") + ".npy"))) for name in fetches]


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10.0 - 0.2, name="W")
    b = tf.Variable(tf.fill([2], 0.5), name="b")
    noise = tf.Variable(tf.random_normal([4, 2], stddev=0.1), name="noise")
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
    probs = tf.nn.softmax(h * 2.0 - 1.0)
    mean = tf.reduce_mean(probs, axis=1, keepdims=True)
    picked = tf.reshape(tf.cast(tf.argmax(probs, 1), tf.float32), [-1, 1])
    scaled = tf.sqrt(tf.abs(mean)) / 3.0 + tf.maximum(tf.reduce_sum(x, 1, keepdims=True), 0.0)
    out = tf.concat([mean, picked, scaled, 1.0 - tf.transpose(tf.transpose(probs))], 1, name="out")
    counts = tf.add(tf.shape(x)[0] * 0, tf.cast(tf.less(tf.reduce_max(x), 2.5), tf.int32), name="counts")
    init = tf.global_variables_initializer()
    return x, noise, out, counts, init


@needs_importer
def test_written_graph_imports_and_computes_what_tinyflow_does(tmp_path):
    x, noise, out, counts, init = _model()
    xv = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32)
    with tf.Session() as sess:
        sess.run(init)
        want = sess.run([out, counts], {x: xv})
        text = tf.train.write_graph(sess.graph_def, str(tmp_path / "logs"), "model.pbtxt")
        binary = tf.io.write_graph(sess.graph, str(tmp_path / "logs"), "model.pb", as_text=False)
    assert text == str(tmp_path / "logs" / "model.pbtxt")
    assert 'op: "VariableV2"' in open(text).read()
    assert open(binary, "rb").read() == tf.get_default_graph().as_graph_def().SerializeToString()
    for path in (text, binary):
        got = _import_and_run(path, {"x": xv}, ["out", "counts", "noise"], tmp_path)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        assert got[1].dtype == np.int32 and got[1] == want[1]
        assert got[2].shape == (4, 2) and 0 < np.std(got[2]) < 0.5  # the initializer's draw


def test_write_graph_names_what_it_cannot_write(tmp_path):
    p = tf.placeholder(tf.bool, [])
    tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0), name="choose")
    with pytest.raises(tf.errors.OpError, match="node 'choose'.*no TensorFlow form"):
        tf.train.write_graph(tf.get_default_graph(), str(tmp_path), "g.pbtxt")
    with pytest.raises(TypeError):
        tf.train.write_graph("not a graph", str(tmp_path), "g.pbtxt")
