"""Session(profile=True): a per-node table of the last run, slowest first; zero entries when off."""
import numpy as np
import pytest

import tinyflow as tf


def _graph():
    a = tf.placeholder(tf.float32, [384, 384], name="a")
    x = tf.placeholder(tf.float32, [4], name="x")
    slow = tf.matmul(a, a, name="slow")
    fast = tf.exp(x) * 2.0 + 1.0
    feed = {a: np.ones((384, 384), np.float32), x: np.zeros(4, np.float32)}
    return [slow, fast], feed


def test_profile_lists_every_node_slowest_first(fusion):
    fetches, feed = _graph()
    with tf.Session(fusion=fusion, profile=True) as sess:
        sess.run(fetches, feed)
        stats = sess.stats()
        nodes = stats["nodes"]
        assert len(nodes) == stats["kernels_launched"]
        assert nodes[0]["name"] == "slow" and nodes[0]["op"] == "matmul"
        times = [n["ms"] for n in nodes]
        assert times == sorted(times, reverse=True)
        fused = [n["op"] for n in nodes if n["op"].startswith("_fused")]
        if fusion:  # a fused node names its members' ops
            assert fused == ["_fused[map](exp,multiply_scalar,add_scalar)"]
        else:
            assert not fused and len(nodes) == 4
        assert "slow" in sess.profile_table().splitlines()[1]


def test_profile_is_empty_when_off():
    fetches, feed = _graph()
    with tf.Session() as sess:
        sess.run(fetches, feed)
        assert sess.stats()["nodes"] == []
        with pytest.raises(ValueError):
            sess.profile_table()
