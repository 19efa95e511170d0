"""Trains a small dynamic_rnn LSTM classifier on synthetic variable-length sequences.

Task: is the sum of a sequence of random numbers (length 3..12) positive? No single step tells:
the LSTM must add up what it has read (chance is 50%). The LSTM reads the sequence with tf.nn.dynamic_rnn (a while_loop over time, with
sequence_length masking); its final state feeds a linear classifier trained with Adam.

    PYTHONPATH=tinyflow_demo python3 tinyflow_demo/examples/rnn_train.py
"""
import time

import numpy as np

import tinyflow as tf

STEPS, BATCH, UNITS = 12, 64, 16


def make_batch(rng, size):
    lengths = rng.randint(3, STEPS + 1, size=size).astype(np.int32)
    t = np.arange(STEPS)[None, :]
    x = rng.randn(size, STEPS).astype(np.float32)
    x[t >= lengths[:, None]] = 0.0  # padding past each length
    return x[:, :, None], lengths, (x.sum(axis=1) > 0).astype(np.int32)


def main():
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, STEPS, 1])
    lengths = tf.placeholder(tf.int32, [None])
    labels = tf.placeholder(tf.int32, [None])
    cell = tf.nn.rnn_cell.BasicLSTMCell(UNITS)
    _, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    w = tf.get_variable("classifier/w", [UNITS, 2])
    b = tf.get_variable("classifier/b", [2], initializer=tf.zeros_initializer())
    logits = tf.matmul(state.h, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), labels), tf.float32))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    test_x, test_len, test_y = make_batch(rng, 512)
    start = time.time()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(301):
            bx, bl, by = make_batch(rng, BATCH)
            _, batch_loss = sess.run([train, loss], {x: bx, lengths: bl, labels: by})
            if step % 50 == 0:
                print("step %3d  loss %.4f  test accuracy %.3f" % (
                    step, batch_loss, sess.run(accuracy, {x: test_x, lengths: test_len, labels: test_y})))
        final = sess.run(accuracy, {x: test_x, lengths: test_len, labels: test_y})
    print("final test accuracy %.3f (%.1f s)" % (final, time.time() - start))


if __name__ == "__main__":
    main()
