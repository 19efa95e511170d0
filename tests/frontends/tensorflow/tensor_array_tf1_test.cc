/*!
 * \file tensor_array_tf1_test.cc
 * \brief TF1 TensorArrays as TF 1.4-1.15 write them: element shapes left unknown (inferred from
 * the first write or scatter, inside or outside a loop), arrays of dynamic_size that grow on
 * write, gradient arrays (TensorArrayGradV3); and frame rebuilding limited to what the fetches
 * need (frames they do not reach, Enters that feed nothing).
 */
#include <gtest/gtest.h>

#include <cmath>

#include "ir_tf/import.h"
#include "test_util.h"
#include "tf1_graph_builders.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ExpectClose;
using test::RunText;
using test::pbtxt::Attr;
using test::pbtxt::Ints;
using test::pbtxt::Node;
using test::pbtxt::Placeholder;
using test::pbtxt::Type;
using test::tf1::ConstEnter;
using test::tf1::Floats;
using test::tf1::Increment;
using test::tf1::LessThan;
using test::tf1::LoopVar;
using test::tf1::PinnedFloat;
using test::tf1::TensorArray;

const char* kUnknownRank = "shape { unknown_rank: true }";

/*! \brief ta.stack() as TF writes it: Size, Range(0, size), Gather of `flow`. */
std::string Stack(const std::string& name, const std::string& ta, const std::string& flow,
                  const std::string& element_shape = kUnknownRank) {
  return Node(name + "/size", "TensorArraySizeV3", {ta, flow}) +
         Node(name + "/range", "Range", {"zero", name + "/size", "one"}, Attr("Tidx", "type: DT_INT32")) +
         Node(name, "TensorArrayGatherV3", {ta, name + "/range", flow},
              Attr("dtype", "type: DT_FLOAT") + Attr("element_shape", element_shape));
}

/*! \brief dynamic_rnn as TF 1.4 writes it, over TensorArrays of element shape `elem` (h = tanh(x_t + 0.5 h)). */
std::string DynamicRnn(const std::string& elem) {
  return Placeholder("x", {3, 2}) + Placeholder("h0", {2}) + Ints("n", {3}, true) + Ints("zero", {0}, true) +
         Ints("one", {1}, true) + TensorArray("in", "n", elem) + TensorArray("out", "n", elem) +
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
         Stack("stack", "out", "w/Exit_1", elem);
}

TEST(TensorArrayTF1Test, UnknownElementShapesComeFromTheFirstWriteInsideOrOutsideTheLoop) {
  // TF 1.4-1.5 write every dynamic_rnn TensorArray of unknown rank: the input array takes its
  // elements' shape from the scatter before the loop, the output array from the write in it.
  std::vector<float> x{0.5f, -1.f, 2.f, 0.25f, -0.75f, 1.5f}, h{0.1f, -0.2f};
  std::vector<double> expected;
  for (int t = 0; t < 3; ++t) {
    for (int k = 0; k < 2; ++k) h[k] = std::tanh(x[t * 2 + k] + 0.5f * h[k]);
    for (float v : h) expected.push_back(v);
  }
  for (const std::string& elem : {std::string(kUnknownRank), test::pbtxt::ShapeProto({-1})}) {
    for (bool fusion : {false, true}) {
      SCOPED_TRACE(elem + (fusion ? " fused" : ""));
      std::vector<NDArray> r =
          RunText(DynamicRnn(elem), {{"x", NDArray::FromVector<float>(Shape{3, 2}, x)}, {"h0", Floats({0.1f, -0.2f})}},
                  {"stack", "w/Exit_2"}, fusion);
      EXPECT_EQ(r[0].shape(), (Shape{3, 2}));
      ExpectClose(r[0], expected, "outputs");
      ExpectClose(r[1], std::vector<double>(expected.end() - 2, expected.end()), "final state");
    }
  }
}

TEST(TensorArrayTF1Test, ScalarElementsOfAnArrayOfUnknownRank) {
  // tf.map_fn(lambda row: tf.reduce_sum(row), x): the loop writes scalars into an array whose
  // element shape TF left unknown.
  std::string g =
      Placeholder("x", {3, 2}) + Ints("n", {3}, true) + Ints("zero", {0}, true) + Ints("one", {1}, true) +
      TensorArray("in", "n", kUnknownRank) + TensorArray("out", "n", kUnknownRank) +
      Node("rows", "Range", {"zero", "n", "one"}, Attr("Tidx", "type: DT_INT32")) +
      Node("scatter", "TensorArrayScatterV3", {"in", "rows", "x", "in:1"}, Type()) +
      LoopVar("w", "map/while", 0, "zero", "w/inc", "DT_INT32") + LoopVar("w", "map/while", 1, "out:1", "w/write") +
      ConstEnter("w/in_handle", "map/while", "in") + ConstEnter("w/in_flow", "map/while", "scatter") +
      ConstEnter("w/out_handle", "map/while", "out") + LessThan("w", "w/Merge_0", 3) +
      Increment("w/inc", "w/Identity_0") +
      Node("w/read", "TensorArrayReadV3", {"w/in_handle", "w/Identity_0", "w/in_flow"},
           Attr("dtype", "type: DT_FLOAT")) +
      Node("w/axis", "Const", {"^w/Identity_0"},
           Attr("dtype", "type: DT_INT32") + Attr("value", "tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 }")) +
      Node("w/sum", "Sum", {"w/read", "w/axis"},
           Type() + Attr("Tidx", "type: DT_INT32") + Attr("keep_dims", "b: false")) +
      Node("w/write", "TensorArrayWriteV3", {"w/out_handle", "w/Identity_0", "w/sum", "w/Identity_1"}, Type()) +
      Stack("stack", "out", "w/Exit_1");
  NDArray x = NDArray::FromVector<float>(Shape{3, 2}, {1, 2, -3, 4, 0.5f, 0.25f});
  for (bool fusion : {false, true}) {
    NDArray r = RunText(g, {{"x", x}}, {"stack"}, fusion)[0];
    EXPECT_EQ(r.shape(), (Shape{3}));
    ExpectClose(r, {3, 1, 0.75}, "row sums");
  }
}

TEST(TensorArrayTF1Test, ArraysOfDynamicSizeGrowOnWrite) {
  // TensorArray(size=1, dynamic_size=True).write(0, a).write(1, b).stack()
  std::string g = Placeholder("a", {2}) + Placeholder("b", {2}) + Ints("size", {1}, true) + Ints("zero", {0}, true) +
                  Ints("one", {1}, true) + TensorArray("ta", "size", test::pbtxt::ShapeProto({2}), true) +
                  Node("w0", "TensorArrayWriteV3", {"ta", "zero", "a", "ta:1"}, Type()) +
                  Node("w1", "TensorArrayWriteV3", {"ta", "one", "b", "w0"}, Type()) + Stack("stack", "ta", "w1");
  std::vector<NDArray> r = RunText(g, {{"a", Floats({1, 2})}, {"b", Floats({3, 4})}}, {"stack", "stack/size"});
  EXPECT_EQ(r[0].shape(), (Shape{2, 2}));
  ExpectClose(r[0], {1, 2, 3, 4}, "stacked", 0, 0);
  ExpectClose(r[1], {2}, "size", 0, 0);
}

TEST(TensorArrayTF1Test, ArraysOfDynamicSizeGrowInALoopOfRunTimeLength) {
  // ta = TensorArray(size=0, dynamic_size=True); while i < n: ta = ta.write(i, x * i); ta.stack()
  std::string g =
      Placeholder("x", {2}) + Placeholder("n", {}, "DT_INT32") + Ints("zero", {0}, true) + Ints("one", {1}, true) +
      TensorArray("ta", "zero", kUnknownRank, true) + LoopVar("w", "w", 0, "zero", "w/inc", "DT_INT32") +
      LoopVar("w", "w", 1, "ta:1", "w/write") + ConstEnter("w/x", "w", "x") + ConstEnter("w/handle", "w", "ta") +
      Node("w/n", "Enter", {"n"}, Type("DT_INT32") + test::tf1::Frame("w") + Attr("is_constant", "b: true")) +
      Node("w/Less", "Less", {"w/Merge_0", "w/n"}, Type("DT_INT32")) + Node("w/LoopCond", "LoopCond", {"w/Less"}) +
      Increment("w/inc", "w/Identity_0") +
      Node("w/i", "Cast", {"w/Identity_0"}, Attr("SrcT", "type: DT_INT32") + Attr("DstT", "type: DT_FLOAT")) +
      Node("w/value", "Mul", {"w/x", "w/i"}, Type()) +
      Node("w/write", "TensorArrayWriteV3", {"w/handle", "w/Identity_0", "w/value", "w/Identity_1"}, Type()) +
      Stack("stack", "ta", "w/Exit_1");
  for (int n : {3, 1}) {
    NDArray r = RunText(g, {{"x", Floats({1.5f, -2.f})}, {"n", NDArray::Scalar<int32_t>(n)}}, {"stack"})[0];
    EXPECT_EQ(r.shape(), (Shape{n, 2}));
    std::vector<double> expected;
    for (int i = 0; i < n; ++i) {
      expected.push_back(1.5 * i);
      expected.push_back(-2.0 * i);
    }
    ExpectClose(r, expected, "stacked", 0, 0);
  }
}

TEST(TensorArrayTF1Test, GradientArraysStartFromZerosAndAddUpThroughTheirFlows) {
  // Two read gradients write row 1 of the gradient array of `ta` (TensorArrayGradV3, flow of the
  // forward array); TF adds their flows (AddN) and the scatter gradient gathers the array.
  std::string g = Placeholder("x", {3, 2}) + Placeholder("u", {2}) + Placeholder("v", {2}) + Ints("n", {3}, true) +
                  Ints("zero", {0}, true) + Ints("one", {1}, true) + TensorArray("ta", "n", kUnknownRank) +
                  Node("rows", "Range", {"zero", "n", "one"}, Attr("Tidx", "type: DT_INT32")) +
                  Node("scatter", "TensorArrayScatterV3", {"ta", "rows", "x", "ta:1"}, Type()) +
                  Node("g/grad", "TensorArrayGradV3", {"ta", "scatter"}, Attr("source", "s: 'gradients'")) +
                  Node("g/gradient_flow", "Identity", {"scatter", "^g/grad"}, Type()) +
                  Node("g/w0", "TensorArrayWriteV3", {"g/grad", "one", "u", "g/gradient_flow"}, Type()) +
                  Node("g/grad_1", "TensorArrayGradV3", {"ta", "scatter"}, Attr("source", "s: 'gradients'")) +
                  Node("g/gradient_flow_1", "Identity", {"scatter", "^g/grad_1"}, Type()) +
                  Node("g/w1", "TensorArrayWriteV3", {"g/grad_1", "one", "v", "g/gradient_flow_1"}, Type()) +
                  Node("g/AddN", "AddN", {"g/w0", "g/w1"}, Type() + Attr("N", "i: 2")) +
                  Node("g/grad_2", "TensorArrayGradV3", {"ta", "g/AddN"}, Attr("source", "s: 'gradients'")) +
                  Node("g/gradient_flow_2", "Identity", {"g/AddN", "^g/grad_2"}, Type()) +
                  Node("g/gather", "TensorArrayGatherV3", {"g/grad_2", "rows", "g/gradient_flow_2"},
                       Attr("dtype", "type: DT_FLOAT") + Attr("element_shape", kUnknownRank));
  NDArray x = NDArray::FromVector<float>(Shape{3, 2}, {9, 9, 9, 9, 9, 9});
  NDArray r = RunText(g, {{"x", x}, {"u", Floats({1, 2})}, {"v", Floats({10, 20})}}, {"g/gather"})[0];
  ExpectClose(r, {0, 0, 11, 22, 0, 0}, "x's gradient", 0, 0);
}

/*! \brief A loop doubling x n times (n fed), TF1's frame `w`. */
std::string DoublingLoop() {
  return Placeholder("n", {}, "DT_INT32") + Placeholder("x", {2}) + Ints("i0", {0}, true) +
         LoopVar("w", "w", 0, "i0", "w/inc", "DT_INT32") + LoopVar("w", "w", 1, "x", "w/dbl") +
         ConstEnter("w/n", "w", "n") + Node("w/Less", "Less", {"w/Merge_0", "w/n"}, Type("DT_INT32")) +
         Node("w/LoopCond", "LoopCond", {"w/Less"}) + Increment("w/inc", "w/Identity_0") +
         Node("w/dbl", "Add", {"w/Identity_1", "w/Identity_1"}, Type());
}

TEST(TensorArrayTF1Test, FetchesIgnoreFramesTheyDoNotReach) {
  // A frame downstream of the fetched loop that cannot be rebuilt (a Merge without NextIteration,
  // as TF's gradient loops look to an importer that lacks their ops) does not matter.
  std::string g = DoublingLoop() + Node("bad/Enter", "Enter", {"w/Exit_1"}, Type() + test::tf1::Frame("bad")) +
                  Node("bad/Enter_1", "Enter", {"w/Exit_1"}, Type() + test::tf1::Frame("bad")) +
                  Node("bad/Merge", "Merge", {"bad/Enter", "bad/Enter_1"}, Type()) +
                  Node("bad/LoopCond", "LoopCond", {"bad/Merge"}) +
                  Node("bad/Switch", "Switch", {"bad/Merge", "bad/LoopCond"}, Type()) +
                  Node("bad/Exit", "Exit", {"bad/Switch"}, Type());
  std::map<std::string, NDArray> feeds{{"n", NDArray::Scalar<int32_t>(2)}, {"x", Floats({1, -3})}};
  ExpectClose(RunText(g, feeds, {"w/Exit_1"})[0], {4, -12}, "x doubled twice", 0, 0);
  EXPECT_ERROR(RunText(g, feeds, {"bad/Exit"}), "Merge 'bad/Merge' of while frame 'bad' has no NextIteration input");
}

TEST(TensorArrayTF1Test, EntersThatFeedNothingAreDead) {
  // TF's gradients leave `Exit_*_grad/b_exit` Enters that feed nothing in their loops.
  std::string g = DoublingLoop() + Node("w/b_exit", "Enter", {"x"}, Type() + test::tf1::Frame("w"));
  std::map<std::string, NDArray> feeds{{"n", NDArray::Scalar<int32_t>(3)}, {"x", Floats({1, 2})}};
  ExpectClose(RunText(g, feeds, {"w/Exit_1"})[0], {8, 16}, "x doubled 3 times", 0, 0);
  Graph all = ImportGraphDef(test::TextModel(g).graph_def);  // no outputs named: every node takes part
  EXPECT_FALSE(all.outputs.empty());
}

}  // namespace
}  // namespace tf
}  // namespace ir
