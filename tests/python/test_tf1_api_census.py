"""The 85 TF1 API calls TF1 programs use most (graph and session, math, arrays, random, tf.nn,
training, tf.layers/losses/metrics, summaries, flags, control flow, data), each used the way
programs use it and checked against NumPy. `python3 tests/python/test_tf1_api_census.py` prints
how many work; pytest runs each as a test.
"""
import os
import sys
import tempfile

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tinyflow_demo"))
import tinyflow as tf  # noqa: E402

R = np.random.RandomState(7)
A = R.randn(3, 4).astype(np.float32)
B = R.randn(4, 5).astype(np.float32)
IMG = R.rand(2, 6, 6, 3).astype(np.float32)


def ev(t, feed=None):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(tf.local_variables_initializer())
        return s.run(t, feed)


def close(got, want, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def c_placeholder():
    x = tf.placeholder(tf.float32, [None, 4])
    close(ev(x * 2, {x: A}), A * 2)


def c_variable():
    v = tf.Variable(A)
    close(ev(v + 1), A + 1)


def c_constant():
    close(ev(tf.constant(0.1, shape=[2, 2])), np.full((2, 2), 0.1))


def c_global_variables_initializer():
    v = tf.Variable(tf.zeros([3]))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        close(s.run(v), np.zeros(3))


def c_interactive_session_eval():
    s = tf.InteractiveSession()
    try:
        close(tf.constant(A).eval(), A)
    finally:
        s.close()


def c_get_variable():
    v = tf.get_variable("w", [2, 3], initializer=tf.constant_initializer(1.5))
    close(ev(v), np.full((2, 3), 1.5))


def c_variable_scope_reuse():
    with tf.variable_scope("s"):
        a = tf.get_variable("v", [1])
    with tf.variable_scope("s", reuse=True):
        b = tf.get_variable("v", [1])
    assert a is b and a.name == "s/v:0"
    with pytest.raises(ValueError):
        with tf.variable_scope("s"):
            tf.get_variable("v", [1])


def c_name_scope():
    with tf.name_scope("layer1"):
        t = tf.add(tf.constant(1.0), 2.0, name="sum")
    assert t.name == "layer1/sum:0", t.name


def c_graph_as_default():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(3.0)
        assert c.graph is g and tf.get_default_graph() is g
        with tf.Session(graph=g) as s:
            close(s.run(c), 3.0)


def c_reset_default_graph():
    tf.constant(1.0)
    tf.reset_default_graph()
    assert tf.get_default_graph().get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == []


def c_control_dependencies():
    v = tf.Variable(0.0)
    inc = tf.assign_add(v, 1.0)
    with tf.control_dependencies([inc]):
        out = tf.identity(v)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(out)
        close(s.run(v), 1.0)


def c_trainable_variables():
    tf.Variable(1.0)
    tf.Variable(2.0, trainable=False)
    assert len(tf.trainable_variables()) == 1 and len(tf.global_variables()) == 2


def c_set_random_seed():
    vals = []
    for _ in range(2):
        tf.reset_default_graph()
        tf.set_random_seed(3)
        vals.append(ev(tf.random_normal([4])))
    close(vals[0], vals[1])


def c_assign():
    v = tf.Variable(1.0)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(tf.assign(v, 5.0))
        close(s.run(v), 5.0)


def c_matmul():
    close(ev(tf.matmul(tf.constant(A), tf.constant(B))), A @ B, 1e-4)


def c_add_multiply_subtract():
    a = tf.constant(A)
    close(ev(tf.subtract(tf.multiply(tf.add(a, 1.0), 2.0), a)), (A + 1) * 2 - A)


def c_reduce_mean():
    close(ev(tf.reduce_mean(tf.constant(A), axis=1)), A.mean(1))


def c_reduce_sum():
    close(ev(tf.reduce_sum(tf.constant(A), reduction_indices=[0], keep_dims=True)), A.sum(0, keepdims=True))


def c_reduce_max():
    close(ev(tf.reduce_max(tf.constant(A), 1)), A.max(1))


def c_square_sqrt_exp_log():
    a = np.abs(A) + 0.5
    close(ev(tf.log(tf.exp(tf.sqrt(tf.square(tf.constant(a)))))), a, 1e-4)


def c_argmax():
    got = ev(tf.argmax(tf.constant(A), 1))
    np.testing.assert_array_equal(got, A.argmax(1))


def c_equal_cast():
    got = ev(tf.reduce_mean(tf.cast(tf.equal(tf.constant([1, 2, 3]), tf.constant([1, 0, 3])), tf.float32)))
    close(got, 2 / 3.)


def c_maximum_minimum():
    close(ev(tf.minimum(tf.maximum(tf.constant(A), 0.0), 0.5)), np.clip(A, 0, 0.5))


def c_pow_abs():
    close(ev(tf.pow(tf.abs(tf.constant(A)), 2)), A ** 2)


def c_clip_by_value():
    close(ev(tf.clip_by_value(tf.constant(A), -0.5, 0.5)), np.clip(A, -0.5, 0.5))


def c_reduce_logsumexp():
    close(ev(tf.reduce_logsumexp(tf.constant(A), 1)), np.log(np.exp(A).sum(1)))


def c_reduce_any_all():
    m = A > 0
    np.testing.assert_array_equal(ev(tf.reduce_any(tf.constant(m), 1)), m.any(1))
    np.testing.assert_array_equal(ev(tf.reduce_all(tf.constant(m), 1)), m.all(1))


def c_reshape():
    close(ev(tf.reshape(tf.constant(A), [-1])), A.reshape(-1))


def c_reshape_dynamic():
    x = tf.placeholder(tf.float32, [None, 2, 2])
    close(ev(tf.reshape(x, [tf.shape(x)[0], -1]), {x: A.reshape(3, 2, 2)}), A)


def c_concat():
    close(ev(tf.concat([tf.constant(A), tf.constant(A)], 1)), np.concatenate([A, A], 1))


def c_stack_unstack():
    parts = tf.unstack(tf.constant(A), axis=0)
    close(ev(tf.stack(parts, axis=1)), A.T)


def c_split():
    a, b = tf.split(tf.constant(A), 2, axis=1)
    close(ev(b), A[:, 2:])


def c_transpose():
    close(ev(tf.transpose(tf.constant(A))), A.T)


def c_expand_dims_squeeze():
    close(ev(tf.squeeze(tf.expand_dims(tf.constant(A), 0))), A)


def c_gather():
    close(ev(tf.gather(tf.constant(A), [2, 0])), A[[2, 0]])


def c_one_hot():
    close(ev(tf.one_hot([0, 2], 3)), np.eye(3)[[0, 2]])


def c_shape():
    x = tf.placeholder(tf.float32, [None, 4])
    np.testing.assert_array_equal(ev(tf.shape(x), {x: A}), [3, 4])
    assert x.get_shape().as_list() == [None, 4]


def c_tile():
    close(ev(tf.tile(tf.constant(A), [2, 1])), np.tile(A, [2, 1]))


def c_pad():
    close(ev(tf.pad(tf.constant(A), [[1, 0], [0, 2]])), np.pad(A, [[1, 0], [0, 2]]))


def c_zeros_ones_like():
    close(ev(tf.zeros_like(tf.constant(A)) + tf.ones([3, 4])), np.ones((3, 4)))


def c_fill():
    close(ev(tf.fill([2, 3], 9.0)), np.full((2, 3), 9.0))


def c_where():
    close(ev(tf.where(tf.constant(A > 0), tf.constant(A), tf.zeros_like(A))), np.where(A > 0, A, 0))


def c_slice():
    close(ev(tf.slice(tf.constant(A), [1, 1], [2, 2])), A[1:3, 1:3])


def c_boolean_mask():
    close(ev(tf.boolean_mask(tf.constant(A[:, 0]), tf.constant(A[:, 0] > 0))), A[:, 0][A[:, 0] > 0])


def c_range():
    np.testing.assert_array_equal(ev(tf.range(0, 10, 3)), np.arange(0, 10, 3))


def c_random_normal():
    v = ev(tf.random_normal([20000], mean=1.0, stddev=2.0, seed=1))
    assert abs(v.mean() - 1.0) < 0.05 and abs(v.std() - 2.0) < 0.05


def c_truncated_normal():
    v = ev(tf.truncated_normal([20000], stddev=0.1, seed=1))
    assert np.abs(v).max() <= 0.2 + 1e-6 and abs(v.std() - 0.088) < 0.005


def c_random_uniform():
    v = ev(tf.random_uniform([20000], -1, 1, seed=1))
    assert v.min() >= -1 and v.max() < 1 and abs(v.mean()) < 0.03


def c_nn_relu():
    close(ev(tf.nn.relu(tf.constant(A))), np.maximum(A, 0))


def c_nn_softmax():
    close(ev(tf.nn.softmax(tf.constant(A))), softmax(A))


def c_sigmoid_tanh():
    close(ev(tf.sigmoid(tf.constant(A)) + tf.nn.tanh(tf.constant(A))), 1 / (1 + np.exp(-A)) + np.tanh(A))


def c_nn_conv2d():
    w = R.randn(3, 3, 3, 2).astype(np.float32)
    got = ev(tf.nn.conv2d(tf.constant(IMG), tf.constant(w), [1, 1, 1, 1], "VALID"))
    ref = np.zeros((2, 4, 4, 2))
    for i in range(4):
        for j in range(4):
            ref[:, i, j] = np.tensordot(IMG[:, i:i + 3, j:j + 3], w, 3)
    close(got, ref, 1e-4)


def c_nn_max_pool():
    got = ev(tf.nn.max_pool(tf.constant(IMG), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"))
    close(got, IMG.reshape(2, 3, 2, 3, 2, 3).max((2, 4)))


def c_nn_avg_pool():
    got = ev(tf.nn.avg_pool(tf.constant(IMG), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
    close(got, IMG.reshape(2, 3, 2, 3, 2, 3).mean((2, 4)))


def c_nn_dropout_tensor_keep_prob():
    keep = tf.placeholder(tf.float32)
    x = tf.ones([1000])
    y = tf.nn.dropout(x, keep)
    close(ev(y, {keep: 1.0}), np.ones(1000))
    v = ev(y, {keep: 0.5})
    assert set(np.unique(v)) <= {0.0, 2.0} and 350 < (v == 0).sum() < 650


def c_nn_softmax_cross_entropy_with_logits():
    lab = softmax(B[:3])
    got = ev(tf.nn.softmax_cross_entropy_with_logits(labels=tf.constant(lab), logits=tf.constant(B[:3])))
    close(got, -(lab * np.log(softmax(B[:3]))).sum(1), 1e-4)


def c_nn_sparse_softmax_cross_entropy_with_logits():
    got = ev(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 3, 1]), logits=tf.constant(A)))
    close(got, -np.log(softmax(A)[np.arange(3), [0, 3, 1]]), 1e-4)


def c_nn_sigmoid_cross_entropy_with_logits():
    z = (A > 0).astype(np.float32)
    got = ev(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(z), logits=tf.constant(A)))
    close(got, np.maximum(A, 0) - A * z + np.log1p(np.exp(-np.abs(A))), 1e-5)


def c_nn_l2_loss():
    close(ev(tf.nn.l2_loss(tf.constant(A))), (A ** 2).sum() / 2, 1e-4)


def c_nn_bias_add():
    close(ev(tf.nn.bias_add(tf.constant(A), tf.constant(B[0, :4]))), A + B[0, :4])


def c_nn_embedding_lookup():
    close(ev(tf.nn.embedding_lookup(tf.constant(B), tf.constant([[1, 3], [0, 0]]))), B[[[1, 3], [0, 0]]])


def c_nn_moments_batch_normalization():
    m, v = tf.nn.moments(tf.constant(A), [0])
    got = ev(tf.nn.batch_normalization(tf.constant(A), m, v, None, None, 1e-3))
    close(got, (A - A.mean(0)) / np.sqrt(A.var(0) + 1e-3), 1e-4)


def c_nn_l2_normalize():
    close(ev(tf.nn.l2_normalize(tf.constant(A), 1)), A / np.linalg.norm(A, axis=1, keepdims=True), 1e-5)


def c_nn_top_k_in_top_k():
    values, indices = tf.nn.top_k(tf.constant(A), 2)
    close(ev(values), -np.sort(-A, 1)[:, :2])
    np.testing.assert_array_equal(ev(tf.nn.in_top_k(tf.constant(A), tf.constant([0, 1, 2]), 2)),
                                  [i in np.argsort(-A[r])[:2] for r, i in enumerate([0, 1, 2])])


def c_nn_leaky_relu_elu():
    close(ev(tf.nn.leaky_relu(tf.constant(A), 0.2) + tf.nn.elu(tf.constant(A))),
          np.where(A > 0, A, 0.2 * A) + np.where(A > 0, A, np.expm1(A)), 1e-5)


def _train(opt, steps=60):
    w = tf.Variable(tf.zeros([4, 1]))
    target = np.array([[1.0], [-1.0], [0.5], [2.0]], np.float32)
    x = tf.constant(R.randn(32, 4).astype(np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - tf.matmul(x, tf.constant(target))))
    train = opt.minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss)
        for _ in range(steps):
            s.run(train)
        assert s.run(loss) < 0.1 * first


def c_gradient_descent_optimizer():
    _train(tf.train.GradientDescentOptimizer(0.1))


def c_adam_optimizer():
    _train(tf.train.AdamOptimizer(0.1))


def c_momentum_optimizer():
    _train(tf.train.MomentumOptimizer(0.05, 0.9))


def c_rmsprop_optimizer():
    _train(tf.train.RMSPropOptimizer(0.05))


def c_adagrad_optimizer():
    _train(tf.train.AdagradOptimizer(0.5))


def c_gradients():
    x = tf.constant(A)
    g = tf.gradients(tf.reduce_sum(tf.square(x)), [x])[0]
    close(ev(g), 2 * A)


def c_compute_apply_gradients_global_step():
    w = tf.Variable(1.0)
    step = tf.train.get_or_create_global_step()
    opt = tf.train.GradientDescentOptimizer(0.5)
    gv = opt.compute_gradients(tf.square(w))
    train = opt.apply_gradients(gv, global_step=step)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(train)
        close(s.run(w), 0.0)
        assert s.run(step) == 1


def c_clip_by_global_norm():
    ts = [tf.constant(A), tf.constant(B)]
    clipped, norm = tf.clip_by_global_norm(ts, 1.0)
    n = np.sqrt((A ** 2).sum() + (B ** 2).sum())
    close(ev(norm), n, 1e-4)
    close(ev(clipped[0]), A / n, 1e-4)


def c_exponential_decay():
    step = tf.Variable(250, trainable=False)
    close(ev(tf.train.exponential_decay(0.1, step, 100, 0.5, staircase=True)), 0.1 * 0.5 ** 2)


def c_exponential_moving_average():
    v = tf.Variable(1.0)
    ema = tf.train.ExponentialMovingAverage(0.9)
    op = ema.apply([v])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(tf.assign(v, 2.0))
        s.run(op)
        close(s.run(ema.average(v)), 0.9 * 1.0 + 0.1 * 2.0)


def c_saver_save_restore():
    v = tf.Variable(A, name="v")
    saver = tf.train.Saver()
    d = tempfile.mkdtemp()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = saver.save(s, os.path.join(d, "m"), global_step=3)
        s.run(tf.assign(v, tf.zeros_like(v)))
        saver.restore(s, tf.train.latest_checkpoint(d))
        close(s.run(v), A)
    assert path.endswith("m-3")


def c_layers_dense():
    y = tf.layers.dense(tf.constant(A), 2, kernel_initializer=tf.ones_initializer())
    close(ev(y), A.sum(1, keepdims=True) * np.ones((1, 2)), 1e-5)
    assert sorted(v.name for v in tf.trainable_variables()) == ["dense/bias:0", "dense/kernel:0"]


def c_layers_conv2d_max_pooling2d_flatten():
    y = tf.layers.flatten(tf.layers.max_pooling2d(tf.layers.conv2d(tf.constant(IMG), 4, 3, padding="same"), 2, 2))
    assert ev(y).shape == (2, 36)


def c_layers_dropout_training():
    training = tf.placeholder(tf.bool)
    y = tf.layers.dropout(tf.ones([100]), rate=0.5, training=training)
    close(ev(y, {training: False}), np.ones(100))
    assert (ev(y, {training: True}) == 0).sum() > 10


def c_layers_batch_normalization_update_ops():
    x = tf.constant(A)
    y = tf.layers.batch_normalization(x, training=True)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, _ = s.run([y, updates])
        close(out, (A - A.mean(0)) / np.sqrt(A.var(0) + 1e-3), 1e-4)
        mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
        close(s.run(mean), 0.01 * A.mean(0), 1e-5)


def c_losses_mean_squared_error():
    close(ev(tf.losses.mean_squared_error(tf.constant(A), tf.zeros_like(A))), (A ** 2).mean())


def c_losses_softmax_cross_entropy():
    lab = np.eye(4)[[0, 1, 3]].astype(np.float32)
    close(ev(tf.losses.softmax_cross_entropy(lab, tf.constant(A))), -(lab * np.log(softmax(A))).sum(1).mean(), 1e-4)


def c_metrics_accuracy():
    labels = tf.placeholder(tf.int64, [None])
    preds = tf.placeholder(tf.int64, [None])
    acc, update = tf.metrics.accuracy(labels, preds)
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        s.run(update, {labels: [1, 2], preds: [1, 0]})
        s.run(update, {labels: [3, 3], preds: [3, 3]})
        close(s.run(acc), 0.75)


def c_summary_scalar_histogram_merge_filewriter():
    tf.summary.scalar("loss", tf.constant(1.5))
    tf.summary.histogram("w", tf.constant(A))
    merged = tf.summary.merge_all()
    d = tempfile.mkdtemp()
    with tf.Session() as s:
        w = tf.summary.FileWriter(d, s.graph)
        w.add_summary(s.run(merged), 1)
        w.close()
    files = os.listdir(d)
    assert len(files) == 1 and files[0].startswith("events.out.tfevents.") and os.path.getsize(
        os.path.join(d, files[0])) > 100


def c_app_flags():
    flags = tf.app.flags
    flags.DEFINE_integer("census_batch_size", 32, "batch size")
    assert flags.FLAGS.census_batch_size == 32


def c_logging():
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.logging.info("census %d", 1)


def c_config_proto():
    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as s:
        close(s.run(tf.constant(1.0)), 1.0)


def c_cond():
    p = tf.placeholder(tf.bool)
    y = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    close(ev(y, {p: False}), 2.0)


def c_while_loop():
    i = tf.constant(0)
    r = tf.while_loop(lambda i: i < 10, lambda i: i + 3, [i])
    assert ev(r) == 12


def c_data_dataset():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        close(s.run(nxt), [0, 1, 2, 3])
        close(s.run(nxt), [4, 5, 6, 7])
        close(s.run(nxt), [8, 9])
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)


def c_py_func():
    y = tf.py_func(lambda a: (a * 2).astype(np.float32), [tf.constant(A)], tf.float32)
    close(ev(y), A * 2)


def c_collections():
    tf.add_to_collection("my", tf.constant(1.0))
    assert len(tf.get_collection("my")) == 1


def c_unused_feed():
    x = tf.placeholder(tf.float32)
    unused = tf.placeholder(tf.float32)
    close(ev(x + 1, {x: 1.0, unused: 5.0}), 2.0)


def c_nn_conv2d_transpose():
    w = R.randn(3, 3, 2, 3).astype(np.float32)  # [h, w, out_channels, in_channels]
    y = tf.nn.conv2d_transpose(tf.constant(IMG), tf.constant(w), [2, 12, 12, 2], [1, 2, 2, 1], "SAME")
    x_var = tf.constant(R.randn(2, 12, 12, 2).astype(np.float32))
    # conv2d_transpose is the adjoint of conv2d: <conv2d(x), img> == <x, conv2d_transpose(img)>
    lhs = tf.reduce_sum(tf.nn.conv2d(x_var, tf.constant(w), [1, 2, 2, 1], "SAME") * tf.constant(IMG))
    rhs = tf.reduce_sum(x_var * y)
    a, b = ev([lhs, rhs])
    close(a, b, 1e-3)


# Checks that belong to one API entry of the census (the key's check runs inside the value's entry).
_PART_OF = {"pow_abs": "square_sqrt_exp_log", "maximum_minimum": "clip_by_value", "fill": "zeros_ones_like",
            "reset_default_graph": "graph_as_default", "nn_avg_pool": "nn_max_pool",
            "collections": "trainable_variables",
            "assign": "control_dependencies", "reduce_any_all": "reduce_logsumexp", "split": "stack_unstack"}


def _entry(fns):
    def run_all():
        for fn in fns:
            tf.reset_default_graph()
            fn()
    return run_all


_CHECKS = {name[2:]: fn for name, fn in globals().items() if name.startswith("c_") and callable(fn)}
CALLS = [(name, _entry([fn] + [_CHECKS[k] for k, v in sorted(_PART_OF.items()) if v == name]))
         for name, fn in sorted(_CHECKS.items()) if name not in _PART_OF]


@pytest.mark.parametrize("name,fn", CALLS, ids=[c[0] for c in CALLS])
def test_tf1_api_call(name, fn):
    fn()


def test_census_has_85_calls():
    assert len(CALLS) == 85, len(CALLS)


if __name__ == "__main__":
    works, broken = 0, []
    for name, fn in CALLS:
        tf.reset_default_graph()
        try:
            fn()
            works += 1
        except Exception as e:  # noqa: BLE001  (the census reports every failure and goes on)
            broken.append("%s: %s: %s" % (name, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    print("%d of %d TF1 API calls work" % (works, len(CALLS)))
    for line in broken:
        print("  broken: " + line)
