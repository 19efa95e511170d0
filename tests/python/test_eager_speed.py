"""Eager mode's fast paths (issue 31 item 5) keep their semantics: an op's output is a _C.LazyTensor whose handle
and dtype are C fields (no instance dict), `_h` still reads, detaches and sets like an attribute, and every op is
still counted in the eager stats."""
from eager_util import last_json, run_program


def test_op_outputs_keep_handle_and_dtype_in_c_fields():
    out = last_json(run_program("""
        import gc, json
        import numpy as np
        import tinyflow as tf
        from tinyflow._lib import C
        from tinyflow.eager import EagerTensor
        tf.enable_eager_execution()
        x = tf.constant(np.arange(4, dtype=np.float32))
        y = x * x + x
        assert isinstance(y, C.LazyTensor) and type(y) is EagerTensor
        assert "_h" not in y.__dict__ and "_dtype" not in y.__dict__  # fields, not attributes
        assert y._dtype is tf.float32  # a float op keeps its inputs' dtype without asking the library
        h = y._h
        assert h is y._h and h.kind == "Lazy"  # one Handle, made on first read
        np.testing.assert_array_equal(y.numpy(), [0, 2, 6, 12])
        owner = EagerTensor(y._detach())  # _detach hands the array on: the old tensor has none
        assert y._h is None and owner._h is h
        del y
        gc.collect()
        np.testing.assert_array_equal(owner.numpy(), [0, 2, 6, 12])
        z = x + 1.0
        z._dtype = None  # unknown again: asked from the library
        assert z.dtype == tf.float32 and z._dtype is tf.float32
        i = tf.constant(np.arange(3, dtype=np.int32))
        assert (i * i)._dtype is None and (i * i).dtype == tf.int32  # not a float dtype: inferred on request
        before = tf.eager_stats()["ops_recorded"]
        chain = x
        for _ in range(100):
            chain = chain * x + x
        after = tf.eager_stats()
        try:
            C.lazy_setup(object, ())
            raised = False
        except TypeError as err:
            raised = "LazyTensor" in str(err)
        print(json.dumps({"ops": after["ops_recorded"] - before, "record_ns": after["record_ns"], "raised": raised,
                          "chain": float(chain.numpy()[1])}))
    """))
    assert out["ops"] == 200
    assert out["record_ns"] > 0
    assert out["raised"]
    assert out["chain"] == 101.0  # 1*1+1 = 2, then 2*1+1 ... = 101


def test_session_run_short_path_checks_feeds_and_returns_the_fetch():
    import numpy as np
    import pytest
    import tinyflow as tf
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = x * 2.0
        v = tf.Variable(np.zeros(2, np.float32))
        inc = tf.assign_add(v, tf.reduce_sum(x, 0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):  # the same plan each time (the short path)
                out = sess.run(y, {x: np.ones((3, 2), np.float32)})
                assert sess._last_plan[2].simple
            np.testing.assert_array_equal(out, np.full((3, 2), 2.0, np.float32))
            np.testing.assert_array_equal(sess.run(y, {x: [[1, 2]]}), [[2, 4]])  # a list: converted
            with pytest.raises(ValueError, match="Cannot feed value of shape"):
                sess.run(y, {x: np.ones((3, 3), np.float32)})  # still checked on the short path
            assert sess.run(inc.op, {x: np.ones((1, 2), np.float32)}) is None  # only a target: None
            np.testing.assert_array_equal(sess.run(v), [1, 1])
            both = sess.run([y, inc], {x: np.ones((1, 2), np.float32)})  # a structure: the full path
            assert not sess._last_plan[2].simple
            np.testing.assert_array_equal(both[0], [[2, 2]])
            np.testing.assert_array_equal(both[1], [2, 2])
