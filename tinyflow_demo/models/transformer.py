"""A decoder-only byte-level Transformer language model, written as a TF 1.x user writes it.

Pre-layer-norm blocks (tf.contrib.layers.layer_norm), causal multi-head self-attention from
tf.matmul(q, k, transpose_b=True), a tf.matrix_band_part mask applied as `s * mask - 1e9 * (1 - mask)`
and tf.nn.softmax, a GELU (tanh form) feed-forward layer, dropout through tf.nn.dropout with a
keep probability the caller feeds (1.0 when evaluating), learned positions and a byte vocabulary
of 256 whose output layer shares the embedding table (weight tying).

    logits = transformer.logits(tokens, transformer.CONFIGS["small"], keep_prob)

CONFIGS["dali"] is the Dali paper's Table 5 shape (hidden 512, filter 1024, 4 layers, 8 heads).
"""
import math

import tinyflow as tf

VOCAB = 256

CONFIGS = {
    "dali": dict(hidden=512, filter=1024, layers=4, heads=8, seq_len=128),
    "small": dict(hidden=128, filter=512, layers=2, heads=4, seq_len=128),
    "tiny": dict(hidden=32, filter=64, layers=1, heads=2, seq_len=16),
}


def gelu(x):
    """GELU, the tanh approximation (BERT's, GPT-2's). The cube as x * x * x: tf.pow(x, 3) fuses into a
    generated kernel calling pow() per element (and its gradient another pow for x^2), which made the
    fused FFN epilogue 12 ms of a 97 ms small-preset step on this machine."""
    return 0.5 * x * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def layer_norm(x, scope):
    return tf.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1, scope=scope)


def attention(x, heads, seq_len, keep_prob):
    """Causal multi-head self-attention of x [batch, seq_len, hidden]."""
    hidden = x.shape.as_list()[-1]
    depth = hidden // heads
    qkv = tf.layers.dense(x, 3 * hidden, name="qkv")
    q, k, v = tf.split(qkv, 3, axis=-1)

    def split_heads(t):  # [batch, T, hidden] -> [batch, heads, T, depth]
        return tf.transpose(tf.reshape(t, [-1, seq_len, heads, depth]), [0, 2, 1, 3])

    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    scores = tf.matmul(q, k, transpose_b=True) * (1.0 / math.sqrt(depth))
    mask = tf.matrix_band_part(tf.ones([seq_len, seq_len]), -1, 0)
    scores = scores * mask - 1e9 * (1.0 - mask)
    weights = tf.nn.dropout(tf.nn.softmax(scores), keep_prob)
    context = tf.matmul(weights, v)
    context = tf.reshape(tf.transpose(context, [0, 2, 1, 3]), [-1, seq_len, hidden])
    return tf.layers.dense(context, hidden, name="proj")


def block(x, config, seq_len, keep_prob):
    with tf.variable_scope("attention"):
        x = x + tf.nn.dropout(attention(layer_norm(x, "ln"), config["heads"], seq_len, keep_prob), keep_prob)
    with tf.variable_scope("ffn"):
        h = gelu(tf.layers.dense(layer_norm(x, "ln"), config["filter"], name="dense1"))
        x = x + tf.nn.dropout(tf.layers.dense(h, config["hidden"], name="dense2"), keep_prob)
    return x


def logits(tokens, config, keep_prob=1.0, scope="transformer", reuse=None):
    """Next-byte logits [batch, T, 256] of int32 bytes `tokens` [batch, T] (T = tokens' static length,
    at most config["seq_len"]); keep_prob: dropout's keep probability (a float or a scalar tensor)."""
    seq_len = tokens.shape.as_list()[1]
    if seq_len is None or seq_len > config["seq_len"]:
        raise ValueError("tokens need a static length of at most %d, got %s" % (config["seq_len"], tokens.shape))
    hidden = config["hidden"]
    with tf.variable_scope(scope, reuse=reuse):
        embedding = tf.get_variable("embedding", [VOCAB, hidden],
                                    initializer=tf.random_normal_initializer(stddev=0.02))
        positions = tf.get_variable("positions", [config["seq_len"], hidden],
                                    initializer=tf.random_normal_initializer(stddev=0.02))
        x = tf.nn.embedding_lookup(embedding, tokens) + positions[:seq_len]
        x = tf.nn.dropout(x, keep_prob)
        for layer in range(config["layers"]):
            with tf.variable_scope("layer%d" % layer):
                x = block(x, config, seq_len, keep_prob)
        x = layer_norm(x, "ln_final")
        out = tf.matmul(tf.reshape(x, [-1, hidden]), embedding, transpose_b=True)  # tied output layer
        return tf.reshape(out, [-1, seq_len, VOCAB])
