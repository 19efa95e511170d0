/*!
 * \file attr_validation_test.cc
 * \brief Converters validate attributes and shapes as TensorFlow does: what TensorFlow rejects
 * is an error naming the TF node, op and the offending attribute or shapes, never a result.
 */
#include <gtest/gtest.h>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

NDArray Eval(const std::string& graph, const std::string& fetch = "r") { return test::RunText(graph, {}, {fetch})[0]; }

std::string Bools(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  return Const(name, dims, values, "DT_BOOL", "bool_val");
}

TEST(TFAttrValidationTest, SelectFollowsTensorFlowsShapeRules) {
  std::string values = Const("t", {2, 3}, {1, 2, 3, 4, 5, 6}) + Const("e", {2, 3}, {-1, -2, -3, -4, -5, -6});
  ExpectClose(Eval(values + Bools("c", {2}, {1, 0}) + Node("r", "Select", {"c", "t", "e"}, Type())),
              {1, 2, 3, -4, -5, -6}, "a vector condition picks rows", 0, 0);
  ExpectClose(Eval(values + Bools("c", {}, {0}) + Node("r", "Select", {"c", "t", "e"}, Type())),
              {-1, -2, -3, -4, -5, -6}, "a scalar condition", 0, 0);
  // The case: condition [3], values [1, N]: TensorFlow raises, we returned [3, N].
  std::string one_row =
      Const("t", {1, 4}, {1, 2, 3, 4}) + Const("e", {1, 4}, {5, 6, 7, 8}) + Bools("c", {3}, {1, 0, 1});
  EXPECT_ERROR(Eval(one_row + Node("r", "Select", {"c", "t", "e"}, Type())),
               "TensorFlow node 'r' (op Select): the number of rows of 'then' [1,4] must match the size of the vector "
               "'cond' [3]");
  EXPECT_ERROR(Eval(one_row + Node("r", "SelectV2", {"c", "t", "e"}, Type())), "'r'");
  EXPECT_ERROR(Eval(values + Bools("c", {1, 3}, {1, 0, 1}) + Node("r", "Select", {"c", "t", "e"}, Type())),
               "'cond' and 'then' must have the same shape, but got [1,3] and [2,3]");
  std::string short_else = Const("e2", {3}, {0, 0, 0}) + Bools("c", {}, {1});
  EXPECT_ERROR(Eval(values + short_else + Node("r", "Select", {"c", "t", "e2"}, Type())),
               "'then' and 'else' must have the same shape");
  EXPECT_EQ(Eval(values + Bools("c", {1, 3}, {1, 0, 1}) + Node("r", "SelectV2", {"c", "t", "e"}, Type())).shape(),
            (Shape{2, 3}))
      << "SelectV2 broadcasts";
}

/*! \brief A Conv2D of a [1,4,4,1] input and a [2,2,1,1] filter with `attrs`. */
std::string Conv(const std::string& attrs) {
  return Const("x", {1, 4, 4, 1}, std::vector<double>(16, 1)) + Const("w", {2, 2, 1, 1}, {1, 1, 1, 1}) +
         Node("r", "Conv2D", {"x", "w"}, Type() + attrs);
}

std::string List(const std::string& key, const std::string& values) { return Attr(key, "list { " + values + " }"); }

TEST(TFAttrValidationTest, WindowAttributesNeedTensorFlowsFourDimensions) {
  std::string valid = Attr("padding", "s: 'VALID'");
  EXPECT_EQ(Eval(Conv(valid + List("strides", "i: 1 i: 2 i: 2 i: 1"))).shape(), (Shape{1, 2, 2, 1}));
  EXPECT_ERROR(Eval(Conv(valid + List("strides", "i: 2 i: 2"))),
               "TensorFlow node 'r' (op Conv2D): attribute 'strides' (2,2) must specify 4 dimensions");
  EXPECT_ERROR(Eval(Conv(valid + List("strides", "i: 2 i: 1 i: 1 i: 1"))), "not 1 along the batch and depth");
  EXPECT_ERROR(Eval(Conv(valid + List("strides", "i: 1 i: 1 i: 1 i: 1") + List("dilations", "i: 2 i: 2"))),
               "attribute 'dilations' (2,2) must specify 4 dimensions");
  EXPECT_ERROR(Eval(Conv(valid + List("strides", "i: 1 i: 1 i: 1 i: 1") + Attr("data_format", "s: 'NDHWC'"))),
               "attribute 'data_format' must be \"NHWC\" or \"NCHW\", got \"NDHWC\"");
  EXPECT_ERROR(Eval(Conv(Attr("padding", "s: 'FULL'") + List("strides", "i: 1 i: 1 i: 1 i: 1"))),
               "attribute 'padding' must be");
  std::string explicit_pads = Attr("padding", "s: 'EXPLICIT'") + List("strides", "i: 1 i: 1 i: 1 i: 1");
  EXPECT_EQ(Eval(Conv(explicit_pads + List("explicit_paddings", "i: 0 i: 0 i: 1 i: 0 i: 0 i: 1 i: 0 i: 0"))).shape(),
            (Shape{1, 4, 4, 1}));
  EXPECT_ERROR(Eval(Conv(explicit_pads + List("explicit_paddings", "i: 0 i: 0 i: 1 i: 0 i: 0 i: 1 i: 1 i: 0"))),
               "attribute 'explicit_paddings' (0,0,1,0,0,1,1,0) pads the batch or depth dimension of NHWC");
  std::string x = Const("x", {1, 4, 4, 1}, std::vector<double>(16, 1));
  std::string pool_ok = List("strides", "i: 1 i: 2 i: 2 i: 1") + valid;
  EXPECT_EQ(Eval(x + Node("r", "MaxPool", {"x"}, Type() + pool_ok + List("ksize", "i: 1 i: 2 i: 2 i: 1"))).shape(),
            (Shape{1, 2, 2, 1}));
  EXPECT_ERROR(Eval(x + Node("r", "MaxPool", {"x"}, Type() + pool_ok + List("ksize", "i: 2 i: 2"))),
               "TensorFlow node 'r' (op MaxPool): attribute 'ksize' (2,2) must specify 4 dimensions");
  EXPECT_ERROR(Eval(x + Node("r", "AvgPool", {"x"}, Type() + pool_ok + List("ksize", "i: 1 i: 2 i: 2 i: 2"))),
               "attribute 'ksize' (1,2,2,2) is not 1 along the batch and depth dimensions of NHWC");
  std::string unit = List("strides", "i: 1 i: 1 i: 1 i: 1") + List("ksize", "i: 1 i: 1 i: 1 i: 1");
  EXPECT_ERROR(Eval(x + Node("r", "AvgPool", {"x"}, Type() + unit + Attr("padding", "s: 'EXPLICIT'"))),
               "attribute 'padding' must be \"SAME\" or \"VALID\", got \"EXPLICIT\"");
}

TEST(TFAttrValidationTest, ListLengthAttributeMustCountTheInputs) {
  std::string m = Const("m", {2, 2}, {1, 2, 3, 4}) + Ints("axis", {0}, true);
  EXPECT_EQ(Eval(m + Node("r", "ConcatV2", {"m", "m", "axis"}, Type() + Attr("N", "i: 2"))).shape(), (Shape{4, 2}));
  EXPECT_ERROR(Eval(m + Node("r", "ConcatV2", {"m", "m", "axis"}, Type() + Attr("N", "i: 3"))),
               "TensorFlow node 'r' (op ConcatV2): attribute 'N' is 3 but the node has 2 input(s) in that list");
  EXPECT_ERROR(Eval(m + Node("r", "Concat", {"axis", "m", "m"}, Type() + Attr("N", "i: 1"))), "attribute 'N' is 1");
  EXPECT_ERROR(Eval(m + Node("r", "Pack", {"m", "m"}, Type() + Attr("N", "i: 3"))), "attribute 'N' is 3");
  EXPECT_ERROR(Eval(m + Node("r", "AddN", {"m", "m", "m"}, Type() + Attr("N", "i: 2"))), "attribute 'N' is 2");
  EXPECT_ERROR(Eval(m + Ints("s", {2, 2}) + Node("r", "ConcatOffset", {"axis", "s", "s"}, Attr("N", "i: 1"))),
               "attribute 'N' is 1");
  EXPECT_ERROR(Eval(m + Ints("s", {2, 2}) + Ints("big", {5}, true) +
                    Node("r", "ConcatOffset", {"big", "s", "s"}, Attr("N", "i: 2"))),
               "axis (shape (2,2)) 5 is out of range [-2, 2)");
}

TEST(TFAttrValidationTest, PadNeedsPaddingsOfShapeRankByTwo) {
  std::string m = Const("m", {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(
      Eval(m + Const("p", {2, 2}, {1, 0, 0, 1}, "DT_INT32", "int_val") + Node("r", "Pad", {"m", "p"}, Type())).shape(),
      (Shape{3, 3}));
  EXPECT_ERROR(Eval(m + Ints("p", {1, 0, 0, 1}) + Node("r", "Pad", {"m", "p"}, Type())),
               "TensorFlow node 'r' (op Pad): paddings must be a matrix [rank, 2], but its shape is [4]");
}

}  // namespace
}  // namespace tf
}  // namespace ir
