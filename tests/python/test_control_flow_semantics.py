"""TF 1.x's exact semantics of tf.cond / tf.case / tf.while_loop / TensorArray / map_fn where
adversarial programs found them wrong: dtypes through a constant predicate, the errors TF raises
for malformed branches and predicates, maximum_iterations, the untaken branch's shapes,
TensorArray sizes, map_fn's dtype and empty elems, and the gradient through a cast to an integer."""
import numpy as np
import pytest

import tinyflow as tf
from eager_util import last_json, needs_tape, run_program


def _run(fetches, feeds=None, fusion=True):
    with tf.Session(fusion=fusion) as sess:
        return sess.run(fetches, feeds)


def test_cond_on_a_constant_predicate_keeps_integer_and_bool_values():
    # FoldConstants (the TF importer's pipeline, tf.ir's) inlines the taken branch: its int32 / bool
    # values must stay int32 / bool for the InferType after it.
    n = tf.placeholder(tf.int32, [2])
    ints = tf.cond(tf.less(2, 5), lambda: n + n, lambda: n)
    flags = tf.cond(tf.less(5, 2), lambda: tf.greater(n + n, n), lambda: tf.less(n + n, n))
    case = tf.case([(tf.equal(1, 2), lambda: n + n), (tf.equal(2, 2), lambda: n * n)], default=lambda: n)
    got = _run([ints, flags, case], {n: [3, -4]})
    np.testing.assert_array_equal(got[0], [6, -8])
    np.testing.assert_array_equal(got[1], [False, True])
    np.testing.assert_array_equal(got[2], [9, 16])
    for out, dtype in ((ints, "int32"), (flags, "bool"), (case, "int32")):
        folded = tf.ir.Graph(out).apply_passes(["InferShape", "InferType", "FoldConstants"],
                                               input_shapes={n.op.name: (2,)})
        assert '"cond"' not in folded.save_json()
        assert folded.attr("dtype")[-1] == dtype


def test_cond_branch_returning_none_or_nothing_is_a_value_error():
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="true_fn must have a return value"):
        tf.cond(p, lambda: None, lambda: x)
    with pytest.raises(ValueError, match="false_fn must have a return value"):
        tf.cond(p, lambda: x, lambda: None)
    with pytest.raises(ValueError, match="at least one result"):
        tf.cond(p, lambda: [], lambda: [])


def test_cond_branches_returning_dicts_of_different_keys_is_a_value_error():
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="don't have the same set of keys"):
        tf.cond(p, lambda: {"a": x}, lambda: {"b": x * 2.0})
    same = tf.cond(p, lambda: {"a": x, "b": x * 2.0}, lambda: {"b": x * 3.0, "a": x * 4.0})
    assert _run(same, {p: False}) == {"a": 4.0, "b": 3.0}
    with pytest.raises(TypeError, match="Incompatible return types"):
        tf.cond(p, lambda: [x, x], lambda: (x, x))


def test_cond_predicate_must_be_a_scalar_bool_tensor():
    x = tf.constant(1.0)
    for pred in (tf.constant(1.0), tf.constant(1), tf.placeholder(tf.float32, [])):
        with pytest.raises(TypeError, match="Input 'pred' of 'Switch' Op has type %s" % pred.dtype.name):
            tf.cond(pred, lambda: x, lambda: x * 2.0)
    with pytest.raises(TypeError, match="pred must not be a Python bool"):
        tf.cond(True, lambda: x, lambda: x * 2.0)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.cond(tf.constant([True, False]), lambda: x, lambda: x * 2.0)


def test_while_condition_must_return_a_bool_scalar():
    with pytest.raises(TypeError, match="Input 'input' of 'LoopCond' Op has type int32"):
        tf.while_loop(lambda i: i, lambda i: i - 1, [tf.constant(3)])
    with pytest.raises(ValueError, match="Shape must be rank 0"):
        tf.while_loop(lambda v: v < 3.0, lambda v: v + 1.0, [tf.zeros([2])])


def test_negative_maximum_iterations_runs_no_iteration():
    # TF1's loop condition is `counter < maximum_iterations and cond`: 0 iterations.
    five = tf.constant(5)
    as_int = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [five], maximum_iterations=-3)
    as_tensor = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [five], maximum_iterations=tf.constant(-3))
    bounded = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [five], maximum_iterations=4)
    assert _run([as_int, as_tensor, bounded]) == [5, 5, 9]


def test_maximum_iterations_as_a_tensor_bounds_a_counter_of_its_dtype():
    limit = tf.placeholder(tf.int32, [])
    one = tf.while_loop(lambda i: i < 100, lambda i: i + 2, [tf.constant(0)], maximum_iterations=limit)
    assert isinstance(one, tf.Tensor)  # a single loop variable comes back unpacked, as with an int bound
    listed = tf.while_loop(lambda i: i < 100, lambda i: i + 2, [tf.constant(0)], maximum_iterations=limit,
                           return_same_structure=True)
    assert isinstance(listed, list) and len(listed) == 1
    pair = tf.while_loop(lambda i, s: i < 100, lambda i, s: (i + 1, s * 2.0), (tf.constant(0), tf.constant(1.0)),
                         maximum_iterations=limit)
    # A float bound is a TypeError, as tf.compat.v1.while_loop (while_v2: an int32 bound) raises.
    for bad in (2.5, tf.constant(2.5)):
        with pytest.raises(TypeError, match="maximum_iterations must be an integer"):
            tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)], maximum_iterations=bad)
    with tf.Session() as sess:
        assert sess.run(one, {limit: 3}) == 6
        assert sess.run(listed, {limit: 3}) == [6]
        assert sess.run(pair, {limit: 4}) == (4, 16.0)
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)], maximum_iterations=tf.constant([1, 2]))


@pytest.mark.parametrize("fusion", [True, False])
def test_untaken_branch_is_not_shape_checked(fusion):
    x = tf.placeholder(tf.float32, [None])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.reduce_sum(x), lambda: tf.reduce_sum(tf.reshape(x, [7])))
    z = y * 2.0 + 1.0  # what follows the cond is planned (and fused) on the then branch's shape
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Session(fusion=fusion) as sess:
        assert sess.run(y, {x: xv, p: True}) == 6.0
        assert sess.run(z, {x: xv, p: True}) == 13.0
        assert sess.run(y, {x: np.ones(7, np.float32), p: False}) == 7.0
        with pytest.raises(tf.errors.OpError, match=r"else_branch.*\[3\]"):
            sess.run(y, {x: xv, p: False})


def test_tensor_array_unstack_checks_the_size():
    rows = tf.placeholder(tf.float32, [None, 2])
    ta = tf.TensorArray(tf.float32, size=3).unstack(rows)
    stacked = ta.stack()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.OpError, match="tried to write to index 3 but array size is: 3"):
            sess.run(stacked, {rows: np.ones((5, 2), np.float32)})
        # fewer rows leave the other elements zeros, as TF's scatter at range(rows)
        got = sess.run(stacked, {rows: np.full((2, 2), 4.0, np.float32)})
        np.testing.assert_array_equal(got, [[4, 4], [4, 4], [0, 0]])
        np.testing.assert_array_equal(sess.run(stacked, {rows: np.eye(3, 2, dtype=np.float32)}), np.eye(3, 2))
    static = tf.TensorArray(tf.float32, size=3).unstack(tf.ones([5, 2])).stack()
    with pytest.raises(tf.errors.OpError, match="tried to write to index 3"):
        _run(static)


def test_map_fn_arrays_hold_the_declared_dtype():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    as_int = tf.map_fn(lambda row: tf.cast(tf.reduce_sum(row), tf.int32), x, dtype=tf.int32)
    assert as_int.dtype == tf.int32
    np.testing.assert_array_equal(_run(as_int), [3, 7])
    # TF: the TensorArray is float32, and writing fn's int32 into it is an error (TF's when the graph
    # runs; tinyflow's when the write is built, as its type inference runs then)
    with pytest.raises(tf.errors.OpError, match="tensor_array_write.*int32 but must be float32"):
        _run(tf.map_fn(lambda row: tf.cast(row, tf.int32), x, dtype=tf.float32))


def test_map_fn_over_no_rows():
    x = tf.placeholder(tf.float32, [None, 3])
    doubled = tf.map_fn(lambda row: row * 2.0, x)
    empty = tf.map_fn(lambda row: row * 2.0, tf.zeros([0, 3]))
    with tf.Session() as sess:
        assert sess.run(doubled, {x: np.zeros((0, 3), np.float32)}).shape == (0, 3)
        np.testing.assert_allclose(sess.run(doubled, {x: np.ones((2, 3), np.float32)}), np.full((2, 3), 2.0))
        assert sess.run(empty).shape == (0, 3)


def test_gradient_through_a_cast_to_an_integer_is_none():
    x = tf.placeholder(tf.float32, [3])
    through_int = tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32) * 3.0)
    assert tf.gradients(through_int, x) == [None]
    both = tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32) + x * x)
    through_double = tf.reduce_sum(tf.cast(tf.cast(x, tf.float64), tf.float32) * 3.0)
    grads = tf.gradients([both, through_double], x)
    xv = np.array([1.5, -2.0, 0.25], np.float32)
    np.testing.assert_allclose(_run(grads, {x: xv})[0], 2 * xv + 3.0)
    assert tf.gradients(tf.cast(x > 0.0, tf.float32), x) == [None]


@needs_tape
def test_eager_gradient_through_a_cast_to_an_integer_is_none():
    out = last_json(run_program("""
        import json
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        x = tf.Variable(np.array([1.5, -2.0], np.float32))
        with tf.GradientTape(persistent=True) as tape:
            through_int = tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32) * 3.0)
            mixed = tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32) + x * x)
            through_double = tf.reduce_sum(tf.cast(tf.cast(x, tf.float64), tf.float32) * 3.0)
        print(json.dumps({"int": tape.gradient(through_int, x) is None,
                          "mixed": np.asarray(tape.gradient(mixed, x)).tolist(),
                          "double": np.asarray(tape.gradient(through_double, x)).tolist()}))
    """))
    assert out["int"]
    np.testing.assert_allclose(out["mixed"], [3.0, -4.0])
    np.testing.assert_allclose(out["double"], [3.0, 3.0])
