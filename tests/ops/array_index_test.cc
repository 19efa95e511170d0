#include <gtest/gtest.h>

#include <random>

#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

/*! \brief out[a..., k..., b...] = params[a..., indices[k...], b...]. */
std::vector<double> ReferenceGather(const NDArray& params, const NDArray& indices, int axis) {
  const Shape& p = params.shape();
  std::vector<int64_t> dims(p.dims().begin(), p.dims().begin() + axis);
  dims.insert(dims.end(), indices.shape().dims().begin(), indices.shape().dims().end());
  dims.insert(dims.end(), p.dims().begin() + axis + 1, p.dims().end());
  Shape out(dims);
  int k = indices.shape().ndim();
  std::vector<double> result;
  for (int64_t i = 0; i < out.Size(); ++i) {
    std::vector<int64_t> oi = Unravel(i, out), pi(oi.begin(), oi.begin() + axis);
    std::vector<int64_t> ki(oi.begin() + axis, oi.begin() + axis + k);
    pi.push_back(static_cast<int64_t>(ValueAt(indices, Ravel(ki, indices.shape()))));
    pi.insert(pi.end(), oi.begin() + axis + k, oi.end());
    result.push_back(ValueAt(params, Ravel(pi, p)));
  }
  return result;
}

TEST(GatherTest, SelectsAlongAxis) {
  NDArray params = Iota(Shape{3, 4});
  NDArray rows = NDArray::FromVector<int32_t>(Shape{2}, {2, 0});
  ExpectNear(RunOp("gather", {}, {params, rows})[0], {8, 9, 10, 11, 0, 1, 2, 3});
  NDArray cols = NDArray::FromVector<int64_t>(Shape{2, 2}, {3, 1, 0, 0});
  NDArray y = RunOp("gather", {{"axis", "1"}}, {params, cols})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 2, 2}));
  ExpectNear(y, ReferenceGather(params, cols, 1), 0, 0);
  ExpectNear(RunOp("gather", {{"axis", "-1"}}, {params, cols})[0], ReferenceGather(params, cols, 1), 0, 0);
  NDArray cube = Iota(Shape{2, 3, 4}, DType::kBool);
  NDArray picks = NDArray::FromVector<int32_t>(Shape{3}, {2, 2, 1});
  ExpectNear(RunOp("gather", {{"axis", "1"}}, {cube, picks})[0], ReferenceGather(cube, picks, 1), 0, 0);
  NDArray scalar_index = NDArray::Scalar<int64_t>(1);
  EXPECT_EQ(RunOp("gather", {}, {params, scalar_index})[0].shape(), (Shape{4}));
}

TEST(GatherTest, OutOfRangeIndexIsAnErrorNamingIt) {
  NDArray params = Iota(Shape{3, 4});
  EXPECT_ERROR(
      RunOp("gather", {}, {params, NDArray::FromVector<int32_t>(Shape{2}, {0, 3})}),
      "node 'gather' (op gather): index 3 (indices element 1) is out of range [0, 3) for axis 0 of params [3,4]");
  EXPECT_ERROR(RunOp("gather", {{"axis", "1"}}, {params, NDArray::FromVector<int64_t>(Shape{1}, {-1})}),
               "index -1 (indices element 0) is out of range [0, 4) for axis 1");
  EXPECT_ERROR(RunOp("gather_grad", {}, {Iota(Shape{1, 4}), NDArray::FromVector<int32_t>(Shape{1}, {5}), params}),
               "node 'gather_grad' (op gather_grad): index 5 (indices element 0) is out of range [0, 3)");
}

TEST(GatherTest, InferenceAndTypeErrors) {
  EXPECT_EQ(InferShapes("gather", {{"axis", "1"}}, {Shape{U, 5}, Shape{2, 3}}).out[0], (Shape{U, 2, 3}));
  EXPECT_FALSE(InferShapes("gather", {}, {Shape(), Shape{2}}).out[0].rank_known());
  EXPECT_EQ(InferTypes("gather", {}, {DType::kFloat64, DType::kInt64}), std::vector<DType>{DType::kFloat64});
  EXPECT_ERROR(InferTypes("gather", {}, {DType::kFloat32, DType::kFloat32}),
               "node 'gather' (op gather): indices dtype float32 is not supported (expected int32, int64)");
  EXPECT_ERROR(InferShapes("gather", {}, {Shape::Scalar(), Shape{2}}), "cannot gather from a scalar");
  EXPECT_ERROR(InferShapes("gather", {{"axis", "2"}}, {Shape{2, 2}, Shape{2}}), "axis 2 is out of range for rank 2");
}

TEST(GatherTest, GradientScatterAddsRepeatedIndices) {
  NDArray dy = NDArray::FromVector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  NDArray indices = NDArray::FromVector<int32_t>(Shape{3}, {1, 1, 0});
  NDArray g = RunOp("gather_grad", {}, {dy, indices, Iota(Shape{3, 2})})[0];
  ExpectNear(g, {5, 6, 4, 6, 0, 0});
  NDArray params = RandomArray(Shape{3, 4}, DType::kFloat64, 1);
  CheckGradient("gather", {{"axis", "1"}}, {params, NDArray::FromVector<int32_t>(Shape{2, 2}, {3, 1, 1, 0})});
  CheckGradient("gather", {}, {params, NDArray::FromVector<int64_t>(Shape{4}, {2, 2, 0, 2})});
  CheckGradient("gather_grad", {{"axis", "1"}},
                {RandomArray(Shape{3, 2}, DType::kFloat64, 2), NDArray::FromVector<int64_t>(Shape{2}, {3, 3}), params},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  EXPECT_EQ(InferShapes("gather_grad", {}, {Shape(), Shape{5}, Shape{3, 2}}).in[0], (Shape{5, 2}));
}

TEST(GatherTest, LargeScatterAddMatchesReferenceLoop) {
  std::mt19937 rng(3);
  std::vector<int32_t> picks(500);
  for (int32_t& p : picks) p = static_cast<int32_t>(rng() % 1000);
  NDArray indices = NDArray::FromVector<int32_t>(Shape{500}, picks);
  NDArray dy = RandomArray(Shape{500, 64}, DType::kFloat64, 4);
  std::vector<double> expected(1000 * 64, 0.0), dv = Values(dy);
  for (int k = 0; k < 500; ++k) {
    for (int c = 0; c < 64; ++c) expected[picks[k] * 64 + c] += dv[k * 64 + c];
  }
  ExpectNear(RunOp("gather_grad", {}, {dy, indices, Iota(Shape{1000, 64}, DType::kFloat64)})[0], expected, 1e-12,
             1e-12);
  NDArray table = RandomArray(Shape{1000, 64}, DType::kFloat32, 5);
  ExpectNear(RunOp("gather", {}, {table, indices})[0], ReferenceGather(table, indices, 0), 0, 0);
}

TEST(OneHotTest, MarksTheIndexedPosition) {
  NDArray indices = NDArray::FromVector<int32_t>(Shape{4}, {0, 2, -1, 3});
  NDArray y = RunOp("one_hot", {{"depth", "3"}}, {indices})[0];
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  ExpectNear(y, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  NDArray z =
      RunOp("one_hot", {{"depth", "3"}, {"axis", "0"}, {"on_value", "5"}, {"off_value", "-1"}, {"dtype", "int64"}},
            {NDArray::FromVector<int64_t>(Shape{2}, {1, 0})})[0];
  EXPECT_EQ(z.dtype(), DType::kInt64);
  EXPECT_EQ(z.shape(), (Shape{3, 2}));
  ExpectNear(z, {-1, 5, 5, -1, -1, -1});
  NDArray grid = NDArray::FromVector<int32_t>(Shape{2, 2}, {1, 0, 2, 1});
  NDArray w = RunOp("one_hot", {{"depth", "3"}, {"axis", "1"}}, {grid})[0];
  EXPECT_EQ(w.shape(), (Shape{2, 3, 2}));
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i) {
    for (int d = 0; d < 3; ++d) {
      for (int j = 0; j < 2; ++j) expected.push_back(ValueAt(grid, i * 2 + j) == d ? 1 : 0);
    }
  }
  ExpectNear(w, expected);
}

TEST(OneHotTest, InferenceErrorsAndNoGradient) {
  EXPECT_EQ(InferShapes("one_hot", {{"depth", "4"}}, {Shape{U, 2}}).out[0], (Shape{U, 2, 4}));
  EXPECT_ERROR(InferTypes("one_hot", {{"depth", "2"}}, {DType::kFloat32}),
               "node 'one_hot' (op one_hot): indices dtype float32 is not supported");
  EXPECT_ERROR(InferTypes("one_hot", {{"depth", "2"}, {"dtype", "complex"}}, {DType::kInt32}),
               "node 'one_hot' (op one_hot): attribute 'dtype': ");
  EXPECT_ERROR(InferShapes("one_hot", {{"depth", "2"}, {"axis", "3"}}, {Shape{2}}),
               "axis 3 is out of range for rank 2");
  NodePtr node = MakeOpNode("one_hot", {{"depth", "2"}}, 1);
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[node->op()](node, {NodeEntry{node, 0}});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].node, nullptr);
}

TEST(IndexOpsTest, PatternsAreOpaque) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  for (const char* op : {"gather", "gather_grad", "one_hot"}) EXPECT_EQ(pattern[Op::Get(op)], kOpaque) << op;
}

}  // namespace
}  // namespace test
}  // namespace ir
