#include <gtest/gtest.h>

#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

/*! \brief Concatenation along `axis` by walking the output's multi-indices. */
std::vector<double> ReferenceConcat(const std::vector<NDArray>& parts, int axis) {
  std::vector<int64_t> dims = parts[0].shape().dims();
  dims[axis] = 0;
  for (const NDArray& p : parts) dims[axis] += p.shape()[axis];
  Shape out(dims);
  std::vector<double> result;
  for (int64_t i = 0; i < out.Size(); ++i) {
    std::vector<int64_t> index = Unravel(i, out);
    size_t part = 0;
    while (index[axis] >= parts[part].shape()[axis]) index[axis] -= parts[part++].shape()[axis];
    result.push_back(ValueAt(parts[part], Ravel(index, parts[part].shape())));
  }
  return result;
}

/*! \brief out[i] = x[i mod x.shape], per dimension. */
std::vector<double> ReferenceTile(const NDArray& x, const Shape& out) {
  std::vector<double> result;
  for (int64_t i = 0; i < out.Size(); ++i) {
    std::vector<int64_t> index = Unravel(i, out);
    for (int d = 0; d < out.ndim(); ++d) index[d] %= x.shape()[d];
    result.push_back(ValueAt(x, Ravel(index, x.shape())));
  }
  return result;
}

TEST(ConcatTest, JoinsAlongAnyAxis) {
  std::vector<NDArray> parts = {Iota(Shape{2, 3, 2}), RandomArray(Shape{2, 1, 2}, DType::kFloat32, 1),
                                RandomArray(Shape{2, 4, 2}, DType::kFloat32, 2)};
  NDArray y = RunOp("concat", {{"axis", "1"}}, parts)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 8, 2}));
  ExpectNear(y, ReferenceConcat(parts, 1), 0, 0);
  std::vector<NDArray> rows = {Iota(Shape{1, 3}, DType::kInt64), Iota(Shape{2, 3}, DType::kInt64)};
  ExpectNear(RunOp("concat", {{"axis", "0"}}, rows)[0], ReferenceConcat(rows, 0), 0, 0);
  std::vector<NDArray> cols = {Iota(Shape{2, 2}, DType::kBool), Iota(Shape{2, 3}, DType::kBool)};
  ExpectNear(RunOp("concat", {{"axis", "-1"}}, cols)[0], ReferenceConcat(cols, 1), 0, 0);
  std::vector<NDArray> with_empty = {Iota(Shape{2, 0}), Iota(Shape{2, 2})};
  ExpectNear(RunOp("concat", {{"axis", "1"}}, with_empty)[0], {0, 1, 2, 3});
}

TEST(ConcatTest, PartialShapesAndErrors) {
  EXPECT_EQ(InferShapes("concat", {{"axis", "1"}}, {Shape{U, 3}, Shape{2, 4}}).out[0], (Shape{2, 7}));
  EXPECT_EQ(InferShapes("concat", {{"axis", "0"}}, {Shape{U, 3}, Shape{2, 3}}).out[0], (Shape{U, 3}));
  Inferred back = InferShapes("concat", {{"axis", "0"}}, {Shape{U, 3}, Shape{2, 3}}, {Shape{5, 3}});
  EXPECT_EQ(back.in[0], (Shape{3, 3}));
  EXPECT_TRUE(back.complete);
  EXPECT_EQ(InferShapes("concat", {{"axis", "0"}}, {Shape(), Shape{2, 3}}).in[0], (Shape{U, 3}));
  EXPECT_ERROR(
      RunOp("concat", {{"axis", "1"}}, {Iota(Shape{2, 3}), Iota(Shape{3, 3})}),
      "node 'concat' (op concat): inputs [2,3], [3,3] and output [?,?] differ in dimension 0 (joining along axis 1)");
  EXPECT_ERROR(RunOp("concat", {{"axis", "0"}}, {Iota(Shape{2, 3}), Iota(Shape{3})}), "must have one rank");
  EXPECT_ERROR(RunOp("concat", {{"axis", "2"}}, {Iota(Shape{2, 3})}), "axis 2 is out of range for rank 2");
  EXPECT_ERROR(InferShapes("concat", {{"axis", "0"}}, {Shape{1}, Shape{2}}, {Shape{4}}), "do not add up along axis 0");
}

TEST(ConcatTest, GradientCutsPiecesOfTheOutputGradient) {
  std::vector<NDArray> parts = {RandomArray(Shape{2, 3}, DType::kFloat64, 3),
                                RandomArray(Shape{2, 1}, DType::kFloat64, 4),
                                RandomArray(Shape{2, 2}, DType::kFloat64, 5)};
  CheckGradient("concat", {{"axis", "1"}}, parts);
  CheckGradient("concat", {{"axis", "0"}}, {parts[0], RandomArray(Shape{4, 3}, DType::kFloat64, 6)});
  // concat_grad: forward is the split by the likes' extents; its gradient concatenates again.
  NDArray dy = Iota(Shape{2, 6}, DType::kFloat64);
  std::vector<NDArray> pieces =
      RunOp("concat_grad", {{"axis", "1"}, {"num_outputs", "3"}}, {dy, parts[0], parts[1], parts[2]});
  ASSERT_EQ(pieces.size(), 3u);
  ExpectNear(pieces[0], {0, 1, 2, 6, 7, 8});
  ExpectNear(pieces[1], {3, 9});
  ExpectNear(pieces[2], {4, 5, 10, 11});
  CheckGradient("concat_grad", {{"axis", "1"}, {"num_outputs", "3"}}, {dy, parts[0], parts[1], parts[2]},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  EXPECT_ERROR(RunOp("concat_grad", {{"axis", "1"}, {"num_outputs", "2"}}, {dy, parts[0], parts[2]}),
               "node 'concat_grad' (op concat_grad): outputs [2,3], [2,2] and input [2,6] do not add up along axis 1");
}

TEST(SplitTest, EqualPiecesAndSizes) {
  NDArray x = Iota(Shape{2, 6});
  std::vector<NDArray> thirds = RunOp("split", {{"axis", "1"}, {"num_outputs", "3"}}, {x});
  ASSERT_EQ(thirds.size(), 3u);
  ExpectNear(thirds[0], {0, 1, 6, 7});
  ExpectNear(thirds[1], {2, 3, 8, 9});
  ExpectNear(thirds[2], {4, 5, 10, 11});
  std::vector<NDArray> sized = RunOp("split", {{"axis", "-1"}, {"sizes", "(1,-1,2)"}}, {x});
  ASSERT_EQ(sized.size(), 3u);
  EXPECT_EQ(sized[1].shape(), (Shape{2, 3}));
  ExpectNear(sized[1], {1, 2, 3, 7, 8, 9});
  ExpectNear(RunOp("concat", {{"axis", "1"}}, sized)[0], Values(x));
  std::vector<NDArray> rows = RunOp("split", {{"axis", "0"}, {"num_outputs", "2"}}, {Iota(Shape{2, 3}, DType::kInt32)});
  ExpectNear(rows[1], {3, 4, 5});
}

TEST(SplitTest, PartialShapesAndErrors) {
  Inferred open = InferShapes("split", {{"axis", "0"}, {"num_outputs", "2"}}, {Shape{U, 3}});
  EXPECT_EQ(open.out[0], (Shape{U, 3}));
  EXPECT_FALSE(open.complete);
  Inferred back = InferShapes("split", {{"axis", "0"}, {"sizes", "(2,-1)"}}, {Shape{U, 3}}, {Shape(), Shape{4, 3}});
  EXPECT_EQ(back.in[0], (Shape{6, 3}));
  EXPECT_EQ(back.out[0], (Shape{2, 3}));
  EXPECT_ERROR(RunOp("split", {{"axis", "1"}, {"num_outputs", "4"}}, {Iota(Shape{4, 6})}),
               "node 'split' (op split): split of [4,6] along axis 1 into 4 equal parts: 6 is not divisible by 4");
  EXPECT_ERROR(RunOp("split", {{"axis", "1"}, {"sizes", "(2,3)"}}, {Iota(Shape{4, 6})}),
               "split of [4,6] along axis 1 into sizes (2,3): sizes sum to 5, not 6");
  EXPECT_ERROR(RunOp("split", {{"axis", "1"}, {"sizes", "(-1,-1)"}}, {Iota(Shape{4, 6})}), "at most one -1");
}

TEST(SplitTest, GradientConcatenates) {
  CheckGradient("split", {{"axis", "1"}, {"sizes", "(1,3)"}}, {RandomArray(Shape{3, 4}, DType::kFloat64, 7)});
  CheckGradient("split", {{"axis", "0"}, {"num_outputs", "2"}}, {RandomArray(Shape{4, 2}, DType::kFloat64, 8)});
}

TEST(TileTest, RepeatsLikeReferenceLoop) {
  NDArray x = Iota(Shape{2, 3});
  NDArray y = RunOp("tile", {{"reps", "(2,3)"}}, {x})[0];
  EXPECT_EQ(y.shape(), (Shape{4, 9}));
  ExpectNear(y, ReferenceTile(x, Shape{4, 9}), 0, 0);
  NDArray z = RandomArray(Shape{3, 1, 5}, DType::kFloat64, 9);
  ExpectNear(RunOp("tile", {{"reps", "(1,4,2)"}}, {z})[0], ReferenceTile(z, Shape{3, 4, 10}), 0, 0);
  EXPECT_EQ(RunOp("tile", {{"reps", "(0,2)"}}, {x})[0].shape(), (Shape{0, 6}));
  EXPECT_EQ(InferShapes("tile", {{"reps", "(2,3)"}}, {Shape{U, 2}}).out[0], (Shape{U, 6}));
  EXPECT_EQ(InferShapes("tile", {{"reps", "(2,3)"}}, {Shape()}, {Shape{8, 6}}).in[0], (Shape{4, 2}));
  EXPECT_ERROR(RunOp("tile", {{"reps", "(2)"}}, {x}), "node 'tile' (op tile): reps (2) do not match the rank of [2,3]");
  EXPECT_ERROR(RunOp("tile", {{"reps", "(2,-1)"}}, {x}), "reps (2,-1) must be non-negative");
}

TEST(TileTest, GradientSumsTheTiles) {
  NDArray dy = Iota(Shape{4, 6}, DType::kFloat64);
  NDArray g = RunOp("tile_grad", {{"reps", "(2,3)"}}, {dy, Iota(Shape{2, 2})})[0];
  // g[i][j] = sum over a, b of dy[i + 2a][j + 2b].
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      double s = 0;
      for (int a = 0; a < 2; ++a) {
        for (int b = 0; b < 3; ++b) s += (i + 2 * a) * 6 + j + 2 * b;
      }
      expected.push_back(s);
    }
  }
  ExpectNear(g, expected);
  EXPECT_EQ(g.dtype(), DType::kFloat64);
  CheckGradient("tile", {{"reps", "(2,1,3)"}}, {RandomArray(Shape{2, 3, 2}, DType::kFloat64, 10)});
  CheckGradient("tile_grad", {{"reps", "(2,3)"}}, {RandomArray(Shape{4, 6}, DType::kFloat64, 11), Iota(Shape{2, 2})},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  ExpectNear(RunOp("tile_grad", {{"reps", "()"}}, {NDArray::Scalar<float>(3), NDArray::Scalar<float>(0)})[0], {3});
  ExpectNear(RunOp("tile_grad", {{"reps", "(0)"}}, {Iota(Shape{0}), Iota(Shape{2})})[0], {0, 0});
  EXPECT_ERROR(RunOp("tile_grad", {{"reps", "(2)"}}, {Iota(Shape{6}), Iota(Shape{2})}),
               "node 'tile_grad' (op tile_grad): the tiled shape has shape [6] but must be [4]");
  EXPECT_ERROR(RunOp("tile_grad", {{"reps", "(2)"}}, {Iota(Shape{5}), Iota(Shape{2})}), "[5] is not [2] tiled by (2)");
}

TEST(ConcatOpsTest, PatternsAreInjective) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  for (const char* op : {"concat", "concat_grad", "split", "tile", "tile_grad"})
    EXPECT_EQ(pattern[Op::Get(op)], kInjective) << op;
}

}  // namespace
}  // namespace test
}  // namespace ir
