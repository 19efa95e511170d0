// The TensorArray ops: values, inference both ways, range errors, gradients against finite
// differences, and the in-place write through the executor.
#include <gtest/gtest.h>

#include <memory>
#include <unordered_map>

#include "ir/runtime.h"
#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

NDArray I32(int32_t value) { return NDArray::Scalar<int32_t>(value); }

TEST(TensorArrayTest, ReadAndGatherTakeRows) {
  NDArray ta = Iota(Shape{4, 2, 3});
  NDArray row = RunOp("tensor_array_read", {}, {ta, I32(2)})[0];
  EXPECT_EQ(row.shape(), (Shape{2, 3}));
  ExpectNear(row, {12, 13, 14, 15, 16, 17});
  ExpectNear(RunOp("tensor_array_read", {}, {Iota(Shape{3}), NDArray::Scalar<int64_t>(1)})[0], {1});
  NDArray rows =
      RunOp("tensor_array_gather", {}, {Iota(Shape{4, 2}), NDArray::FromVector<int64_t>(Shape{4}, {1, 2, 0, 1})})[0];
  EXPECT_EQ(rows.shape(), (Shape{4, 2}));
  ExpectNear(rows, {2, 3, 4, 5, 0, 1, 2, 3});
}

TEST(TensorArrayTest, WriteAndScatterReplaceRowsOfACopy) {
  NDArray ta = Iota(Shape{3, 2}, DType::kInt64);
  NDArray value = NDArray::FromVector<int64_t>(Shape{2}, {-1, -2});
  ExpectNear(RunOp("tensor_array_write", {}, {ta, I32(1), value})[0], {0, 1, -1, -2, 4, 5}, 0, 0);
  ExpectNear(ta, {0, 1, 2, 3, 4, 5}, 0, 0);  // the input is not changed
  NDArray values = NDArray::FromVector<int64_t>(Shape{3, 2}, {7, 8, 9, 10, 11, 12});
  NDArray indices = NDArray::FromVector<int32_t>(Shape{3}, {2, 0, 1});
  ExpectNear(RunOp("tensor_array_scatter", {}, {ta, indices, values})[0], {9, 10, 11, 12, 7, 8}, 0, 0);
  NDArray none = NDArray::FromVector<int32_t>(Shape{0}, {});
  ExpectNear(RunOp("tensor_array_scatter", {}, {ta, none, NDArray(Shape{0, 2}, DType::kInt64)})[0], Values(ta), 0, 0);
}

TEST(TensorArrayTest, OutOfRangeAndTwiceWrittenIndicesAreErrorsNamingThem) {
  NDArray ta = Iota(Shape{3, 2});
  EXPECT_ERROR(RunOp("tensor_array_read", {}, {ta, I32(5)}),
               "node 'tensor_array_read' (op tensor_array_read): tried to read from index 5 but array size is: 3");
  EXPECT_ERROR(RunOp("tensor_array_read", {}, {ta, I32(-1)}), "tried to read from index -1 but array size is: 3");
  EXPECT_ERROR(RunOp("tensor_array_write", {}, {ta, NDArray::Scalar<int64_t>(3), Iota(Shape{2})}),
               "node 'tensor_array_write' (op tensor_array_write): tried to write to index 3 but array size is: 3");
  EXPECT_ERROR(RunOp("tensor_array_gather", {}, {ta, NDArray::FromVector<int32_t>(Shape{2}, {0, 7})}),
               "tried to read from index 7 but array size is: 3");
  EXPECT_ERROR(
      RunOp("tensor_array_scatter", {}, {ta, NDArray::FromVector<int32_t>(Shape{2}, {1, 1}), Iota(Shape{2, 2})}),
      "node 'tensor_array_scatter' (op tensor_array_scatter): index 1 is written twice (indices elements 0 and 1)");
}

TEST(TensorArrayTest, ShapesAreInferredBothWays) {
  Inferred read = InferShapes("tensor_array_read", {}, {Shape{5, U, 3}, Shape()});
  EXPECT_EQ(read.out[0], (Shape{U, 3}));
  EXPECT_EQ(read.in[1], Shape::Scalar());
  // A read's known output refines the array's trailing dims (the size stays unknown).
  EXPECT_EQ(InferShapes("tensor_array_read", {}, {Shape(), Shape::Scalar()}, {Shape{2, 3}}).in[0], (Shape{U, 2, 3}));
  EXPECT_EQ(InferShapes("tensor_array_read", {}, {Shape{7, U}, Shape::Scalar()}, {Shape{4}}).in[0], (Shape{7, 4}));
  Inferred write = InferShapes("tensor_array_write", {}, {Shape(), Shape(), Shape{2, 3}}, {Shape{6, U, U}});
  EXPECT_TRUE(write.complete);
  EXPECT_EQ(write.in[0], (Shape{6, 2, 3}));
  EXPECT_EQ(write.out[0], (Shape{6, 2, 3}));
  Inferred gather = InferShapes("tensor_array_gather", {}, {Shape{5, 3}, Shape{4}});
  EXPECT_EQ(gather.out[0], (Shape{4, 3}));
  EXPECT_EQ(InferShapes("tensor_array_gather", {}, {Shape(), Shape()}, {Shape{4, 3}}).in[0], (Shape{U, 3}));
  Inferred scatter = InferShapes("tensor_array_scatter", {}, {Shape{5, 3}, Shape{U}, Shape()});
  EXPECT_EQ(scatter.in[2], (Shape{U, 3}));
  EXPECT_EQ(scatter.out[0], (Shape{5, 3}));
}

TEST(TensorArrayTest, InferenceErrors) {
  EXPECT_ERROR(InferShapes("tensor_array_write", {}, {Shape{4, 3}, Shape::Scalar(), Shape{2}}),
               "node 'tensor_array_write' (op tensor_array_write): input 2 (the value) has shape [2] but must be [3]");
  EXPECT_ERROR(InferShapes("tensor_array_read", {}, {Shape{4, 3}, Shape{2}}), "input 1 (the index) has shape [2]");
  EXPECT_ERROR(InferShapes("tensor_array_read", {}, {Shape::Scalar(), Shape::Scalar()}),
               "the tensor array must have rank >= 1");
  EXPECT_ERROR(InferTypes("tensor_array_read", {}, {DType::kFloat32, DType::kFloat32}),
               "index dtype float32 is not supported (expected int32, int64)");
  EXPECT_ERROR(InferTypes("tensor_array_write", {}, {DType::kFloat32, DType::kInt32, DType::kFloat64}),
               "input 2 (the value) has dtype float64 but must be float32");
  EXPECT_EQ(InferTypes("tensor_array_scatter", {}, {DType::kUnknown, DType::kInt64, DType::kInt32}),
            std::vector<DType>{DType::kInt32});
}

TEST(TensorArrayTest, GradientsMatchFiniteDifferences) {
  NDArray ta = RandomArray(Shape{4, 2, 3}, DType::kFloat64, 1);
  GradCheckOptions float_inputs{1e-6, 1e-6, 1e-4, {0, 2}, 48};
  CheckGradient("tensor_array_read", {}, {ta, I32(3)});
  CheckGradient("tensor_array_write", {}, {ta, I32(1), RandomArray(Shape{2, 3}, DType::kFloat64, 2)}, float_inputs);
  // gather may take a row twice: its gradient adds both.
  CheckGradient("tensor_array_gather", {}, {ta, NDArray::FromVector<int64_t>(Shape{3}, {2, 0, 2})});
  CheckGradient("tensor_array_scatter", {},
                {ta, NDArray::FromVector<int32_t>(Shape{2}, {3, 0}), RandomArray(Shape{2, 2, 3}, DType::kFloat64, 3)},
                float_inputs);
}

TEST(TensorArrayTest, InPlaceWriteLeavesOtherReadersOfTheArrayIntact) {
  // write may take ta's storage; a read of ta ordered after it must still see the old row.
  NodeEntry ta = Var("ta"), index = Var("index"), value = Var("value");
  NodeEntry written = Apply("tensor_array_write", "w", {Apply("exp", "e", {ta}), index, value});
  NodeEntry old_row = Apply("tensor_array_read", "r", {written.node->inputs[0], index});
  NodeEntry new_row = Apply("tensor_array_read", "r2", {written, index});
  std::vector<NodeEntry> outputs = {Apply("add", "sum", {old_row, new_row}), written};
  NDArray tav = RandomArray(Shape{5, 4}, DType::kFloat32, 4), valuev = RandomArray(Shape{4}, DType::kFloat32, 5);
  std::vector<NDArray> want =
      EvalGraph(outputs, {{ta.node.get(), tav}, {index.node.get(), I32(2)}, {value.node.get(), valuev}});
  for (bool fusion : {false, true}) {
    SessionOptions options;
    options.fusion = fusion;
    Executor exec(Graph(outputs), options, std::make_shared<VariableStore>());
    std::vector<NDArray> got = exec.Run({{"ta", tav}, {"index", I32(2)}, {"value", valuev}});
    ExpectNear(got[0], want[0], 1e-6, 1e-6);
    ExpectNear(got[1], want[1], 1e-6, 1e-6);
  }
}

TEST(TensorArrayTest, PatternsAndInPlaceOptions) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  const auto& inplace = Op::GetAttr<FInplaceOption>("FInplaceOption");
  for (const char* op : {"tensor_array_read", "tensor_array_write", "tensor_array_gather", "tensor_array_scatter"}) {
    EXPECT_EQ(pattern[Op::Get(op)], kOpaque) << op;
  }
  for (const char* op : {"tensor_array_write", "tensor_array_scatter"}) {
    ASSERT_TRUE(inplace.count(Op::Get(op))) << op;
    EXPECT_EQ(inplace[Op::Get(op)](NodeAttrs()), (std::vector<std::pair<int, int>>{{0, 0}})) << op;
  }
  EXPECT_FALSE(inplace.count(Op::Get("tensor_array_read")));
}

}  // namespace
}  // namespace test
}  // namespace ir
