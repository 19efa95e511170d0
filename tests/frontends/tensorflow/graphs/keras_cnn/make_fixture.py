#!/usr/bin/env python3
"""Writes a Keras-style TF2 SavedModel (text saved_model.pbtxt, a checkpoint V2 variables/ bundle)
and a NumPy oracle for the functional model

    image = Input((4, 4, 1)); x = Conv2D(2, 3, padding="same", activation="relu")(image)
    x = BatchNormalization()(x); x = MaxPooling2D(2)(x); x = Flatten()(x)
    dense = Dense(3, activation="softmax")(x)

with the node, function, signature and object-graph structure tf.keras (TF 2.4 to 2.11) writes.
No TensorFlow here: the bundle is written by hand (LevelDB table of BundleEntryProto, CRC32C),
without the _CHECKPOINTABLE_OBJECT_GRAPH entry. Run from this folder: python3 make_fixture.py, then
pretty-print: protoc --encode=ir.tfproto.SavedModel -I ../../../../../frontends/tensorflow/proto ir_tf_saved_model.proto
< saved_model.pbtxt | protoc --decode=... (same flags) > pretty.pbtxt; mv pretty.pbtxt saved_model.pbtxt
"""
import os
import struct

import numpy as np

rng = np.random.RandomState(7)
VARIABLES = [  # (graph name, checkpoint key, value)
    ("conv2d/kernel", "layer_with_weights-0/kernel", rng.randn(3, 3, 1, 2)),
    ("conv2d/bias", "layer_with_weights-0/bias", rng.randn(2) * 0.1),
    ("batch_normalization/gamma", "layer_with_weights-1/gamma", 1 + rng.rand(2)),
    ("batch_normalization/beta", "layer_with_weights-1/beta", rng.randn(2) * 0.1),
    ("batch_normalization/moving_mean", "layer_with_weights-1/moving_mean", rng.rand(2)),
    ("batch_normalization/moving_variance", "layer_with_weights-1/moving_variance", 0.5 + rng.rand(2)),
    ("dense/kernel", "layer_with_weights-2/kernel", rng.randn(8, 3)),
    ("dense/bias", "layer_with_weights-2/bias", rng.randn(3) * 0.1),
]
VARIABLES = [(n, k + "/.ATTRIBUTES/VARIABLE_VALUE", v.astype(np.float32)) for n, k, v in VARIABLES]


def reference(x):
    w, b, gamma, beta, mean, var, dw, db = [v.astype(np.float64) for _, _, v in VARIABLES]
    n = x.shape[0]
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = np.zeros((n, 4, 4, 2))
    for i in range(4):
        for j in range(4):
            conv[:, i, j, :] = np.einsum("nhwc,hwco->no", padded[:, i:i + 3, j:j + 3, :], w)
    h = np.maximum(conv + b, 0)
    h = gamma * (h - mean) / np.sqrt(var + 0.001) + beta
    h = h.reshape(n, 2, 2, 2, 2, 2).max(axis=(2, 4))
    z = h.reshape(n, 8) @ dw + db
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- checkpoint V2 bundle
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


def entry(value, offset):
    shape = b"".join(field(2, 2, field(1, 0, d)) for d in value.shape)
    return (field(1, 0, 1) + field(2, 2, shape) + field(4, 0, offset) + field(5, 0, value.nbytes) +
            field(6, 5, struct.pack("<I", mask(crc32c(value.tobytes())))))


def table(entries):
    block = b""
    for key, value in entries:  # no prefix sharing, one restart point
        block += varint(0) + varint(len(key)) + varint(len(value)) + key + value
    block += struct.pack("<II", 0, 1)
    data = block + b"\0" + struct.pack("<I", mask(crc32c(block + b"\0")))
    handle = varint(0) + varint(len(block))
    index = varint(0) + varint(len(entries[-1][0])) + varint(len(handle)) + entries[-1][0] + handle
    index += struct.pack("<II", 0, 1)
    index_at = len(data)
    data += index + b"\0" + struct.pack("<I", mask(crc32c(index + b"\0")))
    meta_at = len(data)
    meta = struct.pack("<II", 0, 1)
    data += meta + b"\0" + struct.pack("<I", mask(crc32c(meta + b"\0")))
    footer = varint(meta_at) + varint(len(meta)) + varint(index_at) + varint(len(index))
    footer += b"\0" * (40 - len(footer)) + struct.pack("<Q", 0xDB4775248B80FB57)
    return data + footer


os.makedirs("variables", exist_ok=True)
shard, entries = b"", []
for _, key, value in sorted(VARIABLES, key=lambda v: v[1]):
    entries.append((key.encode(), entry(value, len(shard))))
    shard += value.tobytes()
header = field(1, 0, 1) + field(3, 2, field(1, 0, 1))  # num_shards 1, LITTLE endian, version 1
with open("variables/variables.index", "wb") as f:
    f.write(table([(b"", header)] + entries))
with open("variables/variables.data-00000-of-00001", "wb") as f:
    f.write(shard)

image = rng.randn(3, 4, 4, 1).astype(np.float32)
np.save("image.npy", image)
np.save("expected.npy", reference(image))


# ---------------------------------------------------------------- saved_model.pbtxt
def attr(key, value):
    return 'attr { key: "%s" value { %s } }' % (key, value)


def node(name, op, inputs=(), *attrs, key="node_def"):
    return '%s { name: "%s" op: "%s" %s %s }' % (key, name, op, " ".join('input: "%s"' % i for i in inputs),
                                                  " ".join(attrs))


def ints(values):
    return "list { %s }" % " ".join("i: %d" % v for v in values)


def shape(dims):
    return "shape { %s }" % " ".join("dim { size: %d }" % d for d in dims)


F = attr("T", "type: DT_FLOAT")
RES = ["model_conv2d_conv2d_readvariableop_resource", "model_conv2d_biasadd_readvariableop_resource",
       "model_batch_normalization_readvariableop_resource", "model_batch_normalization_readvariableop_1_resource",
       "model_batch_normalization_fusedbatchnormv3_readvariableop_resource",
       "model_batch_normalization_fusedbatchnormv3_readvariableop_1_resource",
       "model_dense_matmul_readvariableop_resource", "model_dense_biasadd_readvariableop_resource"]
READS = ["model/conv2d/Conv2D/ReadVariableOp", "model/conv2d/BiasAdd/ReadVariableOp",
         "model/batch_normalization/ReadVariableOp", "model/batch_normalization/ReadVariableOp_1",
         "model/batch_normalization/FusedBatchNormV3/ReadVariableOp",
         "model/batch_normalization/FusedBatchNormV3/ReadVariableOp_1",
         "model/dense/MatMul/ReadVariableOp", "model/dense/BiasAdd/ReadVariableOp"]
body = [node(r, "ReadVariableOp", [res], attr("dtype", "type: DT_FLOAT")) for r, res in zip(READS, RES)]
body += [
    node("model/conv2d/Conv2D", "Conv2D", ["image", READS[0] + ":value:0"], F, attr("data_format", 's: "NHWC"'),
         attr("dilations", ints([1, 1, 1, 1])), attr("explicit_paddings", "list { }"), attr("padding", 's: "SAME"'),
         attr("strides", ints([1, 1, 1, 1])), attr("use_cudnn_on_gpu", "b: true")),
    node("model/conv2d/BiasAdd", "BiasAdd", ["model/conv2d/Conv2D:output:0", READS[1] + ":value:0"], F,
         attr("data_format", 's: "NHWC"')),
    node("model/conv2d/Relu", "Relu", ["model/conv2d/BiasAdd:output:0"], F),
    node("model/batch_normalization/FusedBatchNormV3", "FusedBatchNormV3",
         ["model/conv2d/Relu:activations:0"] + [r + ":value:0" for r in READS[2:6]], F, attr("U", "type: DT_FLOAT"),
         attr("data_format", 's: "NHWC"'), attr("epsilon", "f: 0.001"), attr("exponential_avg_factor", "f: 1"),
         attr("is_training", "b: false")),
    node("model/max_pooling2d/MaxPool", "MaxPool", ["model/batch_normalization/FusedBatchNormV3:y:0"], F,
         attr("data_format", 's: "NHWC"'), attr("ksize", ints([1, 2, 2, 1])), attr("padding", 's: "VALID"'),
         attr("strides", ints([1, 2, 2, 1]))),
    node("model/flatten/Const", "Const", [], attr("dtype", "type: DT_INT32"),
         attr("value", "tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: "
                       '"\\377\\377\\377\\377\\010\\000\\000\\000" }')),
    node("model/flatten/Reshape", "Reshape", ["model/max_pooling2d/MaxPool:output:0", "model/flatten/Const:output:0"],
         F, attr("Tshape", "type: DT_INT32")),
    node("model/dense/MatMul", "MatMul", ["model/flatten/Reshape:output:0", READS[6] + ":value:0"], F,
         attr("transpose_a", "b: false"), attr("transpose_b", "b: false")),
    node("model/dense/BiasAdd", "BiasAdd", ["model/dense/MatMul:product:0", READS[7] + ":value:0"], F,
         attr("data_format", 's: "NHWC"')),
    node("model/dense/Softmax", "Softmax", ["model/dense/BiasAdd:output:0"], F),
    node("NoOp", "NoOp", ["^" + r for r in sorted(READS)], attr("_output_shapes", "list { }")),
    node("Identity", "Identity", ["model/dense/Softmax:softmax:0", "^NoOp"], F),
]


def arg(name, t):
    return 'input_arg { name: "%s" type: %s }' % (name, t)


def function(name, args, nodes, ret, control):
    return ('function { signature { name: "%s" %s output_arg { name: "identity" type: DT_FLOAT } is_stateful: true '
            'control_output: "%s" } %s ret { key: "identity" value: "%s" } control_ret { key: "%s" value: "%s" } }' %
            (name, " ".join(args), control, " ".join(nodes), ret, control, control))


def call(name, inputs, f, key="node_def"):
    types = " ".join("type: %s" % t for t in ["DT_FLOAT"] + ["DT_RESOURCE"] * (len(inputs) - 1))
    return node(name, "StatefulPartitionedCall", inputs, attr("f", 'func { name: "%s" }' % f),
                attr("Tin", "list { %s }" % types), attr("Tout", "list { type: DT_FLOAT }"),
                attr("_collective_manager_ids", "list { }"), attr("_read_only_resource_inputs", ints(range(1, 9))),
                attr("config", 's: ""'), attr("config_proto", 's: ""'), attr("executor_type", 's: ""'), key=key)


WRAPPED, SIGNATURE = "__inference__wrapped_model_2241", "__inference_signature_wrapper_2580"
wrapped = function(WRAPPED, [arg("image", "DT_FLOAT")] + [arg(r, "DT_RESOURCE") for r in RES], body,
                   "Identity:output:0", "NoOp")
unknown = ["unknown"] + ["unknown_%d" % i for i in range(7)]
signature = function(SIGNATURE, [arg("image", "DT_FLOAT")] + [arg(u, "DT_RESOURCE") for u in unknown],
                     [call("StatefulPartitionedCall", ["image"] + unknown, WRAPPED),
                      node("Identity", "Identity", ["StatefulPartitionedCall:output:0",
                                                    "^StatefulPartitionedCall"], F)],
                     "Identity:output:0", "StatefulPartitionedCall")
top = [node(n, "VarHandleOp", [], attr("_output_shapes", "list { shape { } }"), attr("allowed_devices", "list { }"),
            attr("container", 's: ""'), attr("dtype", "type: DT_FLOAT"), attr("shape", shape(v.shape)),
            attr("shared_name", 's: "%s"' % n), key="node") for n, _, v in VARIABLES]
top.append(node("serving_default_image", "Placeholder", [], attr("dtype", "type: DT_FLOAT"),
                attr("shape", shape([-1, 4, 4, 1])), key="node"))
top.append(call("StatefulPartitionedCall", ["serving_default_image"] + [n for n, _, _ in VARIABLES], SIGNATURE,
                "node"))
top.append(node("saver_filename", "Placeholder", [], attr("dtype", "type: DT_STRING"), attr("shape", "shape { }"),
                key="node"))


def user(identifier):
    return 'user_object { identifier: "%s" version { producer: 1 min_consumer: 1 } }' % identifier


def child(i, name):
    return 'children { node_id: %d local_name: "%s" }' % (i, name)


layer = user("_tf_keras_layer")
objects = [
    " ".join([child(1, "layer-0"), child(2, "layer_with_weights-0"), child(2, "layer-1"),
              child(3, "layer_with_weights-1"), child(3, "layer-2"), child(4, "layer-3"), child(5, "layer-4"),
              child(6, "layer_with_weights-2"), child(6, "layer-5"), child(7, "signatures"),
              user("_tf_keras_network")]),
    user("_tf_keras_input_layer"),
    " ".join([child(8, "kernel"), child(9, "bias"), layer]),
    " ".join([child(10, "gamma"), child(11, "beta"), child(12, "moving_mean"), child(13, "moving_variance"), layer]),
    layer, layer,
    " ".join([child(14, "kernel"), child(15, "bias"), layer]),
    " ".join([child(16, "serving_default"), user("signature_map")]),
] + ['variable { dtype: DT_FLOAT %s trainable: %s name: "%s" }' %
     (shape(v.shape), "false" if "moving" in n else "true", n) for n, _, v in VARIABLES]
objects.append('function { concrete_functions: "%s" }' % SIGNATURE)
object_graph = ("object_graph_def { %s concrete_functions { key: \"%s\" value { %s } } }" %
                (" ".join("nodes { %s }" % o for o in objects), SIGNATURE,
                 " ".join("bound_inputs: %d" % i for i in range(8, 16))))
signature_def = ('signature_def { key: "serving_default" value { inputs { key: "image" value { name: '
                 '"serving_default_image:0" dtype: DT_FLOAT tensor_shape { dim { size: -1 } dim { size: 4 } '
                 'dim { size: 4 } dim { size: 1 } } } } outputs { key: "dense" value { name: '
                 '"StatefulPartitionedCall:0" dtype: DT_FLOAT tensor_shape { dim { size: -1 } dim { size: 3 } } } } '
                 'method_name: "tensorflow/serving/predict" } }')
with open("saved_model.pbtxt", "w") as f:
    f.write('saved_model_schema_version: 1\nmeta_graphs { meta_info_def { tags: "serve" tensorflow_version: '
            '"2.8.0" stripped_default_attrs: true } graph_def { %s library { %s %s } versions { producer: 987 '
            'min_consumer: 12 } } %s %s }\n' % (" ".join(top), wrapped, signature, signature_def, object_graph))
