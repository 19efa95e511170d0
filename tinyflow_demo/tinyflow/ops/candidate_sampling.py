"""Candidate sampling as TF 1.x: tf.nn.log_uniform_candidate_sampler, uniform_candidate_sampler,
compute_accidental_hits, nce_loss and sampled_softmax_loss.

The samplers draw in NumPy through a host callback (a fresh draw every run, as TF's kernels do),
with TF's distributions: log-uniform (Zipfian) P(c) = log((c + 2) / (c + 1)) / log(range_max + 1),
drawn as floor(exp(u * log(range_max + 1))) - 1, and uniform P(c) = 1 / range_max. With unique=True
candidates are drawn until `num_sampled` distinct ones are found, and the expected counts are
-expm1(num_tries * log1p(-P(c))) (P(c) * num_sampled when no draw was rejected), as TF's RangeSampler.
"""
import numpy as np

from . import array_ops, math_ops
from .. import dtypes as _dtypes
from . import nn
from ..framework import convert_to_tensor, get_default_graph, name_scope
from .py_func import _host_call

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "compute_accidental_hits", "nce_loss",
           "sampled_softmax_loss"]

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _rng(seed):
    """The sampler's generator: seeded from the graph and op seeds when either is set (as TF), else fresh."""
    graph_seed = getattr(get_default_graph(), "seed", None)
    if graph_seed is None and seed is None:
        return np.random.RandomState()
    return np.random.RandomState([int(graph_seed or 0) & 0xFFFFFFFF, int(seed or 0) & 0xFFFFFFFF])


def _sampler(kind, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    if unique and num_sampled > range_max:
        raise ValueError("Sampler asked for %d unique candidates out of a range of %d" % (num_sampled, range_max))
    true_classes = convert_to_tensor(true_classes)
    if true_classes.shape.ndims not in (None, 2):
        raise ValueError("true_classes must be a matrix [batch_size, num_true]")
    rng = _rng(seed)
    log_range = np.log(range_max + 1.0)

    def draw(count):
        if kind == "log_uniform":
            values = (np.exp(rng.uniform(size=count) * log_range)).astype(np.int64) - 1
            return np.minimum(values, range_max - 1)
        return rng.randint(0, range_max, size=count).astype(np.int64)

    def sample(_args):
        if not unique:
            return [draw(num_sampled), np.float32(num_sampled)]
        chosen, seen, tries = [], set(), 0
        while len(chosen) < num_sampled:
            for value in draw(num_sampled - len(chosen)):
                tries += 1
                if value not in seen:
                    seen.add(value)
                    chosen.append(value)
                    if len(chosen) == num_sampled:
                        break
        return [np.asarray(chosen, np.int64), np.float32(tries)]

    with name_scope(name, kind.title().replace("_", "") + "CandidateSampler"):
        op = _host_call(sample, [true_classes], [_dtypes.int64, _dtypes.float32], "sampler",
                        shapes=[[num_sampled], []])
        sampled, num_tries = op.outputs[0], op.outputs[1]

        def expected_count(classes):
            classes = math_ops.cast(classes, _dtypes.float32)
            if kind == "log_uniform":
                prob = math_ops.divide(math_ops.log(math_ops.divide(classes + 2.0, classes + 1.0)), float(log_range))
            else:
                prob = math_ops.add(math_ops.multiply(classes, 0.0), 1.0 / range_max)
            no_rejection = math_ops.cast(math_ops.equal(num_tries, float(num_sampled)), _dtypes.float32)
            with_rejection = math_ops.negative(math_ops.expm1(math_ops.multiply(num_tries,
                                                                                math_ops.log1p(-prob))))
            return math_ops.add(math_ops.multiply(no_rejection, prob * float(num_sampled)),
                                math_ops.multiply(1.0 - no_rejection, with_rejection))

        true_expected = expected_count(true_classes)
        sampled_expected = expected_count(sampled)
    return sampled, true_expected, sampled_expected


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """(sampled_candidates [num_sampled] int64, true_expected_count [batch, num_true],
    sampled_expected_count [num_sampled]) from the log-uniform (Zipfian) distribution over [0, range_max)."""
    return _sampler("log_uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """As log_uniform_candidate_sampler, from the uniform distribution over [0, range_max)."""
    return _sampler("uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def _accidental_hit_mask(labels, sampled):
    """[batch, num_sampled] float: 1 where a sampled candidate equals one of the row's true labels."""
    hits = math_ops.equal(array_ops.expand_dims(labels, 2),
                          array_ops.reshape(sampled, [1, 1, -1]))
    return math_ops.reduce_max(math_ops.cast(hits, _dtypes.float32), 1)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices, ids, weights): for each (row, sampled position) where a sampled candidate is one of the
    row's true classes, the row, the position and -FLOAT_MAX, in row-major order (as TF).
    Computed in NumPy (the number of hits is known only when the graph runs)."""
    def hits(args):
        labels, sampled = args
        rows, cols = np.nonzero((labels[:, :, None] == sampled[None, None, :].astype(labels.dtype)).any(axis=1))
        return [rows.astype(np.int32), cols.astype(np.int64),
                np.full(rows.shape, -_FLOAT32_MAX, np.float32)]
    labels = math_ops.cast(convert_to_tensor(true_classes), _dtypes.int64)
    sampled = math_ops.cast(convert_to_tensor(sampled_candidates), _dtypes.int64)
    op = _host_call(hits, [labels, sampled], [_dtypes.int32, _dtypes.int64, _dtypes.float32],
                    name or "ComputeAccidentalHits")
    return tuple(op.outputs)


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                            subtract_log_q, remove_accidental_hits, partition_strategy, seed):
    weights = list(weights) if isinstance(weights, (list, tuple)) else weights
    labels = math_ops.cast(convert_to_tensor(labels), _dtypes.int64)
    if labels.shape.ndims == 1:
        raise ValueError("labels must be a matrix [batch_size, num_true] (got a vector: use tf.expand_dims)")
    inputs = convert_to_tensor(inputs)
    labels_flat = array_ops.reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (array_ops.stop_gradient(s) for s in sampled_values)
    sampled = math_ops.cast(sampled, _dtypes.int64)

    true_w = nn.embedding_lookup(weights, labels_flat, partition_strategy=partition_strategy)  # [B*T, D]
    sampled_w = nn.embedding_lookup(weights, sampled, partition_strategy=partition_strategy)   # [S, D]
    true_b = nn.embedding_lookup(biases, labels_flat, partition_strategy=partition_strategy)
    sampled_b = nn.embedding_lookup(biases, sampled, partition_strategy=partition_strategy)
    dim = int(inputs.shape.as_list()[-1]) if inputs.shape.ndims else -1

    sampled_logits = math_ops.add(math_ops.matmul(inputs, sampled_w, transpose_b=True), sampled_b)
    row_wise = math_ops.multiply(array_ops.expand_dims(inputs, 1), array_ops.reshape(true_w, [-1, num_true, dim]))
    true_logits = math_ops.add(math_ops.reduce_sum(row_wise, 2), array_ops.reshape(true_b, [-1, num_true]))

    if remove_accidental_hits:
        mask = _accidental_hit_mask(labels, sampled)
        sampled_logits = math_ops.add(sampled_logits, math_ops.multiply(mask, -_FLOAT32_MAX))
    if subtract_log_q:
        true_logits = math_ops.subtract(true_logits, math_ops.log(true_expected))
        sampled_logits = math_ops.subtract(sampled_logits, math_ops.log(sampled_expected))

    out_logits = array_ops.concat([true_logits, sampled_logits], 1)
    out_labels = array_ops.concat([math_ops.multiply(array_ops.ones_like(true_logits), 1.0 / num_true),
                                   array_ops.zeros_like(sampled_logits)], 1)
    return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss", seed=None):
    """Noise-contrastive estimation loss per example [batch]: sigmoid cross entropy of the true classes'
    and the sampled classes' logits, each less log(expected count), as TF 1.x."""
    with name_scope(name, "nce_loss"):
        logits, targets = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                                  num_true, sampled_values, True, remove_accidental_hits,
                                                  partition_strategy, seed)
        losses = nn.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
        return math_ops.reduce_sum(losses, 1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                         remove_accidental_hits=True, partition_strategy="mod", name="sampled_softmax_loss",
                         seed=None):
    """Softmax cross entropy over the true classes and the sampled ones [batch], logits less
    log(expected count), accidental hits removed by default, as TF 1.x."""
    with name_scope(name, "sampled_softmax_loss"):
        logits, targets = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                                  num_true, sampled_values, True, remove_accidental_hits,
                                                  partition_strategy, seed)
        return nn.softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(targets), logits=logits)
