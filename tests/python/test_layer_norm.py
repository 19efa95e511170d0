"""Layer normalization over the last axis: tf.contrib.layers.layer_norm is the layer_norm op (one
kernel forward, one backward: dx, dgamma and dbeta in layer_norm_grad), equal to the moments formula
TF1 writes, with gradients checked by finite differences."""
import numpy as np
import pytest

import tinyflow as tf


def _moments_form(x, gamma, beta, eps, form="rsqrt"):
    mean, var = tf.nn.moments(x, axes=[-1], keep_dims=True)
    if form == "rsqrt":
        return (x - mean) * tf.rsqrt(var + eps) * gamma + beta
    return (x - mean) / tf.sqrt(var + eps) * gamma + beta


def _params(c):
    rng = np.random.RandomState(1)
    return rng.rand(c).astype(np.float32) + 0.5, rng.randn(c).astype(np.float32)


def _contrib(x):
    """contrib's layer_norm over the last axis, its beta and gamma set to _params."""
    y = tf.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
    params = [v for v in tf.trainable_variables() if v.name.startswith("LayerNorm/")]
    g0, b0 = _params(x.shape.as_list()[-1])
    tf.add_to_collection("assigns", tf.assign(params[0], b0))
    tf.add_to_collection("assigns", tf.assign(params[1], g0))
    return y, params


def _hand(form, eps=1e-12):
    def build(x):
        g0, b0 = _params(x.shape.as_list()[-1])
        with tf.variable_scope("LayerNorm"):
            gamma = tf.get_variable("gamma", initializer=g0)
            beta = tf.get_variable("beta", initializer=b0)
        return _moments_form(x, gamma, beta, eps, form), [beta, gamma]
    return build


def _run(build, xs, fusion=True):
    """[y, dx, dbeta, dgamma, kernels of the forward run, kernels of the forward + backward run]."""
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, xs.shape)
    y, params = build(x)
    w = tf.constant(np.random.RandomState(5).randn(*xs.shape).astype(np.float32))
    grads = tf.gradients(tf.reduce_sum(y * w), [x] + params)
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.get_collection("assigns"))
        out = sess.run(y, {x: xs})
        fwd = sess.stats()["kernels_launched"]
        gs = sess.run(grads, {x: xs})
        both = sess.stats()["kernels_launched"]
    return [out] + gs + [fwd, both]


@pytest.mark.parametrize("form", ["rsqrt", "sqrt"])
def test_layer_norm_op_equals_moments_formula(form):
    xs = np.random.RandomState(0).randn(6, 5, 32).astype(np.float32) * 3 + 1
    fused = _run(_contrib, xs)
    for reference in (_run(_hand(form), xs), _run(_hand(form), xs, fusion=False), _run(_contrib, xs, fusion=False)):
        for a, b in zip(fused[:4], reference[:4]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # The forward is one kernel; forward + backward three: layer_norm, the loss's gradient (w
    # broadcast) fused with nothing else, and layer_norm_grad (dx, dgamma and dbeta together).
    assert fused[4] == 1
    assert fused[5] == 3


def test_layer_norm_finite_differences():
    rng = np.random.RandomState(2)
    xs = rng.randn(3, 7).astype(np.float64)
    w = rng.randn(3, 7)
    g0, b0 = rng.rand(7) + 0.5, rng.randn(7)
    tf.reset_default_graph()
    x = tf.placeholder(tf.float64, xs.shape)
    gamma = tf.placeholder(tf.float64, [7])
    beta = tf.placeholder(tf.float64, [7])
    from tinyflow.framework import apply_op
    y = apply_op("layer_norm", [x, gamma, beta], {"epsilon": 1e-3}).outputs[0]
    loss = tf.reduce_sum(y * w)
    grads = tf.gradients(loss, [x, gamma, beta])
    with tf.Session() as sess:
        def f(a, b, c):
            return sess.run(loss, {x: a, gamma: b, beta: c})
        analytic = sess.run(grads, {x: xs, gamma: g0, beta: b0})
        args = [xs, g0, b0]
        for k, arg in enumerate(args):
            numeric = np.zeros_like(arg)
            for i in np.ndindex(arg.shape):
                plus = [a.copy() for a in args]
                minus = [a.copy() for a in args]
                plus[k][i] += 1e-6
                minus[k][i] -= 1e-6
                numeric[i] = (f(*plus) - f(*minus)) / 2e-6
            np.testing.assert_allclose(analytic[k], numeric, rtol=1e-5, atol=1e-6)


def test_layer_norm_stat_outputs_gradient():
    """Gradients reaching the mean and rstd outputs take layer_norm_grad's stat_grads form."""
    rng = np.random.RandomState(4)
    xs = rng.randn(4, 6)
    tf.reset_default_graph()
    x = tf.placeholder(tf.float64, xs.shape)
    gamma, beta = tf.constant(rng.rand(6) + 0.5, tf.float64), tf.constant(rng.randn(6), tf.float64)
    from tinyflow.framework import apply_op
    op = apply_op("layer_norm", [x, gamma, beta], {"epsilon": 1e-3})
    y, mean, rstd = op.outputs
    loss = tf.reduce_sum(y * y) + tf.reduce_sum(mean * 3.0) + tf.reduce_sum(rstd * rstd)
    m2, v2 = tf.nn.moments(x, axes=[-1], keep_dims=False)
    r2 = tf.rsqrt(v2 + 1e-3)
    y2 = (x - tf.expand_dims(m2, -1)) * tf.expand_dims(r2, -1) * gamma + beta
    loss2 = tf.reduce_sum(y2 * y2) + tf.reduce_sum(m2 * 3.0) + tf.reduce_sum(r2 * r2)
    with tf.Session() as sess:
        a, b = sess.run([tf.gradients(loss, x)[0], tf.gradients(loss2, x)[0]], {x: xs})
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_layer_norm_other_axes_use_moments():
    """begin_norm_axis other than the last normalizes over several axes, as TF: the moments formula."""
    xs = np.random.RandomState(3).randn(2, 3, 4).astype(np.float32)
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, xs.shape)
    y = tf.contrib.layers.layer_norm(x)  # begin_norm_axis=1: axes 1 and 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: xs})
    names = sorted(v.name for v in tf.global_variables())
    assert names == ["LayerNorm/beta:0", "LayerNorm/gamma:0"]
    m = xs.mean(axis=(1, 2), keepdims=True)
    v = xs.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out, (xs - m) / np.sqrt(v + 1e-12), rtol=1e-4, atol=1e-4)


def test_layer_norm_shape_errors():
    tf.reset_default_graph()
    from tinyflow.framework import apply_op
    x = tf.placeholder(tf.float32, [2, 5])
    with pytest.raises(Exception, match="gamma"):
        y = apply_op("layer_norm", [x, tf.zeros([4]), tf.zeros([5])]).outputs[0]
        with tf.Session() as sess:
            sess.run(y, {x: np.zeros((2, 5), np.float32)})


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_layer_norm_device_kernels(target):
    """The device library's layer_norm and layer_norm_grad (no host fallback) give the CPU kernels' values."""
    xs = np.random.RandomState(0).randn(6, 5, 32).astype(np.float32) * 3 + 1
    results = {}
    for t in ("cpu", target):
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, xs.shape)
        y, params = _contrib(x)
        loss = tf.reduce_sum(y * tf.constant(np.random.RandomState(5).randn(*xs.shape).astype(np.float32)))
        grads = tf.gradients(loss, [x] + params)
        try:
            with tf.Session(target=t) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(tf.get_collection("assigns"))
                results[t] = sess.run([y] + grads, {x: xs})
                assert sess.stats()["host_fallbacks"] == 0
        except tf.errors.OpError as err:
            if target not in str(err).lower():
                raise
            pytest.skip("no %s device: %s" % (target, err))
    for a, b in zip(results["cpu"], results[target]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_layer_norm_empty_rows(target):
    """No rows: an empty y, and zero dgamma and dbeta."""
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [0, 4])
    y, params = _contrib(x)
    grads = tf.gradients(tf.reduce_sum(y), params)
    try:
        with tf.Session(target=target) as sess:
            sess.run(tf.global_variables_initializer())
            out, db, dg = sess.run([y] + grads, {x: np.zeros((0, 4), np.float32)})
    except tf.errors.OpError as err:
        if target not in str(err).lower():
            raise
        pytest.skip("no %s device: %s" % (target, err))
    assert out.shape == (0, 4)
    np.testing.assert_array_equal(db, np.zeros(4))
    np.testing.assert_array_equal(dg, np.zeros(4))


def test_layer_norm_empty_last_axis():
    """Rows of no elements: their mean and rstd are NaN (0 / 0, as the mean op gives); y is empty."""
    tf.reset_default_graph()
    from tinyflow.framework import apply_op
    x = tf.placeholder(tf.float32, [3, 0])
    op = apply_op("layer_norm", [x, tf.zeros([0]), tf.zeros([0])])
    with tf.Session() as sess:
        y, mean, rstd = sess.run(op.outputs, {x: np.zeros((3, 0), np.float32)})
        reference = sess.run(tf.reduce_mean(x, axis=-1), {x: np.zeros((3, 0), np.float32)})
    assert y.shape == (3, 0)
    assert np.isnan(mean).all() and np.isnan(rstd).all() and np.isnan(reference).all()
