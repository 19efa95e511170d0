"""tinyflow.ir: pass pipelines from Python, graph attributes, printing."""
import json

import numpy as np
import pytest

import tinyflow as tf


def small_net():
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    w = tf.Variable(tf.ones([8, 4]), name="w")
    y = tf.nn.relu(tf.matmul(x, w) * 2.0 + 1.0)
    return x, tf.reduce_sum(tf.exp(y) * 0.5 - y)


def test_lists_ops_and_passes():
    ops, passes = tf.list_ops(), tf.list_passes()
    assert {"matmul", "conv2d", "assign", "add_scalar"} <= set(ops)
    assert {"InferShape", "InferType", "Fusion", "CodeGen", "PlanMemory"} <= set(passes)
    info = tf.ir.op_info("matmul")
    assert [a[0] for a in info["arguments"]][:4] == ["a", "b", "transpose_a", "transpose_b"]


def test_named_pipelines_are_the_registered_ones():
    assert {"session", "infer", "fold_constants"} <= set(tf.ir.list_pipelines())
    assert tf.ir.pipeline("infer") == "infer: InferShape, InferType"
    assert "Simplify [if simplify]" in tf.ir.pipeline("session")
    plain = tf.ir.pipeline_passes("session")
    assert plain[:2] == ("InferShape", "InferType") and plain[-1] == "PlanMemory"
    assert "Simplify" not in plain and "Simplify" in tf.ir.pipeline_passes("session", "simplify")
    with pytest.raises(RuntimeError, match="unknown pipeline 'no_such'"):
        tf.ir.pipeline("no_such")
    x, loss = small_net()
    g = tf.ir.Graph(loss).apply_pipeline("infer", input_shapes={"x": (16, 8), "w": (8, 4)})
    assert tf.ir.parse_shape(g.attr("shape")[-1]).as_list() == []


def test_pass_pipeline_returns_shapes_fusion_groups_and_kernel_source():
    x, loss = small_net()
    g = tf.ir.Graph(loss)
    assert g.input_names() == ["x", "w"] or set(g.input_names()) == {"x", "w"}
    out = g.apply_passes(["InferShape", "InferType", "Fusion", "CodeGen"],
                         {"fusion.fmax": 4, "target": "cpu"}, input_shapes={"x": (16, 8), "w": (8, 4)})
    assert {"shape", "dtype", "fusion_groups", "kernel_source", "pass_timings"} <= set(out.attrs())
    groups = out.fusion_groups()
    assert groups and all({"members", "inputs", "outputs", "kind"} <= set(grp) for grp in groups)
    assert any("exp" in grp["members"] and "relu" in grp["members"] for grp in groups)
    assert all(len(grp["inputs"]) <= 4 for grp in groups)
    source = out.kernel_source()
    assert "expf" in source and "for" in source
    assert "[16,4]" in out.attr("shape")
    assert [t for t in out.pass_timings()]
    assert g.attr("fusion_groups") is None  # the source graph is unchanged


def test_fmax_bounds_group_inputs():
    a, b, c, d = (tf.placeholder(tf.float32, [4], name=n) for n in "abcd")
    y = ((a + b) * c - d) * a
    shapes = {n: (4,) for n in "abcd"}
    wide = tf.ir.Graph(y).apply_passes(["InferShape", "InferType", "Fusion"], {"fusion.fmax": 8}, shapes)
    narrow = tf.ir.Graph(y).apply_passes(["InferShape", "InferType", "Fusion"], {"fusion.fmax": 2}, shapes)
    assert len(wide.fusion_groups()) == 1
    assert all(len(grp["inputs"]) <= 2 for grp in narrow.fusion_groups())
    assert len(narrow.fusion_groups()) > 1


def test_printing_json_round_trip_and_errors():
    x, loss = small_net()
    g = tf.ir.Graph(loss).apply_passes(["InferShape"], input_shapes={"x": (2, 8)})
    text = g.text()
    assert "matmul" in text and "[2,4]" in text
    assert g.dot().lstrip().startswith("digraph")
    again = tf.ir.Graph.load_json(g.save_json())
    assert again.to_dict()["nodes"] == g.to_dict()["nodes"]
    g.set_attr("my.option", 3)
    assert g.attr("my.option") == 3
    with pytest.raises(tf.TinyflowError, match="PlanMemory|unknown shape|shape"):
        tf.ir.Graph(loss).apply_passes(["InferShape", "InferType", "PlanMemory"])


def test_session_last_graph_and_stats():
    x, loss = small_net()
    with tf.Session(fusion=True) as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(loss, {x: np.zeros((3, 8), np.float32)})
        stats = sess.stats()
        graph = sess.last_graph()
    y = np.maximum(np.zeros((3, 4)) * 2 + 1, 0)
    np.testing.assert_allclose(value, (np.exp(y) * 0.5 - y).sum(), rtol=1e-5)
    assert stats["kernels_launched"] >= 1 and stats["bound"] is True
    assert graph.fusion_groups() and graph.kernel_source()
    assert json.loads(json.dumps(graph.attr("storage_id")))


WARM_CACHE_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import tinyflow as tf
x = tf.placeholder(tf.float32, [64], name="x")
y = tf.tanh(tf.exp(x) * float(sys.argv[2]) + 1.0)
with tf.Session() as sess:
    sess.run(y, {x: np.ones(64, np.float32)})
    print(json.dumps(sess.last_graph().attr("rtc_stats")))
"""


def test_a_warm_kernel_cache_compiles_nothing_in_a_new_process(tmp_path):
    import os
    import subprocess
    import sys
    import time
    env = dict(os.environ, IR_KERNEL_CACHE_DIR=str(tmp_path))
    salt = repr(1.0 + (time.time() % 1000.0))  # a kernel no earlier run has cached
    package = os.path.dirname(os.path.dirname(tf.__file__))

    def run():
        out = subprocess.run([sys.executable, "-c", WARM_CACHE_CHILD, package, salt], env=env, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    cold, warm = run(), run()
    assert cold["compilations"] == 1 and cold["disk_hits"] == 0
    assert warm["compilations"] == 0 and warm["disk_hits"] == 1
    assert [p.name.startswith("cpu-") for p in tmp_path.iterdir()] == [True]
