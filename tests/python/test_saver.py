"""tf.train.Saver and the checkpoint utilities: TF's checkpoint V2 files, checked with an independent
LevelDB-table parser written here, round trips, global steps, max_to_keep, state files and errors."""
import logging
import os
import struct

import numpy as np
import pytest

import tinyflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TF_GRAPHS = os.environ.get("IR_TF_GRAPHS_DIR", os.path.join(REPO, "..", "shared", "tf_graphs"))


# -- an independent reader of the .index table (LevelDB format) and the bundle protos --
def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def _masked(data):
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _block(data, offset, size):
    contents, kind = data[offset:offset + size], data[offset + size]
    crc = struct.unpack_from("<I", data, offset + size + 1)[0]
    assert kind == 0 and crc == _masked(data[offset:offset + size + 1])
    restarts = struct.unpack_from("<I", contents, len(contents) - 4)[0]
    end, pos, key, out = len(contents) - 4 * (restarts + 1), 0, b"", []
    while pos < end:
        shared, pos = _varint(contents, pos)
        unshared, pos = _varint(contents, pos)
        vlen, pos = _varint(contents, pos)
        key = key[:shared] + contents[pos:pos + unshared]
        pos += unshared
        out.append((key, contents[pos:pos + vlen]))
        pos += vlen
    return out


def _table(path):
    data = open(path, "rb").read()
    footer = data[-48:]
    assert struct.unpack_from("<Q", footer, 40)[0] == 0xDB4775248B80FB57
    pos = 0
    for _ in range(2):  # the metaindex handle, then the index handle
        offset, pos = _varint(footer, pos)
        size, pos = _varint(footer, pos)
    entries = []
    for _, handle in _block(data, offset, size):
        block_offset, p = _varint(handle, 0)
        block_size, _ = _varint(handle, p)
        entries.extend(_block(data, block_offset, block_size))
    keys = [k for k, _ in entries]
    assert keys == sorted(keys)
    return dict(entries)


def _fields(buf):
    """Protobuf wire fields: {number: [value]} (varints as ints, fixed32 as ints, bytes as bytes)."""
    out, pos = {}, 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        wire = key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 5:
            value, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        else:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        out.setdefault(key >> 3, []).append(value)
    return out


def _entry(entry_bytes):
    """(dtype, shape, offset, size, crc) of a BundleEntryProto."""
    f = _fields(entry_bytes)
    shape = [_fields(d).get(1, [0])[0] for d in _fields(f[2][0]).get(2, [])] if 2 in f else []
    return f.get(1, [0])[0], shape, f.get(4, [0])[0], f.get(5, [0])[0], f[6][0]


def _model():
    with tf.variable_scope("dense"):
        kernel = tf.get_variable("kernel", initializer=tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3)))
        bias = tf.get_variable("bias", initializer=tf.constant([0.5, -1.0, 2.0], dtype=tf.float64))
    step = tf.Variable(np.int64(0), name="global_step", trainable=False)
    count = tf.Variable(np.array([1, 2], dtype=np.int32), name="count")
    return kernel, bias, step, count


def test_save_writes_tf_checkpoint_files(tmp_path):
    kernel, bias, step, count = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=42)
    assert prefix == str(tmp_path / "model.ckpt-42")
    table = _table(prefix + ".index")
    assert sorted(table) == [b"", b"count", b"dense/bias", b"dense/kernel", b"global_step"]
    assert _fields(table[b""]) == {1: [1], 3: [b"\x08\x01"]}  # num_shards 1, LITTLE, version producer 1
    data = open(prefix + ".data-00000-of-00001", "rb").read()
    expected = {b"dense/kernel": (1, np.arange(6, dtype=np.float32).reshape(2, 3)),
                b"dense/bias": (2, np.array([0.5, -1.0, 2.0])), b"global_step": (9, np.array(0, np.int64)),
                b"count": (3, np.array([1, 2], np.int32))}
    for key, (dtype, value) in expected.items():
        got_dtype, shape, offset, size, crc = _entry(table[key])
        assert (got_dtype, shape, size) == (dtype, list(value.shape), value.nbytes), key
        assert data[offset:offset + size] == value.tobytes() and crc == _masked(value.tobytes()), key
    state = open(str(tmp_path / "checkpoint")).read()
    assert state == 'model_checkpoint_path: "%s"\nall_model_checkpoint_paths: "%s"\n' % (prefix, prefix)


def test_save_change_restore_round_trip(tmp_path):
    kernel, bias, step, count = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(kernel, kernel * 3.0))
        saved = sess.run([kernel, bias, step, count])
        prefix = saver.save(sess, str(tmp_path / "m"))
        sess.run([tf.assign(kernel, tf.zeros([2, 3])), tf.assign(count, [7, 7])])
        saver.restore(sess, prefix)
        for got, want in zip(sess.run([kernel, bias, step, count]), saved):
            np.testing.assert_array_equal(got, want)
        assert sess.run(kernel * 2.0)[1, 2] == 30.0  # the restored value flows through the graph
    # A fresh session (uninitialized variables) restores too, here only the variables of a dict var_list.
    with tf.Session() as sess:
        tf.train.Saver({"dense/kernel": kernel}).restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(kernel), saved[0])


def test_var_list_dict_and_list_names(tmp_path):
    kernel, bias, step, count = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver({"my/bias": bias}).save(sess, str(tmp_path / "d"), write_state=False)
        assert tf.train.list_variables(prefix) == [("my/bias", [3])]
        np.testing.assert_array_equal(tf.train.load_variable(prefix, "my/bias:0"), [0.5, -1.0, 2.0])
        prefix = tf.train.Saver([kernel, count]).save(sess, str(tmp_path / "l"), write_state=False)
        assert tf.train.list_variables(prefix) == [("count", [2]), ("dense/kernel", [2, 3])]
    assert not os.path.exists(str(tmp_path / "checkpoint"))
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver([])
    tf.train.Saver([], allow_empty=True)


def test_global_step_tensor_max_to_keep_and_state(tmp_path, caplog):
    kernel, bias, step, count = _model()
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefixes = []
        for i in range(4):
            sess.run(tf.assign_add(step, 10))
            prefixes.append(saver.save(sess, base, global_step=step))
    assert prefixes == [base + "-%d" % s for s in (10, 20, 30, 40)]
    assert saver.last_checkpoints == prefixes[2:]
    for p in prefixes[:2]:
        assert not os.path.exists(p + ".index") and not os.path.exists(p + ".data-00000-of-00001")
        assert not tf.train.checkpoint_exists(p)
    for p in prefixes[2:]:
        assert tf.train.checkpoint_exists(p)
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[-1]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == prefixes[-1] and state.all_model_checkpoint_paths == prefixes[2:]
    assert tf.train.load_variable(str(tmp_path), "global_step") == 40  # a directory means its latest checkpoint
    assert tf.train.get_checkpoint_state(str(tmp_path / "nowhere")) is None
    assert tf.train.latest_checkpoint(str(tmp_path / "nowhere")) is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "checkpoint").write_text("model_checkpoint_path: unquoted\n")
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        assert tf.train.get_checkpoint_state(str(tmp_path / "bad")) is None
    assert "Checkpoint ignored" in caplog.text
    (tmp_path / "bad" / "checkpoint").write_text('all_model_checkpoint_paths: "a"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state"):
        tf.train.get_checkpoint_state(str(tmp_path / "bad"))


def test_relative_paths_in_state_file(tmp_path):
    _model()
    saver = tf.train.Saver(save_relative_paths=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "rel"), global_step=3, latest_filename="latest")
    assert open(str(tmp_path / "latest")).read().startswith('model_checkpoint_path: "rel-3"\n')
    assert tf.train.latest_checkpoint(str(tmp_path), latest_filename="latest") == prefix


def test_restore_errors_name_keys_and_shapes(tmp_path):
    kernel, bias, step, count = _model()
    z = tf.Variable(tf.zeros([2]), name="z")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver([bias]).save(sess, str(tmp_path / "part"))
        with pytest.raises(tf.errors.NotFoundError, match="dense/kernel"):
            tf.train.Saver().restore(sess, prefix)
        shape_prefix = tf.train.Saver({"dense/kernel": z}).save(sess, str(tmp_path / "shape"))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"lhs shape= \[2, 3\] rhs shape= \[2\]"):
            tf.train.Saver([kernel]).restore(sess, shape_prefix)
        dtype_prefix = tf.train.Saver({"z": count}).save(sess, str(tmp_path / "dtype"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="expected dtype float32 does not equal original "
                                                                 "dtype int32"):
            tf.train.Saver({"z": z}).restore(sess, dtype_prefix)
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            tf.train.Saver().restore(sess, str(tmp_path / "missing"))
        with pytest.raises(ValueError, match="None"):
            tf.train.Saver().restore(sess, None)
        with pytest.raises(ValueError, match="Parent directory"):
            tf.train.Saver().save(sess, str(tmp_path / "no" / "dir" / "m"))
        reader = tf.train.NewCheckpointReader(prefix)
        with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
            reader.get_tensor("nope")
        # A corrupted data file is a DataLossError naming the tensor.
        data = prefix + ".data-00000-of-00001"
        raw = bytearray(open(data, "rb").read())
        raw[0] ^= 0xFF
        open(data, "wb").write(bytes(raw))
        with pytest.raises(tf.errors.DataLossError, match="dense/bias"):
            tf.train.Saver([bias]).restore(sess, prefix)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value dense/kernel"):
            tf.train.Saver([kernel]).save(sess, str(tmp_path / "uninit"))


def _tf_regression_checkpoint():
    path = os.path.join(TF_GRAPHS, "tensorflow-onnx", "regression", "checkpoint", "model")
    if not os.path.exists(path + ".index"):
        pytest.skip("TF-written checkpoint not available at %s" % path)
    return path


def test_restores_a_tensorflow_written_checkpoint():
    path = _tf_regression_checkpoint()
    W = tf.Variable(0.0, name="W")
    b = tf.Variable(0.0, name="b")
    x = tf.placeholder(tf.float32, [None])
    pred = W * x + b
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        np.testing.assert_allclose(sess.run(pred, {x: [0.0, 2.0]}), [1.0495254, 2 * 0.21396178 + 1.0495254],
                                   rtol=1e-6)
    assert tf.train.list_variables(path) == [("W", []), ("b", [])]
    reader = tf.train.NewCheckpointReader(path)
    assert reader.has_tensor("W") and not reader.has_tensor("W:0")
    assert reader.get_variable_to_shape_map() == {"W": [], "b": []}


def test_tinyflow_checkpoint_reads_back_like_tensorflows(tmp_path):
    # Re-saving the values of TF's checkpoint gives the very files TF wrote.
    path = _tf_regression_checkpoint()
    W = tf.Variable(0.0, name="W")
    b = tf.Variable(0.0, name="b")
    with tf.Session() as sess:
        saver = tf.train.Saver()
        saver.restore(sess, path)
        prefix = saver.save(sess, str(tmp_path / "model"), write_state=False)
    for ext in (".index", ".data-00000-of-00001"):  # byte for byte what TensorFlow wrote
        assert open(prefix + ext, "rb").read() == open(path + ext, "rb").read(), ext
    assert tf.train.load_variable(prefix, "W") == np.float32(0.21396178)
    assert W.op.name == "W" and b.op.name == "b"


def test_keep_every_n_hours_spares_old_checkpoints_and_defer_build(tmp_path):
    _model()
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-9, defer_build=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(RuntimeError, match="build"):
            saver.save(sess, str(tmp_path / "k"))
        saver.build()
        prefixes = [saver.save(sess, str(tmp_path / "k"), global_step=i) for i in range(3)]
        kept = tf.train.Saver(max_to_keep=1)
        dropped = [kept.save(sess, str(tmp_path / "d"), global_step=i) for i in range(3)]
    assert saver.last_checkpoints == prefixes[-1:] and kept.last_checkpoints == dropped[-1:]
    assert all(tf.train.checkpoint_exists(p) for p in prefixes)  # older than the keep period: all kept
    assert [tf.train.checkpoint_exists(p) for p in dropped] == [False, False, True]
