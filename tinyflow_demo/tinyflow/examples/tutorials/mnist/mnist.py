"""tensorflow.examples.tutorials.mnist.mnist: the model library of the "TensorFlow Mechanics 101" tutorial
(fully_connected_feed.py imports it): two ReLU hidden layers and a linear layer giving the logits, built in
the inference / loss / training / evaluation pattern, with TF's constants and variable names
(hidden1/weights, hidden1/biases, ..., softmax_linear/biases, and a non-trainable `global_step`)."""
import math

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _tf():
    import tinyflow
    return tinyflow


def _dense(tf, scope, inputs, fan_in, units):
    """weights ~ truncated_normal(stddev=1/sqrt(fan_in)), biases = 0, under name scope `scope`."""
    with tf.name_scope(scope):
        weights = tf.Variable(tf.truncated_normal([fan_in, units], stddev=1.0 / math.sqrt(float(fan_in))),
                              name="weights")
        biases = tf.Variable(tf.zeros([units]), name="biases")
        return tf.matmul(inputs, weights) + biases


def inference(images, hidden1_units, hidden2_units):
    """Logits [batch, NUM_CLASSES] of `images` [batch, IMAGE_PIXELS] through two ReLU hidden layers."""
    tf = _tf()
    hidden1 = tf.nn.relu(_dense(tf, "hidden1", images, IMAGE_PIXELS, hidden1_units))
    hidden2 = tf.nn.relu(_dense(tf, "hidden2", hidden1, hidden1_units, hidden2_units))
    return _dense(tf, "softmax_linear", hidden2, hidden2_units, NUM_CLASSES)


def loss(logits, labels):
    """Mean sparse softmax cross-entropy of int `labels` [batch] against `logits`."""
    tf = _tf()
    return tf.losses.sparse_softmax_cross_entropy(labels=tf.to_int64(labels), logits=logits)


def training(loss, learning_rate):
    """A gradient-descent train op that also increments a new `global_step`; adds a 'loss' scalar summary."""
    tf = _tf()
    tf.summary.scalar("loss", loss)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    """The number (int32 scalar) of examples whose label is the top-1 logit."""
    tf = _tf()
    return tf.reduce_sum(tf.cast(tf.nn.in_top_k(logits, labels, 1), tf.int32))
