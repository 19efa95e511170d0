#include <gtest/gtest.h>

#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

TEST(ShapeOpsTest, ReportShapeSizeAndRank) {
  NDArray x = Iota(Shape{2, 3, 4});
  NDArray s = RunOp("shape", {}, {x})[0];
  EXPECT_EQ(s.dtype(), DType::kInt32);
  EXPECT_EQ(s.shape(), (Shape{3}));
  ExpectNear(s, {2, 3, 4});
  NDArray s64 = RunOp("shape", {{"out_type", "int64"}}, {x})[0];
  EXPECT_EQ(s64.dtype(), DType::kInt64);
  ExpectNear(s64, {2, 3, 4});
  EXPECT_EQ(RunOp("shape", {}, {NDArray::Scalar<float>(1)})[0].shape(), (Shape{0}));
  NDArray n = RunOp("size", {{"out_type", "int64"}}, {x})[0];
  EXPECT_EQ(n.shape(), Shape::Scalar());
  ExpectNear(n, {24});
  ExpectNear(RunOp("size", {}, {Iota(Shape{0, 5})})[0], {0});
  NDArray r = RunOp("rank", {}, {x})[0];
  EXPECT_EQ(r.dtype(), DType::kInt32);
  ExpectNear(r, {3});
}

TEST(ShapeOpsTest, InferenceOnPartialShapes) {
  EXPECT_EQ(InferShapes("shape", {}, {Shape{U, 3}}).out[0], (Shape{2}));
  EXPECT_EQ(InferShapes("shape", {}, {Shape()}).out[0], (Shape{U}));
  EXPECT_EQ(InferShapes("size", {}, {Shape()}).out[0], Shape::Scalar());
  EXPECT_EQ(InferShapes("rank", {}, {Shape()}).out[0], Shape::Scalar());
  EXPECT_ERROR(InferTypes("shape", {{"out_type", "float32"}}, {DType::kFloat32}),
               "node 'shape' (op shape): attribute 'out_type' dtype float32 is not supported (expected int32, int64)");
  for (const char* op : {"shape", "size", "rank"}) {
    NodePtr node = MakeOpNode(op, {}, 1);
    std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[node->op()](node, {NodeEntry{node, 0}});
    ASSERT_EQ(grads.size(), 1u);
    EXPECT_EQ(grads[0].node, nullptr) << op;
    EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get(op)], kOpaque);
  }
}

TEST(RangeTest, FollowsNumPyArange) {
  NDArray a = RunOp("range", {{"limit", "5"}}, {})[0];
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  ExpectNear(a, {0, 1, 2, 3, 4});
  ExpectNear(RunOp("range", {{"start", "1"}, {"limit", "2"}, {"delta", "0.3"}, {"dtype", "float64"}}, {})[0],
             {1, 1.3, 1.6, 1.9}, 1e-12);
  NDArray down = RunOp("range", {{"start", "10"}, {"limit", "3"}, {"delta", "-3"}, {"dtype", "int64"}}, {})[0];
  EXPECT_EQ(down.dtype(), DType::kInt64);
  ExpectNear(down, {10, 7, 4});
  EXPECT_EQ(RunOp("range", {{"start", "5"}, {"limit", "1"}, {"dtype", "int32"}}, {})[0].shape(), (Shape{0}));
  EXPECT_EQ(InferShapes("range", {{"start", "-2"}, {"limit", "2.5"}}, {}).out[0], (Shape{5}));
}

TEST(RangeTest, Errors) {
  EXPECT_ERROR(RunOp("range", {{"limit", "5"}, {"delta", "0"}}, {}),
               "node 'range' (op range): delta must be nonzero (start 0, limit 5)");
  EXPECT_ERROR(RunOp("range", {{"start", "0.5"}, {"limit", "5"}, {"dtype", "int32"}}, {}),
               "range of int32 needs integer start, limit and delta, got 0.5");
  EXPECT_ERROR(RunOp("range", {{"limit", "5"}, {"dtype", "bool"}}, {}),
               "attribute 'dtype' dtype bool is not supported");
  EXPECT_ERROR(RunOp("range", {{"limit", "1e300"}, {"delta", "1e-300"}}, {}), "is too long");
}

}  // namespace
}  // namespace test
}  // namespace ir
