"""TF1's sparse Adam update of an embedding, written with tinyflow's ops the way optimizer.py and
adam.py build it (_deduplicate_indexed_slices: unique, then unsorted_segment_sum with
num_segments = tf.shape(unique.y)[0], known only when the step runs; _apply_sparse_shared: assign,
scatter_add, assign_sub): training steps against NumPy, fused and not."""
import numpy as np

import tinyflow as tf

VOCAB, DIM, N = 6, 3, 5
LR, BETA1, BETA2, EPS = 0.1, 0.9, 0.999, 1e-8


def _build(table):
    ids = tf.placeholder(tf.int32, [N])
    target = tf.placeholder(tf.float32, [N, DIM])
    embedding = tf.Variable(table, name="embedding")
    m = tf.Variable(np.zeros_like(table), name="m")
    v = tf.Variable(np.zeros_like(table), name="v")
    beta1_power = tf.Variable(np.float32(BETA1), name="beta1_power")
    beta2_power = tf.Variable(np.float32(BETA2), name="beta2_power")
    rows = tf.gather(embedding, ids)
    grad_rows = 2.0 * (rows - target) / float(N * DIM)  # d mean((rows - target)^2) / d rows
    unique = tf.unique(ids)
    summed = tf.unsorted_segment_sum(grad_rows, unique.idx, tf.shape(unique.y)[0])
    lr = LR * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
    m_t = tf.assign(m, m * BETA1)
    with tf.control_dependencies([m_t]):
        m_t = tf.scatter_add(m, unique.y, summed * (1 - BETA1))
    v_t = tf.assign(v, v * BETA2)
    with tf.control_dependencies([v_t]):
        v_t = tf.scatter_add(v, unique.y, summed * summed * (1 - BETA2))
    update = tf.assign_sub(embedding, lr * m_t / (tf.sqrt(v_t) + EPS))
    with tf.control_dependencies([update]):
        step = tf.group(tf.assign(beta1_power, beta1_power * BETA1), tf.assign(beta2_power, beta2_power * BETA2))
    return ids, target, summed, step, embedding


def _reference_step(state, ids, target):
    table, m, v, b1, b2 = state
    grad = np.zeros_like(table, dtype=np.float64)
    np.add.at(grad, ids, 2.0 * (table[ids] - target) / (N * DIM))
    touched = np.unique(ids)
    m = m * BETA1
    v = v * BETA2
    m[touched] += (1 - BETA1) * grad[touched]
    v[touched] += (1 - BETA2) * grad[touched] ** 2
    table = table - LR * np.sqrt(1 - b2) / (1 - b1) * m / (np.sqrt(v) + EPS)
    return table, m, v, b1 * BETA1, b2 * BETA2


def test_sparse_adam_steps_match_numpy(fusion):
    table = (0.1 * (np.arange(VOCAB * DIM) % 7) - 0.3).astype(np.float32).reshape(VOCAB, DIM)
    ids, target, summed, step, embedding = _build(table)
    state = (table.astype(np.float64), np.zeros((VOCAB, DIM)), np.zeros((VOCAB, DIM)), BETA1, BETA2)
    with tf.Session(fusion=fusion) as sess:
        sess.run(tf.global_variables_initializer())
        for k, batch in enumerate([[1, 4, 1, 0, 4], [5, 5, 5, 2, 3], [0, 0, 0, 0, 0]]):
            t = (0.05 * ((np.arange(N * DIM) * 5 + k) % 9)).astype(np.float32).reshape(N, DIM)
            rows = sess.run(summed, {ids: batch, target: t})
            assert rows.shape == (len(np.unique(batch)), DIM)  # one row per distinct id, found as it runs
            sess.run(step, {ids: batch, target: t})
            state = _reference_step(state, np.array(batch), t.astype(np.float64))
        np.testing.assert_allclose(sess.run(embedding), state[0], rtol=1e-4, atol=1e-5)
