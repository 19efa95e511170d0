/*!
 * \file converters_test.cc
 * \brief The converter table: TensorFlow attribute semantics mapped onto our ops, checked on
 * small hand-computed cases.
 */
#include <gtest/gtest.h>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

/*! \brief Runs `graph` (unfused) and returns fetch 0. */
NDArray Eval(const std::string& graph, const std::string& fetch, const std::map<std::string, NDArray>& feeds = {}) {
  return test::RunText(graph, feeds, {fetch})[0];
}

const std::string kMatrix = Const("m", {2, 3}, {1, 2, 3, 4, 5, 6});

TEST(TFConvertersTest, BroadcastGradientArgsReduceAlongBroadcastAxes) {
  std::string graph =
      Ints("s0", {2, 1, 3}) + Ints("s1", {4, 1}) + Node("bga", "BroadcastGradientArgs", {"s0", "s1"}, Type("DT_INT32"));
  std::vector<NDArray> r = test::RunText(graph, {}, {"bga:0", "bga:1"});
  ExpectClose(r[0], {1}, "r0", 0, 0);
  ExpectClose(r[1], {0, 2}, "r1", 0, 0);
  EXPECT_ERROR(Eval(Ints("a", {2}) + Ints("b", {3}) + Node("bga", "BroadcastGradientArgs", {"a", "b"}), "bga"),
               "do not broadcast");
}

TEST(TFConvertersTest, DynamicStitchOfConstantsAndOfComputedData) {
  std::string stitch = Ints("i0", {0, 2}) + Ints("i1", {1, 3}) + Ints("d0", {10, 30}) + Const("d1", {2}, {20, 40});
  ExpectClose(
      Eval(stitch + Ints("d1i", {20, 40}) + Node("s", "DynamicStitch", {"i0", "i1", "d0", "d1i"}, Attr("N", "i: 2")),
           "s"),
      {10, 20, 30, 40}, "constants", 0, 0);
  std::string computed = stitch + Placeholder("f0", {2, 2}) + Node("neg", "Neg", {"f0"}, Type()) +
                         Const("f1", {2, 2}, {5, 6, 7, 8}) +
                         Node("s", "DynamicStitch", {"i0", "i1", "neg", "f1"}, Attr("N", "i: 2"));
  NDArray f0 = NDArray::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4});
  ExpectClose(Eval(computed, "s", {{"f0", f0}}), {-1, -2, 5, 6, -3, -4, 7, 8}, "computed rows", 0, 0);
}

TEST(TFConvertersTest, ConcatOffsetAndConcatVariants) {
  std::string graph = Ints("axis", {1}, true) + Ints("a", {2, 3}) + Ints("b", {2, 5}) +
                      Node("off", "ConcatOffset", {"axis", "a", "b"}, Attr("N", "i: 2"));
  std::vector<NDArray> r = test::RunText(graph, {}, {"off:0", "off:1"});
  ExpectClose(r[0], {0, 0}, "offset 0", 0, 0);
  ExpectClose(r[1], {0, 3}, "offset 1", 0, 0);
  std::string concat = kMatrix + Ints("axis", {0}, true) +
                       Node("c1", "Concat", {"axis", "m", "m"}, Type() + Attr("N", "i: 2")) +
                       Node("c2", "ConcatV2", {"m", "m", "axis"}, Type() + Attr("N", "i: 2"));
  EXPECT_EQ(Eval(concat, "c1").shape(), (Shape{4, 3}));
  EXPECT_EQ(Eval(concat, "c2").shape(), (Shape{4, 3}));
}

TEST(TFConvertersTest, ReductionsTakeAxesFromInputsAndEmptyAxesReduceNothing) {
  std::string graph = kMatrix + Ints("ax", {1}) + Ints("none", {}) +
                      Node("sum", "Sum", {"m", "ax"}, Type() + Attr("keep_dims", "b: true")) +
                      Node("same", "Sum", {"m", "none"}, Type()) + Node("mean", "Mean", {"m", "ax"}, Type()) +
                      Node("arg", "ArgMax", {"m", "ax"}, Type() + Attr("output_type", "type: DT_INT32"));
  NDArray sum = Eval(graph, "sum");
  EXPECT_EQ(sum.shape(), (Shape{2, 1}));
  ExpectClose(sum, {6, 15}, "sum keep_dims", 0, 0);
  ExpectClose(Eval(graph, "same"), {1, 2, 3, 4, 5, 6}, "Sum over no axes", 0, 0);
  ExpectClose(Eval(graph, "mean"), {2, 5}, "mean", 0, 0);
  NDArray arg = Eval(graph, "arg");
  EXPECT_EQ(arg.dtype(), DType::kInt32);
  ExpectClose(arg, {2, 2}, "argmax", 0, 0);
}

TEST(TFConvertersTest, ShapeOpsFollowTensorFlow) {
  std::string graph = kMatrix + Ints("perm", {1, 0}) + Node("t", "Transpose", {"m", "perm"}, Type()) +
                      Ints("reps", {1, 2}) + Node("tile", "Tile", {"m", "reps"}, Type()) + Ints("dim", {0}, true) +
                      Node("e", "ExpandDims", {"m", "dim"}, Type()) +
                      Node("sq", "Squeeze", {"e"}, Type() + Attr("squeeze_dims", "list { i: 0 }")) +
                      Node("p", "Pack", {"m", "m"}, Type() + Attr("axis", "i: 1") + Attr("N", "i: 2")) +
                      Node("u", "Unpack", {"m"}, Type() + Attr("num", "i: 3") + Attr("axis", "i: 1")) +
                      Ints("sizes", {1, -1}) + Ints("axis1", {1}, true) +
                      Node("sv", "SplitV", {"m", "sizes", "axis1"}, Type() + Attr("num_split", "i: 2")) +
                      Ints("b", {0, 1}) + Ints("e2", {2, 3}) + Ints("st", {1, 2}) +
                      Node("ss", "StridedSlice", {"m", "b", "e2", "st"}, Type() + Attr("shrink_axis_mask", "i: 1"));
  ExpectClose(Eval(graph, "t"), {1, 4, 2, 5, 3, 6}, "transpose", 0, 0);
  EXPECT_EQ(Eval(graph, "tile").shape(), (Shape{2, 6}));
  EXPECT_EQ(Eval(graph, "e").shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(Eval(graph, "sq").shape(), (Shape{2, 3}));
  NDArray packed = Eval(graph, "p");
  EXPECT_EQ(packed.shape(), (Shape{2, 2, 3}));
  ExpectClose(packed, {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, "pack axis 1", 0, 0);
  ExpectClose(Eval(graph, "u:2"), {3, 6}, "unpack axis 1", 0, 0);
  ExpectClose(Eval(graph, "sv:1"), {2, 3, 5, 6}, "SplitV with -1", 0, 0);
  ExpectClose(Eval(graph, "ss"), {2}, "strided slice, row shrunk", 0, 0);
}

TEST(TFConvertersTest, FillRangeAndSelect) {
  std::string graph = Ints("dims", {2, 2}) + Const("v", {}, {1.5}) + Node("fill", "Fill", {"dims", "v"}, Type()) +
                      Node("nv", "Neg", {"v"}, Type()) + Node("fill2", "Fill", {"dims", "nv"}, Type()) +
                      Ints("r0", {1}, true) + Ints("r1", {7}, true) + Ints("r2", {3}, true) +
                      Node("range", "Range", {"r0", "r1", "r2"}, Attr("Tidx", "type: DT_INT32")) +
                      Const("c", {2}, {1, 0}, "DT_BOOL", "bool_val") + kMatrix + Const("z", {2, 3}, {0}) +
                      Node("sel", "Select", {"c", "m", "z"}, Type());
  ExpectClose(Eval(graph, "fill"), {1.5, 1.5, 1.5, 1.5}, "fill", 0, 0);
  ExpectClose(Eval(graph, "fill2"), {-1.5, -1.5, -1.5, -1.5}, "fill with a computed value", 0, 0);
  ExpectClose(Eval(graph, "range"), {1, 4}, "range", 0, 0);
  ExpectClose(Eval(graph, "sel"), {1, 2, 3, 0, 0, 0}, "TF1 Select picks rows", 0, 0);
}

TEST(TFConvertersTest, FillWithDimsKnownOnlyWhenItRuns) {
  // dims is fed: the importer cannot fold it, so the fill's shape is found when the graph runs.
  std::string graph =
      Placeholder("dims", {2}, "DT_INT32") + Const("v", {}, {2.5}) + Node("fill", "Fill", {"dims", "v"}, Type());
  for (int32_t rows : {1, 3}) {
    NDArray out = test::RunText(graph, {{"dims", NDArray::FromVector<int32_t>(Shape{2}, {rows, 2})}}, {"fill"})[0];
    EXPECT_EQ(out.shape(), (Shape{rows, 2}));
    ExpectClose(out, std::vector<double>(static_cast<size_t>(rows) * 2, 2.5), "fill_dims", 0, 0);
  }
}

TEST(TFConvertersTest, ReverseSequenceReversesEachRowUpToItsLength) {
  // x [2, 3, 2] batch-major: row 0 reverses its first 2 steps, row 1 all 3.
  std::string x = Const("x", {2, 3, 2}, {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  std::string graph =
      x + Ints("len", {2, 3}) +
      Node("rs", "ReverseSequence", {"x", "len"},
           Type() + Attr("seq_dim", "i: 1") + Attr("batch_dim", "i: 0") + Attr("Tlen", "type: DT_INT32")) +
      Node("tm", "Transpose", {"x", "perm"}, Type() + Attr("Tperm", "type: DT_INT32")) + Ints("perm", {1, 0, 2}) +
      Node("rs_tm", "ReverseSequence", {"tm", "len"},
           Type() + Attr("seq_dim", "i: 0") + Attr("batch_dim", "i: 1") + Attr("Tlen", "type: DT_INT32"));
  ExpectClose(Eval(graph, "rs"), {2, 3, 0, 1, 4, 5, 14, 15, 12, 13, 10, 11}, "batch-major", 0, 0);
  ExpectClose(Eval(graph, "rs_tm"), {2, 3, 14, 15, 0, 1, 12, 13, 4, 5, 10, 11}, "time-major", 0, 0);
}

TEST(TFConvertersTest, AllAnyAndAssert) {
  std::string graph = Const("c", {2, 2}, {1, 0, 1, 1}, "DT_BOOL", "bool_val") + Ints("ax", {1}) + Ints("none", {}) +
                      Node("all", "All", {"c", "ax"}, Attr("Tidx", "type: DT_INT32")) +
                      Node("any", "Any", {"c", "ax"}, Attr("Tidx", "type: DT_INT32")) +
                      Node("all_of_all", "All", {"c", "none"}, Attr("Tidx", "type: DT_INT32"));
  ExpectClose(Eval(graph, "all"), {0, 1}, "All over rows", 0, 0);
  ExpectClose(Eval(graph, "any"), {1, 1}, "Any over rows", 0, 0);
  std::string checked = Placeholder("ok", {}, "DT_BOOL") + Const("v", {}, {3}) +
                        Node("check", "Assert", {"ok", "v"}, Attr("T", "list { type: DT_FLOAT }")) +
                        Node("out", "Identity", {"v", "^check"}, Type());
  ExpectClose(test::RunText(checked, {{"ok", NDArray::Scalar<bool>(true)}}, {"out"})[0], {3}, "assert holds", 0, 0);
  try {
    test::RunText(checked, {{"ok", NDArray::Scalar<bool>(false)}}, {"out"});
    FAIL() << "a failed Assert did not stop the run";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("assertion failed: TensorFlow Assert 'check'"), std::string::npos)
        << err.what();
  }
}

TEST(TFConvertersTest, ElementwiseCompositions) {
  std::string graph =
      Const("x", {4}, {-2, 3, 8, 0.5}) + Const("y", {4}, {1, 1, 1, 1}) + Node("r6", "Relu6", {"x"}, Type()) +
      Node("lr", "LeakyRelu", {"x"}, Type() + Attr("alpha", "f: 0.5")) +
      Node("sd", "SquaredDifference", {"x", "y"}, Type()) + Node("an", "AddN", {"x", "y", "y"}, Type()) +
      Node("c", "Cast", {"x"}, Attr("SrcT", "type: DT_FLOAT") + Attr("DstT", "type: DT_INT32"));
  ExpectClose(Eval(graph, "r6"), {0, 3, 6, 0.5}, "relu6", 0, 0);
  ExpectClose(Eval(graph, "lr"), {-1, 3, 8, 0.5}, "leaky relu", 0, 0);
  ExpectClose(Eval(graph, "sd"), {9, 4, 49, 0.25}, "squared difference", 0, 0);
  ExpectClose(Eval(graph, "an"), {0, 5, 10, 2.5}, "add_n", 0, 0);
  std::string ints = Ints("a", {7, -7, 0, 6}) + Ints("b", {2, 2, 3, -4}) +
                     Node("div", "Div", {"a", "b"}, Type("DT_INT32")) +
                     Node("fdiv", "FloorDiv", {"a", "b"}, Type("DT_INT32"));
  ExpectClose(Eval(ints, "div"), {3, -3, 0, -1}, "integer Div truncates", 0, 0);
  ExpectClose(Eval(ints, "fdiv"), {3, -4, 0, -2}, "FloorDiv floors", 0, 0);
  NDArray cast = Eval(graph, "c");
  EXPECT_EQ(cast.dtype(), DType::kInt32);
  ExpectClose(cast, {-2, 3, 8, 0}, "cast", 0, 0);
}

TEST(TFConvertersTest, MatMulBiasAddAndIndexing) {
  std::string graph =
      kMatrix + Node("mm", "MatMul", {"m", "m"}, Type() + Attr("transpose_b", "b: true")) +
      Const("bias", {2}, {10, 20}) + Node("ba", "BiasAdd", {"mm", "bias"}, Type() + Attr("data_format", "s: 'NCHW'")) +
      Ints("idx", {1, 0, 1}) + Ints("axis", {1}, true) + Node("g", "GatherV2", {"m", "idx", "axis"}, Type()) +
      Ints("labels", {2, 0}) + Ints("depth", {3}, true) + Const("on", {}, {1}) + Const("off", {}, {0}) +
      Node("oh", "OneHot", {"labels", "depth", "on", "off"}, Type() + Attr("axis", "i: -1")) +
      Const("pads", {2, 2}, {0, 0, 1, 1}, "DT_INT32", "int_val") + Node("pad", "Pad", {"m", "pads"}, Type());
  ExpectClose(Eval(graph, "mm"), {14, 32, 32, 77}, "m m^T", 0, 0);
  ExpectClose(Eval(graph, "ba"), {24, 52, 42, 97}, "bias on axis 1 (NCHW)", 0, 0);
  ExpectClose(Eval(graph, "g"), {2, 1, 2, 5, 4, 5}, "gather axis 1", 0, 0);
  ExpectClose(Eval(graph, "oh"), {0, 0, 1, 1, 0, 0}, "one hot", 0, 0);
  ExpectClose(Eval(graph, "pad"), {0, 1, 2, 3, 0, 0, 4, 5, 6, 0}, "pad", 0, 0);
}

TEST(TFConvertersTest, ConvolutionPoolingAndTheirGradientsHaveTensorFlowShapes) {
  std::string graph = Placeholder("x", {-1, 5, 5, 2}) + Const("w", {3, 3, 2, 4}, {0.1}) +
                      Node("conv", "Conv2D", {"x", "w"},
                           Type() + Attr("strides", "list { i: 1 i: 2 i: 2 i: 1 }") + Attr("padding", "s: 'SAME'")) +
                      Node("pool", "MaxPool", {"conv"},
                           Type() + Attr("ksize", "list { i: 1 i: 2 i: 2 i: 1 }") +
                               Attr("strides", "list { i: 1 i: 1 i: 1 i: 1 }") + Attr("padding", "s: 'VALID'")) +
                      Node("dpool", "MaxPoolGrad", {"conv", "pool", "pool"},
                           Type() + Attr("ksize", "list { i: 1 i: 2 i: 2 i: 1 }") +
                               Attr("strides", "list { i: 1 i: 1 i: 1 i: 1 }") + Attr("padding", "s: 'VALID'")) +
                      Node("xs", "Shape", {"x"}, Type()) + Node("ws", "Shape", {"w"}, Type()) +
                      Node("dx", "Conv2DBackpropInput", {"xs", "w", "dpool"},
                           Type() + Attr("strides", "list { i: 1 i: 2 i: 2 i: 1 }") + Attr("padding", "s: 'SAME'")) +
                      Node("dw", "Conv2DBackpropFilter", {"x", "ws", "dpool"},
                           Type() + Attr("strides", "list { i: 1 i: 2 i: 2 i: 1 }") + Attr("padding", "s: 'SAME'"));
  std::map<std::string, NDArray> feeds{
      {"x", NDArray::FromVector<float>(Shape{2, 5, 5, 2}, std::vector<float>(100, 1))}};
  std::vector<NDArray> r = test::RunText(graph, feeds, {"conv", "pool", "dx", "dw"});
  EXPECT_EQ(r[0].shape(), (Shape{2, 3, 3, 4}));
  ExpectClose(NDArray::FromVector<float>(Shape{1}, {r[0].ToVector<float>()[4 * 4]}), {1.8},
              "center output: 3x3x2 taps");
  EXPECT_EQ(r[1].shape(), (Shape{2, 2, 2, 4}));
  EXPECT_EQ(r[2].shape(), (Shape{2, 5, 5, 2}));
  EXPECT_EQ(r[3].shape(), (Shape{3, 3, 2, 4}));
}

}  // namespace
}  // namespace tf
}  // namespace ir
