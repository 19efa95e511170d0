"""The byte-level language models of tinyflow_demo/models (the Transformer and the weight-normalized
mLSTM): they build, a few Adam steps lower the loss on a repetitive text, the reported bits per
character equal a numpy cross-entropy of the fetched logits, the weight norm is numpy's, the
Transformer is causal (so sampling may pad the window), and sampling is seeded and of the right length.
No network: the text is written here."""
import math

import numpy as np
import pytest

import tinyflow as tf
from models import lm, mlstm, text, transformer

TEXT = text.as_bytes("the quick brown fox jumps over the lazy dog. " * 40)


def train_losses(architecture, steps, fusion=True, lr=1e-2):
    tf.reset_default_graph()
    tf.set_random_seed(3)
    model = lm.build(architecture, "tiny", dropout=0.0)
    rng = np.random.RandomState(0)
    seq_len = model.config["seq_len"]
    with tf.Session(fusion=fusion, seed=3) as sess:
        sess.run(tf.global_variables_initializer())
        return [model.train_step(sess, text.random_windows(TEXT, 8, seq_len + 1, rng), lr) for _ in range(steps)]


@pytest.mark.parametrize("architecture", ["transformer", "mlstm"])
def test_training_lowers_the_loss(architecture):
    losses = train_losses(architecture, 30)
    assert np.all(np.isfinite(losses))
    assert abs(losses[0] - math.log(256.0)) < 0.3  # small initial logits: about uniform over 256 bytes
    assert np.mean(losses[-5:]) < losses[0] - 1.0, losses


@pytest.mark.parametrize("architecture", ["transformer", "mlstm"])
def test_fused_steps_equal_unfused(architecture):
    np.testing.assert_allclose(train_losses(architecture, 3, fusion=True), train_losses(architecture, 3, fusion=False),
                               rtol=2e-4)


def test_bits_per_char_of_uniform_and_certain_logits():
    targets = np.array([[1, 2, 3]])
    assert lm.bits_per_char(np.zeros((1, 3, 256)), targets) == pytest.approx(8.0)
    certain = np.full((1, 3, 256), -50.0)
    certain[0, np.arange(3), targets[0]] = 50.0
    assert lm.bits_per_char(certain, targets) < 1e-20


@pytest.mark.parametrize("architecture", ["transformer", "mlstm"])
def test_reported_bpc_is_the_cross_entropy_of_the_logits(architecture):
    tf.set_random_seed(5)
    model = lm.build(architecture, "tiny")
    windows = text.eval_windows(TEXT, model.config["seq_len"] + 1, 4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):  # away from the initial (nearly uniform) logits
            model.train_step(sess, windows, 3e-2)
        logits, bpc = sess.run([model.logits, model.bpc], {model.tokens: windows})
        loss, eval_bpc = model.evaluate(sess, windows, batch_size=2)  # the mean of two batches' means
    expected = lm.bits_per_char(logits, windows[:, 1:])
    assert expected < 7.5
    assert float(bpc) == pytest.approx(expected, rel=1e-5)
    assert eval_bpc == pytest.approx(expected, rel=1e-5)
    assert loss == pytest.approx(expected * math.log(2.0), rel=1e-5)


def test_evaluation_has_no_dropout_and_training_has():
    tf.set_random_seed(2)
    model = lm.build("transformer", "tiny", dropout=0.5)
    windows = text.eval_windows(TEXT, model.config["seq_len"] + 1, 4)
    with tf.Session(seed=2) as sess:
        sess.run(tf.global_variables_initializer())
        first, again = (sess.run(model.loss, {model.tokens: windows}) for _ in range(2))
        dropped = sess.run(model.loss, {model.tokens: windows, model.keep_prob: 0.5})
    assert first == again
    assert dropped != first


def test_weight_norm_matches_numpy():
    with tf.variable_scope("wn"):
        weights = mlstm.mlstm_weights(5, 6)
    variables = {v.name.split("/")[-1].split(":")[0]: v for v in tf.global_variables()}
    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g = rng.uniform(0.5, 2.0, 24).astype(np.float32)
        sess.run(tf.assign(variables["W_m_g"], g))
        v, w = sess.run([variables["W_m_v"], weights["m"]])
    np.testing.assert_allclose(w, g * v / np.sqrt((v.astype(np.float64) ** 2).sum(axis=0)), rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(w, axis=0), g, rtol=1e-5)


def test_transformer_is_causal():
    config = transformer.CONFIGS["tiny"]
    tokens = tf.placeholder(tf.int32, [2, config["seq_len"]])
    logits = transformer.logits(tokens, config)
    a = text.eval_windows(TEXT, config["seq_len"], 2)
    b = a.copy()
    b[:, 9:] = (b[:, 9:] + 7) % 256
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        la, lb = sess.run(logits, {tokens: a}), sess.run(logits, {tokens: b})
    np.testing.assert_allclose(la[:, :9], lb[:, :9], rtol=1e-5, atol=1e-6)
    assert np.abs(la[:, 9:] - lb[:, 9:]).max() > 1e-4


@pytest.mark.parametrize("architecture", ["transformer", "mlstm"])
def test_sample_is_seeded_bytes_of_the_asked_length(architecture):
    tf.set_random_seed(4)
    model = lm.build(architecture, "tiny")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = model.sample(sess, b"the ", 12, temperature=1.0, seed=7)
        again = model.sample(sess, b"the ", 12, temperature=1.0, seed=7)
        other = model.sample(sess, b"the ", 12, temperature=1.0, seed=8)
        long_prompt = model.sample(sess, bytes(TEXT[:40]), 3, temperature=0.0)  # longer than the window
    assert isinstance(first, bytes) and len(first) == 12 and len(long_prompt) == 3
    assert first == again and first != other
