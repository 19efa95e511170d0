"""Every TF name tinyflow lacks raises the documented NotSupportedYetError (an AttributeError) with its full dotted
name, in every namespace: tf, tf.nn, tf.train, tf.image, tf.layers, tf.contrib.*, tf.keras.*, tf.estimator, ...
The walk finds the namespaces itself (modules, compat namespaces), so a namespace added later is covered."""
import types

import pytest

import tinyflow as tf

MISSING = "surely_not_a_tf_name"


PUBLIC = ("nn", "train", "image", "layers", "losses", "metrics", "summary", "data", "gfile", "io", "keras", "math",
          "linalg", "random", "contrib", "estimator", "initializers", "compat", "debugging", "test", "app", "flags",
          "logging", "errors", "queue")


def _namespaces():
    """(dotted name, object, reached through public names) of every namespace reachable from tf, each once: a
    BFS through the public namespaces first (so tf.contrib.layers is named so, not by its module's name)."""
    out, seen = [], {id(tf)}
    rest = sorted(n for n in vars(tf) if n not in PUBLIC and not n.startswith("_"))
    for public, names in ((True, PUBLIC), (False, rest)):
        todo = [("tf." + name, getattr(tf, name)) for name in names if name in vars(tf)]
        while todo:
            dotted, value = todo.pop(0)
            is_module = isinstance(value, types.ModuleType) and value.__name__.startswith("tinyflow")
            if not (is_module or type(value).__name__ == "_Namespace") or id(value) in seen:
                continue
            seen.add(id(value))
            out.append((dotted, value, public))
            todo.extend((dotted + "." + n, v) for n, v in sorted(vars(value).items()) if not n.startswith("_"))
    return out


NAMESPACES = _namespaces()


def test_the_walk_finds_the_namespaces_programs_use():
    found = {name for name, _, public in NAMESPACES if public}
    for name in ("tf.nn", "tf.train", "tf.image", "tf.layers", "tf.losses", "tf.metrics", "tf.summary", "tf.data",
                 "tf.gfile", "tf.io", "tf.keras", "tf.keras.datasets", "tf.math", "tf.linalg", "tf.random",
                 "tf.contrib", "tf.contrib.rnn", "tf.contrib.layers", "tf.contrib.eager", "tf.contrib.seq2seq",
                 "tf.estimator", "tf.estimator.inputs", "tf.initializers", "tf.compat", "tf.test", "tf.app",
                 "tf.flags", "tf.logging", "tf.errors", "tf.nn.rnn_cell", "tf.train.queue_runner", "tf.queue"):
        assert name in found, "%s not reached by the walk (%d namespaces)" % (name, len(found))


@pytest.mark.parametrize("dotted,namespace,public", NAMESPACES, ids=[n for n, _, _ in NAMESPACES])
def test_missing_name_raises_not_supported_yet_error_naming_it(dotted, namespace, public):
    with pytest.raises(tf.NotSupportedYetError) as info:
        getattr(namespace, MISSING)
    named = str(info.value).split(" ")[0]
    if public:  # the name as the program wrote it
        assert named == dotted + "." + MISSING, str(info.value)
    else:  # a module only reached by its file's name
        assert named.startswith("tf.") and named.endswith("." + MISSING), str(info.value)
    assert issubclass(tf.NotSupportedYetError, AttributeError)
    assert not hasattr(namespace, MISSING)  # hasattr still answers False


@pytest.mark.parametrize("path", [
    "tf.contrib.factorization", "tf.contrib.tensor_forest", "tf.contrib.boosted_trees",
    "tf.estimator.BoostedTreesClassifier", "tf.estimator.DNNClassifier", "tf.image.sample_distorted_bounding_box",
    "tf.nn.ctc_beam_search_decoder", "tf.train.SyncReplicasOptimizer", "tf.keras.applications",
    "tf.contrib.eager.Checkpointable", "tf.saved_model", "tf.math.bessel_i0e", "tf.random.stateless_uniform",
    "tf.layers.SeparableConv1D", "tf.WholeFileReader", "tf.contrib.slim", "tf.summary.audio_ops"])
def test_known_missing_tf1_names(path):
    parts = path.split(".")
    value = tf
    for i, part in enumerate(parts[1:], 1):
        try:
            value = getattr(value, part)
        except tf.NotSupportedYetError as err:
            assert str(err).startswith(".".join(parts[:i + 1]) + " "), str(err)
            return
        except AttributeError as err:
            pytest.fail("%s raised a plain %s: %s" % (".".join(parts[:i + 1]), type(err).__name__, err))
    pytest.fail("%s exists now: drop it from this list" % path)
