"""Session: fetch forms, feeds, default sessions, variables, options, and errors from C++."""
import numpy as np
import pytest

import tinyflow as tf


def test_fetch_single_list_tuple_dict_and_nested():
    a = tf.constant(np.array([1.0, 2.0], np.float32))
    b = a * 2.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(b), [2, 4])
        x, y = sess.run([a, b])
        np.testing.assert_array_equal(y, [2, 4])
        assert isinstance(sess.run((a, b)), tuple)
        d = sess.run({"a": a, "nested": [b, {"again": a}]})
        np.testing.assert_array_equal(d["nested"][1]["again"], [1, 2])
        assert sess.run([b, b])[1].tolist() == [2, 4]


def test_scalar_fetch_is_a_numpy_scalar_and_operations_fetch_none():
    v = tf.Variable(3.0)
    with tf.Session() as sess:
        assert sess.run(v.initializer) is None
        out = sess.run(tf.reduce_sum(tf.constant([1.0, 2.0])))
        assert np.ndim(out) == 0 and out == 3.0
        assert sess.run([v.assign_add(1.0).op, v])[1] in (3.0, 4.0)


def test_feed_dict_with_unknown_batch_dimension():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.reduce_sum(x, axis=1)
    with tf.Session() as sess:
        assert sess.run(y, {x: np.ones((3, 2))}).tolist() == [2, 2, 2]
        assert sess.run(y, feed_dict={x: [[1, 2]]}).tolist() == [3]
        assert sess.run(y, {"x:0": np.ones((1, 2))}).tolist() == [2]


def test_default_session_eval_and_run():
    v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")
    inc = v.assign(v * 10.0)
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        inc.op.run()
        np.testing.assert_array_equal(v.eval(), [10, 20])
        assert tf.get_default_session() is sess
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="No default session"):
        v.eval()


def test_interactive_session_and_variable_access():
    sess = tf.InteractiveSession()
    try:
        w = tf.Variable(tf.zeros([2]), name="w")
        tf.variables_initializer([w]).run()
        assert w.eval().tolist() == [0, 0]
        sess.set_variable("w", np.array([5, 6], np.float32))
        assert w.eval().tolist() == [5, 6]
        assert sess.get_variable("w").tolist() == [5, 6]
        assert "w" in sess.list_variables()
        w.load(np.array([7, 8], np.float32))
        assert sess.run(w).tolist() == [7, 8]
    finally:
        sess.close()


def test_control_dependencies_order_effects():
    v = tf.Variable(1.0)
    with tf.Session() as sess:
        sess.run(tf.initialize_all_variables())
        inc = tf.assign_add(v, 1.0)
        with tf.control_dependencies([inc]):
            read = tf.identity(v)
        assert sess.run(read) == 2.0
        sess.run(tf.group(tf.assign(v, 5.0)))
        assert sess.run(v) == 5.0


def test_session_options_reach_the_library(tmp_path):
    x = tf.placeholder(tf.float32, [4])
    y = tf.exp(x) * 2.0 + 1.0
    with tf.Session(fusion=False) as sess:
        sess.run(y, {x: np.zeros(4)})
        unfused = sess.stats()["kernels_launched"]
    with tf.Session(fusion=True, fmax=2, dump_dir=str(tmp_path)) as sess:
        sess.run(y, {x: np.zeros(4)})
        assert sess.stats()["kernels_launched"] < unfused
        assert sess.last_graph().fusion_groups()
    assert any(p.name.endswith("_Fusion.txt") for p in tmp_path.iterdir())


def test_wrong_feed_shape_carries_the_cpp_message():
    x = tf.placeholder(tf.float32, [None, 3], name="images")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 4\) for Tensor 'images:0', which "
                                             r"has shape '\(\?, 3\)'"):  # as TF checks it before the run
            sess.run(x * 2.0, {x: np.zeros((2, 4))})


def test_unfed_placeholder_and_uninitialized_variable_errors():
    x = tf.placeholder(tf.float32, [2], name="x")
    w = tf.Variable(tf.ones([2]), name="w")
    with tf.Session() as sess:
        with pytest.raises(tf.TinyflowError, match="placeholder 'x' must be fed"):
            sess.run(x + 1.0)
        with pytest.raises(tf.TinyflowError, match="variable 'w' is not initialized"):
            sess.run(w * 2.0)


def test_bad_session_options_and_unknown_ops_raise():
    with pytest.raises(tf.TinyflowError, match="unknown device 'tpu'"):
        tf.Session(target="tpu")
    with pytest.raises(tf.TinyflowError, match="unknown op 'no_such_op'"):
        tf.apply_op("no_such_op", [])
    with pytest.raises(tf.TinyflowError, match="unknown op 'no_such_op'"):
        tf.ir.Graph.load_json('{"nodes": [{"op": "no_such_op", "name": "a", "inputs": []}], '
                              '"arg_nodes": [], "heads": [[0, 0]]}')
    with pytest.raises(tf.TinyflowError, match="cannot load op library"):
        tf.load_op_library("/nonexistent/libops.so")


def test_load_op_library_makes_its_ops_usable():
    import os
    path = os.path.join(os.path.dirname(tf.LIB_PATH), "libexample_ops.so")
    if not os.path.exists(path):
        pytest.skip("example op library not built")
    tf.load_op_library(path)
    assert "axpby" in tf.list_ops()
    info = tf.ir.op_info("axpby")
    params = {a[0] for a in info["arguments"]}
    assert {"alpha", "beta"} <= params
    x, y = tf.constant(np.array([1.0, 2.0], np.float32)), tf.constant(np.array([10.0, 20.0], np.float32))
    z = tf.apply_op("axpby", [x, y], {"alpha": 2.0, "beta": 3.0})
    assert z.shape.as_list() == [2] and z.dtype == tf.float32  # its FInferShape/FInferType
    gx, gy = tf.gradients(z, [x, y], grad_ys=tf.constant(np.array([1.0, 10.0], np.float32)))  # its FGradient
    text = tf.ir.Graph([gx, gy]).apply_passes(["InferShape"]).text()
    assert "axpby_grad_x" in text and "axpby_grad_y" in text
    for fusion in (False, True):  # its FCompute, then its FCodeGen in a generated kernel
        with tf.Session(fusion=fusion) as sess:
            np.testing.assert_allclose(sess.run(z), [32.0, 64.0], rtol=1e-6)
            np.testing.assert_allclose(sess.run([gx, gy]), [[2.0, 20.0], [3.0, 30.0]], rtol=1e-6)
            if fusion:
                assert sess.stats()["kernels_launched"] >= 1


def test_graph_assign_of_another_dtype_is_tfs_type_error_naming_both_dtypes():
    v = tf.Variable(np.zeros([2], np.float32))
    value = tf.constant(np.array([1, 2], np.int32))
    for assign, op in ((tf.assign, "Assign"), (tf.assign_add, "AssignAdd"), (tf.assign_sub, "AssignSub"),
                       (lambda r, x: r.assign(x), "Assign"), (lambda r, x: r.assign_add(x), "AssignAdd")):
        with pytest.raises(TypeError, match="Input 'value' of '%s' Op has type int32 that does not match "
                                            "type float32 of argument 'ref'" % op):
            assign(v, value)
    # Python and NumPy values still convert to the variable's dtype.
    step = tf.assign(v, np.array([3, 4], np.int64))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(step), [3.0, 4.0])
