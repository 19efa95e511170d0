"""tinyflow.parallel_for (pfor, for_loop, jacobian, batch_jacobian), tf.vectorized_map, tf.hessians:
results against NumPy, finite differences and the loop (use_pfor=False), and fallbacks in the stats."""
import numpy as np
import pytest

import tinyflow as tf
from tinyflow import parallel_for as pfor_ops

RNG = np.random.RandomState(13)


def _run(fetches, feeds=None, fusion=True):
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feeds)


def _mlp(x, w1, b1, w2):
    return tf.matmul(tf.tanh(tf.matmul(x, w1) + b1), w2)


def _mlp_np(x, w1, b1, w2):
    return np.tanh(x @ w1 + b1) @ w2


def _finite_jacobian(f, x, eps=1e-6):
    """d f(x) / d x of a NumPy function, central differences: shape f(x).shape + x.shape."""
    cols = []
    for k in range(x.size):
        d = np.zeros(x.size)
        d[k] = eps
        d = d.reshape(x.shape)
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.moveaxis(np.array(cols), 0, -1).reshape(f(x).shape + x.shape)


def test_module_names():
    assert tf.parallel_for.pfor is pfor_ops.pfor
    assert tf.vectorized_map is pfor_ops.vectorized_map
    for name in ("pfor", "for_loop", "jacobian", "batch_jacobian"):
        assert callable(getattr(pfor_ops, name))


def test_pfor_nested_outputs_and_captures(fusion):
    x = tf.placeholder(tf.float32, [5, 3])
    wv = RNG.randn(3, 2).astype(np.float32)
    w = tf.constant(wv)
    scale = tf.placeholder(tf.float32, [])

    def loop_fn(i):
        row = tf.gather(x, i)
        return {"prod": tf.matmul(tf.expand_dims(row, 0), w),
                "pair": (row * scale, tf.reduce_sum(row * row)), "none": None, "w": w}

    vec = pfor_ops.pfor(loop_fn, 5)
    loop = pfor_ops.for_loop(loop_fn, None, 5)
    assert vec["none"] is None and vec["pair"][0].shape.as_list() == [5, 3]
    xv, sv = RNG.randn(5, 3).astype(np.float32), 1.5
    fetch = {"prod": vec["prod"], "pair": vec["pair"], "w": vec["w"]}
    got, want = _run([fetch, {"prod": loop["prod"], "pair": loop["pair"], "w": loop["w"]}], {x: xv, scale: sv},
                     fusion)
    np.testing.assert_allclose(got["prod"], (xv @ wv)[:, None, :], rtol=1e-5)
    np.testing.assert_allclose(got["pair"][0], xv * sv, rtol=1e-6)
    np.testing.assert_allclose(got["pair"][1], (xv * xv).sum(1), rtol=1e-5)
    np.testing.assert_allclose(got["w"], np.broadcast_to(wv, (5, 3, 2)))
    for key in ("prod", "w"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
    np.testing.assert_allclose(got["pair"][1], want["pair"][1], rtol=1e-5)


def test_pfor_rejects_a_tensor_iteration_count():
    with pytest.raises(TypeError, match="iters"):
        pfor_ops.pfor(lambda i: i, tf.constant(3))


def test_jacobian_of_mlp_against_finite_differences_and_loop():
    w1v, b1v, w2v = RNG.randn(3, 4), RNG.randn(4), RNG.randn(4, 2)
    xv = RNG.randn(1, 3)
    x = tf.placeholder(tf.float64, [1, 3])
    w1, b1, w2 = (tf.constant(v, dtype=tf.float64) for v in (w1v, b1v, w2v))
    y = _mlp(x, w1, b1, w2)
    j_x = pfor_ops.jacobian(y, x)
    j_loop = pfor_ops.jacobian(y, x, use_pfor=False)
    j_params = pfor_ops.jacobian(y, {"w1": w1, "b1": b1})
    assert j_x.shape.as_list() == [1, 2, 1, 3]
    assert j_params["w1"].shape.as_list() == [1, 2, 3, 4]
    got = _run([j_x, j_loop, j_params], {x: xv})
    np.testing.assert_allclose(got[0], _finite_jacobian(lambda v: _mlp_np(v, w1v, b1v, w2v), xv), rtol=1e-6)
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)
    np.testing.assert_allclose(got[2]["w1"], _finite_jacobian(lambda v: _mlp_np(xv, v, b1v, w2v), w1v), rtol=1e-6)
    np.testing.assert_allclose(got[2]["b1"], _finite_jacobian(lambda v: _mlp_np(xv, w1v, v, w2v), b1v), rtol=1e-6)


def test_batch_jacobian_against_analytic_and_loop():
    w1v, b1v, w2v = RNG.randn(3, 4), RNG.randn(4), RNG.randn(4, 2)
    xv = RNG.randn(5, 3)
    x = tf.placeholder(tf.float64, [5, 3])
    y = _mlp(x, *(tf.constant(v, dtype=tf.float64) for v in (w1v, b1v, w2v)))
    bj = pfor_ops.batch_jacobian(y, x)
    bj_loop = pfor_ops.batch_jacobian(y, x, use_pfor=False)
    assert bj.shape.as_list() == [5, 2, 3]
    got, loop = _run([bj, bj_loop], {x: xv})
    h = np.tanh(xv @ w1v + b1v)
    want = np.einsum("hk,bh,jh->bkj", w2v, 1 - h * h, w1v)  # d y[b,k] / d x[b,j]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(got, loop, rtol=1e-12)


def test_hessians_and_jacobian_of_jacobian():
    xv = RNG.randn(3)
    x = tf.placeholder(tf.float64, [3])
    y = tf.reduce_sum(x * x * x) + x[0] * x[1]
    h_tf = tf.hessians(y, x)[0]
    h_jj = pfor_ops.jacobian(pfor_ops.jacobian(y, x), x)
    assert h_tf.shape.as_list() == [3, 3] and h_jj.shape.as_list() == [3, 3]
    want = np.diag(6 * xv)
    want[0, 1] = want[1, 0] = 1.0
    got = _run([h_tf, h_jj], {x: xv})
    np.testing.assert_allclose(got[0], want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want, rtol=1e-10, atol=1e-12)


def test_vectorized_map_with_unknown_batch():
    x = tf.placeholder(tf.float32, [None, 3])
    z = tf.placeholder(tf.float32, [None])
    wv = RNG.randn(3, 2).astype(np.float32)
    w = tf.constant(wv)

    def fn(elems):
        row, s = elems
        return tf.reduce_sum(tf.matmul(tf.expand_dims(row, 0), w), axis=0) * s

    out = tf.vectorized_map(fn, (x, z))
    assert out.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        for n in (4, 2):
            xv, zv = RNG.randn(n, 3).astype(np.float32), RNG.randn(n).astype(np.float32)
            np.testing.assert_allclose(sess.run(out, {x: xv, z: zv}), (xv @ wv) * zv[:, None], rtol=1e-5)


@pytest.mark.parametrize("vectorize", [True, False], ids=["pfor", "loop"])
def test_random_ops_draw_per_iteration(vectorize):
    x = tf.placeholder(tf.float32, [4])
    outer = tf.random_uniform([3])  # built outside the loop function: one draw shared by every iteration

    def loop_fn(i):
        return tf.random_normal([3]) + tf.gather(x, i) * 0.0, outer + 0.0

    inner, shared = pfor_ops.pfor(loop_fn, 4) if vectorize else pfor_ops.for_loop(loop_fn, None, 4)
    got_inner, got_shared = _run([inner, shared], {x: np.zeros(4, np.float32)})
    assert len({tuple(r) for r in np.round(got_inner, 6)}) == 4
    np.testing.assert_array_equal(got_shared, np.broadcast_to(got_shared[0], (4, 3)))


# Ops whose converters must leave no loop behind (and whose results equal the loop's).
_CANDIDATES = [
    ("pad", lambda row: tf.pad(row, [[1, 2]])),
    ("tile", lambda row: tf.tile(row, [2])),
    ("one_hot", lambda row: tf.one_hot(tf.cast(row, tf.int32), 4)),
    ("argmax", lambda row: tf.argmax(row, 0)),
    ("where", lambda row: tf.where(row > 1.0, row, -row)),
]


def test_array_ops_vectorize_without_fallbacks():
    x = tf.placeholder(tf.float32, [3, 4])
    outs = {op: pfor_ops.pfor(lambda i, f=f: f(tf.gather(x, i)), 3) for op, f in _CANDIDATES}
    loops = {op: pfor_ops.for_loop(lambda i, f=f: f(tf.gather(x, i)), None, 3) for op, f in _CANDIDATES}
    xv = RNG.uniform(0, 3, (3, 4)).astype(np.float32)
    with tf.Session() as sess:
        got = sess.run(outs, {x: xv})
        reported = sess.pfor_fallbacks()
        nodes = sess.last_graph().to_dict()["nodes"]
        want = sess.run(loops, {x: xv})
    for op in got:
        np.testing.assert_allclose(got[op], want[op], rtol=1e-6)
    left = sorted(n["attrs"]["fallback_op"] for n in nodes
                  if n.get("op") == "pfor" and n.get("attrs", {}).get("fallback_op"))
    assert sorted(r.split(" (")[1].rstrip(")") for r in reported) == left
    assert not left, "these ops have converters: %s" % left


def test_a_variable_updated_per_iteration_is_a_reported_fallback_loop():
    """assign_add of a per-iteration value declines vectorization: the loop runs it in order."""
    x = tf.placeholder(tf.float32, [3, 2])
    acc = tf.Variable(np.zeros(2, np.float32), name="pfor_acc")
    out = pfor_ops.pfor(lambda i: tf.assign_add(acc, tf.gather(x, i)), 3)
    xv = RNG.uniform(0, 1, (3, 2)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(out, {x: xv})
        reported = sess.pfor_fallbacks()
        final = sess.run(acc)
    np.testing.assert_allclose(got, np.cumsum(xv, 0), rtol=1e-6)
    np.testing.assert_allclose(final, xv.sum(0), rtol=1e-6)
    assert [r for r in reported if r.endswith("(assign_add)")], reported
