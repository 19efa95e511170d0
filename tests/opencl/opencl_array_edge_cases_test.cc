// The device kernels of the matrix, reduction and array ops (src/ops) on the cases the basic
// tests leave out: every dtype they list, strided reductions in shared memory, empty
// reductions, batched matmuls with odd sizes, more than eight dimensions, views at offsets.
#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/op_kernel.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::Attrs;
using opencl_test::ExpectSameOnDevice;
using opencl_test::OpenCLDevice;
using test::RandomArray;

const DType kNumeric[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};

TEST(OpenCLArrayEdgeCasesTest, ReductionsOverSeparatedAxesInEveryNumericType) {
  IR_REQUIRE_OPENCL();
  for (DType dtype : kNumeric) {
    NDArray x = RandomArray({3, 4, 5}, dtype, 1, -2, 2);
    for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
      SCOPED_TRACE(StrCat(op, " ", DTypeName(dtype)));
      ExpectSameOnDevice(op, {{"axis", "(0,2)"}}, {x});
      ExpectSameOnDevice(op, {{"axis", "(0,2)"}, {"keepdims", "1"}}, {RandomArray({3, 1, 4, 5}, dtype, 2, -2, 2)});
    }
  }
}

TEST(OpenCLArrayEdgeCasesTest, FewOutputsOfManyElementsReduceInSharedMemory) {
  IR_REQUIRE_OPENCL();
  NDArray x = RandomArray({300, 3, 5}, DType::kFloat32, 3, 0.99, 1.01);
  for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
    SCOPED_TRACE(op);
    ExpectSameOnDevice(op, {{"axis", "(0,2)"}}, {x}, 1e-4, 1e-4);
  }
  ExpectSameOnDevice("sum", {{"axis", "(0,2)"}}, {RandomArray({300, 3, 5}, DType::kInt64, 4, -100, 100)});
  ExpectSameOnDevice("collapse_sum_like", {},
                     {RandomArray({600, 4}, DType::kFloat64, 5), NDArray(Shape{1, 4}, DType::kFloat64)});
  ExpectSameOnDevice("collapse_sum_like", {},
                     {RandomArray({7, 9}, DType::kInt32, 6, -9, 9), NDArray(Shape::Scalar(), DType::kInt32)});
}

TEST(OpenCLArrayEdgeCasesTest, EmptyReductionsGiveTheCpuIdentities) {
  IR_REQUIRE_OPENCL();
  for (DType dtype : kNumeric) {
    NDArray x(Shape{0, 3, 2}, dtype);
    for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
      SCOPED_TRACE(StrCat(op, " ", DTypeName(dtype)));
      ExpectSameOnDevice(op, {{"axis", "(0,2)"}}, {x});
    }
  }
  ExpectSameOnDevice("sum", {{"axis", "1"}}, {NDArray(Shape{0, 4, 3}, DType::kFloat32)});
}

TEST(OpenCLArrayEdgeCasesTest, BatchedMatmulsOfOddSizesInEveryNumericType) {
  IR_REQUIRE_OPENCL();
  for (DType dtype : kNumeric) {
    SCOPED_TRACE(DTypeName(dtype));
    NDArray a = RandomArray({2, 1, 3, 37, 19}, dtype, 1, -3, 3), b = RandomArray({4, 1, 23, 37}, dtype, 2, -3, 3);
    ExpectSameOnDevice("matmul", {{"transpose_a", "1"}, {"transpose_b", "1"}}, {a, b});
    ExpectSameOnDevice("matmul", {},
                       {RandomArray({3, 17, 33}, dtype, 3, -3, 3), RandomArray({33, 2}, dtype, 4, -3, 3)});
  }
  ExpectSameOnDevice("matmul", {}, {NDArray(Shape{2, 4, 0}, DType::kFloat32), NDArray(Shape{0, 5}, DType::kFloat32)});
}

TEST(OpenCLArrayEdgeCasesTest, BiasAddArgReductionsAndGradientHelpersOfIntegers) {
  IR_REQUIRE_OPENCL();
  NDArray x = RandomArray({2, 3, 4, 5}, DType::kInt32, 1, -9, 9);
  ExpectSameOnDevice("bias_add", {{"data_format", "NCHW"}}, {x, RandomArray({3}, DType::kInt32, 2, -9, 9)});
  ExpectSameOnDevice("bias_add", {{"data_format", "NCHW"}},
                     {RandomArray({6, 3}, DType::kFloat64, 3), RandomArray({3}, DType::kFloat64, 4)});
  ExpectSameOnDevice("bias_add_grad", {{"data_format", "NCHW"}}, {x});
  NDArray ties = RandomArray({3, 4, 5}, DType::kInt64, 5, 0, 2);
  for (const char* op : {"argmax", "argmin"}) ExpectSameOnDevice(op, {{"axis", "1"}}, {ties});
  ExpectSameOnDevice("_reduce_grad_broadcast", {{"axis", "(0,2)"}, {"normalize", "1"}},
                     {RandomArray({4}, DType::kInt32, 6, -50, 50), NDArray(Shape{3, 4, 5}, DType::kInt32)});
}

TEST(OpenCLArrayEdgeCasesTest, OneHotOfAnyDtypeIgnoresIndicesOutOfRange) {
  IR_REQUIRE_OPENCL();
  NDArray indices = NDArray::FromVector<int64_t>({2, 3}, {-1, 0, 3, 5, 2, 1});
  ExpectSameOnDevice("one_hot", {{"depth", "4"}, {"dtype", "bool"}, {"on_value", "2"}}, {indices});
  ExpectSameOnDevice("one_hot", {{"depth", "4"}, {"axis", "1"}, {"dtype", "int64"}, {"off_value", "-3"}}, {indices});
}

TEST(OpenCLArrayEdgeCasesTest, TransposesOfManyDimensions) {
  IR_REQUIRE_OPENCL();
  // Nine dimensions none of which merge: more than a walk holds, so it runs on the host.
  ExpectSameOnDevice("transpose", {}, {RandomArray({2, 3, 2, 3, 2, 3, 2, 3, 2}, DType::kFloat32, 1)});
  ExpectSameOnDevice("transpose", {{"axes", "(1,0,2,3,4,5,6,7,8)"}},
                     {RandomArray({2, 3, 2, 3, 2, 3, 2, 3, 2}, DType::kInt64, 2, -9, 9)});
  ExpectSameOnDevice("transpose", {{"axes", "(2,0,1)"}}, {NDArray(Shape{0, 3, 2}, DType::kFloat64)});
}

TEST(OpenCLArrayEdgeCasesTest, StateUpdatesAndCopiesOfEveryDtype) {
  IR_REQUIRE_OPENCL();
  // The assign family has no hand-written kernel: the device layer derives it from FCodeGen.
  ExpectSameOnDevice("assign", {}, {RandomArray({3, 4}, DType::kBool, 1), RandomArray({3, 4}, DType::kBool, 2)});
  ExpectSameOnDevice("assign_sub", {},
                     {RandomArray({3, 4}, DType::kInt64, 3, -5, 5), RandomArray({3, 4}, DType::kInt64, 4, -5, 5)});
  ExpectSameOnDevice("identity", {}, {RandomArray({3, 4}, DType::kBool, 5)});
  ExpectSameOnDevice("zeros_like", {}, {RandomArray({3, 4}, DType::kInt64, 6)});
  ExpectSameOnDevice("fill", {{"shape", "(2,0)"}, {"value", "3"}}, {});
}

/*! \brief Runs `op`'s device kernel on inputs and an output that are views at offsets of larger buffers. */
void ExpectSameOnViewsAtOffsets(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs) {
  SCOPED_TRACE(op);
  NDArray expected = test::RunOp(op, attrs, inputs)[0];
  std::vector<NodeEntry> entries;
  std::vector<NDArray> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries.push_back(NodeEntry{Node::CreateVariable(StrCat("in", i)), 0});
    in.push_back(opencl_test::OffsetCopyOnDevice(inputs[i]));
  }
  NodePtr node = Node::Create(Op::Get(op), op, attrs, entries);
  NDArray out = opencl_test::OffsetCopyOnDevice(NDArray(expected.shape(), expected.dtype()));
  OpContext ctx;
  ctx.device = OpenCLDevice();
  opencl_test::DeviceKernelOf(op)(ctx, node->attrs, in, {out});
  DeviceAPI::Get(OpenCLDevice())->Synchronize();
  test::ExpectNear(out.CopyTo(Device::CPU()), expected, 1e-5, 1e-5);
  EXPECT_GT(out.byte_offset(), 0u);
}

TEST(OpenCLArrayEdgeCasesTest, KernelsReadAndWriteViewsAtOffsets) {
  IR_REQUIRE_OPENCL();
  NDArray x = RandomArray({4, 3, 5}, DType::kFloat32, 1);
  ExpectSameOnViewsAtOffsets("transpose", {{"axes", "(2,0,1)"}}, {x});
  ExpectSameOnViewsAtOffsets("sum", {{"axis", "(0,2)"}}, {x});
  ExpectSameOnViewsAtOffsets("max", {{"axis", "(0,2)"}}, {RandomArray({400, 2, 3}, DType::kFloat32, 2)});
  ExpectSameOnViewsAtOffsets("argmax", {{"axis", "1"}}, {x});
  ExpectSameOnViewsAtOffsets("bias_add", {{"data_format", "NCHW"}}, {x, RandomArray({3}, DType::kFloat32, 3)});
  ExpectSameOnViewsAtOffsets("one_hot", {{"depth", "3"}}, {NDArray::FromVector<int32_t>({4}, {0, 2, 1, 2})});
  ExpectSameOnViewsAtOffsets("_reduce_grad_broadcast", {{"axis", "1"}}, {RandomArray({4, 5}, DType::kFloat32, 4), x});
}

}  // namespace
}  // namespace ir
