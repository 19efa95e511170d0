"""tf.summary and FileWriter: event files read back with an independent TFRecord + protobuf decoder
written here (CRCs, file_version, steps, tags, values, histogram buckets, PNG images)."""
import glob
import os
import socket
import struct
import zlib

import numpy as np
import pytest

import tinyflow as tf


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


def _records(path):
    data, pos, out = open(path, "rb").read(), 0, []
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack_from("<I", data, pos + 8)[0] == _masked(header)
        body = data[pos + 12:pos + 12 + length]
        assert struct.unpack_from("<I", data, pos + 12 + length)[0] == _masked(body)
        out.append(body)
        pos += 16 + length
    return out


def _varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _fields(buf):
    """{field: [values]}: varints as ints, fixed64 as doubles, fixed32 as floats, length-delimited as bytes."""
    out, pos = {}, 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        wire = key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = struct.unpack_from("<d", buf, pos)[0], pos + 8
        elif wire == 5:
            value, pos = struct.unpack_from("<f", buf, pos)[0], pos + 4
        else:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        out.setdefault(key >> 3, []).append(value)
    return out


def _events(logdir):
    files = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    assert len(files) == 1 and files[0].endswith("." + socket.gethostname())
    return [_fields(r) for r in _records(files[0])]


def _values(summary_bytes):
    """[(tag, Value fields)] of a serialized Summary."""
    return [(_fields(v)[1][0].decode(), _fields(v)) for v in _fields(summary_bytes).get(1, [])]


def test_scalars_written_and_read_back(tmp_path):
    x = tf.placeholder(tf.float32, [])
    with tf.name_scope("train"):
        loss = tf.summary.scalar("loss", x * 2.0)
    acc = tf.summary.scalar("acc", tf.constant(0.75), family="metrics")
    merged = tf.summary.merge_all()
    assert loss.name == "train/loss"
    writer = tf.summary.FileWriter(str(tmp_path))
    with tf.Session() as sess:
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: float(step)}), step)
        single = sess.run(loss, {x: 5.0})
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="manual", simple_value=3.5)]), global_step=9)
    writer.flush()
    writer.close()
    assert [(t, v[2][0]) for t, v in _values(single)] == [("train/loss", 10.0)]
    events = _events(tmp_path)
    assert events[0][3] == [b"brain.Event:2"] and events[0][1][0] > 1.5e9
    assert len(events) == 5
    for step, event in enumerate(events[1:4]):
        assert event.get(2, [0]) == [step] if step else 2 not in event  # step 0 is the default, not written
        values = dict((t, v[2][0]) for t, v in _values(event[5][0]))
        assert values == {"train/loss": 2.0 * step, "metrics/metrics/acc": 0.75}
    assert events[4][2] == [9] and _values(events[4][5][0])[0][1][2] == [3.5]


def test_histogram_buckets_match_tensorflows(tmp_path):
    values = np.array([-3.0, -0.5, 0.0, 0.0, 1e-13, 2.0, 2.05, 100.0])
    v = tf.Variable(values, name="w")
    h = tf.summary.histogram("weights", v)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        (tag, fields), = _values(sess.run(h))
    histo = _fields(fields[5][0])
    assert tag == "weights"
    assert (histo[1][0], histo[2][0], histo[3][0]) == (-3.0, 100.0, 8.0)
    assert histo[4][0] == pytest.approx(values.sum()) and histo[5][0] == pytest.approx((values ** 2).sum())
    limits = np.frombuffer(histo[6][0], "<f8")
    counts = np.frombuffer(histo[7][0], "<f8")
    # TF's default edges, built independently: +-1e-12 * 1.1^k below 1e20, +-DBL_MAX and 0.
    pos = [1e-12]
    while pos[-1] * 1.1 < 1e20:
        pos.append(pos[-1] * 1.1)
    pos.append(np.finfo(np.float64).max)
    edges = np.array([-p for p in reversed(pos)] + [0.0] + pos)
    expected = np.bincount(np.searchsorted(edges, values, side="right"), minlength=len(edges))
    # Runs of empty buckets are merged into their last edge, as Histogram::EncodeToProto does.
    want_limits, want_counts, i = [], [], 0
    while i < len(edges):
        end, count = edges[i], expected[i]
        i += 1
        if count == 0:
            while i < len(edges) and expected[i] == 0:
                end, count = edges[i], expected[i]
                i += 1
        want_limits.append(end)
        want_counts.append(count)
    np.testing.assert_array_equal(limits, want_limits)
    np.testing.assert_array_equal(counts, want_counts)
    bad = tf.summary.histogram("bad", tf.constant([1.0, np.nan]))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="NaN in summary histogram for: bad"):
            sess.run(bad)


def _decode_png(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (n,) = struct.unpack_from(">I", png, pos)
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        assert struct.unpack_from(">I", png, pos + 8 + n)[0] == zlib.crc32(kind + data) & 0xFFFFFFFF
        chunks[kind] = chunks.get(kind, b"") + data
        pos += 12 + n
    width, height, depth, color = struct.unpack_from(">IIBB", chunks[b"IHDR"])
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = width * channels + 1
    assert all(raw[y * stride] == 0 for y in range(height))
    rows = [np.frombuffer(raw[y * stride + 1:(y + 1) * stride], np.uint8) for y in range(height)]
    return np.stack(rows).reshape(height, width, channels)


def test_images_are_pngs_normalized_like_tensorflow(tmp_path):
    images = tf.placeholder(tf.float32, [None, 2, 3, 3])
    s = tf.summary.image("img", images, max_outputs=2)
    batch = np.random.RandomState(0).uniform(0, 2, (3, 2, 3, 3)).astype(np.float32)
    batch[1, 0, 0, 0] = -1.0
    with tf.Session() as sess:
        values = _values(sess.run(s, {images: batch}))
        one = _values(sess.run(s, {images: batch[:1]}))
    assert [t for t, _ in values] == ["img/image/0", "img/image/1"] and one[0][0] == "img/image"
    for i, (tag, fields) in enumerate(values):
        image = _fields(fields[4][0])
        assert (image[1][0], image[2][0], image[3][0]) == (2, 3, 3)
        x = batch[i]
        if x.min() >= 0:
            want = (x * np.float32(255.0 / x.max())).astype(np.uint8)
        else:
            want = (x * np.float32(127.0 / max(abs(x.min()), abs(x.max()))) + 128.0).astype(np.uint8)
        np.testing.assert_array_equal(_decode_png(image[4][0]), want)
    with pytest.raises(ValueError, match="4-D with last dim 1, 3, or 4"):
        tf.summary.image("bad", tf.zeros([1, 2, 2, 2]))


def test_text_merge_and_errors(tmp_path):
    t = tf.summary.text("notes", ["hello", "world"])
    s = tf.summary.scalar("s", tf.constant(1.0))
    merged = tf.summary.merge([t, s])
    with tf.Session() as sess:
        values = dict(_values(sess.run(merged)))
        assert tf.summary.merge_all(key="empty_collection") is None
        dup = tf.summary.merge([s, s])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag s"):
            sess.run(dup)
        with pytest.raises(tf.errors.InvalidArgumentError, match="tags and values not the same shape"):
            sess.run(tf.summary.scalar("vec", tf.constant([1.0, 2.0])))
    tensor = _fields(values["notes"][8][0])
    assert tensor[1] == [7] and tensor[8] == [b"hello", b"world"]  # DT_STRING, string_val
    assert _fields(_fields(values["notes"][9][0])[1][0])[1] == [b"text"]  # plugin_name
    assert values["s"][2] == [1.0]
    writer = tf.summary.FileWriter(str(tmp_path / "logs"))
    with pytest.raises(TypeError, match="serialized Summary bytes"):
        writer.add_summary(3.0)
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.add_summary(b"")
    assert tf.summary.FileWriterCache.get(str(tmp_path / "c")) is tf.summary.FileWriterCache.get(str(tmp_path / "c"))
    tf.summary.FileWriterCache.clear()


def test_random_mutations_of_summaries_are_written_framed_or_refused(tmp_path):
    """Nothing in tinyflow or libir_tensorflow reads event files back (TensorBoard does): what parses
    hostile bytes is the writer, which parses each serialized Summary before framing its Event. 1,500
    random mutations of real summaries: each is refused with an OpError or written as one well-framed
    record (CRCs right) whose Event has the step, and the file never holds a partial record."""
    import random
    x = tf.placeholder(tf.float32, [2, 2])
    tf.summary.scalar("loss", tf.reduce_sum(x))
    tf.summary.histogram("h", x)
    tf.summary.image("img", tf.reshape(x, [1, 2, 2, 1]))
    with tf.Session() as sess:
        seed = sess.run(tf.summary.merge_all(), {x: np.arange(4, dtype=np.float32).reshape(2, 2)})
    rng = random.Random(5)
    writer = tf.summary.FileWriter(str(tmp_path))
    written, refused = [], 0
    for step in range(1, 1501):
        data = bytearray(seed)
        for _ in range(rng.randint(1, 4)):
            at, kind = rng.randrange(len(data) + 1), rng.randrange(4)
            if kind == 0 and data:
                data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
            elif kind == 1:
                data[at:at] = bytes([rng.randrange(256)])
            elif kind == 2:
                del data[at:at + rng.randint(1, 16)]
            else:
                data[at:at] = data[at:at + rng.randint(1, 32)]
        try:
            writer.add_summary(bytes(data), step)
            written.append(step)
        except tf.errors.OpError as e:
            assert "not a serialized Summary" in str(e)
            refused += 1
    writer.close()
    events = _events(tmp_path)  # checks every record's framing and CRCs
    assert len(events) == 1 + len(written)
    assert [e[2][0] for e in events[1:]] == written and all(5 in e for e in events[1:])
    assert refused > 100 and len(written) > 100  # the mutations reach both outcomes
