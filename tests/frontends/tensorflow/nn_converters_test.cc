/*!
 * \file nn_converters_test.cc
 * \brief Converters of Elu/Selu/Softsign, IsNan/IsInf/IsFinite, depthwise convolution, MirrorPad, LRN,
 * TopK/InTopK and SpaceToBatchND/BatchToSpaceND on small GraphDefs with hand-computed results,
 * including the dilated-convolution pattern TensorFlow emits (SpaceToBatchND -> Conv2D ->
 * BatchToSpaceND) checked against Conv2D with dilations.
 */
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

NDArray Eval(const std::string& graph, const std::string& fetch, const std::map<std::string, NDArray>& feeds = {}) {
  return test::RunText(graph, feeds, {fetch})[0];
}

std::string IntPairs(const std::string& name, const std::vector<double>& v) {
  return Const(name, {static_cast<int64_t>(v.size() / 2), 2}, v, "DT_INT32", "int_val");
}

std::vector<double> Range(int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i + 1;
  return v;
}

TEST(TFNNConvertersTest, ActivationsAndFloatClasses) {
  std::string g = Const("x", {4}, {-1, 0, 2, -3}) + Node("elu", "Elu", {"x"}, Type()) +
                  Node("ss", "Softsign", {"x"}, Type()) + Node("g", "EluGrad", {"x", "elu"}, Type()) +
                  Node("nan", "IsNan", {"x"}, Type()) + Node("fin", "IsFinite", {"x"}, Type());
  ExpectClose(Eval(g, "elu"), {std::expm1(-1.0), 0, 2, std::expm1(-3.0)}, "elu");
  ExpectClose(Eval(g, "ss"), {-0.5, 0, 2.0 / 3, -0.75}, "softsign");
  // EluGrad(gradients = x, outputs = elu(x)): x * (elu + 1) where elu < 0.
  ExpectClose(Eval(g, "g"), {-1 * std::exp(-1.0), 0, 2, -3 * std::exp(-3.0)}, "EluGrad");
  ExpectClose(Eval(g, "nan"), {0, 0, 0, 0}, "IsNan", 0, 0);
  ExpectClose(Eval(g, "fin"), {1, 1, 1, 1}, "IsFinite", 0, 0);
}

TEST(TFNNConvertersTest, DepthwiseConvAndBackprops) {
  std::string attrs = Type() + Attr("strides", "list { i: 1 i: 1 i: 1 i: 1 }") + Attr("padding", "s: \"VALID\"");
  std::string g = Const("x", {1, 3, 3, 2}, Range(18)) + Const("w", {2, 2, 2, 1}, std::vector<double>(8, 1)) +
                  Node("dw", "DepthwiseConv2dNative", {"x", "w"}, attrs) + Ints("xs", {1, 3, 3, 2}) +
                  Ints("ws", {2, 2, 2, 1}) + Const("dy", {1, 2, 2, 2}, std::vector<double>(8, 1)) +
                  Node("dx", "DepthwiseConv2dNativeBackpropInput", {"xs", "w", "dy"}, attrs) +
                  Node("dwt", "DepthwiseConv2dNativeBackpropFilter", {"x", "ws", "dy"}, attrs);
  ExpectClose(Eval(g, "dw"), {20, 24, 28, 32, 44, 48, 52, 56}, "DepthwiseConv2dNative");
  ExpectClose(Eval(g, "dx"), {1, 1, 2, 2, 1, 1, 2, 2, 4, 4, 2, 2, 1, 1, 2, 2, 1, 1}, "BackpropInput");
  // Each tap sums the 2x2 block of inputs it meets: channel 0 taps (0,0) 1+3+7+9 ...
  ExpectClose(Eval(g, "dwt"), {20, 24, 28, 32, 44, 48, 52, 56}, "BackpropFilter");
}

TEST(TFNNConvertersTest, DilatedConvolutionPatternMatchesDilatedConv2D) {
  std::vector<double> w(9);
  for (int i = 0; i < 9; ++i) w[i] = 0.1 * (i - 4);
  std::string g = Placeholder("x", {1, 6, 6, 1}) + Const("w", {3, 3, 1, 1}, w) + Ints("block", {2, 2}) +
                  IntPairs("pad", {2, 2, 2, 2}) + IntPairs("crop", {0, 0, 0, 0}) +
                  Node("s2b", "SpaceToBatchND", {"x", "block", "pad"}, Type()) +
                  Node("conv", "Conv2D", {"s2b", "w"},
                       Type() + Attr("strides", "list { i: 1 i: 1 i: 1 i: 1 }") + Attr("padding", "s: \"VALID\"")) +
                  Node("b2s", "BatchToSpaceND", {"conv", "block", "crop"}, Type()) +
                  Node("ref", "Conv2D", {"x", "w"},
                       Type() + Attr("strides", "list { i: 1 i: 1 i: 1 i: 1 }") + Attr("padding", "s: \"SAME\"") +
                           Attr("dilations", "list { i: 1 i: 2 i: 2 i: 1 }"));
  NDArray x = test::MakeArray(Shape{1, 6, 6, 1}, DType::kFloat32, Range(36));
  std::vector<NDArray> r = test::RunText(g, {{"x", x}}, {"b2s", "ref"});
  EXPECT_EQ(r[0].shape(), (Shape{1, 6, 6, 1}));
  ExpectClose(r[0], test::ToDoubles(r[1]), "atrous pattern vs dilated Conv2D", 1e-4);
  std::string old = Const("y", {1, 4, 4, 1}, Range(16)) + IntPairs("p", {0, 0, 0, 0}) +
                    Node("s", "SpaceToBatch", {"y", "p"}, Type() + Attr("block_size", "i: 2")) +
                    Node("b", "BatchToSpace", {"s", "p"}, Type() + Attr("block_size", "i: 2"));
  ExpectClose(Eval(old, "s"), {1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16}, "SpaceToBatch");
  ExpectClose(Eval(old, "b"), Range(16), "BatchToSpace");
}

TEST(TFNNConvertersTest, MirrorPadLRNTopKInTopK) {
  std::string g = Const("t", {2, 3}, {1, 2, 3, 4, 5, 6}) + IntPairs("p", {1, 1, 2, 2}) +
                  Node("mp", "MirrorPad", {"t", "p"}, Type() + Attr("mode", "s: \"SYMMETRIC\"")) +
                  Ints("k", {2}, true) + Node("top", "TopKV2", {"t", "k"}, Type()) + Ints("targets", {2, 0}) +
                  Node("in", "InTopKV2", {"t", "targets", "k"}, Type("DT_INT32")) +
                  Const("img", {1, 1, 1, 3}, {1, 2, 3}) +
                  Node("lrn", "LRN", {"img"}, Type() + Attr("depth_radius", "i: 1") + Attr("alpha", "f: 0.5"));
  ExpectClose(Eval(g, "mp"), {2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5},
              "MirrorPad");
  std::vector<NDArray> top = test::RunText(g, {}, {"top:0", "top:1"});
  ExpectClose(top[0], {3, 2, 6, 5}, "TopKV2 values");
  EXPECT_EQ(top[1].dtype(), DType::kInt32);
  ExpectClose(top[1], {2, 1, 2, 1}, "TopKV2 indices", 0, 0);
  ExpectClose(Eval(g, "in"), {1, 0}, "InTopKV2", 0, 0);
  // bias 1, alpha 0.5, beta 0.5, radius 1: x / sqrt(1 + 0.5 * (sum of neighbours' squares)).
  ExpectClose(Eval(g, "lrn"), {1 / std::sqrt(3.5), 2 / std::sqrt(8.0), 3 / std::sqrt(7.5)}, "LRN");
}

}  // namespace
}  // namespace tf
}  // namespace ir
