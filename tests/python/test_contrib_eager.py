"""tf.contrib.eager: Iterator over tf.data in eager mode, Dataset iteration and map / filter in eager mode,
Network / Sequential containers (eager and graph), tfe.Saver."""
import numpy as np
import pytest

import tinyflow as tf
from eager_util import last_json, needs_tape, run_program


def test_eager_iterator_and_dataset_iteration():
    out = last_json(run_program("""
        import json
        import numpy as np
        import tinyflow as tf
        tfe = tf.contrib.eager
        tf.enable_eager_execution()
        x = np.arange(10, dtype=np.float32).reshape(5, 2)
        y = np.arange(5, dtype=np.int32)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(2)
        batches = [(bx.numpy().tolist(), by.numpy().tolist()) for bx, by in tfe.Iterator(ds)]
        it = tfe.Iterator(ds)
        first = next(it)
        assert isinstance(first[0], tf.Tensor) and first[0].dtype == tf.float32
        next(it); next(it)
        try:
            it.get_next()
            raise AssertionError("no OutOfRangeError")
        except tf.errors.OutOfRangeError:
            pass
        mapped = [v.numpy().tolist() for v in tf.data.Dataset.from_tensor_slices(y).map(lambda v: v * 10)
                  .filter(lambda v: v > 15)]
        dicts = [sorted(d) for d in tf.data.Dataset.from_tensor_slices({"a": x, "b": y}).take(1)]
        shot = ds.make_one_shot_iterator()
        uint8 = [int(tf.cast(v, tf.int64)) for v in tfe.Iterator(tf.data.Dataset.from_tensor_slices(
            np.array([7, 200], np.uint8)))]  # MNIST's label dtype
        print(json.dumps({"batches": batches, "mapped": mapped, "dicts": dicts,
                          "shot": next(shot)[1].numpy().tolist(), "uint8": uint8}))
        """))
    assert out["batches"] == [[[[0, 1], [2, 3]], [0, 1]], [[[4, 5], [6, 7]], [2, 3]], [[[8, 9]], [4]]]
    assert out["mapped"] == [20, 30, 40]
    assert out["dicts"] == [["a", "b"]]
    assert out["shot"] == [0, 1]
    assert out["uint8"] == [7, 200]


@needs_tape
def test_eager_network_trains_and_saver_round_trips(tmp_path):
    out = last_json(run_program("""
        import json, sys
        import numpy as np
        import tinyflow as tf
        tfe = tf.contrib.eager
        tf.enable_eager_execution()

        class MLP(tfe.Network):
            def __init__(self):
                super(MLP, self).__init__(name="mlp")
                self.hidden = self.track_layer(tf.layers.Dense(8, activation=tf.nn.relu))
                self.out = self.track_layer(tf.layers.Dense(1))

            def call(self, inputs):
                return self.out(self.hidden(inputs))

        rng = np.random.RandomState(0)
        x = rng.randn(32, 3).astype(np.float32)
        y = (x @ np.array([[1.0], [-1.0], [2.0]], np.float32)).astype(np.float32)
        net = MLP()
        opt = tf.train.AdamOptimizer(0.05)
        losses = []
        for step in range(60):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(net(tf.constant(x)) - y))
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
            losses.append(float(loss))
        names = sorted(v.name for v in net.variables)
        saver = tfe.Saver(net.variables)
        path = saver.save(sys.argv[1] + "/net", global_step=60)
        before = net(tf.constant(x)).numpy()
        for v in net.variables:
            v.assign(tf.zeros_like(v))
        saver.restore(path)
        after = net(tf.constant(x)).numpy()
        seq = tfe.Sequential([tf.layers.Dense(4), tf.nn.relu, tf.layers.Dense(2)])
        print(json.dumps({"first": losses[0], "last": losses[-1], "names": names, "layers": len(net.layers),
                          "trainable": len(net.trainable_variables), "path": path,
                          "restored": float(np.abs(before - after).max()),
                          "seq": list(seq(tf.constant(x)).shape.as_list()), "seq_vars": len(seq.variables)}))
        """, args=[str(tmp_path)]))
    assert out["last"] < 0.2 * out["first"]
    assert out["names"] == ["mlp/dense/bias:0", "mlp/dense/kernel:0", "mlp/dense_1/bias:0", "mlp/dense_1/kernel:0"]
    assert out["layers"] == 2 and out["trainable"] == 4
    assert out["path"].endswith("net-60") and out["restored"] == 0.0
    assert out["seq"] == [32, 2] and out["seq_vars"] == 4


def test_network_in_graph_mode_and_errors():
    class Net(tf.contrib.eager.Network):
        def __init__(self):
            super(Net, self).__init__()
            self.dense = self.track_layer(tf.layers.Dense(2, kernel_initializer=tf.ones_initializer()))

        def call(self, inputs):
            return self.dense(inputs)

    net = Net()
    x = tf.placeholder(tf.float32, [None, 3])
    y1, y2 = net(x), net(x)  # the second call reuses the variables
    assert len(net.variables) == 2 and net.get_layer(index=0) is net.dense
    with pytest.raises(TypeError, match="track_layer"):
        net.track_layer(object())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([y1, y2], {x: np.ones([1, 3], np.float32)})
    np.testing.assert_array_equal(a, [[3.0, 3.0]])
    np.testing.assert_array_equal(a, b)
    with pytest.raises(RuntimeError, match="eager execution"):
        tf.contrib.eager.Iterator(tf.data.Dataset.range(3))
    with pytest.raises(RuntimeError, match="only supported when eager execution"):
        iter(tf.data.Dataset.range(3))
