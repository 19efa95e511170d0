"""Eager mode rejects what graph mode and TF reject, and keeps an error with the values it belongs to:
a variable keeps its shape and dtype across assignments, a failing op does not fail unrelated reads,
tf.while_loop with one loop variable. Each program runs in its own process (eager mode is process-wide)."""
from eager_util import run_program


def test_variable_assignments_keep_the_shape_and_dtype():
    run_program("""
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        v = tf.Variable(np.zeros((2, 2), np.float32))
        def rejects(call, error, text):
            try:
                call()
            except error as err:
                assert text in str(err), str(err)
            else:
                raise AssertionError("accepted: %s" % text)
        # TF's ResourceVariable.assign: ValueError naming both shapes; a tensor of another dtype.
        rejects(lambda: v.assign(np.ones((3, 3), np.float32)), ValueError, "Shapes (2, 2) and (3, 3) are incompatible")
        rejects(lambda: v.assign(tf.constant(np.ones((2, 2), np.int32))), ValueError,
                "Tensor conversion requested dtype float32 for Tensor with dtype int32")
        # AssignAddVariableOp: the delta has the variable's shape (no broadcasting).
        for update in (v.assign_add, v.assign_sub, lambda d: tf.assign_add(v, d)):
            rejects(lambda: update(np.ones((3, 3), np.float32)), tf.errors.InvalidArgumentError,
                    "Cannot update variable with shape [2,2] using a Tensor with shape [3,3], shapes must be equal.")
            rejects(lambda: update(1.0), tf.errors.InvalidArgumentError, "using a Tensor with shape []")
        assert v.shape == [2, 2] and v.dtype == tf.float32
        np.testing.assert_array_equal(v.numpy(), np.zeros((2, 2)))  # nothing was written
        v.assign(np.full((2, 2), 3, np.int64))  # NumPy values convert to the variable's dtype, as in TF
        v.assign_add(np.ones((2, 2), np.float32))
        v.assign_sub([[1.0, 1.0], [1.0, 2.0]])
        np.testing.assert_array_equal(v.numpy(), [[3, 3], [3, 2]])
        assert v.numpy().dtype == np.float32
        # The library rejects it too (the optimizers' path, any C API caller).
        from tinyflow import eager
        rejects(lambda: eager.assign_all([(v, tf.ones([5]))]), tf.errors.OpError, "[2,2] float32 but its value is [5]")
        """)


def test_a_failing_op_does_not_fail_unrelated_reads():
    run_program("""
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        x = tf.constant(np.arange(4, dtype=np.float32))
        bad = tf.gather(x, tf.constant([10]))  # fails when run (index out of range), held from now on
        loss = tf.reduce_sum(x * 3.0)  # held beside it
        for i in range(3):
            y = tf.constant(np.ones(3, np.float32)) * float(i)
            np.testing.assert_array_equal(y.numpy(), [i, i, i])  # not the gather's error
        v = tf.Variable([1.0, 2.0])
        v.assign_add([1.0, 1.0])
        np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
        try:
            bad.numpy()
        except tf.errors.OpError as err:
            assert "index 10" in str(err), str(err)
        else:
            raise AssertionError("the failing gather returned a value")
        assert float(loss) == 18.0
        """)


def test_while_loop_with_one_loop_variable():
    run_program("""
        import tinyflow as tf
        tf.enable_eager_execution()
        i = tf.constant(0)
        # TF 1.x: a body returning one tensor for a one-element loop_vars: the result is that tensor.
        r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])
        assert int(r) == 10, r
        r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i], maximum_iterations=4)
        assert int(r) == 4
        r = tf.while_loop(lambda i: i < 10, lambda i: [i + 2], [i])  # a list: the list, as TF's
        assert isinstance(r, list) and int(r[0]) == 10
        r = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (i, tf.constant(1.0)))
        assert int(r[0]) == 3 and float(r[1]) == 8.0
        assert int(tf.while_loop(lambda i: i < 5, lambda i: i + 1, i)) == 5  # a tensor, not a list
        """)
