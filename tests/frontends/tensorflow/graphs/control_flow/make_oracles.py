#!/usr/bin/python3
"""Write the expected outputs (oracles) of the control-flow acceptance graphs.

Each oracle is an INDEPENDENT NumPy re-implementation of what the graph computes
under TensorFlow semantics, written by reading the graph (see README.md); the
constants it uses (loop limits, increments, frozen "Variable" values) are read
from the .pbtxt by node name with pbtxt.py, not typed in. Nothing here shares
code with the C++ importer.

Output layout (committed; tests only read it):
  oracles/manifest.json                       one entry per (graph, case):
      {"graph", "case", "inputs": {tf_name: file}, "outputs": {tf_name: file}}
  oracles/<graph>/<case>/<tensor>.npy         '/' in a TF name becomes '__',
                                              ':' becomes '.'
Run: /usr/bin/python3 make_oracles.py   (deterministic: seeded numpy)
"""
import json
import os

import numpy as np

import pbtxt

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32


def _graph(name):
    return pbtxt.load(os.path.join(HERE, name + ".pbtxt"))


def while_counter():
    """tf.while_loop(lambda i: i < 10, lambda i: i + 1, [0]) -> while/Exit (int32)."""
    g = _graph("tf_while_counter")
    i, limit, step = (pbtxt.const(g, n) for n in ("Const", "while/Less/y", "while/Add/y"))
    while i < limit:
        i = i + step
    return [("default", {}, {"while/Exit": np.int32(i)})]


def while_concat():
    """i < 10: (i + 1, concat([m, m], axis 0)) from (0, ones[2,2]) -> [10], [2048,2]."""
    g = _graph("tf_while_concat")
    i, m = pbtxt.const(g, "Const"), pbtxt.const(g, "ones")
    limit, step = pbtxt.const(g, "while/Less/y"), pbtxt.const(g, "while/add/y")
    axis = int(pbtxt.const(g, "while/concat/axis"))
    while i < limit:
        i, m = i + step, np.concatenate([m, m], axis=axis)
    return [("default", {}, {"while/Exit": np.int32(i), "while/Exit_1": m.astype(F32)})]


def cond_merge():
    """tf.cond(7 < 5, concat([o,o],0), concat([o,o],1)) then concat([r,r],2), o=ones[1,1,1]."""
    g = _graph("tf_cond_merge")
    pred = pbtxt.const(g, "Const") < pbtxt.const(g, "Const_1")
    ones = pbtxt.const(g, "ones")
    axis = pbtxt.const(g, "cond/concat/axis") if pred else pbtxt.const(g, "cond/concat_1/axis")
    r = np.concatenate([ones, ones], axis=int(axis))
    out = np.concatenate([r, r], axis=int(pbtxt.const(g, "concat/axis")))
    return [("default", {}, {"concat": out.astype(F32)})]


def functional_while():
    """While/StatelessWhile(iter, val): cond iter > 0; body (iter - 1, val + val); outputs :1."""
    cases = []
    for k, (it, val) in enumerate([(5, 1.5), (0, 3.25), (-2, -0.75), (3, -2.5)]):
        i, v = np.int32(it), F32(val)
        while i > 0:
            i, v = np.int32(i - 1), F32(v + v)
        cases.append((f"case{k}", {"iter": np.int32(it), "val": F32(val)},
                      {"StatefulWhile:1": v, "StatelessWhile:1": v}))
    return cases


def functional_if():
    """If/StatelessIf(a < b, a, b): then a + b, else a * b."""
    cases = []
    for k, (a, b) in enumerate([(1.5, 2.0), (3.0, 2.0), (-1.25, -1.25)]):
        a, b = F32(a), F32(b)
        r = F32(a + b) if a < b else F32(a * b)
        cases.append((f"case{k}", {"a": a, "b": b}, {"StatefulIf": r, "StatelessIf": r}))
    return cases


def simpleif():
    """output = sum(input_0) < input_1 ? input_0 + Variable : input_0 - Variable."""
    g = _graph("dl4j_simpleif")
    var = pbtxt.const(g, "Variable")
    rng = np.random.default_rng(12)
    cases = []
    for k, margin in enumerate([1.0, -1.0]):  # case0 takes the true branch, case1 false
        x = rng.uniform(-1, 1, (2, 2)).astype(F32)
        y = F32(x.sum(dtype=F32) + margin)
        out = x + var if x.sum(dtype=F32) < y else x - var
        cases.append((f"case{k}", {"input_0": x, "input_1": y}, {"output": out.astype(F32)}))
    return cases


def nested_while():
    """Outer loop on (a[2,2], b[3,3]) while mean(a) < V0: a += V1; inner loop on (a, b)
    while sum(b) <= sum(a): b += V2; after it b -= V2.  output = a + mean(b)."""
    g = _graph("dl4j_nested_while")
    v0, v1, v2 = (pbtxt.const(g, n) for n in ("Variable", "Variable_1", "Variable_2"))
    rng = np.random.default_rng(7)
    cases = []
    for k in range(2):
        a0 = rng.uniform(0, 4, (2, 2)).astype(F32)
        b0 = rng.uniform(-1, 1, (3, 3)).astype(F32)
        a, b = a0, b0
        while a.mean(dtype=F32) < v0:
            a = (a + v1).astype(F32)
            while b.sum(dtype=F32) <= a.sum(dtype=F32):
                b = (b + v2).astype(F32)
            b = (b - v2).astype(F32)
        out = (a + b.mean(dtype=F32)).astype(F32)
        cases.append((f"case{k}", {"input_0": a0, "input_1": b0}, {"output": out}))
    return cases


ORACLES = {
    "tf_while_counter": while_counter, "tf_while_concat": while_concat,
    "tf_cond_merge": cond_merge, "tf2_functional_while": functional_while,
    "tf2_functional_if": functional_if, "dl4j_simpleif": simpleif,
    "dl4j_nested_while": nested_while,
}


def _file(name):
    return name.replace("/", "__").replace(":", ".") + ".npy"


def main():
    """Compute every oracle and write the .npy files and manifest.json."""
    manifest = []
    for graph, fn in ORACLES.items():
        for case, inputs, outputs in fn():
            d = os.path.join("oracles", graph, case)
            os.makedirs(os.path.join(HERE, d), exist_ok=True)
            entry = {"graph": graph + ".pbtxt", "case": case, "inputs": {}, "outputs": {}}
            for kind, tensors in (("inputs", inputs), ("outputs", outputs)):
                for name, value in tensors.items():
                    rel = os.path.join(d, _file(name))
                    np.save(os.path.join(HERE, rel), np.asarray(value))
                    entry[kind][name] = rel
            manifest.append(entry)
    with open(os.path.join(HERE, "oracles", "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
