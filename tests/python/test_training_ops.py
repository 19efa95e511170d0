"""RMSProp, Adagrad, Adadelta, Ftrl and the proximal optimizers against NumPy implementations of TF's
training_ops formulas; apply_gradients with None gradients and the global step; clipping; EMA."""
import numpy as np
import pytest

import tinyflow as tf

X = np.random.RandomState(2).randn(8, 3).astype(np.float32)
W0 = np.random.RandomState(3).randn(3, 2).astype(np.float32)
B0 = np.array([0.5, -0.5], np.float32)


def loss_and_grads(w, b):
    """loss = mean((X w + b)^2) and its gradients, in float64."""
    y = X.astype(np.float64) @ w + b
    dy = 2 * y / y.size
    return (y ** 2).mean(), X.T @ dy, dy.sum(0)


def rmsprop(lr, decay=0.9, mu=0.0, eps=1e-10, centered=False):
    def step(p, g, s):
        s["ms"] = decay * s.get("ms", 1.0) + (1 - decay) * g * g
        denom = s["ms"]
        if centered:
            s["mg"] = decay * s.get("mg", 0.0) + (1 - decay) * g
            denom = denom - s["mg"] ** 2
        s["mom"] = mu * s.get("mom", 0.0) + lr * g / np.sqrt(denom + eps)
        return p - s["mom"]
    return step


def adagrad(lr, init=0.1):
    def step(p, g, s):
        s["a"] = s.get("a", init) + g * g
        return p - lr * g / np.sqrt(s["a"])
    return step


def adadelta(lr, rho=0.95, eps=1e-8):
    def step(p, g, s):
        s["a"] = rho * s.get("a", 0.0) + (1 - rho) * g * g
        update = np.sqrt(s.get("u", 0.0) + eps) / np.sqrt(s["a"] + eps) * g
        s["u"] = rho * s.get("u", 0.0) + (1 - rho) * update * update
        return p - lr * update
    return step


def ftrl(lr, power=-0.5, init=0.1, l1=0.0, l2=0.0, shrinkage=0.0):
    def step(p, g, s):
        accum = s.get("a", init + 0 * p)
        new_accum = accum + g * g
        sigma = (new_accum ** -power - accum ** -power) / lr
        s["l"] = s.get("l", 0.0) + g + 2 * shrinkage * p - sigma * p
        s["a"] = new_accum
        quadratic = new_accum ** -power / lr + 2 * l2
        return np.where(np.abs(s["l"]) > l1, (np.sign(s["l"]) * l1 - s["l"]) / quadratic, 0.0)
    return step


def proximal(v, lr, l1, l2):
    return np.sign(v) * np.maximum(np.abs(v) - lr * l1, 0) / (1 + lr * l2)


def proximal_gd(lr, l1, l2):
    return lambda p, g, s: proximal(p - lr * g, lr, l1, l2)


def proximal_adagrad(lr, init=0.1, l1=0.0, l2=0.0):
    def step(p, g, s):
        s["a"] = s.get("a", init) + g * g
        lr_t = lr / np.sqrt(s["a"])
        return proximal(p - lr_t * g, lr_t, l1, l2)
    return step


OPTIMIZERS = {
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.01), rmsprop(0.01)),
    "rmsprop_centered_momentum": (lambda: tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5, epsilon=1e-6,
                                                                    centered=True),
                                  rmsprop(0.01, 0.8, 0.5, 1e-6, True)),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.1), adagrad(0.1)),
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6), adadelta(1.0, 0.9, 1e-6)),
    "ftrl": (lambda: tf.train.FtrlOptimizer(0.3), ftrl(0.3)),
    "ftrl_regularized": (lambda: tf.train.FtrlOptimizer(0.3, learning_rate_power=-0.6, initial_accumulator_value=0.2,
                                                        l1_regularization_strength=0.05,
                                                        l2_regularization_strength=0.1,
                                                        l2_shrinkage_regularization_strength=0.02),
                         ftrl(0.3, -0.6, 0.2, 0.05, 0.1, 0.02)),
    "proximal_gd": (lambda: tf.train.ProximalGradientDescentOptimizer(0.2, 0.05, 0.1), proximal_gd(0.2, 0.05, 0.1)),
    "proximal_adagrad": (lambda: tf.train.ProximalAdagradOptimizer(0.2, l1_regularization_strength=0.05,
                                                                   l2_regularization_strength=0.1),
                         proximal_adagrad(0.2, 0.1, 0.05, 0.1)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_numpy(name, fusion):
    make, ref_step = OPTIMIZERS[name]
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(W0, name="w")
    b = tf.Variable(B0, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
    train = make().minimize(loss)
    pw, pb = W0.astype(np.float64), B0.astype(np.float64)
    sw, sb = {}, {}
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            _, gw, gb = loss_and_grads(pw, pb)
            sess.run(train, {x: X})
            pw, pb = ref_step(pw, gw, sw), ref_step(pb, gb, sb)
            got_w, got_b = sess.run([w, b])
            np.testing.assert_allclose(got_w, pw, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(got_b, pb, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,assign", [("rmsprop_centered_momentum", "rms_assign"), ("adagrad", "adagrad_assign"),
                                         ("adadelta", "adadelta_assign"), ("ftrl_regularized", "ftrl_assign"),
                                         ("proximal_adagrad", "proximal_adagrad_assign")])
def test_update_of_each_variable_is_one_fused_kernel(name, assign):
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(W0, name="w")
    train = OPTIMIZERS[name][0]().minimize(tf.reduce_mean(tf.square(tf.matmul(x, w))))
    with tf.Session(fusion=True) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: X})
        groups = sess.last_graph().fusion_groups()
    update = [g for g in groups if "w/" + assign in g["members"]]
    assert len(update) == 1, groups
    assigns = [m for m in update[0]["members"] if m.startswith("w/") and "_assign" in m]
    assert len(assigns) == {"rmsprop_centered_momentum": 4, "adadelta": 3, "ftrl_regularized": 3}.get(name, 2), assigns


def test_slots_are_named_as_tf_names_them():
    w = tf.Variable(W0, name="w")
    opt = tf.train.RMSPropOptimizer(0.1, centered=True)
    with tf.name_scope("train"):  # slots are named after the variable, whatever the scope
        opt.minimize(tf.reduce_sum(tf.square(w)))
    assert opt.get_name() == "RMSProp"
    assert opt.get_slot_names() == ["mg", "momentum", "rms"]
    assert [opt.get_slot(w, s).op.name for s in ("rms", "mg", "momentum")] == ["w/RMSProp", "w/RMSProp_1",
                                                                               "w/RMSProp_2"]
    ftrl_opt = tf.train.FtrlOptimizer(0.1, accum_name="acc", linear_name="lin")
    ftrl_opt.minimize(tf.reduce_sum(tf.square(w)))
    assert ftrl_opt.get_slot(w, "accum").op.name == "w/acc" and ftrl_opt.get_slot(w, "linear").op.name == "w/lin"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(opt.get_slot(w, "rms")), np.ones_like(W0))  # TF1 starts rms at 1


def test_learning_rate_may_be_a_tensor():
    w = tf.Variable(W0, name="w")
    lr = tf.placeholder(tf.float32, [])
    train = tf.train.AdagradOptimizer(lr).minimize(tf.reduce_sum(tf.square(w)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {lr: 0.5})
        np.testing.assert_allclose(sess.run(w), adagrad(0.5)(W0.astype(np.float64), 2.0 * W0, {}), rtol=1e-5)


def test_bad_hyper_parameters_raise_value_error():
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_none_gradients_are_skipped_and_the_global_step_increments_after_the_update():
    w = tf.Variable(W0, name="w")
    unused = tf.Variable(B0, name="unused")
    step = tf.train.get_or_create_global_step()
    assert step.dtype == tf.int64 and not step.trainable and tf.train.get_global_step() is step
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step] and step not in tf.trainable_variables()
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()
    opt = tf.train.GradientDescentOptimizer(tf.train.exponential_decay(0.1, step, 1, 0.5))
    grads_and_vars = opt.compute_gradients(tf.reduce_sum(tf.square(w)))
    assert [v for _, v in grads_and_vars] == [w, unused] and grads_and_vars[1][0] is None
    train = opt.apply_gradients(grads_and_vars, global_step=step)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, w), (None, unused)])
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your graph"):
        opt.minimize(tf.reduce_sum(tf.square(w)), var_list=[unused])
    expected = W0.astype(np.float64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t in range(3):
            sess.run(train)
            expected = expected - 0.1 * 0.5 ** t * 2 * expected  # the rate of the step before the increment
            np.testing.assert_allclose(sess.run(w), expected, rtol=1e-5)
            assert tf.train.global_step(sess, step) == t + 1
        np.testing.assert_array_equal(sess.run(unused), B0)


def test_clip_by_norm_and_global_norm_match_numpy():
    rng = np.random.RandomState(0)
    a, b = rng.randn(3, 4).astype(np.float32), rng.randn(5).astype(np.float32)
    ta, tb = tf.constant(a), tf.constant(b)
    clipped, norm = tf.clip_by_global_norm([ta, None, tb], 2.0)
    assert clipped[1] is None
    unclipped, _ = tf.clip_by_global_norm([ta, tb], 100.0)
    by_axis = tf.clip_by_norm(ta, 1.0, axes=[1])
    by_norm = tf.clip_by_norm(ta, 1.5)
    zero = tf.clip_by_norm(tf.zeros([3]), 1.0)
    average = tf.clip_by_average_norm(ta, 0.1)
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        tf.clip_by_global_norm(ta, 1.0)
    g = np.sqrt((a.astype(np.float64) ** 2).sum() + (b.astype(np.float64) ** 2).sum())
    with tf.Session() as sess:
        got = sess.run([clipped[0], clipped[2], norm, unclipped[0], by_axis, by_norm, zero, average,
                        tf.global_norm([ta, tb])])
    np.testing.assert_allclose(got[2], g, rtol=1e-5)
    np.testing.assert_allclose(got[0], a * 2.0 / g, rtol=1e-5)
    np.testing.assert_allclose(got[1], b * 2.0 / g, rtol=1e-5)
    np.testing.assert_allclose(got[3], a, rtol=1e-5)
    row = np.sqrt((a.astype(np.float64) ** 2).sum(1, keepdims=True))
    np.testing.assert_allclose(got[4], a / np.maximum(row, 1.0), rtol=1e-5)
    np.testing.assert_allclose(got[5], a * 1.5 / max(np.linalg.norm(a), 1.5), rtol=1e-5)
    np.testing.assert_array_equal(got[6], np.zeros(3))
    np.testing.assert_allclose(got[7], a * 0.1 / max(np.linalg.norm(a) / a.size, 0.1), rtol=1e-5)
    np.testing.assert_allclose(got[8], g, rtol=1e-5)


def test_exponential_moving_average():
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(0.0, name="b")
    step = tf.Variable(0, dtype=tf.int32, trainable=False, name="n")
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    update = ema.apply([w, b])
    assert ema.average_name(w) == "w/ExponentialMovingAverage" and ema.average(w).op.name == ema.average_name(w)
    assert tf.moving_average_variables() == [w, b]
    assert set(ema.variables_to_restore()) == {"w/ExponentialMovingAverage", "b/ExponentialMovingAverage", "n"}
    again = ema.apply([w])  # (TF 1.15: the same shadow, updated once more by this op)
    assert ema.average(w).op.name == "w/ExponentialMovingAverage" and tf.moving_average_variables() == [w, b]
    with pytest.raises(TypeError, match="must be half, float, or double"):
        ema.apply([step])
    plain = tf.train.ExponentialMovingAverage(0.5, name="plain")
    plain_update = plain.apply([w])
    debiased = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="debiased")
    debiased_update = debiased.apply([w])
    shadow, plain_shadow = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    biased = np.zeros(2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for n, value in enumerate([[3.0, -1.0], [0.0, 5.0], [2.0, 2.0]]):
            sess.run([tf.assign(w, value), tf.assign(step, n)])
            sess.run([update, plain_update, debiased_update])
            decay = min(0.9, (1.0 + n) / (10.0 + n))
            shadow = shadow - (1 - decay) * (shadow - value)
            plain_shadow = plain_shadow - 0.5 * (plain_shadow - value)
            biased = biased - 0.5 * (biased - value)
            np.testing.assert_allclose(sess.run(ema.average(w)), shadow, rtol=1e-6)
            np.testing.assert_allclose(sess.run(plain.average(w)), plain_shadow, rtol=1e-6)
            np.testing.assert_allclose(sess.run(debiased.average(w)), biased / (1 - 0.5 ** (n + 1)), rtol=1e-6)
        sess.run(again)
        np.testing.assert_allclose(sess.run(ema.average(w)), shadow - (1 - min(0.9, 3.0 / 12.0)) * (shadow - 2.0),
                                   rtol=1e-6)


_EAGER = """
    import json
    import numpy as np
    import tinyflow as tf
    tf.enable_eager_execution()
    w = tf.Variable(np.array(%(w0)s, np.float32))
    step = tf.train.get_or_create_global_step()
    opt = %(make)s
    for _ in range(3):
        opt.minimize(lambda: tf.reduce_sum(tf.square(w)), global_step=step)
    print(json.dumps({"w": w.numpy().tolist(), "step": int(step)}))
"""


@pytest.mark.parametrize("make,ref", [
    ("tf.train.RMSPropOptimizer(tf.train.exponential_decay(0.1, step, 1, 0.5), momentum=0.5, centered=True)", None),
    ("tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.05)", ftrl(0.3, l1=0.05))], ids=["rmsprop", "ftrl"])
def test_eager_updates_match_numpy(make, ref):
    from eager_util import last_json, run_program
    w0 = [1.0, -2.0, 0.5]
    out = last_json(run_program(_EAGER % {"w0": w0, "make": make}))
    expected, state = np.array(w0), {}
    for t in range(3):
        step = ref or rmsprop(0.1 * 0.5 ** t, mu=0.5, centered=True)
        expected = step(expected, 2 * expected, state)
    np.testing.assert_allclose(out["w"], expected, rtol=1e-5, atol=1e-6)
    assert out["step"] == 3


def test_clip_by_value_with_tensor_bounds():
    t = tf.constant([-2.0, 0.5, 3.0])
    clipped = tf.clip_by_value(t, tf.constant(-1.0), tf.constant([1.0, 0.2, 2.0]))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(clipped), np.float32([-1.0, 0.2, 2.0]))


def test_a_loss_over_a_gradient_still_reaches_its_variables():
    w = tf.Variable([1.0, 2.0], name="w")
    x = tf.constant([3.0, 4.0])
    (dx,) = tf.gradients(tf.reduce_sum(w * x * x), [x])  # 2 w x: the penalty depends on w through a gradient
    penalty = tf.reduce_sum(tf.square(dx))
    (grad, var), = tf.train.GradientDescentOptimizer(0.1).compute_gradients(penalty, var_list=[w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(grad), 8.0 * np.array([1.0, 2.0]) * np.array([9.0, 16.0]), rtol=1e-5)
