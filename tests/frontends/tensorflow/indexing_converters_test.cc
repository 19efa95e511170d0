/*!
 * \file indexing_converters_test.cc
 * \brief The index-driven converters (convert_indexing.cc): GatherNd, ScatterNd, the segment sums,
 * Unique, Where, InvertPermutation, RandomShuffle, Cumsum/Cumprod, ParallelConcat and the sparse
 * variable updates, on small hand-computed cases.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

const std::string kMatrix = Const("m", {3, 2}, {1, 2, 3, 4, 5, 6});

std::vector<NDArray> Eval(const std::string& graph, const std::vector<std::string>& fetches) {
  return test::RunText(graph, {}, fetches);
}

TEST(TFIndexingConvertersTest, GatherNdAndScatterNd) {
  std::string graph = kMatrix + Const("idx", {2, 2}, {2, 1, 0, 0}, "DT_INT32", "int_val") +
                      Node("g", "GatherNd", {"m", "idx"}, Type() + Type("DT_INT32", "Tindices")) +
                      Const("rows", {3, 1}, {1, 0, 1}, "DT_INT32", "int_val") + Ints("shape", {3, 2}) +
                      Node("s", "ScatterNd", {"rows", "m", "shape"}, Type() + Type("DT_INT32", "Tindices"));
  std::vector<NDArray> r = Eval(graph, {"g", "s"});
  ExpectClose(r[0], {6, 1}, "GatherNd", 0, 0);
  ExpectClose(r[1], {3, 4, 1 + 5, 2 + 6, 0, 0}, "ScatterNd adds duplicates", 0, 0);
}

TEST(TFIndexingConvertersTest, SegmentSums) {
  std::string graph = kMatrix + Ints("ids", {2, -1, 2}) + Ints("n", {4}, true) +
                      Node("u", "UnsortedSegmentSum", {"m", "ids", "n"}, Type()) + Ints("sorted", {0, 0, 3}) +
                      Node("s", "SegmentSum", {"m", "sorted"}, Type()) +
                      Node("mx", "UnsortedSegmentMax", {"m", "sorted", "n"}, Type()) +
                      Node("mn", "UnsortedSegmentMin", {"m", "sorted", "n"}, Type()) +
                      Node("mean", "SegmentMean", {"m", "sorted"}, Type()) +
                      Node("smax", "SegmentMax", {"m", "sorted"}, Type()) +
                      Node("smin", "SegmentMin", {"m", "sorted"}, Type());
  std::vector<NDArray> r = Eval(graph, {"u", "s", "mx", "mn", "mean", "smax", "smin"});
  const double kLow = std::numeric_limits<float>::lowest();  // an empty segment's max
  ExpectClose(r[0], {0, 0, 0, 0, 6, 8, 0, 0}, "UnsortedSegmentSum drops id -1", 0, 0);
  EXPECT_EQ(r[1].shape(), (Shape{4, 2}));
  ExpectClose(r[1], {4, 6, 0, 0, 0, 0, 5, 6}, "SegmentSum", 0, 0);
  ExpectClose(r[2], {3, 4, kLow, kLow, kLow, kLow, 5, 6}, "UnsortedSegmentMax", 0, 0);
  ExpectClose(r[3], {1, 2, -kLow, -kLow, -kLow, -kLow, 5, 6}, "UnsortedSegmentMin", 0, 0);
  ExpectClose(r[4], {2, 3, 0, 0, 0, 0, 5, 6}, "SegmentMean", 0, 0);
  ExpectClose(r[5], {3, 4, 0, 0, 0, 0, 5, 6}, "SegmentMax", 0, 0);
  ExpectClose(r[6], {1, 2, 0, 0, 0, 0, 5, 6}, "SegmentMin", 0, 0);
}

TEST(TFIndexingConvertersTest, UniqueWhereAndInvertPermutation) {
  std::string graph = Ints("x", {7, 3, 7, 1, 3}) +
                      Node("u", "Unique", {"x"}, Type("DT_INT32") + Type("DT_INT64", "out_idx")) +
                      Const("c", {2, 2}, {0, 1, 1, 0}, "DT_BOOL", "bool_val") + Node("w", "Where", {"c"}) +
                      Ints("p", {2, 0, 1}) + Node("inv", "InvertPermutation", {"p"}, Type("DT_INT32"));
  std::vector<NDArray> r = Eval(graph, {"u:0", "u:1", "w", "inv"});
  ExpectClose(r[0], {7, 3, 1}, "Unique y", 0, 0);
  EXPECT_EQ(r[1].dtype(), DType::kInt64);
  ExpectClose(r[1], {0, 1, 0, 2, 1}, "Unique idx", 0, 0);
  EXPECT_EQ(r[2].shape(), (Shape{2, 2}));
  ExpectClose(r[2], {0, 1, 1, 0}, "Where coordinates", 0, 0);
  ExpectClose(r[3], {1, 2, 0}, "InvertPermutation", 0, 0);
}

TEST(TFIndexingConvertersTest, CumsumCumprodShuffleAndParallelConcat) {
  std::string graph =
      kMatrix + Ints("axis", {0}, true) + Node("cs", "Cumsum", {"m", "axis"}, Type() + Attr("exclusive", "b: true")) +
      Node("cp", "Cumprod", {"m", "axis"}, Type() + Attr("reverse", "b: true")) +
      Node("sh", "RandomShuffle", {"m"}, Type() + Attr("seed", "i: 7")) + Const("a", {1, 2}, {1, 2}) +
      Const("b", {1, 2}, {3, 4}) +
      Node("pc", "ParallelConcat", {"a", "b"}, Type() + Attr("N", "i: 2") + Attr("shape", ShapeProto({2, 2})));
  std::vector<NDArray> r = Eval(graph, {"cs", "cp", "sh", "pc"});
  ExpectClose(r[0], {0, 0, 1, 2, 4, 6}, "exclusive Cumsum", 0, 0);
  ExpectClose(r[1], {15, 48, 15, 24, 5, 6}, "reverse Cumprod", 0, 0);
  std::vector<double> rows = test::ToDoubles(r[2]);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(rows[2 * i + 1], rows[2 * i] + 1) << "row " << i << " stays whole";
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r[3].shape(), (Shape{2, 2}));
  ExpectClose(r[3], {1, 2, 3, 4}, "ParallelConcat", 0, 0);
}

TEST(TFIndexingConvertersTest, ParallelConcatNeedsValuesWithALeadingOne) {
  std::string graph =
      Const("a", {2}, {1, 2}) + Const("b", {2}, {3, 4}) +
      Node("pc", "ParallelConcat", {"a", "b"}, Type() + Attr("N", "i: 2") + Attr("shape", ShapeProto({2, 2})));
  try {
    Eval(graph, {"pc"});
    FAIL() << "values of shape [2] were concatenated";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("need a first dimension of 1"), std::string::npos) << err.what();
  }
}

TEST(TFIndexingConvertersTest, ScatterUpdatesOnRefsAndResources) {
  std::string graph = Variable("v", {3, 2}) + Node("v/init", "Assign", {"v", "m"}, Type()) + kMatrix +
                      Ints("i", {2, 2}) + Const("u", {2, 2}, {1, 1, 1, 1}) +
                      Node("add", "ScatterAdd", {"v", "i", "u"}, Type() + Type("DT_INT32", "Tindices")) +
                      Ints("one", {1}) + Const("z", {1, 2}, {0, 0}) +
                      Node("upd", "ScatterUpdate", {"v", "one", "z"}, Type() + Type("DT_INT32", "Tindices")) +
                      Node("sub", "ScatterSub", {"v", "i", "u"}, Type() + Type("DT_INT32", "Tindices")) +
                      Node("h", "VarHandleOp", {}, Type("DT_FLOAT", "dtype") + Attr("shape", ShapeProto({3, 2}))) +
                      Node("h/init", "AssignVariableOp", {"h", "m"}, Type("DT_FLOAT", "dtype")) +
                      Node("h/add", "ResourceScatterAdd", {"h", "i", "u"}, Type("DT_FLOAT", "dtype")) +
                      Node("h/read", "ReadVariableOp", {"h"}, Type("DT_FLOAT", "dtype"));
  SessionOptions options;
  options.fusion = false;
  TFSession s(test::TextModel(graph), options);
  s.Run({}, {}, {"v/init", "h/init"});
  s.Run({}, {}, {"add", "h/add"});
  s.Run({}, {}, {"upd"});
  std::vector<NDArray> out = s.Run({}, {"v", "h/read"});
  ExpectClose(out[0], {1, 2, 0, 0, 7, 8}, "v after ScatterAdd and ScatterUpdate", 0, 0);
  ExpectClose(out[1], {1, 2, 3, 4, 7, 8}, "h after ResourceScatterAdd", 0, 0);
  s.Run({}, {}, {"sub"});
  ExpectClose(s.Run({}, {"v"})[0], {1, 2, 0, 0, 5, 6}, "v after ScatterSub", 0, 0);
}

}  // namespace
}  // namespace tf
}  // namespace ir
