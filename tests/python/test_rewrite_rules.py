"""Rewrite rules seen from tinyflow: the hand-written softmax cross-entropy becomes a stable form
with the right gradient when the session binds the graph, the session switches (simplify=,
fast_math=, nsz=) that decide every rule, gradients built before the session included, and user
rule files."""
import re
from pathlib import Path

import numpy as np
import pytest

import tinyflow as tf


def np_log_softmax(z):
    z = np.asarray(z, np.float64)
    m = z.max(axis=1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))


def fired_rules(sess):
    """The names of the rules the last run fired ("rule @ node" -> "rule")."""
    return [entry.split(" @ ")[0].strip() for entry in sess.rewrites()]


def bound_ops(sess):
    return {node["op"] for node in sess.last_graph().to_dict()["nodes"]}


def hand_written_xent(labels, logits):
    """softmax cross-entropy per row, as TF1 tutorials write it."""
    return -tf.reduce_sum(labels * tf.log(tf.nn.softmax(logits)), 1)


def one_hot_rows(classes, depth):
    return np.eye(depth, dtype=np.float32)[classes]


def test_one_hot_labels_use_the_fused_op_with_gradient_p_minus_y():
    logits = tf.placeholder(tf.float32, [None, 5])
    labels = tf.placeholder(tf.int32, [None])
    loss = hand_written_xent(tf.one_hot(labels, 5), logits)
    grad = tf.gradients(tf.reduce_sum(loss), logits)[0]
    rng = np.random.RandomState(0)
    z = (rng.randn(6, 5) * 1e4).astype(np.float32)  # softmax underflows to 0: log(0) without the rules
    c = rng.randint(0, 5, size=6).astype(np.int32)
    with tf.Session(fusion=False) as sess:
        value = sess.run(loss, {logits: z, labels: c})
        assert any("xent" in r or "cross_entropy" in r for r in fired_rules(sess)), sess.rewrites()
        # (the sparse op when the labels' indices are at hand)
        assert any(op.endswith("softmax_cross_entropy_with_logits") for op in bound_ops(sess)), bound_ops(sess)
        g = sess.run(grad, {logits: z, labels: c})
    y = one_hot_rows(c, 5)
    np.testing.assert_allclose(value, -(y * np_log_softmax(z)).sum(1), rtol=1e-5)
    np.testing.assert_allclose(g, np.exp(np_log_softmax(z)) - y, atol=1e-6)


def build_softmax_regression(n_in, n_out, w0=None):
    """The "MNIST for ML beginners" model with its hand-written cross-entropy; y_ is fed (not provably one-hot)."""
    x = tf.placeholder(tf.float32, [None, n_in])
    y_ = tf.placeholder(tf.float32, [None, n_out])
    W = tf.Variable(tf.zeros([n_in, n_out]) if w0 is None else tf.constant(w0))
    b = tf.Variable(tf.zeros([n_out]))
    y = tf.nn.softmax(tf.matmul(x, W) + b)
    cross_entropy = tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(y), reduction_indices=[1]))
    return x, y_, W, b, y, cross_entropy


def test_fed_labels_get_the_general_gradient_and_stay_finite_for_large_logits():
    rng = np.random.RandomState(1)
    w0 = (rng.randn(4, 3) * 3e3).astype(np.float32)
    x, y_, W, b, _, cross_entropy = build_softmax_regression(4, 3, w0)
    grads = tf.gradients(cross_entropy, [W, b])
    xs = rng.randn(8, 4).astype(np.float32)
    # Rows summing to 2 (and 0): the true gradient is p * sum(y) - y, not p - y.
    ys = one_hot_rows(rng.randint(0, 3, size=8), 3) * 2
    ys[0] = [1, 1, 0]
    ys[1] = 0
    z = xs.astype(np.float64) @ w0
    assert np.abs(z).max() > 1e3
    p = np.exp(np_log_softmax(z))
    dz = (p * ys.sum(1, keepdims=True) - ys) / len(xs)
    with tf.Session(fusion=False) as sess:
        sess.run(tf.global_variables_initializer())
        loss, gw, gb = sess.run([cross_entropy] + grads, {x: xs, y_: ys})
        assert sess.rewrites()
    assert np.isfinite(loss) and np.isfinite(gw).all() and np.isfinite(gb).all()
    np.testing.assert_allclose(loss, -(ys * np_log_softmax(z)).sum(1).mean(), rtol=1e-4)
    np.testing.assert_allclose(gw, xs.T.astype(np.float64) @ dz, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gb, dz.sum(0), rtol=1e-3, atol=1e-4)
    with tf.Session(fusion=False, simplify=False) as sess:  # the decomposed form: log(0) * 0 = nan
        sess.run(tf.global_variables_initializer())
        loss, gw = sess.run([cross_entropy, grads[0]], {x: xs, y_: ys})
        assert sess.rewrites() == []
    assert not np.isfinite(loss) and not np.isfinite(gw).all()  # the gradients too: no rule ran


def synthetic_classes(rng, n, n_in, n_out):
    centers = rng.randn(n_out, n_in) * 2
    c = rng.randint(0, n_out, size=n)
    return (centers[c] + rng.randn(n, n_in)).astype(np.float32), c


def test_softmax_regression_trains_to_the_same_accuracy_with_and_without_rules():
    rng = np.random.RandomState(2)
    xs, c = synthetic_classes(rng, 300, 10, 4)
    results = {}
    for simplify in (True, False):  # the session's switch: rules off in the gradients too
        tf.reset_default_graph()
        x, y_, _, _, y, cross_entropy = build_softmax_regression(10, 4)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1)), tf.float32))
        with tf.Session(simplify=simplify) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(60):
                sess.run(train, {x: xs, y_: one_hot_rows(c, 4)})
            results[simplify] = sess.run(accuracy, {x: xs, y_: one_hot_rows(c, 4)})
    assert results[True] > 0.85, results
    assert abs(results[True] - results[False]) <= 0.01, results


def large_logit_xent():
    """The hand-written cross-entropy of fed (not one-hot) labels and its gradient, logits of 1e4:
    rows of labels summing to 2 and 0.5, so the true gradient p * sum(y) - y is not p - y."""
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.float32, [None, 3])
    loss = tf.reduce_sum(hand_written_xent(labels, logits))
    grad = tf.gradients(loss, logits)[0]
    z = np.array([[1e4, -1e4, 0], [0, 1e4, -1e4]], np.float32)
    y = np.array([[1, 1, 0], [0.5, 0, 0]], np.float32)
    return loss, grad, {logits: z, labels: y}


def test_the_session_decides_the_rules_of_gradients_built_before_it():
    loss, grad, feed = large_logit_xent()  # built once, before any session, with no rule
    z, y = feed.values()
    p = np.exp(np_log_softmax(z)).astype(np.float32)
    with tf.Session(fusion=False) as sess:  # rules on: bound with the stable forms
        value, g = sess.run([loss, grad], feed)
        assert "log_softmax_grad_by_hand" in fired_rules(sess), sess.rewrites()
    assert np.isfinite(value) and np.isfinite(g).all()
    np.testing.assert_allclose(g, p * y.sum(1, keepdims=True) - y, atol=1e-6)
    with tf.Session(fusion=False, simplify=False) as sess:  # the decomposed form: log(0) = -inf
        value, g = sess.run([loss, grad], feed)
        assert sess.rewrites() == []
    assert not np.isfinite(value) and not np.isfinite(g).all()


def test_fast_math_of_the_session_reaches_a_gradient_built_before_it():
    x = tf.placeholder(tf.float32, [3])
    w = tf.placeholder(tf.float32, [3])
    grad = tf.gradients(tf.reduce_sum(w * (x - x)), w)[0]  # (x - x): NaN at x = inf in IEEE
    feed = {x: np.array([2, np.inf, -1], np.float32), w: np.ones(3, np.float32)}
    with tf.Session(fusion=False) as sess:
        exact = sess.run(grad, feed)
    with tf.Session(fusion=False, fast_math=True) as sess:
        fast = sess.run(grad, feed)
        assert "sub_self" in fired_rules(sess), sess.rewrites()
    assert np.isnan(exact[1]) and exact[0] == 0 and exact[2] == 0
    np.testing.assert_array_equal(fast, [0, 0, 0])


def test_nsz_rules_run_with_nsz_or_fast_math_only():
    x = tf.placeholder(tf.float32, [2])
    out = x + tf.zeros([2])
    feed = {x: np.array([-0.0, 1.0], np.float32)}
    for options, minus_zero in (({}, False), ({"nsz": True}, True), ({"fast_math": True}, True)):
        with tf.Session(fusion=False, **options) as sess:
            value = sess.run(out, feed)
            assert ("add_zero" in fired_rules(sess)) == minus_zero, (options, sess.rewrites())
        assert bool(np.signbit(value[0])) == minus_zero, options


def test_user_rule_files_with_the_old_real_tag_are_refused(tmp_path):
    path = tmp_path / "old_tags.rules"
    path.write_text(USER_RULES.replace("user_double_negation exact", "old_double_negation real"))
    with pytest.raises(tf.TinyflowError, match="tag 'real' was split"):
        tf.load_rules(str(path))


def test_simplify_false_fires_nothing():
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.int32, [None])
    loss = hand_written_xent(tf.one_hot(labels, 3), logits)
    feed = {logits: np.zeros((2, 3), np.float32), labels: np.array([0, 2], np.int32)}
    with tf.Session() as sess:
        sess.run(loss, feed)
        assert sess.rewrites()
    with tf.Session(simplify=False) as sess:
        sess.run(loss, feed)
        assert sess.rewrites() == []
        assert sess.stats()["rewrites"] == []


def test_fast_math_rules_run_only_when_asked():
    x = tf.placeholder(tf.float32, [4])
    out = (x - x) + x * 2.0
    xs = np.array([1.0, np.nan, np.inf, -0.0], np.float32)
    with tf.Session(fusion=False) as sess:
        default_value = sess.run(out, {x: xs})
        default_fired = set(fired_rules(sess))
    with tf.Session(fusion=False, fast_math=True) as sess:
        fast_value = sess.run(out, {x: xs})
        fast_fired = set(fired_rules(sess))
    assert fast_fired - default_fired, (fast_fired, default_fired)
    # The default keeps IEEE results: x - x is NaN for NaN and Inf.
    assert np.isnan(default_value[1]) and np.isnan(default_value[2])
    assert default_value[0] == 2.0 and fast_value[0] == 2.0


USER_RULES = """# a user rule file
rule user_double_negation exact {
  match:   negative(negative(x))
  rewrite: x
  test:    x f32[2,3]
}
"""


def test_a_loaded_user_rule_file_fires(tmp_path):
    path = tmp_path / "user_test_rules.rules"
    path.write_text(USER_RULES)
    assert tf.load_rules(str(path)) == "user_test_rules"
    x = tf.placeholder(tf.float32, [3])
    out = tf.negative(tf.negative(x)) * 3.0
    with tf.Session(fusion=False, rule_sets=["user_test_rules"]) as sess:
        np.testing.assert_array_equal(sess.run(out, {x: np.array([1, -2, 0], np.float32)}), [3, -6, 0])
        assert "user_double_negation" in fired_rules(sess), sess.rewrites()
        assert "negative" not in bound_ops(sess)


def test_a_malformed_rule_file_names_its_line(tmp_path):
    path = tmp_path / "bad_rules.rules"
    path.write_text(USER_RULES.replace("user_double_negation", "bad_double_negation")
                    + "\nrule broken exactly {\n  match: negative(x)\n  rewrite: x\n}\n")
    with pytest.raises(tf.TinyflowError) as err:
        tf.load_rules(str(path))
    assert re.search(r"bad_rules\S*:8\b", str(err.value)), str(err.value)


REJECTED = Path(__file__).resolve().parents[1] / "rules" / "rejected"


@pytest.mark.parametrize("name, message", [
    ("grows_without_why", r"rule 'neg_as_sub' does not lower the cost order"),
    ("guard_arity", r"guard result_like takes 1 arguments, not 4"),
    ("cycle", r"rule cycle: 'exp_to_exp2' \(.*\) -> 'exp_add_zero_back' \(.*\) -> back to exp\(x\)"),
    ("duplicate_of_shipped", r"duplicate_of_shipped\.rules:3: rule 'mul_one' is already defined at "
                             r"rules/algebra\.rules:\d+"),
])
def test_load_rules_rejects_what_ir_rules_verify_rejects(name, message):
    # The same files as ctest Rules.VerifyRejectsWhatTheLoaderRejects: one checker for both.
    with pytest.raises(tf.TinyflowError, match=message):
        tf.load_rules(str(REJECTED / (name + ".rules")))
    # Nothing was registered: a session naming the set does not find it.
    x = tf.placeholder(tf.float32, [2])
    with pytest.raises(tf.TinyflowError, match="no rule set '" + name + "'"):
        with tf.Session(rule_sets=[name]) as sess:
            sess.run(x * 2.0, {x: np.ones(2, np.float32)})
