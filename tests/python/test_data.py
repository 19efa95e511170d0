"""tf.data over in-memory arrays: sources, batch/shuffle/repeat/map/filter/take/skip, one-shot and
initializable iterators fed into Session.run, OutOfRangeError at the end, training from a Dataset."""
import numpy as np
import pytest

import tinyflow as tf


def _drain(sess, fetches):
    out = []
    while True:
        try:
            out.append(sess.run(fetches))
        except tf.errors.OutOfRangeError:
            return out


def test_from_tensor_slices_batch_and_one_element_per_run():
    xs = np.arange(10, dtype=np.float32).reshape(5, 2)
    ys = np.arange(5, dtype=np.int32)
    dataset = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(2)
    assert dataset.output_types == (tf.float32, tf.int32)
    assert dataset.output_shapes[0].as_list() == [None, 2] and dataset.output_shapes[1].as_list() == [None]
    x, y = dataset.make_one_shot_iterator().get_next()
    doubled = x * 2.0
    with tf.Session() as sess:
        runs = _drain(sess, [x, doubled, y])  # the three fetches of one run share one element
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(x)
    assert len(runs) == 3
    np.testing.assert_array_equal(np.concatenate([r[0] for r in runs]), xs)
    np.testing.assert_array_equal(np.concatenate([r[1] for r in runs]), xs * 2)
    np.testing.assert_array_equal(np.concatenate([r[2] for r in runs]), ys)


def test_dict_elements_map_filter_take_skip_range_and_from_tensors():
    data = {"a": np.arange(6, dtype=np.float32), "b": np.arange(6, dtype=np.int64) * 10}
    ds = tf.data.Dataset.from_tensor_slices(data).map(lambda e: {"s": e["a"] * 2.0, "b": e["b"]})
    ds = ds.filter(lambda e: e["b"] > 10).skip(1).take(2)
    assert ds.output_types == {"s": tf.float32, "b": tf.int64}
    nxt = ds.make_one_shot_iterator().get_next()
    r = tf.data.Dataset.range(2, 8, 3).make_one_shot_iterator().get_next()
    one = tf.data.Dataset.from_tensors(([1.0, 2.0], 3)).repeat(2).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = _drain(sess, nxt)
        assert [int(g["b"]) for g in got] == [30, 40] and [float(g["s"]) for g in got] == [6.0, 8.0]
        assert [int(v) for v in _drain(sess, r)] == [2, 5]
        ones = _drain(sess, one)
        assert len(ones) == 2 and ones[0][0].tolist() == [1.0, 2.0] and ones[0][0].dtype == np.float32
        assert ones[1][1] == 3 and ones[1][1].dtype == np.int32


def test_shuffle_is_a_seeded_permutation_reshuffled_each_epoch_and_reset_by_the_initializer():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(20, dtype=np.int32)).shuffle(8, seed=3).repeat(2)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(nxt)
        sess.run(it.initializer)
        first = [int(v) for v in _drain(sess, nxt)]
        sess.run(it.initializer)
        again = [int(v) for v in _drain(sess, nxt)]
    assert first == again  # same seed: the same sequence after re-initializing
    assert sorted(first[:20]) == list(range(20)) and sorted(first[20:]) == list(range(20))
    assert first[:20] != list(range(20)) and first[:20] != first[20:]
    # a buffer of 8: the first element comes from the first 8
    assert first[0] < 8


def test_batch_drop_remainder_gives_a_static_batch_size_and_errors():
    ds = tf.data.Dataset.from_tensor_slices(np.zeros((7, 3), np.float32)).batch(3, drop_remainder=True)
    assert ds.output_shapes.as_list() == [3, 3]
    with pytest.raises(ValueError):
        tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError):
        tf.data.Dataset.from_tensor_slices(np.float32(1.0))
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert len(_drain(sess, nxt)) == 2


def test_training_from_a_dataset_then_evaluating_with_a_feed():
    rng = np.random.RandomState(1)
    xs = rng.randn(256, 4).astype(np.float32)
    true_w = np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
    ys = xs @ true_w
    x, y = tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(256, seed=0).batch(32).repeat() \
        .make_one_shot_iterator().get_next()
    w = tf.Variable(np.zeros((4, 1), np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session(fusion=False) as sess:  # (no kernel to compile: a fast test)
        sess.run(tf.global_variables_initializer())
        for _ in range(150):
            sess.run(train)
        # feeding the iterator's tensors replaces the element: nothing is pulled
        full = sess.run(loss, {x: xs, y: ys})
        np.testing.assert_allclose(sess.run(w), true_w, atol=1e-2)
    assert full < 1e-3


def test_placeholders_as_the_source_fed_when_the_initializer_runs():
    # TF's "consuming NumPy arrays" pattern: the arrays are fed once, to the iterator's initializer.
    features = tf.placeholder(tf.float32, [None, 2])
    labels = tf.placeholder(tf.int64, [None])
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(10, seed=1).batch(2)
    it = dataset.make_initializable_iterator()
    x, y = it.get_next()
    assert x.shape.as_list() == [None, 2]
    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    with tf.Session() as sess:
        for _ in range(2):  # re-initialized with other values
            sess.run(it.initializer, feed_dict={features: data, labels: np.arange(5)})
            rows, seen = [], []
            while True:
                try:
                    bx, by = sess.run([x, y])
                except tf.errors.OutOfRangeError:
                    break
                rows.append(bx)
                seen.extend(by.tolist())
            assert sorted(seen) == [0, 1, 2, 3, 4]
            np.testing.assert_array_equal(np.concatenate(rows)[np.argsort(seen)], data)
            data = data * 2
        one = tf.data.Dataset.from_tensors(tf.constant([1.0, 2.0])).make_one_shot_iterator().get_next()
        np.testing.assert_array_equal(sess.run(one), [1.0, 2.0])
