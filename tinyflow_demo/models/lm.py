"""The training graph, held-out bits per character and temperature sampling shared by the byte-level
language models (models/transformer.py, models/mlstm.py)."""
import math

import numpy as np

import tinyflow as tf

from . import mlstm, transformer

ARCHITECTURES = {"transformer": transformer, "mlstm": mlstm}


def bits_per_char(logits, targets):
    """Mean cross-entropy in bits of the next-byte logits [..., 256] against int targets [...] (numpy)."""
    logits = np.asarray(logits, np.float64).reshape(-1, logits.shape[-1])
    targets = np.asarray(targets).reshape(-1)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(targets)), targets].mean() / math.log(2.0))


class LanguageModel(object):
    """A byte-level LM's training graph: `tokens` [batch, seq_len + 1] (inputs are the first seq_len
    bytes, targets the last seq_len), `loss` (mean cross-entropy in nats), `bpc` (loss in bits),
    `train_op` (Adam at the fed `learning_rate`, gradients clipped to global norm `clip`) and
    `keep_prob` (dropout's keep probability: 1.0 unless fed, so evaluation runs without dropout; None
    when `dropout` is 0: then the graph has no dropout).
    A second graph over the same variables, `sample_tokens` [1, seq_len] -> `sample_logits`, feeds
    sample()."""

    def __init__(self, architecture, config, clip=1.0, dropout=0.1):
        self.architecture, self.config = architecture, dict(config)
        module = ARCHITECTURES[architecture]
        seq_len = config["seq_len"]
        self.tokens = tf.placeholder(tf.int32, [None, seq_len + 1], name="tokens")
        # dropout 0: no dropout in the graph at all (keep_prob None), else a keep probability fed while training
        self.keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob") if dropout > 0 else None
        self.train_keep_prob = 1.0 - dropout
        self.learning_rate = tf.placeholder(tf.float32, [], name="learning_rate")
        inputs, targets = self.tokens[:, :-1], self.tokens[:, 1:]
        self.logits = self._logits(module, inputs, 1.0 if self.keep_prob is None else self.keep_prob, None)
        per_byte = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(targets, [-1]),
                                                                  logits=tf.reshape(self.logits, [-1, 256]))
        self.loss = tf.reduce_mean(per_byte)
        self.bpc = self.loss * (1.0 / math.log(2.0))
        params = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self.loss, params), clip)
        self.train_op = tf.train.AdamOptimizer(self.learning_rate).apply_gradients(list(zip(grads, params)))
        self.sample_tokens = tf.placeholder(tf.int32, [1, seq_len], name="sample_tokens")
        self.sample_logits = self._logits(module, self.sample_tokens, 1.0, True)

    def _logits(self, module, tokens, keep_prob, reuse):
        out = module.logits(tokens, self.config, keep_prob, reuse=reuse)
        return out[0] if isinstance(out, tuple) else out

    def train_step(self, sess, batch, learning_rate):
        """One Adam step on `batch` [n, seq_len + 1]; returns the batch's loss (nats, before the step)."""
        feed = {self.tokens: batch, self.learning_rate: learning_rate}
        if self.keep_prob is not None:
            feed[self.keep_prob] = self.train_keep_prob
        loss, _ = sess.run([self.loss, self.train_op], feed)
        return float(loss)

    def evaluate(self, sess, windows, batch_size):
        """Mean loss (nats) and bits per character over int32 windows [n, seq_len + 1], without dropout."""
        total, count = 0.0, 0
        for start in range(0, len(windows), batch_size):
            batch = windows[start:start + batch_size]
            total += float(sess.run(self.loss, {self.tokens: batch})) * len(batch)
            count += len(batch)
        loss = total / max(count, 1)
        return loss, loss / math.log(2.0)

    def sample(self, sess, prompt, length, temperature=0.8, seed=0):
        """`length` bytes continuing `prompt` (bytes), each drawn from softmax(logits / temperature) of
        the model's view of the last seq_len bytes (a seeded numpy generator: the same seed, the same text)."""
        seq_len = self.config["seq_len"]
        rng = np.random.RandomState(seed)
        text = bytearray(prompt or b"\n")
        out = bytearray()
        for _ in range(length):
            window = list(text[-seq_len:])
            position = len(window) - 1
            window += [0] * (seq_len - len(window))  # causal: the padding after `position` is never seen
            logits = sess.run(self.sample_logits, {self.sample_tokens: np.array([window], np.int32)})[0, position]
            if temperature <= 0:
                byte = int(np.argmax(logits))
            else:
                z = logits.astype(np.float64) / temperature
                p = np.exp(z - z.max())
                byte = int(rng.choice(256, p=p / p.sum()))
            text.append(byte)
            out.append(byte)
        return bytes(out)


def build(architecture, preset="small", **kwargs):
    """A LanguageModel of `architecture` ("transformer" or "mlstm") with the config preset `preset`
    (a name of the module's CONFIGS or a config dict)."""
    config = ARCHITECTURES[architecture].CONFIGS[preset] if isinstance(preset, str) else preset
    return LanguageModel(architecture, config, **kwargs)
