/*!
 * \file control_flow_tf1_test.cc
 * \brief TF1 dataflow control flow (Enter/Merge/Switch/LoopCond/NextIteration/Exit and
 * Switch/Merge conds) imported as our while_loop / cond: real TensorFlow graphs against their
 * NumPy oracles (graphs/control_flow), handwritten nesting cases, and malformed frames.
 */
#include <gtest/gtest.h>

#include <dirent.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "ir/op.h"
#include "ir_tf/import.h"
#include "ir_tf/npy.h"
#include "test_util.h"
#include "tf1_graph_builders.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ExpectClose;
using test::RunText;
using test::ToDoubles;

std::string ControlFlowDir() { return std::string(IR_TF_TEST_DATA_DIR) + "/graphs/control_flow/"; }

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/*! \brief One oracle case of oracles/manifest.json: the .npy of tensor `name` is `/` -> `__`, `:` -> `.`. */
struct OracleCase {
  std::string graph, name;
  std::vector<std::string> inputs, outputs;
};

std::string OraclePath(const OracleCase& c, std::string tensor) {
  for (char& ch : tensor) ch = ch == ':' ? '.' : ch;
  for (size_t at = tensor.find('/'); at != std::string::npos; at = tensor.find('/', at + 2))
    tensor.replace(at, 1, "__");
  return ControlFlowDir() + "oracles/" + c.graph + "/" + c.name + "/" + tensor + ".npy";
}

void RunOracle(const OracleCase& c, bool fusion) {
  SCOPED_TRACE(c.graph + " " + c.name + (fusion ? " fused" : ""));
  std::map<std::string, NDArray> feeds;
  for (const std::string& in : c.inputs) feeds[in] = ReadNpy(OraclePath(c, in));
  std::vector<NDArray> got = RunText(ReadText(ControlFlowDir() + c.graph + ".pbtxt"), feeds, c.outputs, fusion);
  ASSERT_EQ(got.size(), c.outputs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    NDArray expected = ReadNpy(OraclePath(c, c.outputs[i]));
    EXPECT_EQ(got[i].shape(), expected.shape()) << c.outputs[i];
    ExpectClose(got[i], ToDoubles(expected), c.outputs[i]);
  }
}

TEST(ControlFlowTF1Test, WhileCounterMatchesOracle) {
  for (bool fusion : {false, true}) RunOracle({"tf_while_counter", "default", {}, {"while/Exit"}}, fusion);
}

TEST(ControlFlowTF1Test, CondMergeMatchesOracle) {
  for (bool fusion : {false, true}) RunOracle({"tf_cond_merge", "default", {}, {"concat"}}, fusion);
}

TEST(ControlFlowTF1Test, Dl4jSimpleIfMatchesOracleInBothBranches) {
  for (const char* name : {"case0", "case1"}) {
    for (bool fusion : {false, true}) RunOracle({"dl4j_simpleif", name, {"input_0", "input_1"}, {"output"}}, fusion);
  }
}

TEST(ControlFlowTF1Test, Dl4jNestedWhileMatchesOracle) {
  for (const char* name : {"case0", "case1"}) {
    for (bool fusion : {false, true}) {
      RunOracle({"dl4j_nested_while", name, {"input_0", "input_1"}, {"output"}}, fusion);
    }
  }
}

TEST(ControlFlowTF1Test, WhileConcatGrowsItsLoopVariableAndMatchesOracle) {
  // The float loop var doubles its rows each trip: inferred [?, 2], bound dynamically (fresh
  // storage, shapes found as nodes run), [2048, 2] at the end.
  ImportOptions options;
  options.outputs = {"while/Exit", "while/Exit_1"};
  Graph g = ImportGraphDef(test::TextModel(ReadText(ControlFlowDir() + "tf_while_concat.pbtxt")).graph_def, options);
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.outputs[0].node->op()->name, "while_loop");
  for (bool fusion : {false, true})
    RunOracle({"tf_while_concat", "default", {}, {"while/Exit", "while/Exit_1"}}, fusion);
}

TEST(ControlFlowTF1Test, Dl4jStackedBidirectionalDynamicRnnMatchesTensorFlow) {
  // Two stacked bidirectional dynamic_rnn layers (basic_rnn_cell, Relu) over a frozen input:
  // four while frames over TensorArrays (Scatter, Read, Write, Size, Gather) and ReverseV2.
  // TensorFlow's own values of intermediate tensors are `<node>.0.prediction_inbw.csv`, `/` as `____`.
  const std::string dir = ControlFlowDir() + "dl4j_rnn_bstack_d_n2/";
  const std::string suffix = ".0.prediction_inbw.csv";
  std::vector<std::string> fetches, files;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::string node = name.substr(0, name.size() - suffix.size());
    for (size_t at = node.find("____"); at != std::string::npos; at = node.find("____", at + 1))
      node.replace(at, 4, "/");
    fetches.push_back(node);
    files.push_back(dir + name);
  }
  closedir(d);
  ASSERT_GE(fetches.size(), 5u);
  for (bool fusion : {false, true}) {
    std::vector<NDArray> got = RunText(ReadText(dir + "frozen_graph.pbtxt"), {}, fetches, fusion);
    for (size_t i = 0; i < fetches.size(); ++i) ExpectClose(got[i], test::ReadCsv(files[i]), fetches[i]);
  }
}

TEST(ControlFlowTF1Test, EveryRealGraphImportsWithoutNamedOutputs) {
  // No outputs named: every node nothing reads is an output, so nothing the rebuild absorbs
  // (Switches, pivots, frame nodes) may be left behind unread.
  for (const char* graph :
       {"tf_while_counter.pbtxt", "tf_while_concat.pbtxt", "tf_cond_merge.pbtxt", "dl4j_simpleif.pbtxt",
        "dl4j_nested_while.pbtxt", "dl4j_rnn_bstack_d_n2/frozen_graph.pbtxt"}) {
    SCOPED_TRACE(graph);
    Graph g = ImportGraphDef(test::TextModel(ReadText(ControlFlowDir() + graph)).graph_def);
    EXPECT_FALSE(g.outputs.empty());
  }
}

// ---------------------------------------------------------------- handwritten TF1 graphs

using test::pbtxt::Attr;
using test::pbtxt::Const;
using test::pbtxt::Ints;
using test::pbtxt::Node;
using test::pbtxt::Placeholder;
using test::pbtxt::Type;
using test::tf1::ConstEnter;
using test::tf1::Floats;
using test::tf1::Frame;
using test::tf1::Increment;
using test::tf1::LessThan;
using test::tf1::LoopVar;
using test::tf1::PinnedFloat;
using test::tf1::Pivots;

TEST(ControlFlowTF1Test, NestedLoopsWithUnrelatedFrameNamesAndChainedConstantEnters) {
  // for i < 3: { for j < 4: acc += x } : the inner frame's name does not extend the outer one's,
  // and x reaches the inner body through a constant Enter of a constant Enter.
  std::string g =
      Placeholder("x", {2}) + Placeholder("a", {2}) + Ints("i0", {0}, true) +
      LoopVar("o", "outer_frame", 0, "i0", "o/inc", "DT_INT32") + LoopVar("o", "outer_frame", 1, "a", "in/Exit_1") +
      ConstEnter("o/x", "outer_frame", "x") + LessThan("o", "o/Merge_0", 3) + Increment("o/inc", "o/Identity_0") +
      Node("in/j0", "Const", {"^o/Identity_0"},
           Attr("dtype", "type: DT_INT32") + Attr("value", "tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 }")) +
      LoopVar("in", "inner", 0, "in/j0", "in/inc", "DT_INT32") + LoopVar("in", "inner", 1, "o/Identity_1", "in/add") +
      ConstEnter("in/x", "inner", "o/x") + LessThan("in", "in/Merge_0", 4) + Increment("in/inc", "in/Identity_0") +
      Node("in/add", "Add", {"in/Identity_1", "in/x"}, Type());
  std::vector<float> x{0.5f, -2.f}, a{1.f, 3.f}, expected = a;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (size_t k = 0; k < 2; ++k) expected[k] += x[k];
    }
  }
  for (bool fusion : {false, true}) {
    std::vector<NDArray> r = RunText(g, {{"x", Floats(x)}, {"a", Floats(a)}}, {"o/Exit_0", "o/Exit_1"}, fusion);
    ExpectClose(r[0], {3}, "outer counter", 0, 0);
    ExpectClose(r[1], {expected[0], expected[1]}, "acc");
  }
}

TEST(ControlFlowTF1Test, CondInsideWhile) {
  // while i < 5: x = i < 2 ? x * 2 : x + 1 ; i += 1
  std::string g = Placeholder("x0", {}) + Ints("i0", {0}, true) + LoopVar("w", "w/", 0, "i0", "w/inc", "DT_INT32") +
                  LoopVar("w", "w/", 1, "x0", "c/Merge") + LessThan("w", "w/Merge_0", 5) +
                  Increment("w/inc", "w/Identity_0") + LessThan("c", "w/Identity_0", 2) + Pivots("c", "c/Less") +
                  Node("c/SwitchX", "Switch", {"w/Identity_1", "c/pred_id"}, Type()) +
                  PinnedFloat("c/two", "c/switch_t", 2) + Node("c/Mul", "Mul", {"c/SwitchX:1", "c/two"}, Type()) +
                  PinnedFloat("c/one", "c/switch_f", 1) + Node("c/Add", "Add", {"c/SwitchX", "c/one"}, Type()) +
                  Node("c/Merge", "Merge", {"c/Add", "c/Mul"}, Type() + Attr("N", "i: 2"));
  for (float x0 : {1.5f, -3.f}) {
    float x = x0;
    for (int i = 0; i < 5; ++i) x = i < 2 ? x * 2 : x + 1;
    for (bool fusion : {false, true}) {
      ExpectClose(RunText(g, {{"x0", NDArray::Scalar<float>(x0)}}, {"w/Exit_1"}, fusion)[0], {x}, "x");
    }
  }
}

TEST(ControlFlowTF1Test, WhileInsideCondAndMergeValueIndex) {
  // p ? (loop: v doubled 3 times) : x - 1; the loop's counter starts from a Const pinned to the
  // true branch; Merge:1 is the index of the input taken.
  std::string g =
      Placeholder("x", {2}) + Placeholder("p", {}, "DT_BOOL") + Pivots("c", "p") +
      Node("c/SwitchX", "Switch", {"x", "c/pred_id"}, Type()) +
      Node("cw/k0", "Const", {"^c/switch_t"},
           Attr("dtype", "type: DT_INT32") + Attr("value", "tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 }")) +
      LoopVar("cw", "cw/while", 0, "cw/k0", "cw/inc", "DT_INT32") +
      LoopVar("cw", "cw/while", 1, "c/SwitchX:1", "cw/dbl") + LessThan("cw", "cw/Merge_0", 3) +
      Increment("cw/inc", "cw/Identity_0") + Node("cw/dbl", "Add", {"cw/Identity_1", "cw/Identity_1"}, Type()) +
      PinnedFloat("c/one", "c/switch_f", 1) + Node("c/Sub", "Sub", {"c/SwitchX", "c/one"}, Type()) +
      Node("c/Merge", "Merge", {"c/Sub", "cw/Exit_1"}, Type() + Attr("N", "i: 2"));
  NDArray x = Floats({1.25f, -4.f});
  for (bool p : {true, false}) {
    std::vector<NDArray> r = RunText(g, {{"x", x}, {"p", NDArray::Scalar<bool>(p)}}, {"c/Merge", "c/Merge:1"});
    std::vector<double> expected = p ? std::vector<double>{1.25 * 8, -4 * 8} : std::vector<double>{0.25, -5};
    ExpectClose(r[0], expected, p ? "true branch" : "false branch");
    ExpectClose(r[1], {p ? 1.0 : 0.0}, "value_index", 0, 0);
  }
}

TEST(ControlFlowTF1Test, ConstantBranchesTiedOnlyByControlEdges) {
  std::string g = Placeholder("p", {}, "DT_BOOL") + Pivots("c", "p") + PinnedFloat("c/five", "c/switch_t", 5) +
                  PinnedFloat("c/seven", "c/switch_f", 7) +
                  Node("c/Merge", "Merge", {"c/five", "c/seven"}, Type() + Attr("N", "i: 2"));
  for (bool p : {true, false}) {
    std::vector<NDArray> r = RunText(g, {{"p", NDArray::Scalar<bool>(p)}}, {"c/Merge", "c/Merge:1"});
    ExpectClose(r[0], {p ? 5.0 : 7.0}, "value", 0, 0);
    ExpectClose(r[1], {p ? 0.0 : 1.0}, "value_index", 0, 0);
  }
}

TEST(ControlFlowTF1Test, ConstantsTiedByControlEdgesToASwitchOfAnotherPredicate) {
  // As tf.raw_ops can write it (OpenVINO's model_switch_merge_several_cond_flows): the branch
  // constants hang on a Switch whose outputs nothing reads. A control edge from a live Switch is
  // live whichever port its predicate picks.
  std::string g = Placeholder("x", {2}) + Placeholder("p", {}, "DT_BOOL") + Placeholder("q", {}, "DT_BOOL") +
                  Node("s", "Switch", {"x", "p"}, Type()) + Node("s2", "Switch", {"q", "q"}, Type("DT_BOOL")) +
                  PinnedFloat("five", "s2", 5) + PinnedFloat("two", "s2", 2) +
                  Node("add", "AddV2", {"s", "two"}, Type()) + Node("sub", "Sub", {"s:1", "five"}, Type()) +
                  Node("m", "Merge", {"add", "sub"}, Type() + Attr("N", "i: 2"));
  for (bool p : {true, false}) {
    NDArray r = RunText(
        g, {{"x", Floats({1.5f, -2})}, {"p", NDArray::Scalar<bool>(p)}, {"q", NDArray::Scalar<bool>(true)}}, {"m"})[0];
    ExpectClose(r, p ? std::vector<double>{-3.5, -7} : std::vector<double>{3.5, 0}, p ? "x - 5" : "x + 2", 0, 0);
  }
}

/*! \brief One level of tf.case as TF1 writes it: cond <pre> on `pred` (seen through `pred_switch`, a Switch of the
 * outer cond) of x * `scale`, else `other`. */
std::string CaseLevel(const std::string& pre, const std::string& pred, const std::string& x, float scale) {
  return Pivots(pre, pred) + PinnedFloat(pre + "/mul/y", pre + "/switch_t", scale) +
         Node(pre + "/mul/Switch", "Switch", {x, pre + "/pred_id"}, Type()) +
         Node(pre + "/mul", "Mul", {pre + "/mul/Switch:1", pre + "/mul/y"}, Type());
}

TEST(ControlFlowTF1Test, NestedCondsOfTfCaseWithKnownPredicates) {
  // tf.case([(x <= 1, x * 1), (x <= 2, x * 2)], default=x * 4) of a frozen x: the inner cond's
  // predicate and x reach it through Switches of the outer one; constant predicates fold.
  for (float x : {0.5f, 1.5f, 2.5f}) {
    std::string g = test::pbtxt::Const("x", {}, {x}) + Node("le1", "LessEqual", {"x", "one"}, Type()) +
                    Node("le2", "LessEqual", {"x", "two"}, Type()) + test::pbtxt::Const("one", {}, {1}) +
                    test::pbtxt::Const("two", {}, {2}) + CaseLevel("c", "le1", "x", 1) +
                    Node("c/c/Switch/Switch", "Switch", {"le2", "c/pred_id"}, Type("DT_BOOL")) +
                    Node("c/c/x", "Switch", {"x", "c/pred_id"}, Type()) +
                    CaseLevel("c/c", "c/c/Switch/Switch", "c/c/x", 2) + PinnedFloat("c/c/mul_1/y", "c/c/switch_f", 4) +
                    Node("c/c/mul_1", "Mul", {"c/c/mul/Switch", "c/c/mul_1/y"}, Type()) +
                    Node("c/c/Merge", "Merge", {"c/c/mul_1", "c/c/mul"}, Type() + Attr("N", "i: 2")) +
                    Node("c/Merge", "Merge", {"c/c/Merge", "c/mul"}, Type() + Attr("N", "i: 2"));
    double expected = x <= 1 ? x : x <= 2 ? 2 * x : 4 * x;
    for (bool fusion : {false, true}) ExpectClose(RunText(g, {}, {"c/Merge"}, fusion)[0], {expected}, "case", 0, 0);
  }
}

TEST(ControlFlowTF1Test, ZeroTripLoopReturnsItsInputs) {
  std::string g = Placeholder("n", {}, "DT_INT32") + Placeholder("x", {2}) + Ints("i0", {0}, true) +
                  LoopVar("w", "w", 0, "i0", "w/inc", "DT_INT32") + LoopVar("w", "w", 1, "x", "w/dbl") +
                  ConstEnter("w/n", "w", "n") + Node("w/Less", "Less", {"w/Merge_0", "w/n"}, Type("DT_INT32")) +
                  Node("w/LoopCond", "LoopCond", {"w/Less"}) + Increment("w/inc", "w/Identity_0") +
                  Node("w/dbl", "Add", {"w/Identity_1", "w/Identity_1"}, Type());
  for (int n : {0, -2, 3}) {
    std::vector<NDArray> r =
        RunText(g, {{"n", NDArray::Scalar<int32_t>(n)}, {"x", Floats({1.f, -0.5f})}}, {"w/Exit_0", "w/Exit_1"});
    double scale = n > 0 ? std::pow(2.0, n) : 1.0;
    ExpectClose(r[0], {static_cast<double>(std::max(n, 0))}, "counter", 0, 0);
    ExpectClose(r[1], {scale, -0.5 * scale}, "x");
  }
}

/*! \brief A TensorArrayV3 of `size` float rows of shape [2]. */
std::string TensorArray(const std::string& name, const std::string& size) {
  return test::tf1::TensorArray(name, size, test::pbtxt::ShapeProto({2}));
}

TEST(ControlFlowTF1Test, DynamicRnnOverTensorArrays) {
  // dynamic_rnn as TF1 writes it: x unstacked into a TensorArray (Scatter), a loop reading row t,
  // h = tanh(x_t + 0.5 h), writing h into the output TensorArray, stacked back (Size, Gather).
  std::string g =
      Placeholder("x", {3, 2}) + Placeholder("h0", {2}) + Ints("n", {3}, true) + Ints("zero", {0}, true) +
      Ints("one", {1}, true) + TensorArray("in", "n") + TensorArray("out", "n") +
      Node("rows", "Range", {"zero", "n", "one"}, Attr("Tidx", "type: DT_INT32")) +
      Node("scatter", "TensorArrayScatterV3", {"in", "rows", "x", "in:1"}, Type()) +
      LoopVar("w", "rnn/while", 0, "zero", "w/inc", "DT_INT32") + LoopVar("w", "rnn/while", 1, "out:1", "w/write") +
      LoopVar("w", "rnn/while", 2, "h0", "w/h") + ConstEnter("w/in_handle", "rnn/while", "in") +
      ConstEnter("w/in_flow", "rnn/while", "scatter") + ConstEnter("w/out_handle", "rnn/while", "out") +
      LessThan("w", "w/Merge_0", 3) + Increment("w/inc", "w/Identity_0") +
      Node("w/read", "TensorArrayReadV3", {"w/in_handle", "w/Identity_0", "w/in_flow"},
           Attr("dtype", "type: DT_FLOAT")) +
      PinnedFloat("w/half", "w/Identity_0", 0.5f) + Node("w/scaled", "Mul", {"w/Identity_2", "w/half"}, Type()) +
      Node("w/sum", "Add", {"w/read", "w/scaled"}, Type()) + Node("w/h", "Tanh", {"w/sum"}, Type()) +
      Node("w/write", "TensorArrayWriteV3", {"w/out_handle", "w/Identity_0", "w/h", "w/Identity_1"}, Type()) +
      Node("size", "TensorArraySizeV3", {"out", "w/Exit_1"}) +
      Node("stack_rows", "Range", {"zero", "size", "one"}, Attr("Tidx", "type: DT_INT32")) +
      Node("stack", "TensorArrayGatherV3", {"out", "stack_rows", "w/Exit_1"},
           Attr("dtype", "type: DT_FLOAT") + Attr("element_shape", test::pbtxt::ShapeProto({2})));
  std::vector<float> x{0.5f, -1.f, 2.f, 0.25f, -0.75f, 1.5f}, h{0.1f, -0.2f}, expected;
  for (int t = 0; t < 3; ++t) {
    for (int k = 0; k < 2; ++k) h[k] = std::tanh(x[t * 2 + k] + 0.5f * h[k]);
    expected.insert(expected.end(), h.begin(), h.end());
  }
  for (bool fusion : {false, true}) {
    std::vector<NDArray> r =
        RunText(g, {{"x", NDArray::FromVector<float>(Shape{3, 2}, x)}, {"h0", Floats({0.1f, -0.2f})}},
                {"stack", "w/Exit_2"}, fusion);
    EXPECT_EQ(r[0].shape(), (Shape{3, 2}));
    ExpectClose(r[0], std::vector<double>(expected.begin(), expected.end()), "outputs");
    ExpectClose(r[1], std::vector<double>(expected.end() - 2, expected.end()), "final state");
  }
}

TEST(ControlFlowTF1Test, StacksUsedOtherwiseThanByTFsGradientsAreRejectedNamingThem) {
  std::string g = Node("s", "StackV2", {"n"}, Attr("elem_type", "type: DT_FLOAT")) + Ints("n", {3}, true);
  EXPECT_ERROR(RunText(g, {}, {"s"}),
               "TensorFlow node 's' (op StackV2): op StackV2 is only converted as TensorFlow's gradients of a while "
               "loop use stacks");
}

TEST(ControlFlowTF1Test, ReverseV2ReversesTheGivenAxes) {
  std::string g = Placeholder("x", {2, 3}) + Ints("axis", {-1}) + Ints("both", {0, 1}) +
                  Node("r", "ReverseV2", {"x", "axis"}, Type() + Attr("Tidx", "type: DT_INT32")) +
                  Node("rr", "ReverseV2", {"x", "both"}, Type() + Attr("Tidx", "type: DT_INT32"));
  std::vector<NDArray> r =
      RunText(g, {{"x", NDArray::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6})}}, {"r", "rr"});
  ExpectClose(r[0], {3, 2, 1, 6, 5, 4}, "last axis", 0, 0);
  ExpectClose(r[1], {6, 5, 4, 3, 2, 1}, "both axes", 0, 0);
}

// ---------------------------------------------------------------- malformed control flow

TEST(ControlFlowTF1Test, MalformedFramesAreErrorsNamingTheNode) {
  std::string merge_without_next = Placeholder("x", {}) + Node("w/Enter", "Enter", {"x"}, Type() + Frame("w")) +
                                   Node("w/Enter2", "Enter", {"x"}, Type() + Frame("w")) +
                                   Node("w/Merge", "Merge", {"w/Enter", "w/Enter2"}, Type()) +
                                   Node("w/Switch", "Switch", {"w/Merge", "w/LoopCond"}, Type()) +
                                   Node("w/LoopCond", "LoopCond", {"w/Merge"}) +
                                   Node("w/Exit", "Exit", {"w/Switch"}, Type());
  EXPECT_ERROR(RunText(merge_without_next, {{"x", NDArray::Scalar<float>(1)}}, {"w/Exit"}),
               "Merge 'w/Merge' of while frame 'w' has no NextIteration input");
  std::string exit_without_frame = Placeholder("x", {}) + Node("e", "Exit", {"x"}, Type());
  EXPECT_ERROR(RunText(exit_without_frame, {{"x", NDArray::Scalar<float>(1)}}, {"e"}),
               "Exit 'e' is not inside a while loop frame");
  std::string float_pred = Placeholder("x", {2}) + Placeholder("pf", {2}) + Node("s", "Switch", {"x", "pf"}, Type()) +
                           Node("t", "Neg", {"s:1"}, Type()) + Node("m", "Merge", {"s", "t"}, Type());
  EXPECT_ERROR(RunText(float_pred, {{"x", Floats({1, 2})}, {"pf", Floats({1, 0})}}, {"m"}),
               "Switch 's': its predicate 'pf' must be a scalar bool, but it is float32 [2]");
  std::string stray_switch =
      Placeholder("x", {}) + Placeholder("p", {}, "DT_BOOL") + Node("s", "Switch", {"x", "p"}, Type());
  EXPECT_ERROR(RunText(stray_switch, {{"x", NDArray::Scalar<float>(1)}, {"p", NDArray::Scalar<bool>(true)}}, {"s:1"}),
               "TensorFlow node 's' (op Switch): this TF1 control-flow node is not part of");
  std::string mixed = Placeholder("x", {}) + Placeholder("p", {}, "DT_BOOL") + Node("s", "Switch", {"x", "p"}, Type()) +
                      Node("both", "Add", {"s", "s:1"}, Type());
  EXPECT_ERROR(RunText(mixed, {{"x", NDArray::Scalar<float>(1)}, {"p", NDArray::Scalar<bool>(true)}}, {"both"}),
               "node 'both' (op Add) reads both branches of the cond on 'p' without a Merge");
}

}  // namespace
}  // namespace tf
}  // namespace ir
