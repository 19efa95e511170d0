"""TF 1.x eager execution (tf.enable_eager_execution): tensors, operators, variables, GradientTape.

Each program runs in its own process, written as a TF 1.x user writes it; eager mode is switched
on for the whole process, so graph-mode references are computed here, in the test process.
"""
import numpy as np
import pytest

import tinyflow as tf
from eager_util import last_json, needs_tape, run_program


def test_imperative_elementwise_code_equals_numpy_and_fuses():
    out = last_json(run_program("""
        import json
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        assert tf.executing_eagerly()
        x_np = np.linspace(-3, 3, 12).astype(np.float32).reshape(3, 4)
        x = tf.constant(x_np)
        y = 1 / (1 + tf.exp(-x))  # Alea TK's sigmoid, written op by op
        assert y.shape == [3, 4] and y.dtype == tf.float32  # inferred, nothing computed yet
        before = tf.eager_stats()
        np.testing.assert_allclose(y.numpy(), 1 / (1 + np.exp(-x_np)), rtol=1e-6)
        after = tf.eager_stats()
        assert after["cache_misses"] == before["cache_misses"] + 1
        np.testing.assert_allclose(np.asarray(x * 2.0 - 1.0), x_np * 2 - 1, rtol=1e-6)
        s = tf.reduce_sum(tf.square(x))
        if s > 0:  # a host-side decision on a tensor
            decided = "positive"
        assert abs(float(s) - float((x_np ** 2).sum())) < 1e-3
        assert len(x) == 3 and [r.shape.as_list() for r in x] == [[4]] * 3
        assert int(tf.argmax(tf.constant([1.0, 5.0, 2.0]))) == 1
        r = tf.reshape(x, tf.constant([4, 3]))  # an attribute given as a tensor: read to the host
        assert r.shape == [4, 3]
        assert repr(tf.constant([1.0, 2.0])) == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"
        assert str(tf.constant(3)) == "tf.Tensor(3, shape=(), dtype=int32)"
        print(json.dumps({"decided": decided, "kernels": after["kernels_launched"] - before["kernels_launched"],
                          "matmul": tf.matmul(x, tf.transpose(x)).numpy().tolist()}))
        """))
    assert out["decided"] == "positive"
    assert out["kernels"] == 1  # the whole sigmoid is one fused kernel
    x_np = np.linspace(-3, 3, 12).astype(np.float32).reshape(3, 4)
    np.testing.assert_allclose(out["matmul"], x_np @ x_np.T, rtol=1e-5)


def test_variables_assign_in_place_and_initializers():
    run_program("""
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        assert v.name == "v:0" and v.trainable and v.shape == [3] and v.dtype == tf.float32
        before = v.read_value()  # a snapshot
        doubled = v * 2.0  # recorded before the assignment: reads the old value
        v.assign([10.0, 20.0, 30.0])
        v.assign_add(tf.ones([3]))
        tf.assign_sub(v, [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(v.numpy(), [10.0, 20.0, 30.0])
        np.testing.assert_array_equal(before.numpy(), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(doubled.numpy(), [2.0, 4.0, 6.0])
        np.testing.assert_array_equal((v + 1).numpy(), [11.0, 21.0, 31.0])
        z = tf.Variable(tf.zeros([2, 3]), trainable=False)
        assert not z.trainable and z.numpy().sum() == 0
        w = tf.Variable(tf.random_normal([200, 50], stddev=2.0))
        assert 1.5 < w.numpy().std() < 2.5
        with tf.variable_scope("layer"):
            g = tf.get_variable("kernel", [64, 32], initializer=tf.glorot_uniform_initializer())
        limit = np.sqrt(6.0 / (64 + 32))
        assert g.name == "layer/kernel:0" and np.abs(g.numpy()).max() <= limit and g.numpy().std() > limit / 4
        assert "numpy=array" in repr(v)
        misses = tf.eager_stats()["cache_misses"]
        draws = [tf.random_uniform([4]).numpy() for _ in range(3)]  # the RNG state, not the key, changes
        assert not np.allclose(draws[0], draws[1]) and tf.eager_stats()["cache_misses"] == misses + 1
        assert tf.global_variables_initializer() is None
        for call in (lambda: tf.placeholder(tf.float32), lambda: tf.gradients(v, [v]), tf.Session):
            try:
                call()
                raise AssertionError("expected a RuntimeError")
            except RuntimeError:
                pass
        """)


def test_enabling_after_graph_ops_is_an_error():
    run_program("""
        import tinyflow as tf
        tf.constant(1.0)  # a graph op
        try:
            tf.enable_eager_execution()
            raise AssertionError("expected a ValueError")
        except ValueError as e:
            assert "program startup" in str(e)
        """)


def test_dtypes_known_in_python_are_the_inferred_ones():
    # eager.py knows the dtype of constants, scalars, variables and of the float-preserving ops'
    # results without asking the library: each must be what the library infers.
    run_program("""
        import numpy as np
        import tinyflow as tf
        from tinyflow import eager
        tf.enable_eager_execution()
        for np_type in (np.float32, np.float64, np.int32):
            x = tf.constant(np.ones((2, 3)), dtype=tf.as_dtype(np_type))
            v = tf.Variable(np.ones(3), dtype=tf.as_dtype(np_type))
            for op in sorted(eager._FLOAT_PRESERVING):
                inputs = [x] if op not in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                                           "bias_add") else [x, v]
                for t in (eager.apply(op, inputs), x * 2, 2 * x, x + v):
                    assert (t._dtype is not None) == (np_type != np.int32), (op, np_type, t._dtype)
                    if t._dtype is not None:  # (an int32 input is left to the library: exp of it is an error)
                        assert t._dtype == eager._dtype_of(t._h), (op, np_type, t._dtype, eager._dtype_of(t._h))
            mixed = eager.apply("add", [tf.constant(np.ones(3, np.float32)), tf.constant(np.ones(3), dtype=tf.float64)])
            assert mixed._dtype is None  # inputs that disagree: the library decides
        """)


def _gradient_program(persistent):
    return """
        import json
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        rng = np.random.RandomState(0)
        x = tf.constant(rng.randn(4, 3).astype(np.float32))
        w = tf.Variable(rng.randn(3, 2).astype(np.float32))
        b = tf.Variable(np.zeros(2, np.float32))
        unused = tf.Variable(1.0)
        scale = tf.constant(1.5)
        with tf.GradientTape(persistent=%s) as tape:
            tape.watch(scale)
            h = tf.nn.relu(tf.matmul(x, w) + b) * scale
            loss = tf.reduce_mean(tf.square(h)) + tf.reduce_sum(tf.sigmoid(b))
        gw, gb, gs, gu = tape.gradient(loss, [w, b, scale, unused])
        assert gu is None
        for g in (gw, gb, gs):  # the dtype a gradient takes from its source is the one the library infers
            assert g.dtype == tf.eager._dtype_of(g._h), (g.dtype, tf.eager._dtype_of(g._h))
        assert [v.name for v in tape.watched_variables()] == [w.name, b.name]
        out = {"loss": float(loss), "w": gw.numpy().tolist(), "b": gb.numpy().tolist(), "scale": float(gs)}
        try:
            again = tape.gradient(loss, w)
            out["again"] = again.numpy().tolist()
        except RuntimeError:
            out["again"] = None
        print(json.dumps(out))
        """ % persistent


@needs_tape
@pytest.mark.parametrize("persistent", [False, True])
def test_tape_gradients_equal_graph_mode_gradients(persistent):
    out = last_json(run_program(_gradient_program(persistent)))
    rng = np.random.RandomState(0)  # the same function in graph mode, with tf.gradients
    x = tf.constant(rng.randn(4, 3).astype(np.float32))
    w = tf.Variable(rng.randn(3, 2).astype(np.float32))
    b = tf.Variable(np.zeros(2, np.float32))
    scale = tf.constant(1.5)
    h = tf.nn.relu(tf.matmul(x, w) + b) * scale
    loss = tf.reduce_mean(tf.square(h)) + tf.reduce_sum(tf.sigmoid(b))
    grads = tf.gradients(loss, [w, b, scale])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        loss_value, gw, gb, gs = sess.run([loss] + grads)
    assert abs(out["loss"] - loss_value) < 1e-5
    np.testing.assert_allclose(out["w"], gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["b"], gb, rtol=1e-5, atol=1e-6)
    assert abs(out["scale"] - gs) < 1e-5
    if persistent:
        np.testing.assert_allclose(out["again"], gw, rtol=1e-5, atol=1e-6)
    else:  # a non-persistent tape answers once
        assert out["again"] is None


def test_control_flow_runs_as_python():
    run_program("""
        import tinyflow as tf
        tf.enable_eager_execution()
        i, total = tf.while_loop(lambda i, t: i < 5, lambda i, t: (i + 1, t + tf.cast(i, tf.float32)),
                                 [tf.constant(0), tf.constant(0.0)])
        assert int(i) == 5 and float(total) == 10.0
        assert float(tf.cond(total > 5, lambda: total * 2, lambda: total)) == 20.0
        assert float(tf.cond(total < 5, lambda: total * 2, lambda: total)) == 10.0
        """)


@needs_tape
def test_contrib_eager_function_transformations():
    out = last_json(run_program("""
        import json
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        tfe = tf.contrib.eager

        def f(x, y):
            return x * x * y

        dx, dy = tfe.gradients_function(f)(3.0, 2.0)  # Python numbers become tensors
        value, (only_dy,) = tfe.value_and_gradients_function(f, params=[1])(3.0, 2.0)
        w = tf.Variable(np.array([1.0, -2.0], np.float32))
        untouched = tf.Variable(5.0)

        def loss(x):
            return tf.reduce_sum(tf.square(w * x))

        pairs = tfe.implicit_gradients(loss)(tf.constant([2.0, 3.0]))
        loss_value, pairs2 = tfe.implicit_value_and_gradients(loss)(tf.constant([2.0, 3.0]))
        tf.train.GradientDescentOptimizer(0.1).apply_gradients(pairs)
        try:
            tfe.implicit_gradients(lambda: tf.constant(1.0) * 2)()
            no_vars = None
        except ValueError as err:
            no_vars = str(err)
        print(json.dumps({"dx": float(dx), "dy": float(dy), "value": float(value), "only_dy": float(only_dy),
                          "grad_w": pairs[0][0].numpy().tolist(), "same_var": pairs[0][1] is w,
                          "n_pairs": len(pairs), "loss": float(loss_value), "w": w.numpy().tolist(),
                          "no_vars": no_vars}))
        """))
    assert out["dx"] == 12.0 and out["dy"] == 9.0  # d(x^2 y)/dx = 2xy, d/dy = x^2
    assert out["value"] == 18.0 and out["only_dy"] == 9.0
    assert out["grad_w"] == [8.0, -36.0] and out["same_var"] and out["n_pairs"] == 1  # 2 w x^2
    assert out["loss"] == 40.0
    np.testing.assert_allclose(out["w"], [1.0 - 0.8, -2.0 + 3.6], rtol=1e-6)
    assert "No trainable variables" in out["no_vars"]
