"""Attention as a TF1 program writes it (tf.matmul(q, k, transpose_b=True) * scale, a causal mask
from tf.matrix_band_part by multiply/add or tf.where, tf.nn.softmax, tf.matmul) and its
tf.gradients: the rule set "attention" (src/passes/rewrite_attention_rules.cc) turns the block into
fused_attention, fused_attention_grad and _fused_attention_dv, and Simplify's last step makes the latter
the grad's dv (FSubsumedBy): one kernel forward, one backward. Every rule of the set fires in one of
these programs, and each fused run equals the same program with the rule set left out within 1e-5;
programs that only look like attention (softmax over another axis, a mask that is not causal, a
different fill) are left alone and still computed right."""
import numpy as np
import pytest

import tinyflow as tf

# Every rule set but "attention": the unfused reference.
UNFUSED_SETS = ["algebra", "gradient", "nn", "shape"]
B, H, T, D = 2, 2, 37, 16  # T crosses the kernel's 32-row query tile


def causal_mask(t, s=None):
    return tf.matrix_band_part(tf.ones([t, t if s is None else s]), -1, 0)


# form: (scores -> masked scores, the rule name's stem)
FORMS = {
    "plain": (lambda s, t: s, "attention_plain"),
    "multiply": (lambda s, t: s * causal_mask(t) - 1e9 * (1 - causal_mask(t)), "attention_causal_multiply"),
    "multiply_add": (lambda s, t: s * causal_mask(t) + -1e9 * (1 - causal_mask(t)), "attention_causal_multiply_add"),
    "add": (lambda s, t: s + (1 - causal_mask(t)) * -1e9, "attention_causal_add"),
    "where": (lambda s, t: tf.where(tf.cast(causal_mask(t), tf.bool), s, -1e9 * tf.ones_like(s)),
              "attention_causal_select"),
}


def feeds_for(q, k, v, w, seed=0):
    rng = np.random.RandomState(seed)
    return {x: rng.randn(*x.shape.as_list()).astype(np.float32) for x in (q, k, v, w)}


def build(mask_scores, t=T, axis=-1, dims=(B, H), depth=D):
    """o = softmax(mask(q k^T / sqrt(depth)), axis) v and tf.gradients of sum(o * w) wrt q, k, v."""
    tf.reset_default_graph()
    shape = list(dims) + [t, depth]
    q = tf.placeholder(tf.float32, shape, name="q")
    k = tf.placeholder(tf.float32, shape, name="k")
    v = tf.placeholder(tf.float32, shape, name="v")
    w = tf.placeholder(tf.float32, shape, name="w")
    s = tf.matmul(q, k, transpose_b=True) * (1.0 / np.sqrt(depth))
    o = tf.matmul(tf.nn.softmax(mask_scores(s, t), axis=axis), v)
    grads = tf.gradients(tf.reduce_sum(o * w), [q, k, v])
    return [o] + grads, feeds_for(q, k, v, w)


def run(fetches, feeds, fused, graph=None):
    """The fetched values and the attention rules that fired; `graph` (a dict) gets the bound
    graph's ops (op name -> count) and the memory plan's bytes."""
    with tf.Session(rule_sets=None if fused else UNFUSED_SETS) as sess:
        out = sess.run(fetches, feeds)
        fired = sorted({r.split(" @ ")[0] for r in sess.rewrites() if r.startswith("attention")})
        if graph is not None:
            ops = [n["op"] for n in sess.last_graph().to_dict()["nodes"] if n["op"] != "null"]
            graph["ops"] = {op: ops.count(op) for op in set(ops)}
            graph["bytes"] = sess.stats()["bytes_allocated"]
    return out, fired


def expect_equal(fused, unfused):
    for name, a, b in zip(["o", "dq", "dk", "dv"], fused, unfused):
        assert np.isfinite(b).all(), name
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_attention_block_and_gradients_are_fused(form):
    mask_scores, stem = FORMS[form]
    fetches, feeds = build(mask_scores)
    plain, merged = {}, {}
    unfused, none = run(fetches, feeds, fused=False, graph=plain)
    fused, fired = run(fetches, feeds, fused=True, graph=merged)
    assert none == []
    assert fired == sorted([stem, stem + "_dk", stem + "_dq", stem + "_dv"])
    expect_equal(fused, unfused)
    # The bound graph is two attention ops alone (the replacements' fused_attention and
    # fused_attention_grad merged into one each, _fused_attention_dv into the grad's dv): no
    # [B, H, T, T] scores or probabilities.
    assert merged["ops"] == {"fused_attention": 1, "fused_attention_grad": 1}
    assert "softmax" in plain["ops"] and merged["bytes"] < plain["bytes"] / 4


@pytest.mark.parametrize("depth", [24, 32, 40])
def test_scales_with_long_decimals_fuse_the_gradient_too(depth):
    """1/sqrt(32) = 0.17677669529663687 has 17 digits: the gradient's multiply_scalar must carry the
    forward's scale exactly (it once came back one ulp off, from dmlc's parser, and dq/dk stayed unfused)."""
    fetches, feeds = build(FORMS["multiply"][0], depth=depth)
    unfused, _ = run(fetches, feeds, fused=False)
    fused, fired = run(fetches, feeds, fused=True)
    stem = FORMS["multiply"][1]
    assert fired == sorted([stem, stem + "_dk", stem + "_dq", stem + "_dv"])
    expect_equal(fused, unfused)


def test_forward_alone_is_fused():
    fetches, feeds = build(FORMS["where"][0])
    with tf.Session() as sess:
        o = sess.run(fetches[0], feeds)
        fired = [r for r in sess.rewrites() if r.startswith("attention")]
    assert [r.split(" @ ")[0] for r in fired] == ["attention_causal_select"]
    ref, _ = run(fetches[:1], feeds, fused=False)
    np.testing.assert_allclose(o, ref[0], rtol=1e-5, atol=1e-5)


def test_three_dimensional_operands_are_fused():
    fetches, feeds = build(FORMS["multiply"][0], t=70, dims=(3,))
    unfused, _ = run(fetches, feeds, fused=False)
    fused, fired = run(fetches, feeds, fused=True)
    assert "attention_causal_multiply" in fired and "attention_causal_multiply_dq" in fired
    expect_equal(fused, unfused)


def upper_mask_scores(s, t):  # anti-causal: keys after the query, not before
    mask = tf.matrix_band_part(tf.ones([t, t]), 0, -1)
    return s * mask - 1e9 * (1 - mask)


def banded_mask_scores(s, t):  # a local window: not the causal triangle
    mask = tf.matrix_band_part(tf.ones([t, t]), 3, 0)
    return tf.where(tf.cast(mask, tf.bool), s, -1e9 * tf.ones_like(s))


def uneven_fill_scores(s, t):  # the fill is not one value off the triangle
    mask = causal_mask(t)
    fill = (1 - mask) * tf.constant(np.linspace(-1e9, -1e8, t * t).reshape(t, t).astype(np.float32))
    return s + fill


NEAR_MISSES = {
    "softmax_axis": (FORMS["multiply"][0], -2),
    "upper_mask": (upper_mask_scores, -1),
    "banded_mask": (banded_mask_scores, -1),
    "uneven_fill": (uneven_fill_scores, -1),
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_near_misses_are_not_rewritten(case):
    mask_scores, axis = NEAR_MISSES[case]
    fetches, feeds = build(mask_scores, axis=axis)
    fused, fired = run(fetches, feeds, fused=True)
    assert fired == []
    # The same values as the unfused graph, and as NumPy for the forward pass.
    unfused, _ = run(fetches, feeds, fused=False)
    expect_equal(fused, unfused)


def test_near_miss_forward_matches_numpy():
    # The upper-triangle mask, computed by NumPy: the graph left unfused is still right.
    fetches, feeds = build(upper_mask_scores)
    with tf.Session() as sess:
        o = sess.run(fetches[0], feeds)
    arrays = {x.name.split(":")[0]: feeds[x] for x in feeds}
    q, k, v = arrays["q"], arrays["k"], arrays["v"]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(D)
    s = np.where(np.triu(np.ones((T, T))) > 0, s, -1e9)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(o, p @ v, rtol=1e-5, atol=1e-5)
