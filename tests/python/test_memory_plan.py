"""Memory plans of training graphs: fused plans need no more than unfused ones and stay near the
max-live lower bound (stats()["memory_lower_bound_bytes"])."""
import os
import sys

import numpy as np
import pytest

import tinyflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "tinyflow_demo"))
import train as demo  # noqa: E402


def _session_plan(model, optimizer, fusion):
    """Runs one training step at batch 16; returns the session's stats and its bound graph."""
    tf.reset_default_graph()
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    labels = tf.placeholder(tf.int32, [None])
    logits = demo.MODELS[model](images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = demo.make_optimizer(optimizer, demo.DEFAULT_LR[optimizer]).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(16, 28, 28, 1).astype(np.float32), labels: rng.randint(0, 10, 16).astype(np.int32)}
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        return sess.stats(), sess.last_graph()


def _plan(model, optimizer, fusion):
    stats, _ = _session_plan(model, optimizer, fusion)
    return stats["bytes_allocated"], stats["memory_lower_bound_bytes"]


def _overlapping_live_values(graph):
    """Pairs of pooled entries live at once whose arena bytes overlap, an output written in place
    over an input that dies at its node excepted. Entries live from their node to their last reader."""
    d = graph.to_dict()
    # Entry ids count the outputs of the nodes in order; a node's output count is taken as its
    # highest output read (or fetched) + 1, checked against the entry count below.
    outputs = [1] * len(d["nodes"])
    for src, index in [tuple(i[:2]) for n in d["nodes"] for i in n["inputs"]] + [tuple(h[:2]) for h in d["heads"]]:
        outputs[src] = max(outputs[src], index + 1)
    row = [0]
    for n in outputs:
        row.append(row[-1] + n)
    sid, offset = graph.attr("storage_id"), graph.attr("storage_offset")
    assert row[-1] == len(sid), "a node has outputs nobody reads: cannot number the entries"
    inplace, size = graph.attr("storage_inplace_index"), graph.attr("storage_bytes")
    entry = {}  # eid -> [node, last reader]
    for nid in range(len(d["nodes"])):
        for eid in range(row[nid], row[nid + 1]):
            entry[eid] = [nid, nid]
        for src, index in [tuple(i[:2]) for i in d["nodes"][nid]["inputs"]]:
            e = entry[row[src] + index]
            e[1] = max(e[1], nid)
    pooled = [e for e in entry if sid[e] >= 0]
    bad = []
    for a in pooled:
        for b in pooled:
            (da, la), (db, lb) = entry[a], entry[b]
            if a == b or da > db or la < db:
                continue
            if offset[a] + size[sid[a]] <= offset[b] or offset[b] + size[sid[b]] <= offset[a]:
                continue
            node_inputs = d["nodes"][db]["inputs"]
            over = node_inputs[inplace[b]] if inplace[b] >= 0 else None
            if not (la == db and over is not None and row[over[0]] + over[1] == a):
                bad.append((a, b))
    return bad


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("model", ["softmax", "mlp", "lenet"])
def test_fused_plan_needs_no_more_than_unfused(model, optimizer):
    fused, fused_bound = _plan(model, optimizer, True)
    unfused, unfused_bound = _plan(model, optimizer, False)
    assert 0 < fused_bound <= fused and 0 < unfused_bound <= unfused
    # Both plans reach their lower bounds now; the fused graph's order and in-place choices may
    # keep a few more bytes live at its peak (LeNet SGD: 128 bytes of 2.5 MB), which no planner
    # can remove: then the fused plan must be at its bound.
    assert fused <= unfused or fused == fused_bound


_MODELS = ["softmax", "mlp", "lenet", "deep_mnist"]


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("model", _MODELS)
def test_plan_is_near_the_lower_bound_and_values_live_at_once_never_overlap(model, optimizer, fusion):
    # The pool is one arena with a byte offset per value (greedy by size): within 1.1x of the
    # most bytes live at once, where whole-buffer slots were up to 1.43x (LeNet at batch 16).
    stats, graph = _session_plan(model, optimizer, fusion)
    assert stats["bytes_allocated"] <= 1.1 * stats["memory_lower_bound_bytes"]
    assert all(o % 64 == 0 for o, s in zip(graph.attr("storage_offset"), graph.attr("storage_id")) if s >= 0)
    assert _overlapping_live_values(graph) == []
