#include <gtest/gtest.h>

#include <cmath>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief Adds every element of data into the element of like's shape it broadcasts from. */
std::vector<double> CollapseReference(const NDArray& data, const Shape& like) {
  const Shape& ds = data.shape();
  std::vector<double> out(like.Size(), 0.0), values = Values(data);
  int offset = ds.ndim() - like.ndim();
  for (int64_t flat = 0; flat < data.Size(); ++flat) {
    int64_t rem = flat, index = 0, stride = 1;
    for (int d = ds.ndim() - 1; d >= offset; --d) {
      int64_t coord = rem % ds[d];
      rem /= ds[d];
      if (like[d - offset] != 1) index += coord * stride;
      stride *= like[d - offset];
    }
    out[index] += values[flat];
  }
  return out;
}

struct CollapseCase {
  Shape data, like;
};

std::vector<CollapseCase> Cases() {
  return {{Shape{2, 3, 4}, Shape{3, 1}},
          {Shape{2, 3, 4}, Shape{4}},
          {Shape{2, 3, 4}, Shape::Scalar()},
          {Shape{5, 1, 6}, Shape{1, 1, 6}},
          {Shape{2, 3, 4, 5}, Shape{3, 1, 1}},
          {Shape{4, 3}, Shape{4, 3}},
          {Shape{1, 4, 3}, Shape{4, 3}},
          {Shape{0, 3}, Shape{3}},
          {Shape{3, 2}, Shape{1, 1}},
          // Large enough for the kernel's parallel paths: one long kept row, summed inner runs, a full sum.
          {Shape{70, 1000}, Shape{1000}},
          {Shape{60, 1100}, Shape{1, 1100}},
          {Shape{1000, 70}, Shape{1000, 1}},
          {Shape{70000}, Shape::Scalar()},
          {Shape{7, 10000}, Shape{1, 1}}};
}

TEST(CollapseSumLikeTest, SumsOverBroadcastDimensions) {
  for (const CollapseCase& c : Cases()) {
    for (DType dtype : {DType::kFloat64, DType::kFloat32, DType::kInt32}) {
      if (c.data.Size() > 1000 && dtype == DType::kFloat64) continue;  // large cases test the parallel paths
      SCOPED_TRACE(c.data.ToString() + " to " + c.like.ToString() + " " + DTypeName(dtype));
      NDArray data = RandomArray(c.data, dtype, 1, -3, 3);
      NDArray out = RunOp("collapse_sum_like", {}, {data, RandomArray(c.like, DType::kBool, 2)})[0];
      EXPECT_EQ(out.shape(), c.like);
      EXPECT_EQ(out.dtype(), dtype);
      double tol = dtype == DType::kFloat32 ? 1e-4 * std::sqrt(static_cast<double>(c.data.Size())) : 1e-9;
      ExpectNear(out, CollapseReference(data, c.like), tol, 1e-6);
    }
  }
}

TEST(CollapseSumLikeTest, GradientBroadcastsBack) {
  CheckGradient("collapse_sum_like", {},
                {RandomArray(Shape{2, 3, 4}, DType::kFloat64, 1), RandomArray(Shape{3, 1}, DType::kFloat64, 2)});
  CheckGradient("collapse_sum_like", {},
                {RandomArray(Shape{3, 4}, DType::kFloat64, 1), RandomArray(Shape{3, 4}, DType::kFloat64, 2)});
}

TEST(CollapseSumLikeTest, ShapeInferenceAndErrors) {
  NDArray data = RandomArray(Shape{2, 3}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("collapse_sum_like", {}, {data, RandomArray(Shape{4}, DType::kFloat32, 2)}),
               "node 'collapse_sum_like' (op collapse_sum_like): cannot sum shape [2,3] down to shape [4]");
  EXPECT_ERROR(RunOp("collapse_sum_like", {}, {data, RandomArray(Shape{1, 2, 3}, DType::kFloat32, 2)}),
               "cannot sum shape [2,3] down to shape [1,2,3]");
  EXPECT_ERROR(
      RunOp("collapse_sum_like", {}, {RandomArray(Shape{2}, DType::kBool, 1), RandomArray(Shape{2}, DType::kBool, 1)}),
      "input dtype bool is not supported");
  NodeAttrs attrs = Node::Create(Op::Get("collapse_sum_like"), "c", {},
                                 {NodeEntry{Node::CreateVariable("d"), 0}, NodeEntry{Node::CreateVariable("l"), 0}})
                        ->attrs;
  const auto& infer = Op::GetAttr<FInferShape>("FInferShape")[Op::Get("collapse_sum_like")];
  std::vector<Shape> in = {Shape(), Shape{kUnknownDim, 3}}, out(1);
  EXPECT_FALSE(infer(attrs, &in, &out));
  EXPECT_EQ(out[0], (Shape{kUnknownDim, 3}));
  in = {Shape{5, 2, 3}, Shape()};
  out = {Shape{2, 3}};
  EXPECT_TRUE(infer(attrs, &in, &out));
  EXPECT_EQ(in[1], (Shape{2, 3}));
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get("collapse_sum_like")], kCommReduce);
}

}  // namespace
}  // namespace test
}  // namespace ir
