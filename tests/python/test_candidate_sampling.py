"""tf.nn.nce_loss, sampled_softmax_loss and the candidate samplers against NumPy references of
TF 1.x's definitions (candidate_sampling_ops.py, nn_impl._compute_sampled_logits)."""
import numpy as np
import pytest

import tinyflow as tf

rng = np.random.RandomState(3)
NUM_CLASSES, DIM, BATCH, NUM_SAMPLED = 20, 5, 4, 6


def log_uniform_prob(c, range_max):
    return np.log((c + 2.0) / (c + 1.0)) / np.log(range_max + 1.0)


def sampled_logits_ref(w, b, labels, x, sampled, true_exp, sampled_exp, remove_hits):
    num_true = labels.shape[1]
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(true_exp)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_exp)
    if remove_hits:
        hits = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = np.where(hits, sampled_logits - np.finfo(np.float32).max, sampled_logits)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full_like(true_logits, 1.0 / num_true), np.zeros_like(sampled_logits)], 1)
    return logits, targets


def nce_ref(*args):
    logits, z = sampled_logits_ref(*args, remove_hits=False)
    return (np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits)))).sum(1)


def sampled_softmax_ref(*args):
    logits, z = sampled_logits_ref(*args, remove_hits=True)
    logits = logits - logits.max(1, keepdims=True)
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return -(z * log_softmax).sum(1)


def fixed_problem(num_true=1):
    w = rng.randn(NUM_CLASSES, DIM).astype(np.float32)
    b = rng.randn(NUM_CLASSES).astype(np.float32)
    x = rng.randn(BATCH, DIM).astype(np.float32)
    labels = rng.randint(0, NUM_CLASSES, size=(BATCH, num_true)).astype(np.int64)
    sampled = np.array([0, 1, 2, labels[0, 0], 7, 11], np.int64)  # one accidental hit (row 0)
    true_exp = rng.uniform(0.1, 0.9, size=(BATCH, num_true)).astype(np.float32)
    sampled_exp = rng.uniform(0.1, 0.9, size=NUM_SAMPLED).astype(np.float32)
    return w, b, labels, x, sampled, true_exp, sampled_exp


@pytest.mark.parametrize("num_true", [1, 2])
def test_nce_and_sampled_softmax_match_numpy_with_given_samples(num_true):
    w, b, labels, x, sampled, true_exp, sampled_exp = fixed_problem(num_true)
    values = (tf.constant(sampled), tf.constant(true_exp), tf.constant(sampled_exp))
    args = dict(weights=tf.constant(w), biases=tf.constant(b), labels=tf.constant(labels), inputs=tf.constant(x),
                num_sampled=NUM_SAMPLED, num_classes=NUM_CLASSES, num_true=num_true, sampled_values=values)
    nce = tf.nn.nce_loss(**args)
    softmax = tf.nn.sampled_softmax_loss(**args)
    with tf.Session() as sess:
        got_nce, got_softmax = sess.run([nce, softmax])
    ref = (w, b, labels, x, sampled, true_exp, sampled_exp)
    assert got_nce.shape == (BATCH,)
    np.testing.assert_allclose(got_nce, nce_ref(*ref), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_softmax, sampled_softmax_ref(*ref), rtol=1e-4, atol=1e-4)


def test_nce_gradient_reaches_weights_of_true_and_sampled_classes_only():
    w, b, labels, x, sampled, true_exp, sampled_exp = fixed_problem()
    weights = tf.Variable(w)
    values = (tf.constant(sampled), tf.constant(true_exp), tf.constant(sampled_exp))
    loss = tf.reduce_sum(tf.nn.nce_loss(weights, tf.constant(b), tf.constant(labels), tf.constant(x), NUM_SAMPLED,
                                        NUM_CLASSES, sampled_values=values))
    grad, = tf.gradients(loss, [weights])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g = sess.run(grad)
    used = set(labels.ravel()) | set(sampled)
    for c in range(NUM_CLASSES):
        assert (np.abs(g[c]).sum() > 0) == (c in used), c
    # d loss / d w[label] for a label that is neither sampled nor repeated: -(1 - sigmoid(logit)) * x
    ref_logits, _ = sampled_logits_ref(w, b, labels, x, sampled, true_exp, sampled_exp, False)
    for row, label in enumerate(labels[:, 0]):
        if (labels[:, 0] == label).sum() == 1 and label not in sampled:
            expected = -(1.0 - 1.0 / (1.0 + np.exp(-ref_logits[row, 0]))) * x[row]
            np.testing.assert_allclose(g[label], expected, rtol=1e-4, atol=1e-5)


def test_log_uniform_sampler_distribution_and_expected_counts():
    range_max, num_sampled = 10, 4000
    labels = tf.constant(np.array([[0], [3], [9]], np.int64))
    sampled, true_exp, sampled_exp = tf.nn.log_uniform_candidate_sampler(labels, 1, num_sampled, False, range_max,
                                                                          seed=5)
    with tf.Session() as sess:
        s, t, e = sess.run([sampled, true_exp, sampled_exp])
        s2 = sess.run(sampled)
    assert s.dtype == np.int64 and s.shape == (num_sampled,) and s.min() >= 0 and s.max() < range_max
    assert not np.array_equal(s, s2)  # a fresh draw every run
    p = log_uniform_prob(np.arange(range_max), range_max)
    freq = np.bincount(s, minlength=range_max) / float(num_sampled)
    np.testing.assert_allclose(freq, p, atol=0.03)
    np.testing.assert_allclose(t[:, 0], p[[0, 3, 9]] * num_sampled, rtol=1e-5)  # unique=False: p * num_sampled
    np.testing.assert_allclose(e, p[s] * num_sampled, rtol=1e-5)


def test_unique_samplers_draw_distinct_candidates_with_tf_expected_counts():
    range_max, num_sampled = 30, 12
    labels = tf.constant(np.array([[1], [25]], np.int64))
    for sampler, prob in ((tf.nn.log_uniform_candidate_sampler, log_uniform_prob(np.arange(range_max), range_max)),
                          (tf.nn.uniform_candidate_sampler, np.full(range_max, 1.0 / range_max))):
        sampled, true_exp, sampled_exp = sampler(labels, 1, num_sampled, True, range_max)
        with tf.Session() as sess:
            s, t, e = sess.run([sampled, true_exp, sampled_exp])
        assert len(set(s.tolist())) == num_sampled and s.max() < range_max
        # TF: -expm1(num_tries * log1p(-p)) with one num_tries for the whole batch (p * n if no rejection)
        tries = np.log1p(-e[0]) / np.log1p(-prob[s[0]])
        if abs(e[0] - prob[s[0]] * num_sampled) < 1e-6:
            tries = num_sampled
        expected = -np.expm1(tries * np.log1p(-prob)) if tries != num_sampled else prob * num_sampled
        np.testing.assert_allclose(e, expected[s], rtol=1e-4)
        np.testing.assert_allclose(t[:, 0], expected[[1, 25]], rtol=1e-4)
    with pytest.raises(ValueError):
        tf.nn.uniform_candidate_sampler(labels, 1, 40, True, range_max)


def test_compute_accidental_hits_as_tf():
    labels = tf.constant(np.array([[1, 2], [3, 4]], np.int64))
    sampled = tf.constant(np.array([2, 3, 5, 1], np.int64))
    indices, ids, weights = tf.nn.compute_accidental_hits(labels, sampled, num_true=2)
    with tf.Session() as sess:
        i, d, wt = sess.run([indices, ids, weights])
    np.testing.assert_array_equal(i, [0, 0, 1])
    np.testing.assert_array_equal(d, [0, 3, 1])
    np.testing.assert_array_equal(wt, [-np.finfo(np.float32).max] * 3)


def test_word2vec_style_training_lowers_nce_loss():
    tf.set_random_seed(1)
    vocab, dim = 50, 8
    x = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.int32, [None, 1])
    embedding = tf.Variable(tf.random_normal([vocab, dim]))
    nce_w = tf.Variable(tf.random_normal([vocab, dim]))
    nce_b = tf.Variable(tf.zeros([vocab]))
    loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_w, biases=nce_b, labels=y,
                                         inputs=tf.nn.embedding_lookup(embedding, x), num_sampled=8,
                                         num_classes=vocab))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    words = rng.randint(0, vocab, size=64)
    feed = {x: words, y: ((words + 1) % vocab)[:, None]}  # each word predicts its successor
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = np.mean([sess.run(loss, feed) for _ in range(5)])
        for _ in range(200):
            sess.run(train, feed)
        last = np.mean([sess.run(loss, feed) for _ in range(5)])
    assert np.isfinite(last) and last < 0.5 * first
