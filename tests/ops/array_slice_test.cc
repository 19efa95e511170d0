#include <gtest/gtest.h>

#include "ops/array_test_util.h"
#include "ops/strided_slice_spec.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

/*! \brief A strided slice of arange(60).reshape(3, 4, 5) and what NumPy's x[...] gives for it. */
struct SliceCase {
  std::vector<int64_t> begin, end, strides;
  int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// Generated with NumPy basic indexing (slices, Ellipsis, None, integers), which TensorFlow's
// strided_slice follows: fixed corner cases first, then random specs.
const std::vector<SliceCase>& NumPyCases() {
  static const std::vector<SliceCase> cases = {
      {{0}, {0}, {1}, 1, 1, 0, 0, 0, {3, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                                 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
                                                 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}},
      {{1}, {3}, {1}, 0, 0, 0, 0, 0, {2, 4, 5}, {20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33,
                                                 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                                 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}},
      {{-1}, {0}, {-1}, 0, 1, 0, 0, 0, {3, 4, 5}, {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54,
                                                   55, 56, 57, 58, 59, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                   30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 0,  1,  2,  3,  4,
                                                   5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
      {{0, 0}, {0, 0}, {-1, -2}, 3, 3, 0, 0, 0, {3, 2, 5}, {55, 56, 57, 58, 59, 45, 46, 47, 48, 49, 35, 36, 37, 38, 39,
                                                            25, 26, 27, 28, 29, 15, 16, 17, 18, 19, 5,  6,  7,  8,  9}},
      {{-10, -100}, {10, 100}, {1, 3}, 0, 0, 0, 0, 0, {3, 2, 5}, {0,  1,  2,  3,  4,  15, 16, 17, 18, 19,
                                                                  20, 21, 22, 23, 24, 35, 36, 37, 38, 39,
                                                                  40, 41, 42, 43, 44, 55, 56, 57, 58, 59}},
      {{0, 1}, {0, -1}, {1, 2}, 0, 0, 1, 0, 0, {3, 4, 2}, {1,  3,  6,  8,  11, 13, 16, 18, 21, 23, 26, 28,
                                                           31, 33, 36, 38, 41, 43, 46, 48, 51, 53, 56, 58}},
      {{1, 0}, {2, 0}, {1, 1}, 0, 0, 2, 0, 0, {1, 4, 5}, {20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                          30, 31, 32, 33, 34, 35, 36, 37, 38, 39}},
      {{0, 0}, {0, 2}, {1, 1}, 0, 0, 0, 1, 0, {1, 2, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                                             14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                                                             28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39}},
      {{0, 0}, {0, 0}, {1, 1}, 0, 0, 1, 2, 0, {3, 4, 5, 1}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                                             12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                                                             24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
                                                             36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                                             48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}},
      {{1}, {0}, {1}, 0, 0, 0, 0, 1, {4, 5}, {20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                              30, 31, 32, 33, 34, 35, 36, 37, 38, 39}},
      {{-1, 3}, {0, 0}, {1, -1}, 0, 0, 0, 0, 1, {3, 5}, {55, 56, 57, 58, 59, 50, 51, 52, 53, 54, 45, 46, 47, 48, 49}},
      {{0, 2, 0},
       {0, 0, 0},
       {1, 1, 1},
       1,
       1,
       0,
       4,
       2,
       {3, 1, 5},
       {10, 11, 12, 13, 14, 30, 31, 32, 33, 34, 50, 51, 52, 53, 54}},
      {{0, -2}, {0, 0}, {1, 1}, 0, 0, 1, 0, 2, {3, 4}, {3, 8, 13, 18, 23, 28, 33, 38, 43, 48, 53, 58}},
      {{2}, {1}, {1}, 0, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{1}, {2}, {-1}, 0, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{5, 0, 4},
       {-10, 0, 0},
       {-2, 1, -3},
       2,
       2,
       0,
       0,
       0,
       {2, 4, 2},
       {44, 41, 49, 46, 54, 51, 59, 56, 4, 1, 9, 6, 14, 11, 19, 16}},
      {{0, 0, 0, 0},
       {0, 0, 0, 0},
       {1, 1, 1, 1},
       0,
       0,
       2,
       5,
       8,
       {1, 3, 4, 1},
       {0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55}},
      {{0, 0, 4}, {0, 0, 0}, {1, 1, 1}, 0, 0, 0, 0, 7, {}, {4}},
      {{}, {}, {}, 0, 0, 0, 0, 0, {3, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                              15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                              30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
                                              45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}},
      {{-1, 2, 1}, {3, -7, -4}, {1, -1, 1}, 3, 2, 0, 0, 4, {3, 4}, {16, 11, 6, 1, 36, 31, 26, 21, 56, 51, 46, 41}},
      {{3}, {3}, {-1}, 0, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{-4, 1, -6, 4}, {-7, -6, 2, -6}, {-1, -1, -1, -1}, 0, 0, 8, 0, 0, {0, 2, 0}, {}},
      {{0, 4, 7, -6}, {2, 5, -2, 1}, {3, 1, -2, 3}, 10, 1, 0, 4, 0, {1, 4, 1, 1}, {0, 5, 10, 15}},
      {{1, -2, -6, -7}, {3, 4, 6, 4}, {1, 2, 1, -2}, 0, 0, 0, 4, 1, {1, 1, 0}, {}},
      {{4, -5, -5, -6}, {-1, 2, 4, -5}, {-2, 1, 1, 3}, 0, 2, 0, 8, 0, {0, 4, 4, 1}, {}},
      {{2, -2}, {1, -5}, {1, 1}, 0, 0, 0, 0, 3, {5}, {50, 51, 52, 53, 54}},
      {{6}, {2}, {1}, 0, 0, 0, 1, 0, {1, 3, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                                    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                    30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
                                                    45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}},
      {{-2, 2, -1, -2}, {2, 3, -1, -4}, {-1, -2, 3, 1}, 0, 0, 1, 0, 8, {0, 0}, {}},
      {{-7}, {2}, {1}, 0, 0, 0, 0, 0, {2, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                                  14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                                                  28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39}},
      {{6}, {-4}, {-1}, 0, 0, 0, 0, 0, {3, 4, 5}, {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54,
                                                   55, 56, 57, 58, 59, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                   30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 0,  1,  2,  3,  4,
                                                   5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
      {{0, 0, 4}, {-6, 0, -3}, {1, 2, 3}, 0, 4, 0, 2, 0, {0, 1, 0, 5}, {}},
      {{1}, {-2}, {1}, 0, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{4, 5, 2}, {6, -4, 5}, {2, -1, -3}, 0, 0, 0, 0, 0, {0, 3, 0}, {}},
      {{-2, -7}, {5, 5}, {1, 2}, 0, 2, 0, 0, 1, {2, 5}, {20, 21, 22, 23, 24, 30, 31, 32, 33, 34}},
      {{5, -6, 0}, {7, -4, 2}, {-2, 1, -1}, 2, 2, 0, 1, 0, {1, 3, 0, 5}, {}},
      {{6, 0, 5}, {3, 7, 4}, {1, 1, 3}, 0, 0, 0, 0, 0, {0, 4, 0}, {}},
      {{-5}, {-5}, {1}, 1, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{3, -7}, {7, 5}, {2, -2}, 0, 0, 0, 1, 0, {1, 0, 4, 5}, {}},
      {{-2, -4}, {-4, 5}, {1, -1}, 0, 0, 2, 0, 1, {4, 5}, {20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                           30, 31, 32, 33, 34, 35, 36, 37, 38, 39}},
      {{7, -1}, {4, 6}, {2, -1}, 0, 0, 2, 0, 0, {0, 4, 5}, {}},
      {{5}, {-5}, {-1}, 0, 0, 0, 1, 0, {1, 3, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                                      15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                                      30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
                                                      45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}},
      {{0, 1}, {2, 1}, {-2, 3}, 1, 1, 2, 0, 0, {2, 4, 5}, {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,
                                                           54, 55, 56, 57, 58, 59, 0,  1,  2,  3,  4,  5,  6,  7,
                                                           8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
      {{-4}, {-3}, {1}, 0, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{0}, {-2}, {-1}, 0, 0, 0, 0, 0, {0, 4, 5}, {}},
      {{0, 4}, {1, 1}, {-1, 2}, 0, 0, 0, 0, 0, {0, 0, 5}, {}},
  };
  return cases;
}

std::string Text(const std::vector<int64_t>& values) {
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : "") + std::to_string(values[i]);
  return s + ")";
}

Attrs ToAttrs(const SliceCase& c) {
  return {{"begin", Text(c.begin)},
          {"end", Text(c.end)},
          {"strides", Text(c.strides)},
          {"begin_mask", std::to_string(c.begin_mask)},
          {"end_mask", std::to_string(c.end_mask)},
          {"ellipsis_mask", std::to_string(c.ellipsis_mask)},
          {"new_axis_mask", std::to_string(c.new_axis_mask)},
          {"shrink_axis_mask", std::to_string(c.shrink_axis_mask)}};
}

op::StridedSliceParam Param(const Attrs& attrs) {
  op::StridedSliceParam p;
  p.Init(attrs);
  return p;
}

NodeAttrs Named(const std::string& name) {
  NodeAttrs attrs;
  attrs.name = name;
  attrs.op = Op::Get("strided_slice");
  return attrs;
}

TEST(StridedSliceSpecTest, CanonicalizesLikeTensorFlow) {
  NodeAttrs attrs = Named("s");
  // x[1:, ::-2, -1]: begin clamped, reversed stride, shrunk last dimension.
  op::StridedSliceSpec spec = op::CanonicalizeStridedSlice(attrs,
                                                           Param({{"begin", "(1,0,-1)"},
                                                                  {"end", "(9,0,0)"},
                                                                  {"strides", "(1,-2,1)"},
                                                                  {"end_mask", "2"},
                                                                  {"begin_mask", "2"},
                                                                  {"shrink_axis_mask", "4"}}),
                                                           Shape{3, 4, 5});
  EXPECT_EQ(spec.begin, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(spec.stride, (std::vector<int64_t>{1, -2, 1}));
  EXPECT_EQ(spec.size, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(spec.out_shape, (Shape{2, 2}));
  // Unknown dimensions stay unknown (1 when shrunk); unknown rank stays unknown.
  op::StridedSliceParam p = Param({{"begin", "(0,1)"}, {"end", "(2,2)"}, {"shrink_axis_mask", "2"}});
  EXPECT_EQ(op::CanonicalizeStridedSlice(attrs, p, Shape{U, U, 7}).out_shape, (Shape{U, 7}));
  EXPECT_FALSE(op::CanonicalizeStridedSlice(attrs, p, Shape()).out_shape.rank_known());
}

TEST(StridedSliceSpecTest, ErrorsNameTheProblem) {
  NodeAttrs attrs = Named("s");
  Shape in{3, 4};
  EXPECT_ERROR(op::CanonicalizeStridedSlice(attrs, Param({{"begin", "(0)"}, {"end", "(1)"}, {"strides", "(0)"}}), in),
               "node 's' (op strided_slice): stride 0 for dimension 0 of input [3,4]");
  EXPECT_ERROR(
      op::CanonicalizeStridedSlice(attrs, Param({{"begin", "(3)"}, {"end", "(4)"}, {"shrink_axis_mask", "1"}}), in),
      "node 's' (op strided_slice): index 3 is out of bounds for dimension 0 of input [3,4]");
  EXPECT_ERROR(
      op::CanonicalizeStridedSlice(attrs, Param({{"begin", "(-4)"}, {"end", "(0)"}, {"shrink_axis_mask", "1"}}), in),
      "index -4 is out of bounds for dimension 0");
  EXPECT_ERROR(op::CanonicalizeStridedSlice(attrs, Param({{"begin", "(0,0,0)"}, {"end", "(1,1,1)"}}), in),
               "slice entry 2 refers to dimension 2 but input [3,4] has rank 2");
  EXPECT_ERROR(op::CanonicalizeStridedSlice(attrs, Param({{"begin", "(0,0)"}, {"end", "(1)"}}), in),
               "begin, end and strides must have one length, got begin (0,0), end (1), strides ()");
  EXPECT_ERROR(
      op::CanonicalizeStridedSlice(attrs, Param({{"begin", "(0,0)"}, {"end", "(1,1)"}, {"ellipsis_mask", "3"}}), in),
      "ellipsis_mask 3 has more than one bit set");
  EXPECT_ERROR(
      op::CanonicalizeStridedSlice(
          attrs, Param({{"begin", "(1)"}, {"end", "(2)"}, {"strides", "(-1)"}, {"shrink_axis_mask", "1"}}), in),
      "shrinking dimension 0 needs a positive stride, got -1");
}

TEST(StridedSliceTest, MatchesNumPyIndexing) {
  NDArray x = Iota(Shape{3, 4, 5}, DType::kInt32);
  for (const SliceCase& c : NumPyCases()) {
    Attrs attrs = ToAttrs(c);
    SCOPED_TRACE(Text(c.begin) + Text(c.end) + Text(c.strides) + " masks " + std::to_string(c.begin_mask) + "," +
                 std::to_string(c.end_mask) + "," + std::to_string(c.ellipsis_mask) + "," +
                 std::to_string(c.new_axis_mask) + "," + std::to_string(c.shrink_axis_mask));
    NDArray y = RunOp("strided_slice", attrs, {x})[0];
    EXPECT_EQ(y.shape(), Shape(c.shape));
    ExpectNear(y, c.values, 0, 0);
  }
}

TEST(StridedSliceTest, GradientWritesBackIntoZeros) {
  NDArray x = RandomArray(Shape{3, 4, 5}, DType::kFloat64, 1);
  for (size_t i = 0; i < NumPyCases().size(); i += 4) {
    SCOPED_TRACE(i);
    CheckGradient("strided_slice", ToAttrs(NumPyCases()[i]), {x});
  }
  // strided_slice_grad is linear in dy; its gradient is strided_slice again.
  Attrs attrs = ToAttrs(NumPyCases()[15]);
  NDArray dy = RandomArray(Shape(NumPyCases()[15].shape), DType::kFloat64, 2);
  CheckGradient("strided_slice_grad", attrs, {dy, x}, GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
}

TEST(StridedSliceTest, GradForwardPlacesValues) {
  // x[::2, 1] of a [3, 2] input: rows 0 and 2 of column 1.
  NDArray dy = NDArray::FromVector<float>(Shape{2}, {7, 9});
  Attrs attrs = {
      {"begin", "(0,1)"}, {"end", "(0,0)"}, {"strides", "(2,1)"}, {"end_mask", "1"}, {"shrink_axis_mask", "2"}};
  ExpectNear(RunOp("strided_slice_grad", attrs, {dy, Iota(Shape{3, 2})})[0], {0, 7, 0, 0, 0, 9});
  EXPECT_EQ(InferShapes("strided_slice_grad", attrs, {Shape(), Shape{3, 2}}).in[0], (Shape{2}));
}

TEST(StridedSliceTest, PartialShapes) {
  Attrs attrs = {{"begin", "(0,1)"}, {"end", "(0,3)"}, {"end_mask", "1"}, {"new_axis_mask", "0"}};
  EXPECT_EQ(InferShapes("strided_slice", attrs, {Shape{U, 5}}).out[0], (Shape{U, 2}));
  EXPECT_FALSE(InferShapes("strided_slice", attrs, {Shape()}).out[0].rank_known());
}

TEST(SliceTest, TakesBoxesLikeTfSlice) {
  NDArray x = Iota(Shape{3, 4});
  NDArray y = RunOp("slice", {{"begin", "(1,1)"}, {"size", "(2,-1)"}}, {x})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  ExpectNear(y, {5, 6, 7, 9, 10, 11});
  ExpectNear(RunOp("slice", {{"begin", "(0,3)"}, {"size", "(3,1)"}}, {x})[0], {3, 7, 11});
  EXPECT_EQ(RunOp("slice", {{"begin", "(3,0)"}, {"size", "(0,4)"}}, {x})[0].shape(), (Shape{0, 4}));
  EXPECT_EQ(InferShapes("slice", {{"begin", "(0,1)"}, {"size", "(2,-1)"}}, {Shape{U, 5}}).out[0], (Shape{2, 4}));
  EXPECT_EQ(InferShapes("slice", {{"begin", "(0,1)"}, {"size", "(2,-1)"}}, {Shape()}).out[0], (Shape{2, U}));
  EXPECT_ERROR(RunOp("slice", {{"begin", "(1,1)"}, {"size", "(3,1)"}}, {x}),
               "node 'slice' (op slice): slice begin (1,1) size (3,1) is out of bounds of input [3,4] in dimension 0");
  EXPECT_ERROR(RunOp("slice", {{"begin", "(1)"}, {"size", "(1)"}}, {x}),
               "begin (1) does not match input [3,4] (rank 2)");
  EXPECT_ERROR(RunOp("slice", {{"begin", "(-1,0)"}, {"size", "(1,1)"}}, {x}), "is out of bounds");
  CheckGradient("slice", {{"begin", "(1,0,2)"}, {"size", "(1,-1,2)"}},
                {RandomArray(Shape{3, 2, 4}, DType::kFloat64, 3)});
}

TEST(PadTest, SurroundsWithConstant) {
  NDArray x = Iota(Shape{2, 2});
  NDArray y = RunOp("pad", {{"paddings", "(1,0,0,2)"}, {"constant_value", "-1"}}, {x})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  ExpectNear(y, {-1, -1, -1, -1, 0, 1, -1, -1, 2, 3, -1, -1});
  NDArray flags = RunOp("pad", {{"paddings", "(1,1)"}}, {NDArray::FromVector<bool>(Shape{1}, {true})})[0];
  ExpectNear(flags, {0, 1, 0});
  Inferred back = InferShapes("pad", {{"paddings", "(1,2,0,0)"}}, {Shape()}, {Shape{7, U}});
  EXPECT_EQ(back.in[0], (Shape{4, U}));
  EXPECT_EQ(back.out[0], (Shape{7, U}));
  EXPECT_ERROR(RunOp("pad", {{"paddings", "(1,1)"}}, {x}),
               "node 'pad' (op pad): paddings (1,1) have 1 pairs for input [2,2]");
  EXPECT_ERROR(RunOp("pad", {{"paddings", "(1,-1,0,0)"}}, {x}), "paddings (1,-1,0,0) must be non-negative");
  CheckGradient("pad", {{"paddings", "(1,0,2,3,0,1)"}}, {RandomArray(Shape{2, 3, 2}, DType::kFloat64, 4)});
}

TEST(SliceOpsTest, PatternsAreInjective) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  for (const char* op : {"slice", "strided_slice", "strided_slice_grad", "pad"})
    EXPECT_EQ(pattern[Op::Get(op)], kInjective) << op;
}

}  // namespace
}  // namespace test
}  // namespace ir
