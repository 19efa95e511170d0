"""tf.contrib.seq2seq: sequence_loss, the weighted per-timestep softmax cross-entropy of sequence models
(PTB language model, NMT tutorials)."""
import sys

from ..compat import NotSupportedYetError

__all__ = ["sequence_loss"]


def _tf():
    return sys.modules[__package__.partition(".")[0]]


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  sum_over_timesteps=False, sum_over_batch=False, softmax_loss_function=None, name=None):
    """TF 1.x tf.contrib.seq2seq.sequence_loss: logits [batch, time, classes], int targets [batch, time],
    weights [batch, time]. The cross-entropy of each step (softmax_loss_function(labels=, logits=) on the
    flattened steps if given) times its weight, then: averaged over both dimensions (a scalar: the weighted sum
    over the sum of the weights), over time only ([batch]), over the batch only ([time]), or not at all
    ([batch, time]); each average divides by the summed weights + 1e-12, as TF does."""
    tf = _tf()
    if sum_over_timesteps or sum_over_batch:
        raise NotSupportedYetError("tf.contrib.seq2seq.sequence_loss: sum_over_timesteps / sum_over_batch are "
                                   "not supported by tinyflow yet (use the average_across_* arguments)")
    logits, targets, weights = (tf.convert_to_tensor(t) for t in (logits, targets, weights))
    for tensor, rank, what in ((logits, 3, "Logits"), (targets, 2, "Targets"), (weights, 2, "Weights")):
        if tensor.shape.ndims is not None and tensor.shape.ndims != rank:
            raise ValueError("%s must be a [batch_size x sequence_length%s] tensor"
                             % (what, " x logits" if rank == 3 else ""))
    with tf.name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = tf.shape(logits)[2]
        flat_logits = tf.reshape(logits, tf.stack([-1, num_classes]))
        flat_targets = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=flat_targets, logits=flat_logits)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        crossent = crossent * tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.reduce_sum(crossent) / (tf.reduce_sum(weights) + 1e-12)
        crossent = tf.reshape(crossent, tf.shape(targets))
        if average_across_timesteps:
            return tf.reduce_sum(crossent, axis=1) / (tf.reduce_sum(weights, axis=1) + 1e-12)
        if average_across_batch:
            return tf.reduce_sum(crossent, axis=0) / (tf.reduce_sum(weights, axis=0) + 1e-12)
        return crossent
