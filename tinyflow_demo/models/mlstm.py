"""A multiplicative LSTM byte-level language model (Krause et al. 2016), written as a TF 1.x user writes it.

    m = (x W_mx) * (h W_mh)
    i, f, o, u = split(x W_x + m W_m + b)
    c' = sigmoid(f) * c + sigmoid(i) * tanh(u),   h' = sigmoid(o) * tanh(c')

with weight normalization (Salimans & Kingma 2016) on the recurrent weights W_mh and W_m: each output
column is w = g * v / ||v||. The cell is a tf.nn.rnn_cell.RNNCell subclass run by tf.nn.dynamic_rnn
(a tf.while_loop over the time steps); the normalized weights are computed once per step of training,
outside the loop, and the loop body reads them. Byte embedding 64, vocabulary 256.

    logits = mlstm.logits(tokens, mlstm.CONFIGS["small"])
"""
import tinyflow as tf

VOCAB = 256

CONFIGS = {
    "dali": dict(hidden=1024, embedding=64, seq_len=128),
    "small": dict(hidden=256, embedding=64, seq_len=128),
    "tiny": dict(hidden=32, embedding=16, seq_len=16),
}


def weight_norm(v, g):
    """g * v / ||v||, the norm of each column (over axis 0) of v [in, out], g [out]."""
    return v * (g * tf.rsqrt(tf.reduce_sum(tf.square(v), axis=0)))


class MultiplicativeLSTMCell(tf.nn.rnn_cell.RNNCell):
    """mLSTM cell over the weights of mlstm_weights(): state (c, h), output h."""

    def __init__(self, num_units, weights, name=None):
        super(MultiplicativeLSTMCell, self).__init__(name=name)
        self._num_units = num_units
        self._w = weights

    @property
    def state_size(self):
        return tf.nn.rnn_cell.LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def call(self, inputs, state):
        c, h = state
        w = self._w
        m = tf.matmul(inputs, w["mx"]) * tf.matmul(h, w["mh"])
        z = tf.matmul(inputs, w["x"]) + tf.matmul(m, w["m"]) + w["b"]
        i, f, o, u = tf.split(z, 4, axis=1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(u)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, tf.nn.rnn_cell.LSTMStateTuple(c, h)


def mlstm_weights(input_depth, num_units):
    """The cell's variables (in the current variable scope) and its weight-normalized recurrent weights."""
    n = num_units
    init = tf.glorot_uniform_initializer()
    w = {"mx": tf.get_variable("W_mx", [input_depth, n], initializer=init),
         "x": tf.get_variable("W_x", [input_depth, 4 * n], initializer=init),
         "b": tf.get_variable("b", [4 * n], initializer=tf.constant_initializer(
             [0.0] * n + [1.0] * n + [0.0] * (2 * n)))}  # forget gate bias 1
    for key, shape in (("mh", [n, n]), ("m", [n, 4 * n])):
        v = tf.get_variable("W_%s_v" % key, shape, initializer=init)
        g = tf.get_variable("W_%s_g" % key, [shape[1]], initializer=tf.ones_initializer())
        w[key] = weight_norm(v, g)
    return w


def logits(tokens, config, keep_prob=1.0, scope="mlstm", reuse=None, initial_state=None):
    """(logits [batch, T, 256], final state) of int32 bytes `tokens` [batch, T]; keep_prob: dropout's
    keep probability on the cell outputs (a float or a scalar tensor)."""
    n = config["hidden"]
    with tf.variable_scope(scope, reuse=reuse):
        embedding = tf.get_variable("embedding", [VOCAB, config["embedding"]],
                                    initializer=tf.random_normal_initializer(stddev=0.1))
        x = tf.nn.embedding_lookup(embedding, tokens)
        with tf.variable_scope("cell"):
            cell = MultiplicativeLSTMCell(n, mlstm_weights(config["embedding"], n))
        outputs, state = tf.nn.dynamic_rnn(cell, x, initial_state=initial_state, dtype=tf.float32)
        outputs = tf.nn.dropout(outputs, keep_prob)
        seq_len = tokens.shape.as_list()[1]
        out = tf.layers.dense(tf.reshape(outputs, [-1, n]), VOCAB, name="output")
        return tf.reshape(out, [-1, seq_len, VOCAB]), state
