"""Queue-based input (TF 1.x): FIFOQueue / RandomShuffleQueue, the tf.train producers and batchers, QueueRunner
threads, Coordinator, start_queue_runners, and MonitoredSession starting the runners."""
import threading
import time

import numpy as np
import pytest

import tinyflow as tf


def _drain(sess, fetch, limit=1000):
    """Runs fetch until OutOfRangeError; the values."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("no OutOfRangeError after %d runs" % limit)


def test_fifo_queue_enqueue_dequeue_size_close():
    q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    x = tf.placeholder(tf.float32, [2])
    enq = q.enqueue([x, tf.constant(7)])
    enq_many = q.enqueue_many([np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1, 2, 3], np.int32)])
    a, b = q.dequeue()
    many = q.dequeue_many(2)
    size = q.size()
    with tf.Session() as sess:
        sess.run(enq, {x: [0.5, 1.5]})
        sess.run(enq_many)
        assert sess.run(size) == 4
        va, vb = sess.run([a, b])
        np.testing.assert_array_equal(va, [0.5, 1.5])
        assert vb == 7
        m = sess.run(many)
        np.testing.assert_array_equal(m[0], [[0, 1], [2, 3]])
        np.testing.assert_array_equal(m[1], [1, 2])
        assert sess.run(size) == 1
        sess.run(q.close())
        with pytest.raises(tf.errors.CancelledError):
            sess.run(enq, {x: [0.0, 0.0]})  # closed: no more enqueues
        with pytest.raises(tf.errors.OutOfRangeError, match="closed and has insufficient elements"):
            sess.run(many)  # 1 left, 2 wanted
        va, vb = sess.run([a, b])  # the last one still dequeues
        np.testing.assert_array_equal(va, [4, 5])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(a)


def test_one_dequeue_per_run_however_many_fetches_use_it():
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    value = q.dequeue()
    doubled = value * 2.0
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1.0, 2.0, 3.0]]))
        v, d, v2 = sess.run([value, doubled, value])
        assert (v, d, v2) == (1.0, 2.0, 1.0)
        assert sess.run(doubled) == 4.0
        assert sess.run(q.size()) == 1


def test_queue_state_is_per_session():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    enq = q.enqueue_many([[1, 2, 3]])
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(enq)
        assert s1.run(q.size()) == 3 and s2.run(q.size()) == 0


def test_random_shuffle_queue_is_a_permutation_and_keeps_min_after_dequeue():
    q = tf.RandomShuffleQueue(100, 5, tf.int32, shapes=[[]], seed=3)
    enq = q.enqueue_many([np.arange(20, dtype=np.int32)])
    one = q.dequeue()
    with tf.Session() as sess:
        sess.run(enq)
        got = [int(sess.run(one)) for _ in range(15)]  # 20 - 15 = 5 remain: min_after_dequeue allows all 15
        blocked = []
        t = threading.Thread(target=lambda: blocked.append(sess.run(one)), daemon=True)
        t.start()
        t.join(0.3)
        assert t.is_alive() and not blocked  # would leave 4 < min_after_dequeue: waits for more or close
        sess.run(q.close())
        t.join(2)
        got += [int(blocked[0])] + [int(v) for v in _drain(sess, one)]
    assert sorted(got) == list(range(20))
    assert got != list(range(20))


def test_dequeue_many_needs_defined_shapes():
    q = tf.FIFOQueue(10, tf.float32)
    with pytest.raises(ValueError, match="fully defined shapes"):
        q.dequeue_many(2)


def _ordered_pipeline(num_epochs, batch_size, allow_smaller):
    data = np.arange(10, dtype=np.float32).reshape(10, 1) * np.ones([1, 3], np.float32)
    labels = np.arange(10, dtype=np.int32)
    x, y = tf.train.slice_input_producer([data, labels], num_epochs=num_epochs, shuffle=False)
    return tf.train.batch([x, y], batch_size=batch_size, allow_smaller_final_batch=allow_smaller)


@pytest.mark.parametrize("allow_smaller", [False, True])
def test_slice_input_producer_and_batch_run_epochs_in_order(allow_smaller):
    xb, yb = _ordered_pipeline(2, 4, allow_smaller)
    assert xb.shape.as_list() == [None if allow_smaller else 4, 3]
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        assert threads and all(t.daemon for t in threads)
        batches = _drain(sess, [xb, yb])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    labels = np.concatenate([b[1] for b in batches])
    expected = np.tile(np.arange(10), 2)
    if allow_smaller:  # 20 elements: 4, 4, 4, 4, 4
        assert [len(b[1]) for b in batches] == [4] * 5
        np.testing.assert_array_equal(labels, expected)
    else:
        assert [len(b[1]) for b in batches] == [4] * 5
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches])[:, 0], labels)


def test_batch_of_odd_size_drops_or_keeps_the_remainder():
    for allow, sizes in ((False, [3] * 6), (True, [3] * 6 + [2])):
        tf.reset_default_graph()
        xb, yb = _ordered_pipeline(2, 3, allow)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            batches = _drain(sess, yb)
            coord.request_stop()
            coord.join(threads)
        assert [len(b) for b in batches] == sizes


def test_shuffle_batch_yields_each_element_once_per_epoch():
    data = np.arange(30, dtype=np.int32)
    x = tf.train.slice_input_producer([data], num_epochs=3, shuffle=True, seed=1)[0]
    xb = tf.train.shuffle_batch([x], batch_size=5, capacity=20, min_after_dequeue=10, num_threads=2, seed=2,
                                allow_smaller_final_batch=True)
    assert isinstance(xb, tf.Tensor)  # one component: one tensor, as TF
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = np.concatenate(_drain(sess, xb))
        coord.request_stop()
        coord.join(threads)
    assert sorted(got.tolist()) == sorted(data.tolist() * 3)
    assert got[:30].tolist() != data.tolist()


def test_batch_of_a_dict_and_enqueue_many():
    feats = {"a": np.arange(8, dtype=np.float32), "b": np.arange(8, dtype=np.int32) * 10}
    batch = tf.train.batch(feats, batch_size=4, enqueue_many=True, capacity=8)
    assert sorted(batch) == ["a", "b"]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        out = sess.run(batch)
        coord.request_stop()
        coord.join(threads)
    np.testing.assert_array_equal(out["b"], out["a"].astype(np.int32) * 10)


def test_batch_shapes_must_be_fully_defined_unless_padded():
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.train.batch([x], batch_size=2)


def test_dynamic_pad_pads_to_the_longest():
    q_in = tf.FIFOQueue(10, tf.int32, shapes=[[None]])
    seq = q_in.dequeue()
    padded = tf.train.batch([seq], batch_size=2, dynamic_pad=True)
    with tf.Session() as sess:
        for row in ([1], [2, 3, 4]):
            sess.run(q_in.enqueue([np.array(row, np.int32)]))
        sess.run(q_in.close())  # the runner's input ends (TF's runner, too, waits on an open input)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        np.testing.assert_array_equal(sess.run(padded), [[1, 0, 0], [2, 3, 4]])
        coord.request_stop()
        coord.join(threads)


def test_infinite_producer_stops_without_deadlock():
    x = tf.train.range_input_producer(5, shuffle=False, capacity=2).dequeue()
    xb = tf.train.batch([x], batch_size=3, capacity=2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        first = [sess.run(xb).tolist() for _ in range(3)]
        start = time.time()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        assert time.time() - start < 5
        assert not any(t.is_alive() for t in threads)
    assert first == [[0, 1, 2], [3, 4, 0], [1, 2, 3]]


def test_closing_the_session_ends_blocked_runner_threads():
    x = tf.train.range_input_producer(100, capacity=2).dequeue()
    tf.train.batch([x], batch_size=2, capacity=2)
    with tf.Session() as sess:
        threads = tf.train.start_queue_runners(sess)  # no coordinator: they block on the full queues
        time.sleep(0.2)
    for t in threads:
        t.join(3)
    assert not any(t.is_alive() for t in threads)


def test_coordinator_semantics():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise ValueError("boom")
    assert coord.should_stop() and coord.wait_for_stop(0)
    with pytest.raises(ValueError, match="boom"):
        coord.join([])
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "done"))  # a clean stop
    coord.join([])
    coord = tf.train.Coordinator()
    stuck = threading.Thread(target=time.sleep, args=(3,), daemon=True)
    stuck.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="threads still running"):
        coord.join([stuck], stop_grace_period_secs=0.1)
    coord = tf.train.Coordinator()
    worker = threading.Thread(target=lambda: coord.wait_for_stop(), daemon=True)
    coord.register_thread(worker)
    worker.start()
    threading.Timer(0.1, coord.request_stop).start()
    coord.join(stop_grace_period_secs=2)  # waits for the registered thread


def test_runner_errors_reach_the_coordinator():
    def fail(v):
        raise RuntimeError("bad input %s" % v)
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    value = tf.py_func(fail, [tf.constant(1.0)], tf.float32)
    value.set_shape([])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([value])]))
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert coord.wait_for_stop(5)
        with pytest.raises(Exception, match="bad input"):
            coord.join(threads, stop_grace_period_secs=5)


def test_start_queue_runners_needs_a_session():
    tf.train.range_input_producer(3)
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()


def test_string_input_producer_holds_names_host_side():
    q = tf.train.string_input_producer(["a.csv", "b.csv"], shuffle=False, num_epochs=2)
    size = q.size()
    with pytest.raises(tf.NotSupportedYetError, match="string"):
        q.dequeue()
    with pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        deadline = time.time() + 5
        while sess.run(size) < 4 and time.time() < deadline:
            time.sleep(0.01)
        assert sess.run(size) == 4  # two epochs of two names, then the runner closes the queue
        coord.request_stop()
        coord.join(threads)
    with pytest.raises(tf.NotSupportedYetError, match="tf.WholeFileReader"):
        tf.WholeFileReader()


def test_monitored_session_runs_queue_input_to_the_end():
    rng = np.random.RandomState(0)
    xs = rng.randn(64, 3).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    x, y = tf.train.slice_input_producer([xs, ys], num_epochs=20, shuffle=True, seed=0)
    xb, yb = tf.train.shuffle_batch([x, y], batch_size=16, capacity=64, min_after_dequeue=16, seed=0)
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(xb, w) - yb))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    steps, learned = 0, None
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            learned = sess.run([train_op, w])[1]
            steps += 1
    assert steps == 64 * 20 // 16  # every element of every epoch, then OutOfRangeError ended the session cleanly
    np.testing.assert_allclose(learned[:, 0], [1.0, -2.0, 0.5], atol=0.05)


def test_preloaded_variables_pattern_of_tfs_reading_data_guide():
    # fully_connected_preloaded.py: the data in variables outside every collection, initialized by feeds
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.uint8)  # uint8: widened to int32 while the core has no uint8
    data_init = tf.placeholder(tf.float32, data.shape)
    input_data = tf.Variable(data_init, trainable=False, collections=[])
    assert input_data not in tf.global_variables() and input_data not in tf.trainable_variables()
    image, label = tf.train.slice_input_producer([input_data, labels], num_epochs=1, shuffle=False)
    images, batch_labels = tf.train.batch([image, tf.cast(label, tf.int32)], batch_size=3)
    with tf.Session() as sess:
        sess.run(tf.group(tf.global_variables_initializer(), tf.local_variables_initializer()))
        sess.run(input_data.initializer, feed_dict={data_init: data})
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        batches = _drain(sess, [images, batch_labels])
        coord.request_stop()
        coord.join(threads)
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), data)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), labels)


def test_supervisor_starts_the_queue_runners_and_serialized_runs_do_not_deadlock(tmp_path):
    # TF 1.0's pattern: Supervisor(logdir) + managed_session; its checkpoint service serializes the session's
    # runs with a lock, which the runners' enqueues (blocking on a full queue) must not take
    xs = np.arange(40, dtype=np.float32).reshape(40, 1)
    x = tf.train.slice_input_producer([xs], num_epochs=2, shuffle=False)[0]
    xb = tf.train.batch([x * 1.0], batch_size=4, capacity=2)  # through a graph run per element
    total = tf.Variable(0.0)
    step = tf.train.get_or_create_global_step()
    train_op = tf.group(tf.assign_add(total, tf.reduce_sum(xb)), tf.assign_add(step, 1))
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=60)
    batches = []
    with sv.managed_session() as sess:  # OutOfRangeError at the end of the epochs: a clean stop
        while not sv.should_stop() and len(batches) <= 100:
            batches.append(sess.run([train_op, xb])[1])
    assert len(batches) == 20 and np.concatenate(batches).sum() == 2 * xs.sum()
