#!/usr/bin/env python3
"""Writes TF1 training graphs of a dynamic_rnn in the node layout TensorFlow writes, and their
NumPy oracles (no TensorFlow needed: the layout is written out here by hand).

Model: inputs = x + input_bias; outputs, state = dynamic_rnn(BasicRNNCell(2), inputs) (tanh,
time-major transposes, zero initial state); loss = sum(outputs^2) + sum(state);
train = GradientDescentOptimizer(0.1).minimize(loss) over input_bias, kernel and bias.

The gradient loop is what tf.gradients (gate_gradients=GATE_OP, as Optimizer.minimize) builds
for it, following TF's control_flow_ops / control_flow_state (forward counter `gradients/f_count`,
backprop counter `gradients/b_count`, one stack `f_acc` per forward value the gradient loop
reads, pushed in the forward frame and popped in `gradients/rnn/while/while_context` with
`^gradients/Sub` and ordered by the ControlTrigger `b_sync`), control_flow_grad (`b_exit`,
`b_switch`, Merge grad Switch, `Enter_grad/Exit`, `Switch_grad_1/NextIteration`, loop invariants'
`b_acc` accumulators), tensor_array_grad (TensorArrayGradV3 with source "gradients",
`gradient_flow`, and from TF 1.13 on `flow_out` / `write_barrier`) and the gradient tuples
(`tuple/group_deps`, `tuple/control_dependency[_1]`).

Versions (--version):
  1.4   Stack ops V2, TensorArrays of unknown element shape, Add, while loop (time, flow, state)
  1.15  as TF 1.15 writes it: AddV2, the while loop's iteration counter and Minimum bound, known
        element shapes, flow_out/write_barrier (a stack of the write's flow read only as a
        control edge), and a `b_exit` Enter that feeds nothing
  1.1   the older Stack/StackPush/StackPop of ref handles (RefEnter)

Usage: /usr/bin/python3 make_tf1_training.py  (writes tf1_rnn_train_v<version>.pbtxt for every
version and oracles/tf1_rnn_train/*.npy)
"""
import os

import numpy as np

B, T, D, H = 2, 3, 2, 2
LR = 0.1
F = "rnn/while/while_context"
G = "gradients/rnn/while/while_context"


def shape_proto(dims):
    if dims is None:
        return "shape { unknown_rank: true }"
    return "shape { " + " ".join("dim { size: %d }" % d for d in dims) + " }"


def tensor(dtype, dims, values):
    field = {"DT_FLOAT": "float_val", "DT_INT32": "int_val"}[dtype]
    shape = "tensor_shape { " + " ".join("dim { size: %d }" % d for d in dims) + " }"
    vals = " ".join("%s: %s" % (field, repr(float(v)) if dtype == "DT_FLOAT" else str(int(v))) for v in values)
    return "tensor { dtype: %s %s %s }" % (dtype, shape, vals)


class Graph:
    def __init__(self):
        self.nodes = []
        self.names = set()

    def add(self, name, op, inputs=(), **attrs):
        assert name not in self.names, name
        self.names.add(name)
        self.nodes.append((name, op, list(inputs), attrs))
        return name

    def text(self):
        out = []
        for name, op, inputs, attrs in self.nodes:
            out.append("node {\n  name: \"%s\"\n  op: \"%s\"\n" % (name, op))
            for i in inputs:
                out.append("  input: \"%s\"\n" % i)
            for key in sorted(attrs):
                out.append("  attr {\n    key: \"%s\"\n    value {\n      %s\n    }\n  }\n" % (key, attrs[key]))
            out.append("}\n")
        return "".join(out)

    # ------------------------------------------------------------------ helpers
    def const(self, name, dtype, dims, values, control=()):
        return self.add(name, "Const", ["^" + c for c in control], dtype="type: " + dtype,
                        value=tensor(dtype, dims, values))

    def ints(self, name, values, scalar=False, control=()):
        return self.const(name, "DT_INT32", [] if scalar else [len(values)], values, control)


T_F = "type: DT_FLOAT"
T_I = "type: DT_INT32"


def enter(g, name, inp, frame, constant, t=T_F, ref=False):
    return g.add(name, "RefEnter" if ref else "Enter", [inp], T=t, frame_name='s: "%s"' % frame,
                 is_constant="b: %s" % ("true" if constant else "false"), parallel_iterations="i: 32")


def build(version):
    v115, old = version == "1.15", version == "1.1"
    add_op = "AddV2" if v115 else "Add"
    g = Graph()
    # ------------------------------------------------------------------ variables and inputs
    g.add("x", "Placeholder", dtype=T_F, shape=shape_proto([B, T, D]))
    rng = np.random.RandomState(3)
    init = {"input_bias": rng.uniform(-0.5, 0.5, [D]), "rnn/basic_rnn_cell/kernel": rng.uniform(-0.7, 0.7, [D + H, H]),
            "rnn/basic_rnn_cell/bias": rng.uniform(-0.2, 0.2, [H])}
    for var, value in init.items():
        g.add(var, "VariableV2", dtype=T_F, shape=shape_proto(list(value.shape)), container='s: ""',
              shared_name='s: ""')
        g.const(var + "/Initializer/Const", "DT_FLOAT", list(value.shape), value.astype(np.float32).ravel())
        g.add(var + "/Assign", "Assign", [var, var + "/Initializer/Const"], T=T_F, use_locking="b: true",
              validate_shape="b: true")
        g.add(var + "/read", "Identity", [var], T=T_F)
    g.add("init", "NoOp", ["^%s/Assign" % v for v in init])
    g.add("inputs", "Add", ["x", "input_bias/read"], T=T_F)

    # ------------------------------------------------------------------ dynamic_rnn, forward
    if v115:
        g.ints("rnn/Rank", [3], scalar=True)
        g.ints("rnn/range/start", [2], scalar=True)
        g.ints("rnn/range/delta", [1], scalar=True)
        g.add("rnn/range", "Range", ["rnn/range/start", "rnn/Rank", "rnn/range/delta"], Tidx=T_I)
        g.ints("rnn/concat/values_0", [1, 0])
        g.ints("rnn/concat/axis", [0], scalar=True)
        g.add("rnn/concat", "ConcatV2", ["rnn/concat/values_0", "rnn/range", "rnn/concat/axis"], N="i: 2", T=T_I,
              Tidx=T_I)
        perm = "rnn/concat"
    else:
        perm = g.ints("rnn/transpose/perm", [1, 0, 2])
    g.add("rnn/transpose", "Transpose", ["inputs", perm], T=T_F, Tperm=T_I)
    g.ints("rnn/BasicRNNCellZeroState/Const", [B])
    g.ints("rnn/BasicRNNCellZeroState/Const_1", [H])
    g.ints("rnn/BasicRNNCellZeroState/concat/axis", [0], scalar=True)
    g.add("rnn/BasicRNNCellZeroState/concat", "ConcatV2",
          ["rnn/BasicRNNCellZeroState/Const", "rnn/BasicRNNCellZeroState/Const_1",
           "rnn/BasicRNNCellZeroState/concat/axis"], N="i: 2", T=T_I, Tidx=T_I)
    g.const("rnn/BasicRNNCellZeroState/zeros/Const", "DT_FLOAT", [], [0])
    g.add("rnn/BasicRNNCellZeroState/zeros", "Fill",
          ["rnn/BasicRNNCellZeroState/concat", "rnn/BasicRNNCellZeroState/zeros/Const"], T=T_F)

    def strided_first(pre, of, index):
        g.ints(pre + "/stack", [index])
        g.ints(pre + "/stack_1", [index + 1])
        g.ints(pre + "/stack_2", [1])
        return g.add(pre, "StridedSlice", [of, pre + "/stack", pre + "/stack_1", pre + "/stack_2"], Index=T_I, T=T_I,
                     begin_mask="i: 0", ellipsis_mask="i: 0", end_mask="i: 0", new_axis_mask="i: 0",
                     shrink_axis_mask="i: 1")

    g.add("rnn/Shape", "Shape", ["rnn/transpose"], T=T_F, out_type=T_I)
    time_steps = strided_first("rnn/strided_slice", "rnn/Shape", 0)
    g.ints("rnn/time", [0], scalar=True)
    ta_attrs = lambda name, dims: dict(  # noqa: E731
        dtype=T_F, dynamic_size="b: false", clear_after_read="b: true",
        element_shape=shape_proto(dims if v115 else None), tensor_array_name='s: "rnn/dynamic_rnn/%s"' % name,
        **({"identical_element_shapes": "b: true"} if v115 else {}))
    g.add("rnn/TensorArray", "TensorArrayV3", [time_steps], **ta_attrs("output_0", [B, H]))
    g.add("rnn/TensorArray_1", "TensorArrayV3", [time_steps], **ta_attrs("input_0", [B, D]))
    g.add("rnn/TensorArrayUnstack/Shape", "Shape", ["rnn/transpose"], T=T_F, out_type=T_I)
    strided_first("rnn/TensorArrayUnstack/strided_slice", "rnn/TensorArrayUnstack/Shape", 0)
    g.ints("rnn/TensorArrayUnstack/range/start", [0], scalar=True)
    g.ints("rnn/TensorArrayUnstack/range/delta", [1], scalar=True)
    g.add("rnn/TensorArrayUnstack/range", "Range",
          ["rnn/TensorArrayUnstack/range/start", "rnn/TensorArrayUnstack/strided_slice",
           "rnn/TensorArrayUnstack/range/delta"], Tidx=T_I)
    scatter = g.add("rnn/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3", "TensorArrayScatterV3",
                    ["rnn/TensorArray_1", "rnn/TensorArrayUnstack/range", "rnn/transpose", "rnn/TensorArray_1:1"],
                    T=T_F)
    if v115:
        g.ints("rnn/Maximum/x", [1], scalar=True)
        g.add("rnn/Maximum", "Maximum", ["rnn/Maximum/x", time_steps], T=T_I)
        g.add("rnn/Minimum", "Minimum", [time_steps, "rnn/Maximum"], T=T_I)
        g.ints("rnn/while/iteration_counter", [0], scalar=True)
        var_inits = [("rnn/while/iteration_counter", T_I), ("rnn/time", T_I), ("rnn/TensorArray:1", T_F),
                     ("rnn/BasicRNNCellZeroState/zeros", T_F)]
    else:
        var_inits = [("rnn/time", T_I), ("rnn/TensorArray:1", T_F), ("rnn/BasicRNNCellZeroState/zeros", T_F)]
    sfx = lambda i: "" if i == 0 else "_%d" % i  # noqa: E731
    w = "rnn/while/"
    for i, (init_value, t) in enumerate(var_inits):
        enter(g, w + "Enter" + sfx(i), init_value, F, False, t)
    for i, (_, t) in enumerate(var_inits):
        g.add(w + "Merge" + sfx(i), "Merge", [w + "Enter" + sfx(i), w + "NextIteration" + sfx(i)], N="i: 2", T=t)
    if v115:
        g.add(w + "Less", "Less", [w + "Merge", w + "Less/Enter"], T=T_I)
        enter(g, w + "Less/Enter", time_steps, F, True, T_I)
        g.add(w + "Less_1", "Less", [w + "Merge_1", w + "Less_1/Enter"], T=T_I)
        enter(g, w + "Less_1/Enter", "rnn/Minimum", F, True, T_I)
        g.add(w + "LogicalAnd", "LogicalAnd", [w + "Less", w + "Less_1"])
        g.add(w + "LoopCond", "LoopCond", [w + "LogicalAnd"])
    else:
        g.add(w + "Less", "Less", [w + "Merge", w + "Less/Enter"], T=T_I)
        enter(g, w + "Less/Enter", time_steps, F, True, T_I)
        g.add(w + "LoopCond", "LoopCond", [w + "Less"])
    for i, (_, t) in enumerate(var_inits):
        g.add(w + "Switch" + sfx(i), "Switch", [w + "Merge" + sfx(i), w + "LoopCond"], T=t)
    for i, (_, t) in enumerate(var_inits):
        g.add(w + "Identity" + sfx(i), "Identity", [w + "Switch" + sfx(i) + ":1"], T=t)
    first = 1 if v115 else 0  # time, flow, state are loop variables first .. first + 2
    time, flow, state = (w + "Identity" + sfx(first + k) for k in range(3))
    pivot = w + "Identity"
    if v115:
        g.ints(w + "add/y", [1], scalar=True, control=[pivot])
        g.add(w + "add", add_op, [w + "Identity", w + "add/y"], T=T_I)
    g.add(w + "TensorArrayReadV3", "TensorArrayReadV3", [w + "TensorArrayReadV3/Enter", time,
                                                         w + "TensorArrayReadV3/Enter_1"], dtype=T_F)
    enter(g, w + "TensorArrayReadV3/Enter", "rnn/TensorArray_1", F, True, "type: DT_RESOURCE")
    enter(g, w + "TensorArrayReadV3/Enter_1", scatter, F, True)
    c = w + "basic_rnn_cell/"
    g.ints(c + "concat/axis", [1], scalar=True, control=[pivot])
    g.add(c + "concat", "ConcatV2", [w + "TensorArrayReadV3", state, c + "concat/axis"], N="i: 2", T=T_F, Tidx=T_I)
    g.add(c + "MatMul", "MatMul", [c + "concat", c + "MatMul/Enter"], T=T_F, transpose_a="b: false",
          transpose_b="b: false")
    enter(g, c + "MatMul/Enter", "rnn/basic_rnn_cell/kernel/read", F, True)
    g.add(c + "BiasAdd", "BiasAdd", [c + "MatMul", c + "BiasAdd/Enter"], T=T_F, data_format='s: "NHWC"')
    enter(g, c + "BiasAdd/Enter", "rnn/basic_rnn_cell/bias/read", F, True)
    g.add(c + "Tanh", "Tanh", [c + "BiasAdd"], T=T_F)
    write = g.add(w + "TensorArrayWrite/TensorArrayWriteV3", "TensorArrayWriteV3",
                  [w + "TensorArrayWrite/TensorArrayWriteV3/Enter", time, c + "Tanh", flow], T=T_F)
    enter(g, w + "TensorArrayWrite/TensorArrayWriteV3/Enter", "rnn/TensorArray", F, True, "type: DT_RESOURCE")
    step = "add_1" if v115 else "add"
    g.ints(w + step + "/y", [1], scalar=True, control=[pivot])
    g.add(w + step, add_op, [time, w + step + "/y"], T=T_I)
    nexts = ([w + "add"] if v115 else []) + [w + step, write, c + "Tanh"]
    for i, (_, t) in enumerate(var_inits):
        inputs = [nexts[i]]
        g.add(w + "NextIteration" + sfx(i), "NextIteration", inputs, T=t)
    for i, (_, t) in enumerate(var_inits):
        g.add(w + "Exit" + sfx(i), "Exit", [w + "Switch" + sfx(i)], T=t)
    flow_exit, state_exit = w + "Exit" + sfx(first + 1), w + "Exit" + sfx(first + 2)
    s = "rnn/TensorArrayStack/"
    g.add(s + "TensorArraySizeV3", "TensorArraySizeV3", ["rnn/TensorArray", flow_exit])
    g.ints(s + "range/start", [0], scalar=True)
    g.ints(s + "range/delta", [1], scalar=True)
    g.add(s + "range", "Range", [s + "range/start", s + "TensorArraySizeV3", s + "range/delta"], Tidx=T_I)
    g.add(s + "TensorArrayGatherV3", "TensorArrayGatherV3", ["rnn/TensorArray", s + "range", flow_exit], dtype=T_F,
          element_shape=shape_proto([B, H] if v115 else None))
    if v115:
        g.ints("rnn/Rank_1", [3], scalar=True)
        g.ints("rnn/range_1/start", [2], scalar=True)
        g.ints("rnn/range_1/delta", [1], scalar=True)
        g.add("rnn/range_1", "Range", ["rnn/range_1/start", "rnn/Rank_1", "rnn/range_1/delta"], Tidx=T_I)
        g.ints("rnn/concat_2/values_0", [1, 0])
        g.ints("rnn/concat_2/axis", [0], scalar=True)
        g.add("rnn/concat_2", "ConcatV2", ["rnn/concat_2/values_0", "rnn/range_1", "rnn/concat_2/axis"], N="i: 2",
              T=T_I, Tidx=T_I)
        perm_1 = "rnn/concat_2"
    else:
        perm_1 = g.ints("rnn/transpose_1/perm", [1, 0, 2])
    g.add("rnn/transpose_1", "Transpose", [s + "TensorArrayGatherV3", perm_1], T=T_F, Tperm=T_I)
    g.add("Square", "Square", ["rnn/transpose_1"], T=T_F)
    g.ints("Const", [0, 1, 2])
    g.add("Sum", "Sum", ["Square", "Const"], T=T_F, Tidx=T_I, keep_dims="b: false")
    g.ints("Const_1", [0, 1])
    g.add("Sum_1", "Sum", [state_exit, "Const_1"], T=T_F, Tidx=T_I, keep_dims="b: false")
    g.add("loss", "Add", ["Sum", "Sum_1"], T=T_F)
    build_gradients(g, version, time, flow, state, flow_exit, scatter, write, first)
    return g, init


def tuple_deps(g, scope, grads, ops):
    """control_flow_ops.tuple: group_deps over `ops`, control_dependency[_i] = Identity(grad_i, ^group_deps)."""
    g.add(scope + "/tuple/group_deps", "NoOp", ["^" + o for o in ops])
    outs = []
    for i, x in enumerate(grads):
        outs.append(g.add(scope + "/tuple/control_dependency" + ("" if i == 0 else "_%d" % i), "Identity",
                          [x, "^" + scope + "/tuple/group_deps"], T=T_F))
    return outs


def build_gradients(g, version, time, flow, state, flow_exit, scatter, write, first):
    v115, old = version == "1.15", version == "1.1"
    add_op = "AddV2" if v115 else "Add"
    sfx = lambda i: "" if i == 0 else "_%d" % i  # noqa: E731
    w, gw, c, gc = "rnn/while/", "gradients/rnn/while/", "rnn/while/basic_rnn_cell/", \
        "gradients/rnn/while/basic_rnn_cell/"
    # ------------------------------------------------------------------ loss gradients
    g.add("gradients/Shape", "Const", dtype=T_I, value="tensor { dtype: DT_INT32 tensor_shape { dim { size: 0 } } }")
    g.const("gradients/grad_ys_0" if v115 else "gradients/Const", "DT_FLOAT", [], [1])
    g.add("gradients/Fill", "Fill", ["gradients/Shape", "gradients/grad_ys_0" if v115 else "gradients/Const"], T=T_F)
    d_sum, d_sum1 = tuple_deps(g, "gradients/loss_grad", ["gradients/Fill", "gradients/Fill"], ["gradients/Fill"])
    for name, dims, d in (("Sum", [B, T, H], d_sum), ("Sum_1", [B, H], d_sum1)):
        pre = "gradients/%s_grad/" % name
        g.ints(pre + "Reshape/shape", [1] * len(dims))
        g.add(pre + "Reshape", "Reshape", [d, pre + "Reshape/shape"], T=T_F, Tshape=T_I)
        g.ints(pre + "Const", dims)
        g.add(pre + "Tile", "Tile", [pre + "Reshape", pre + "Const"], T=T_F, Tmultiples=T_I)
    g.const("gradients/Square_grad/Const", "DT_FLOAT", [], [2], control=["gradients/Sum_grad/Tile"])
    g.add("gradients/Square_grad/Mul", "Mul", ["rnn/transpose_1", "gradients/Square_grad/Const"], T=T_F)
    g.add("gradients/Square_grad/Mul_1", "Mul", ["gradients/Sum_grad/Tile", "gradients/Square_grad/Mul"], T=T_F)
    perm_1 = "rnn/concat_2" if v115 else "rnn/transpose_1/perm"
    g.add("gradients/rnn/transpose_1_grad/InvertPermutation", "InvertPermutation", [perm_1], T=T_I)
    g.add("gradients/rnn/transpose_1_grad/transpose", "Transpose",
          ["gradients/Square_grad/Mul_1", "gradients/rnn/transpose_1_grad/InvertPermutation"], T=T_F, Tperm=T_I)
    ga = "gradients/rnn/TensorArrayStack/TensorArrayGatherV3_grad/"
    g.add(ga + "TensorArrayGrad/TensorArrayGradV3", "TensorArrayGradV3", ["rnn/TensorArray", flow_exit],
          source='s: "gradients"')
    g.add(ga + "TensorArrayGrad/gradient_flow", "Identity", [flow_exit, "^" + ga + "TensorArrayGrad/TensorArrayGradV3"],
          T=T_F)
    gather_flow = g.add(ga + "TensorArrayScatter/TensorArrayScatterV3", "TensorArrayScatterV3",
                        [ga + "TensorArrayGrad/TensorArrayGradV3", "rnn/TensorArrayStack/range",
                         "gradients/rnn/transpose_1_grad/transpose", ga + "TensorArrayGrad/gradient_flow"], T=T_F)
    # ------------------------------------------------------------------ counters (control_flow_ops)
    g.ints("gradients/f_count", [0], scalar=True)
    enter(g, "gradients/f_count_1", "gradients/f_count", F, False, T_I)
    g.add("gradients/Merge", "Merge", ["gradients/f_count_1", "gradients/NextIteration"], N="i: 2", T=T_I)
    g.add("gradients/Switch", "Switch", ["gradients/Merge", w + "LoopCond"], T=T_I)
    g.ints("gradients/Add/y", [1], scalar=True, control=[w + "Identity"])
    g.add("gradients/Add", add_op, ["gradients/Switch:1", "gradients/Add/y"], T=T_I)
    pushes = []  # the forward index gets a control edge from every push
    g.add("gradients/f_count_2", "Exit", ["gradients/Switch"], T=T_I)
    g.ints("gradients/b_count", [1], scalar=True)
    enter(g, "gradients/b_count_1", "gradients/f_count_2", G, False, T_I)
    g.add("gradients/Merge_1", "Merge", ["gradients/b_count_1", "gradients/NextIteration_1"], N="i: 2", T=T_I)
    g.add("gradients/GreaterEqual", "GreaterEqual", ["gradients/Merge_1", "gradients/GreaterEqual/Enter"], T=T_I)
    enter(g, "gradients/GreaterEqual/Enter", "gradients/b_count", G, True, T_I)
    g.add("gradients/b_count_2", "LoopCond", ["gradients/GreaterEqual"])
    g.add("gradients/Switch_1", "Switch", ["gradients/Merge_1", "gradients/b_count_2"], T=T_I)
    g.add("gradients/Sub", "Sub", ["gradients/Switch_1:1", "gradients/GreaterEqual/Enter"], T=T_I)
    g.add("gradients/b_count_3", "Exit", ["gradients/Switch_1"], T=T_I)
    pops, sync = [], []

    def history(scope, value, t=T_F):
        """GetRealValue of a forward value: a stack pushed in the forward frame, popped in the gradient frame."""
        if old:
            g.add(scope + "/f_acc", "Stack", elem_type=t, stack_name='s: ""')
            handle = "type: DT_STRING"
        else:
            g.ints(scope + "/Const", [-1], scalar=True)
            g.add(scope + "/f_acc", "StackV2", [scope + "/Const"], elem_type=t, stack_name='s: ""')
            handle = "type: DT_RESOURCE"
        enter(g, scope + "/Enter", scope + "/f_acc", F, True, handle, ref=old)
        pushes.append(g.add(scope + ("/StackPush" if old else "/StackPushV2"), "StackPush" if old else "StackPushV2",
                            [scope + "/Enter", value, "^gradients/Add"], T=t, swap_memory="b: false"))
        pop = scope + ("/StackPop" if old else "/StackPopV2")
        enter(g, pop + "/Enter", scope + "/f_acc", G, True, handle, ref=old)
        g.add(pop, "StackPop" if old else "StackPopV2", [pop + "/Enter", "^gradients/Sub"], elem_type=t)
        if not sync:
            sync.append(scope + "/b_sync")
        pops.append(pop)
        return pop

    # ------------------------------------------------------------------ the gradient loop variables
    b_exit = {}
    for k, source in ((first + 1, gather_flow), (first + 2, "gradients/Sum_1_grad/Tile")):
        b_exit[k] = enter(g, gw + "Exit%s_grad/b_exit" % sfx(k), source, G, False)
    if v115:  # an Enter TF's gradients leave feeding nothing
        g.add("gradients/zeros_like", "ZerosLike", [w + "Exit_1"], T=T_I)
        enter(g, gw + "Exit_1_grad/b_exit", "gradients/zeros_like", G, False, T_I)
    deps = {}
    for k in b_exit:
        g.add(gw + "Switch%s_grad/b_switch" % sfx(k), "Merge",
              [b_exit[k], gw + "Switch%s_grad_1/NextIteration" % sfx(k)], N="i: 2", T=T_F)
        sw = g.add(gw + "Merge%s_grad/Switch" % sfx(k), "Switch",
                   [gw + "Switch%s_grad/b_switch" % sfx(k), "gradients/b_count_2"], T=T_F)
        deps[k] = tuple_deps(g, gw + "Merge%s_grad" % sfx(k), [sw, sw + ":1"], [sw])
        g.add(gw + "Enter%s_grad/Exit" % sfx(k), "Exit", [deps[k][0]], T=T_F)
    d_flow, d_state = deps[first + 1][1], deps[first + 2][1]
    # ------------------------------------------------------------------ TensorArrayWriteV3 gradient
    wg = gw + "TensorArrayWrite/TensorArrayWriteV3_grad"
    if v115:
        g.add(wg + "/flow_out", "Identity", [history(wg + "/flow_out", write)], T=T_F)
        d_flow = g.add(wg + "/write_barrier", "Identity", [d_flow, "^" + wg + "/flow_out"], T=T_F)
    g.add(wg + "/TensorArrayGrad/TensorArrayGradV3", "TensorArrayGradV3",
          [wg + "/TensorArrayGrad/TensorArrayGradV3/Enter", d_flow], source='s: "gradients"')
    enter(g, wg + "/TensorArrayGrad/TensorArrayGradV3/Enter", "rnn/TensorArray", G, True, "type: DT_RESOURCE")
    g.add(wg + "/TensorArrayGrad/gradient_flow", "Identity", [d_flow, "^" + wg + "/TensorArrayGrad/TensorArrayGradV3"],
          T=T_F)
    time_pop = history(wg + "/TensorArrayReadV3", time, T_I)
    g.add(wg + "/TensorArrayReadV3", "TensorArrayReadV3", [wg + "/TensorArrayGrad/TensorArrayGradV3", time_pop,
                                                           wg + "/TensorArrayGrad/gradient_flow"], dtype=T_F)
    d_out, d_flow_in = tuple_deps(g, wg, [wg + "/TensorArrayReadV3", d_flow],
                                  [wg + "/TensorArrayReadV3", d_flow.split(":")[0]])
    # ------------------------------------------------------------------ the cell's gradients
    g.add("gradients/AddN", "AddN", [d_state, d_out], N="i: 2", T=T_F)
    g.add(gc + "Tanh_grad/TanhGrad", "TanhGrad", [history(gc + "Tanh_grad/TanhGrad", c + "Tanh"), "gradients/AddN"],
          T=T_F)
    g.add(gc + "BiasAdd_grad/BiasAddGrad", "BiasAddGrad", [gc + "Tanh_grad/TanhGrad"], T=T_F, data_format='s: "NHWC"')
    d_bias_add, d_bias = tuple_deps(g, gc + "BiasAdd_grad", [gc + "Tanh_grad/TanhGrad", gc + "BiasAdd_grad/BiasAddGrad"],
                                    [gc + "Tanh_grad/TanhGrad", gc + "BiasAdd_grad/BiasAddGrad"])
    g.add(gc + "MatMul_grad/MatMul", "MatMul", [d_bias_add, gc + "MatMul_grad/MatMul/Enter"], T=T_F,
          transpose_a="b: false", transpose_b="b: true")
    enter(g, gc + "MatMul_grad/MatMul/Enter", "rnn/basic_rnn_cell/kernel/read", G, True)
    g.add(gc + "MatMul_grad/MatMul_1", "MatMul", [history(gc + "MatMul_grad/MatMul_1", c + "concat"), d_bias_add],
          T=T_F, transpose_a="b: true", transpose_b="b: false")
    d_concat, d_kernel = tuple_deps(g, gc + "MatMul_grad", [gc + "MatMul_grad/MatMul", gc + "MatMul_grad/MatMul_1"],
                                    [gc + "MatMul_grad/MatMul", gc + "MatMul_grad/MatMul_1"])
    cg = gc + "concat_grad/"
    g.ints(cg + "Const", [1], scalar=True, control=["gradients/Sub"])  # the axis, a constant cloned
    g.ints(cg + "Rank", [2], scalar=True, control=["gradients/Sub"])
    g.add(cg + "mod", "FloorMod", [cg + "Const", cg + "Rank"], T=T_I)
    g.ints(cg + "Shape", [B, D], control=["gradients/Sub"])
    g.ints(cg + "Shape_1", [B, H], control=["gradients/Sub"])
    g.add(cg + "ConcatOffset", "ConcatOffset", [cg + "mod", cg + "Shape", cg + "Shape_1"], N="i: 2")
    g.add(cg + "Slice", "Slice", [d_concat, cg + "ConcatOffset", cg + "Shape"], T=T_F, Index=T_I)
    g.add(cg + "Slice_1", "Slice", [d_concat, cg + "ConcatOffset:1", cg + "Shape_1"], T=T_F, Index=T_I)
    d_read, d_state_in = tuple_deps(g, gc + "concat_grad", [cg + "Slice", cg + "Slice_1"],
                                    [cg + "Slice", cg + "Slice_1"])
    # ------------------------------------------------------------------ TensorArrayReadV3 gradient
    rg = gw + "TensorArrayReadV3_grad/"
    g.add(rg + "TensorArrayGrad/TensorArrayGradV3", "TensorArrayGradV3",
          [rg + "TensorArrayGrad/TensorArrayGradV3/Enter", rg + "TensorArrayGrad/TensorArrayGradV3/Enter_1",
           "^gradients/Sub"], source='s: "gradients"')
    enter(g, rg + "TensorArrayGrad/TensorArrayGradV3/Enter", "rnn/TensorArray_1", G, True, "type: DT_RESOURCE")
    enter(g, rg + "TensorArrayGrad/TensorArrayGradV3/Enter_1", scatter, G, True)
    g.add(rg + "TensorArrayGrad/gradient_flow", "Identity",
          [rg + "TensorArrayGrad/TensorArrayGradV3/Enter_1", "^" + rg + "TensorArrayGrad/TensorArrayGradV3"], T=T_F)
    read_flow = g.add(rg + "TensorArrayWrite/TensorArrayWriteV3", "TensorArrayWriteV3",
                      [rg + "TensorArrayGrad/TensorArrayGradV3", time_pop, d_read, rg + "TensorArrayGrad/gradient_flow"],
                      T=T_F)
    # ------------------------------------------------------------------ back edges, accumulators
    g.add(gw + "Switch%s_grad_1/NextIteration" % sfx(first + 1), "NextIteration", [d_flow_in], T=T_F)
    g.add(gw + "Switch%s_grad_1/NextIteration" % sfx(first + 2), "NextIteration", [d_state_in], T=T_F)
    acc = {}
    for enter_name, grad, dims in ((w + "TensorArrayReadV3/Enter_1", read_flow, []),
                                   (c + "MatMul/Enter", d_kernel, [D + H, H]), (c + "BiasAdd/Enter", d_bias, [H])):
        pre = "gradients/" + enter_name + "_grad/"
        g.const(pre + "b_acc", "DT_FLOAT", dims, [0])
        enter(g, pre + "b_acc_1", pre + "b_acc", G, False)
        g.add(pre + "b_acc_2", "Merge", [pre + "b_acc_1", pre + "NextIteration"], N="i: 2", T=T_F)
        g.add(pre + "Switch", "Switch", [pre + "b_acc_2", "gradients/b_count_2"], T=T_F)
        g.add(pre + "Add", add_op, [pre + "Switch:1", grad], T=T_F)
        g.add(pre + "NextIteration", "NextIteration", [pre + "Add"], T=T_F)
        acc[enter_name] = g.add(pre + "b_acc_3", "Exit", [pre + "Switch"], T=T_F)
    g.add("gradients/NextIteration", "NextIteration", ["gradients/Add"] + ["^" + p for p in pushes], T=T_I)
    g.add(sync[0], "ControlTrigger", ["^" + p for p in pops])
    g.add("gradients/NextIteration_1", "NextIteration", ["gradients/Sub", "^" + sync[0]], T=T_I)
    # ------------------------------------------------------------------ after the gradient loop
    sg = "gradients/rnn/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3_grad/"
    d_scatter = acc[w + "TensorArrayReadV3/Enter_1"]
    if v115:
        g.add(sg + "flow_out", "Identity", [scatter], T=T_F)
        d_scatter = g.add(sg + "write_barrier", "Identity", [d_scatter, "^" + sg + "flow_out"], T=T_F)
    g.add(sg + "TensorArrayGrad/TensorArrayGradV3", "TensorArrayGradV3", ["rnn/TensorArray_1", d_scatter],
          source='s: "gradients"')
    g.add(sg + "TensorArrayGrad/gradient_flow", "Identity", [d_scatter, "^" + sg + "TensorArrayGrad/TensorArrayGradV3"],
          T=T_F)
    g.add(sg + "TensorArrayGatherV3", "TensorArrayGatherV3",
          [sg + "TensorArrayGrad/TensorArrayGradV3", "rnn/TensorArrayUnstack/range", sg + "TensorArrayGrad/gradient_flow"],
          dtype=T_F, element_shape=shape_proto([B, D] if v115 else None))
    perm = "rnn/concat" if v115 else "rnn/transpose/perm"
    g.add("gradients/rnn/transpose_grad/InvertPermutation", "InvertPermutation", [perm], T=T_I)
    g.add("gradients/rnn/transpose_grad/transpose", "Transpose",
          [sg + "TensorArrayGatherV3", "gradients/rnn/transpose_grad/InvertPermutation"], T=T_F, Tperm=T_I)
    ig = "gradients/inputs_grad/"
    g.ints(ig + "Shape", [B, T, D])
    g.ints(ig + "Shape_1", [D])
    g.add(ig + "BroadcastGradientArgs", "BroadcastGradientArgs", [ig + "Shape", ig + "Shape_1"], T=T_I)
    g.add(ig + "Sum", "Sum", ["gradients/rnn/transpose_grad/transpose", ig + "BroadcastGradientArgs"], T=T_F,
          Tidx=T_I, keep_dims="b: false")
    g.add(ig + "Reshape", "Reshape", [ig + "Sum", ig + "Shape"], T=T_F, Tshape=T_I)
    g.add(ig + "Sum_1", "Sum", ["gradients/rnn/transpose_grad/transpose", ig + "BroadcastGradientArgs:1"], T=T_F,
          Tidx=T_I, keep_dims="b: false")
    g.add(ig + "Reshape_1", "Reshape", [ig + "Sum_1", ig + "Shape_1"], T=T_F, Tshape=T_I)
    _, d_input_bias = tuple_deps(g, "gradients/inputs_grad", [ig + "Reshape", ig + "Reshape_1"],
                                 [ig + "Reshape", ig + "Reshape_1"])
    # ------------------------------------------------------------------ GradientDescent
    g.const("GradientDescent/learning_rate", "DT_FLOAT", [], [LR])
    updates = []
    for var, grad in (("input_bias", d_input_bias), ("rnn/basic_rnn_cell/kernel", acc[c + "MatMul/Enter"]),
                      ("rnn/basic_rnn_cell/bias", acc[c + "BiasAdd/Enter"])):
        updates.append(g.add("GradientDescent/update_%s/ApplyGradientDescent" % var, "ApplyGradientDescent",
                             [var, "GradientDescent/learning_rate", grad], T=T_F, use_locking="b: false"))
    g.add("GradientDescent", "NoOp", ["^" + u for u in updates])


# ---------------------------------------------------------------------- the NumPy oracle


def loss_of(x, input_bias, kernel, bias):
    inputs = (x + input_bias).transpose(1, 0, 2)  # [T, B, D]
    h = np.zeros([B, H])
    outputs = []
    for t in range(T):
        h = np.tanh(np.concatenate([inputs[t], h], 1) @ kernel + bias)
        outputs.append(h)
    return float(np.sum(np.square(np.stack(outputs))) + np.sum(h))


def oracle(init, x):
    params = {k: v.astype(np.float32).astype(np.float64) for k, v in init.items()}
    order = ["input_bias", "rnn/basic_rnn_cell/kernel", "rnn/basic_rnn_cell/bias"]
    f = lambda p: loss_of(x, *(p[k] for k in order))  # noqa: E731
    out = {"loss": np.float64(f(params))}
    eps = 1e-6
    for k in order:
        grad = np.zeros_like(params[k])
        for i in np.ndindex(*params[k].shape):
            up = {kk: vv.copy() for kk, vv in params.items()}
            down = {kk: vv.copy() for kk, vv in params.items()}
            up[k][i] += eps
            down[k][i] -= eps
            grad[i] = (f(up) - f(down)) / (2 * eps)
        out[k] = params[k] - LR * grad
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    init = None
    for version in ("1.4", "1.15", "1.1"):
        g, init = build(version)
        with open(os.path.join(here, "tf1_rnn_train_v%s.pbtxt" % version.replace(".", "_")), "w") as f:
            f.write("# Written by make_tf1_training.py: a TF %s dynamic_rnn training graph in TF's node layout.\n"
                    % version)
            f.write(g.text())
    x = np.random.RandomState(5).uniform(-1, 1, [B, T, D]).astype(np.float32)
    out_dir = os.path.join(here, "oracles", "tf1_rnn_train")
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "x.npy"), x)
    for name, value in oracle(init, x.astype(np.float64)).items():
        np.save(os.path.join(out_dir, name.replace("/", "__") + ".npy"), np.asarray(value, np.float64))


if __name__ == "__main__":
    main()
