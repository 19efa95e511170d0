"""The `checkpoint` state file is read as TensorFlow reads it (text_format.Merge into a
CheckpointState): every form TF's parser accepts names the same checkpoint, a file it rejects is
logged and ignored (None), and no garbage makes the readers fail in a way TF does not."""
import logging
import random

import numpy as np
import pytest

import tinyflow as tf
from tinyflow.train import checkpoint_state


def _checkpoint(tmp_path, name="model.ckpt-7"):
    """A real checkpoint (one variable) in tmp_path; returns its prefix."""
    tf.reset_default_graph()
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return tf.train.Saver([v]).save(sess, str(tmp_path / name), write_state=False)


def _state(tmp_path, content):
    (tmp_path / "checkpoint").write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


@pytest.mark.parametrize("text", [
    "model_checkpoint_path: 'model.ckpt-7'\n",  # single quotes
    '# written by hand\nmodel_checkpoint_path: "model.ckpt-7"  # the latest\n',  # comments
    'model_checkpoint_path: "model.ckpt-7", all_model_checkpoint_paths: "model.ckpt-7";',  # one line
    'model_checkpoint_path: "model." "ckpt-7"\n',  # adjacent strings are one
    'model_checkpoint_path: "model\\056ckpt\\x2d7"\n',  # octal and hex escapes
    'all_model_checkpoint_paths: ["a", "model.ckpt-7"]\nmodel_checkpoint_path: "model.ckpt-7"\n'
    "all_model_checkpoint_timestamps: [1.5e9, 1600000000]\nlast_preserved_timestamp: 1.6e9\n",
    'model_checkpoint_path:"model.ckpt-7"',  # no newline at all
])
def test_every_form_tf_accepts_names_the_checkpoint(tmp_path, text):
    prefix = _checkpoint(tmp_path)
    _state(tmp_path, text)
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix


def test_timestamps_are_read(tmp_path):
    _state(tmp_path, 'model_checkpoint_path: "m"\nall_model_checkpoint_timestamps: 1.5\n'
                     "all_model_checkpoint_timestamps: [2, inf]\nlast_preserved_timestamp: -1e3\n")
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "m")
    assert state.all_model_checkpoint_timestamps == [1.5, 2.0, float("inf")]
    assert state.last_preserved_timestamp == -1000.0


@pytest.mark.parametrize("text,why", [
    ('model_checkpoint_path: "model.ckpt-7"\nsome_other_field: "x"\n', 'has no field named "some_other_field"'),
    ("model_checkpoint_path: model.ckpt-7\n", "Expected string"),
    ('model_checkpoint_path "model.ckpt-7"\n', 'Expected ":"'),
    ('model_checkpoint_path: "model.ckpt-7\n', "missing ending quote"),
    ('model_checkpoint_path: "\\xff"\n', "can't decode byte 0xff"),  # a string field must be UTF-8
    ("last_preserved_timestamp: soon\nmodel_checkpoint_path: 'm'", "Couldn't parse float"),
    ("\x00\x01\x02 garbage \u2603\n", "Expected identifier or number"),
])
def test_a_file_tf_cannot_parse_is_logged_and_ignored(tmp_path, caplog, text, why):
    _checkpoint(tmp_path)
    _state(tmp_path, text)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        assert tf.train.latest_checkpoint(str(tmp_path)) is None
        assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert why in caplog.text and "ParseError" in caplog.text and "Checkpoint ignored" in caplog.text


def test_bytes_that_are_not_utf8_are_logged_and_ignored(tmp_path, caplog):
    # TF's file_io.read_file_to_string raises UnicodeDecodeError before its parse-error handling;
    # a damaged state file is a parse error here (None, logged), so a program goes on as TF means it to.
    _checkpoint(tmp_path)
    _state(tmp_path, b'model_checkpoint_path: "\xff\xfe"\n')
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert "not UTF-8" in caplog.text and "Checkpoint ignored" in caplog.text


def test_a_state_file_that_is_a_directory_is_ignored(tmp_path, caplog):
    (tmp_path / "checkpoint").mkdir()
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert "Checkpoint ignored" in caplog.text


def test_a_missing_checkpoint_is_logged(tmp_path, caplog):
    _state(tmp_path, 'model_checkpoint_path: "gone"\n')
    with caplog.at_level(logging.ERROR, logger="tensorflow"):
        assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert "Couldn't match files for checkpoint %s" % (tmp_path / "gone") in caplog.text


def test_paths_are_written_as_tensorflows_printer_writes_them(tmp_path):
    path = str(tmp_path / "d\u00e9j\u00e0\tvu\n'q\"")
    tf.train.update_checkpoint_state(str(tmp_path), path, [path])
    text = (tmp_path / "checkpoint").read_text()
    escaped = str(tmp_path) + "/d\\303\\251j\\303\\240\\tvu\\n\\'q\\\""
    assert text == 'model_checkpoint_path: "%s"\nall_model_checkpoint_paths: "%s"\n' % (escaped, escaped)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == path and state.all_model_checkpoint_paths == [path]


def _mutate(rng, data):
    """One random edit of `data`: flip, insert, delete, duplicate a span, or splice a token in."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind, at = rng.randrange(5), rng.randrange(len(data) + 1)
        if kind == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[at:at] = bytes([rng.randrange(256)])
        elif kind == 2:
            del data[at:at + rng.randint(1, 8)]
        elif kind == 3:
            data[at:at] = data[at:at + rng.randint(1, 16)]
        else:
            data[at:at] = rng.choice([b'"', b"'", b"\\", b"#", b"[", b"]", b",", b":", b"\n", b"\\x", b"\\3",
                                      b"inf", b"-", b"all_model_checkpoint_timestamps", b"\xc3", b"\x00"])
    return bytes(data)


def test_random_mutations_return_a_state_or_none(tmp_path):
    """2,000 mutations of a valid file: a state, None, or what TF raises too (no model path, not UTF-8).
    Every 20th goes through the file; the others straight to what reads its bytes (writing a file
    costs ten times the parse)."""
    seeds = [('model_checkpoint_path: "model.ckpt-7"\nall_model_checkpoint_paths: "model.ckpt-6"\n'
              'all_model_checkpoint_paths: "model.ckpt-7"\nall_model_checkpoint_timestamps: [1.5e9, 1.6e9]\n'
              "last_preserved_timestamp: 1.4e9\n").encode(),
             b"all_model_checkpoint_paths: ['m-1', 'm-2'] # no model_checkpoint_path\n"]
    rng = random.Random(11)
    outcomes = {"state": 0, "none": 0, "no path": 0, "not utf-8": 0}
    quiet = logging.getLogger("tensorflow")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        for trial in range(2000):
            data = _mutate(rng, rng.choice(seeds))
            through_file = trial % 20 == 0
            if through_file:
                _state(tmp_path, data)
            try:
                if through_file:
                    state = tf.train.get_checkpoint_state(str(tmp_path))
                else:
                    state = checkpoint_state._state_of(data, str(tmp_path), str(tmp_path / "checkpoint"))
            except ValueError as e:
                assert not isinstance(e, UnicodeDecodeError), data
                assert "Invalid checkpoint state" in str(e), data
                outcomes["no path"] += 1
                continue
            if state is None:
                try:
                    data.decode("utf-8")
                    outcomes["none"] += 1
                except UnicodeDecodeError:
                    outcomes["not utf-8"] += 1
                continue
            outcomes["state"] += 1
            assert isinstance(state.model_checkpoint_path, str) and state.model_checkpoint_path, data
            assert all(isinstance(p, str) for p in state.all_model_checkpoint_paths), data
            assert all(isinstance(t, float) for t in state.all_model_checkpoint_timestamps), data
            if through_file:
                assert tf.train.latest_checkpoint(str(tmp_path)) is None  # no such checkpoint exists
    finally:
        quiet.setLevel(level)
    assert min(outcomes.values()) > 0, outcomes  # the mutations reach every outcome


def test_monitored_training_session_starts_afresh_over_an_unreadable_state(tmp_path):
    tf.reset_default_graph()
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 1)
    _state(tmp_path, "this is not a checkpoint state\n")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_secs=None) as sess:
        assert sess.run(inc) == 1
