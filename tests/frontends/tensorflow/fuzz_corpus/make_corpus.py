#!/usr/bin/env python3
"""Writes the hand-made seed and regression inputs of the checkpoint and SavedModel fuzz targets
(frontends/tensorflow/fuzz/, README "Fuzzing"); TFFuzzCorpusTest replays every file here.

checkpoint/*.bin: a bundle as fuzz_checkpoint.h lays it out (4-byte little-endian length of the
`.index`, the `.index`, the data shard), written here byte by byte (LevelDB table format, snappy
literals, BundleEntryProto); saved_model/*.pb: binary SavedModels, text protos encoded by protoc
from this repository's own fixtures and graphs written here. Run from this folder (needs protoc);
no TensorFlow and nothing from the network.
"""
import os
import struct
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "..", "..", "..", "..", "frontends", "tensorflow", "proto")
GRAPHS = os.path.join(HERE, "..", "graphs")


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def mask(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def field(number, wire, payload):
    key = varint(number << 3 | wire)
    return key + (varint(payload) if wire == 0 else varint(len(payload)) + payload if wire == 2 else payload)


def snappy_literals(raw):
    out = varint(len(raw))
    for at in range(0, len(raw), 60):
        chunk = raw[at:at + 60]
        out += bytes([(len(chunk) - 1) << 2]) + chunk
    return out


def block(entries, interval):
    """LevelDB block: keys prefix-compressed against the previous one, a restart every `interval`."""
    out, prev, restarts = b"", b"", []
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % interval == 0:
            restarts.append(len(out))
        else:
            while shared < min(len(prev), len(key)) and prev[shared] == key[shared]:
                shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(len(value)) + key[shared:] + value
        prev = key
    restarts = restarts or [0]
    return out + b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))


def framed(contents, compression=0):
    body = snappy_literals(contents) if compression == 1 else contents
    trailer = bytes([compression])
    return body + trailer + struct.pack("<I", mask(crc32c(body + trailer))), len(body)


def table(entries, per_block=2, compression=0):
    """A table of data blocks of `per_block` entries each, an index block and the footer."""
    data, index = b"", []
    for at in range(0, len(entries), per_block):
        chunk = entries[at:at + per_block]
        blob, size = framed(block(chunk, 2), compression)
        index.append((chunk[-1][0], varint(len(data)) + varint(size)))
        data += blob
    meta, meta_size = framed(block([], 16))
    meta_at = len(data)
    data += meta
    index_blob, index_size = framed(block(index, 1))
    index_at = len(data)
    data += index_blob
    footer = varint(meta_at) + varint(meta_size) + varint(index_at) + varint(index_size)
    return data + footer + b"\0" * (40 - len(footer)) + struct.pack("<Q", 0xDB4775248B80FB57)


DTYPES = {np.float32: 1, np.float64: 2, np.int32: 3, np.uint8: 4, np.int16: 5, np.int8: 6, np.int64: 9,
          np.bool_: 10, np.float16: 19}


def bundle(tensors, **table_args):
    """(index, shard) of {key: array or bytes (a DT_STRING entry)}."""
    shard, entries = b"", []
    for key in sorted(tensors):
        value = tensors[key]
        raw = value if isinstance(value, bytes) else value.tobytes()
        dtype = 7 if isinstance(value, bytes) else DTYPES[value.dtype.type]
        dims = () if isinstance(value, bytes) else value.shape
        shape = b"".join(field(2, 2, field(1, 0, d)) for d in dims)
        entry = (field(1, 0, dtype) + field(2, 2, shape) + field(4, 0, len(shard)) + field(5, 0, len(raw)) +
                 field(6, 5, struct.pack("<I", mask(crc32c(raw)))))
        entries.append((key.encode(), entry))
        shard += raw
    header = field(1, 0, 1) + field(3, 2, field(1, 0, 1))  # num_shards 1, version { producer 1 }
    return table([(b"", header)] + entries, **table_args), shard


def joined(index, shard):
    return struct.pack("<I", len(index)) + index + shard


def write(path, data):
    with open(os.path.join(HERE, path), "wb") as f:
        f.write(data)


def checkpoints():
    os.makedirs(os.path.join(HERE, "checkpoint"), exist_ok=True)
    rng = np.random.RandomState(3)
    tensors = {"dense/kernel": rng.randn(2, 3).astype(np.float32), "dense/bias": np.zeros(3, np.float32),
               "global_step": np.array(7, np.int64), "flags": np.array([True, False, True]),
               "counts": np.arange(4, dtype=np.int32), "half": np.ones(2, np.float16),
               "empty": np.zeros((0, 2), np.float64), "_CHECKPOINTABLE_OBJECT_GRAPH": b"\n\x02\x08\x01"}
    write("checkpoint/dtypes.bin", joined(*bundle(tensors)))
    write("checkpoint/snappy.bin", joined(*bundle(tensors, per_block=3, compression=1)))
    write("checkpoint/one_block.bin", joined(*bundle(tensors, per_block=100)))
    with open(os.path.join(GRAPHS, "keras_cnn", "variables", "variables.index"), "rb") as f:
        index = f.read()
    with open(os.path.join(GRAPHS, "keras_cnn", "variables", "variables.data-00000-of-00001"), "rb") as f:
        write("checkpoint/keras_cnn.bin", joined(index, f.read()))
    # Regression inputs of the reader's fixes (CheckpointTest): a block size that wraps around,
    # a repeated key, an index naming one data block twice.
    blob, size = framed(block([(b"a", b"1")], 2))
    footer_handles = varint(0) + varint(2 ** 64 - 3) + varint(0) + varint(2 ** 64 - 3)
    wrapped = blob + footer_handles + b"\0" * (40 - len(footer_handles)) + struct.pack("<Q", 0xDB4775248B80FB57)
    write("checkpoint/wrapped_block_size.bin", joined(wrapped, b""))
    write("checkpoint/repeated_key.bin", joined(table([(b"", b"\x08\x01"), (b"w", b"\x08\x01"), (b"w", b"\x08\x02")],
                                                      per_block=3), b""))
    index_entries = [(b"k%d" % i, varint(0) + varint(size)) for i in range(3)]
    index_blob, index_size = framed(block(index_entries, 1))
    meta, meta_size = framed(block([], 16))
    body = blob + meta + index_blob
    footer = varint(len(blob)) + varint(meta_size) + varint(len(blob) + len(meta)) + varint(index_size)
    write("checkpoint/repeated_block.bin",
          joined(body + footer + b"\0" * (40 - len(footer)) + struct.pack("<Q", 0xDB4775248B80FB57), b""))


def encode(text):
    return subprocess.run(["protoc", "--encode=ir.tfproto.SavedModel", "-I", PROTO, "ir_tf_saved_model.proto"],
                          input=text.encode(), stdout=subprocess.PIPE, check=True).stdout


def function(name, op, node_name="r"):
    return ("function { signature { name: '%s' input_arg { name: 'x' type: DT_FLOAT } "
            "output_arg { name: 'y' type: DT_FLOAT } } node_def { name: '%s' op: '%s' input: 'x' "
            "attr { key: 'T' value { type: DT_FLOAT } } } ret { key: 'y' value: '%s:y:0' } }\n"
            % (name, node_name, op, node_name))


def saved_model(nodes, library, output):
    return ("meta_graphs { meta_info_def { tags: 'serve' } graph_def { %s library { %s } } "
            "signature_def { key: 'serving_default' value { outputs { key: 'y' value { name: '%s' } } } } }"
            % (nodes, library, output))


def saved_models():
    os.makedirs(os.path.join(HERE, "saved_model"), exist_ok=True)
    for name in ("keras_cnn", "keras_sequential"):
        with open(os.path.join(GRAPHS, name, "saved_model.pbtxt")) as f:
            write("saved_model/%s.pb" % name, encode(f.read()))
    x = ("node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' "
         "value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: -2 } } } } ")
    p = ("node { name: 'p' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' "
         "value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } } ")
    call = ("node { name: 'call' op: 'StatefulPartitionedCall' input: 'x' "
            "attr { key: 'f' value { func { name: 'f' } } } } ")
    cond = ("node { name: 'if' op: 'If' input: 'p' input: 'x' attr { key: 'then_branch' value { func { name: 'f' } } } "
            "attr { key: 'else_branch' value { func { name: 'g' } } } } ")
    write("saved_model/call.pb", encode(saved_model(x + call, function("f", "Neg"), "call:0")))
    write("saved_model/if.pb", encode(saved_model(x + p + cond, function("f", "Neg") + function("g", "Abs"), "if:0")))
    # The same function twice: TF keeps one.
    write("saved_model/duplicate_equal_function.pb",
          encode(saved_model(x + call, function("f", "Neg") + function("f", "Neg"), "call:0")))
    # Regression input of the library fix (TFFunctionLibraryTest): 'f' defined twice differently.
    write("saved_model/duplicate_different_function.pb",
          encode(saved_model(x + call, function("f", "Neg") + function("f", "Abs"), "call:0")))


if __name__ == "__main__":
    checkpoints()
    saved_models()
