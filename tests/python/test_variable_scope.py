"""tf.variable_scope / tf.get_variable reuse semantics and names, and the TF1 initializer classes."""
import numpy as np
import pytest

import tinyflow as tf


def _values(*tensors, seed=None):
    with tf.Session(seed=seed) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(tensors))


def test_names_follow_the_scopes_not_the_name_scopes():
    with tf.name_scope("ns"):
        with tf.variable_scope("foo") as scope:
            v = tf.get_variable("v", [2])
            with tf.variable_scope("bar"):
                w = tf.get_variable("w", [1])
    assert (v.name, w.name, v.op.name) == ("foo/v:0", "foo/bar/w:0", "foo/v")
    assert scope.name == "foo" and tf.get_variable_scope().name == ""
    assert [x.name for x in tf.trainable_variables()] == ["foo/v:0", "foo/bar/w:0"]


def test_ops_inside_a_scope_get_its_name_scope_made_unique():
    with tf.variable_scope("s"):
        a = tf.constant(1.0) + 1.0
    with tf.variable_scope("s"):
        b = tf.constant(1.0) + 1.0
    assert a.name.startswith("s/") and b.name.startswith("s_1/")


def test_duplicate_without_reuse_is_a_value_error():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [1])
    with pytest.raises(ValueError, match=r"Variable foo/v already exists, disallowed\. Did you mean to set "
                                         r"reuse=True or reuse=tf\.AUTO_REUSE in VarScope\?"):
        with tf.variable_scope("foo"):
            tf.get_variable("v", [1])


def test_reuse_true_finds_and_refuses_missing():
    with tf.variable_scope("foo"):
        v = tf.get_variable("v", [2, 3])
    with tf.variable_scope("foo", reuse=True):
        assert tf.get_variable("v") is v
        assert tf.get_variable("v", [2, 3]) is v
        with pytest.raises(ValueError, match="Variable foo/u does not exist"):
            tf.get_variable("u", [1])
        with pytest.raises(ValueError, match=r"Trying to share variable foo/v, but specified shape \(3, 2\) and "
                                             r"found shape \(2, 3\)"):
            tf.get_variable("v", [3, 2])
        with pytest.raises(ValueError, match="specified dtype int32"):
            tf.get_variable("v", [2, 3], dtype=tf.int32)


def test_reuse_is_inherited_and_reuse_false_does_not_turn_it_off():
    with tf.variable_scope("a"):
        with tf.variable_scope("b"):
            v = tf.get_variable("v", [1])
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b", reuse=False):
            assert tf.get_variable_scope().reuse is True
            assert tf.get_variable("v") is v


def test_auto_reuse_creates_once():
    def layer():
        with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [3])
    first, second = layer(), layer()
    assert first is second and len(tf.global_variables()) == 1


def test_reuse_variables_and_entering_a_scope_object_again():
    with tf.variable_scope("model") as scope:
        v = tf.get_variable("v", [1])
        scope.reuse_variables()
        assert tf.get_variable("v") is v
    with tf.variable_scope("other"):
        with tf.variable_scope(scope) as again:  # the scope's own name, not other/model
            assert tf.get_variable_scope().name == "model"
            assert tf.get_variable("v") is v
            t = tf.constant(2.0) * 2.0
    assert again.original_name_scope == "model/"
    assert t.name.startswith("other/model/")  # (TF opens a new name scope there)


def test_default_name_is_made_unique():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="dense"):
            names.append(tf.get_variable("w", [1]).op.name)
    assert names == ["dense/w", "dense_1/w", "dense_2/w"]


def test_scope_errors():
    with pytest.raises(TypeError, match="name_or_scope is required"):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        tf.variable_scope(None, default_name="x", reuse=True)
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("v", [None, 2])
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        tf.get_variable("c", [2], initializer=tf.constant([1.0, 2.0]))


def test_scope_initializer_is_the_default_and_value_initializers():
    with tf.variable_scope("s", initializer=tf.constant_initializer(3.0)):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [1], initializer=tf.ones_initializer())
            c = tf.get_variable("c", initializer=np.array([[1.0, 2.0]], np.float32))
    i = tf.get_variable("i", [2], dtype=tf.int32)
    av, bv, cv, iv = _values(a, b, c, i)
    assert av.tolist() == [3.0, 3.0] and bv.tolist() == [1.0] and cv.tolist() == [[1.0, 2.0]]
    assert iv.tolist() == [0, 0] and i.dtype == tf.int32


def test_trainable_and_collections():
    v = tf.get_variable("frozen", [1], trainable=False)
    w = tf.get_variable("mine", [1], collections=["my_vars"])
    assert v not in tf.trainable_variables() and v in tf.global_variables()
    assert w in tf.get_default_graph().get_collection("my_vars") and w in tf.trainable_variables()
    assert w not in tf.global_variables()


def test_regularizer_adds_a_loss():
    with tf.variable_scope("r", regularizer=lambda v: tf.reduce_sum(v) * 2.0):
        tf.get_variable("w", [2], initializer=tf.ones_initializer())
    (loss,) = tf.get_default_graph().get_collection("regularization_losses")
    assert _values(loss)[0] == pytest.approx(4.0)


def test_constant_initializer_values_like_tf():
    a = tf.get_variable("a", [2, 3], initializer=tf.constant_initializer([1, 2, 3, 4, 5, 6]))
    b = tf.get_variable("b", [2, 2], initializer=tf.constant_initializer([7, 8]))  # last value repeats
    c = tf.get_variable("c", [3], initializer=tf.initializers.constant(-1.5))
    av, bv, cv = _values(a, b, c)
    assert av.tolist() == [[1, 2, 3], [4, 5, 6]] and bv.tolist() == [[7, 8], [8, 8]]
    assert cv.tolist() == [-1.5] * 3
    with pytest.raises(ValueError, match="Too many elements"):
        tf.get_variable("d", [2], initializer=tf.constant_initializer([1, 2, 3]))


def test_random_initializer_statistics():
    u = tf.get_variable("u", [200, 100], initializer=tf.random_uniform_initializer(-0.5, 2.0))
    n = tf.get_variable("n", [200, 100], initializer=tf.random_normal_initializer(1.0, 2.0))
    t = tf.get_variable("t", [200, 100], initializer=tf.truncated_normal_initializer(-1.0, 0.5))
    uv, nv, tv = _values(u, n, t)
    assert uv.min() >= -0.5 and uv.max() < 2.0 and abs(uv.mean() - 0.75) < 0.05
    assert abs(nv.mean() - 1.0) < 0.1 and abs(nv.std() - 2.0) < 0.1 and np.abs(nv - 1.0).max() > 4.0
    assert np.abs(tv + 1.0).max() <= 1.0 + 1e-6 and abs(tv.mean() + 1.0) < 0.05
    assert abs(tv.std() - 0.5 * 0.87962566) < 0.03  # a normal truncated at 2 stddev


def test_glorot_and_variance_scaling_limits():
    fan_in, fan_out = 300, 100
    g = tf.get_variable("g", [fan_in, fan_out], initializer=tf.glorot_uniform_initializer())
    default = tf.get_variable("d", [fan_in, fan_out])  # get_variable's default: glorot uniform too
    conv = tf.get_variable("k", [3, 3, 16, 32], initializer=tf.initializers.he_uniform())
    gn = tf.get_variable("gn", [fan_in, fan_out], initializer=tf.glorot_normal_initializer())
    vs = tf.get_variable("vs", [fan_in, fan_out],
                         initializer=tf.variance_scaling_initializer(2.0, "fan_out", "untruncated_normal"))
    gv, dv, cv, gnv, vsv = _values(g, default, conv, gn, vs)
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    for values in (gv, dv):
        assert np.abs(values).max() <= limit and np.abs(values).max() > 0.95 * limit
        assert abs(values.std() - limit / np.sqrt(3)) < 0.05 * limit
    conv_limit = np.sqrt(3 * 2.0 / (3 * 3 * 16))
    assert np.abs(cv).max() <= conv_limit and np.abs(cv).max() > 0.95 * conv_limit
    assert abs(gnv.std() - np.sqrt(2.0 / (fan_in + fan_out))) < 0.05 * np.sqrt(2.0 / (fan_in + fan_out))
    assert np.abs(gnv).max() <= 2 * np.sqrt(2.0 / (fan_in + fan_out)) / 0.87962566 + 1e-6
    assert abs(vsv.std() - np.sqrt(2.0 / fan_out)) < 0.05 * np.sqrt(2.0 / fan_out)
    with pytest.raises(ValueError, match="Invalid `mode`"):
        tf.variance_scaling_initializer(mode="fan_sideways")
    with pytest.raises(ValueError, match="positive"):
        tf.variance_scaling_initializer(scale=0.0)


def _seeded_values(seed):
    tf.reset_default_graph()
    v = tf.get_variable("v", [50], initializer=tf.random_normal_initializer(seed=seed))
    w = tf.get_variable("w", [50], initializer=tf.random_uniform_initializer(seed=seed + 1))
    return _values(v, w, seed=7)


def test_seeded_initializers_are_reproducible():
    first, again, other = _seeded_values(3), _seeded_values(3), _seeded_values(4)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.allclose(first[0], other[0])


def test_unseeded_initializers_differ_from_each_other():
    a = tf.get_variable("a", [50], initializer=tf.random_normal_initializer())
    b = tf.get_variable("b", [50], initializer=tf.random_normal_initializer())
    av, bv = _values(a, b)
    assert not np.allclose(av, bv)


def test_initializer_called_directly():
    init = tf.initializers.truncated_normal(stddev=0.1)
    assert init([4, 5]).shape.as_list() == [4, 5]
    assert tf.zeros_initializer()([2], dtype=tf.int32).dtype == tf.int32
