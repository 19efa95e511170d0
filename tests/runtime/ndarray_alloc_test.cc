// Creating an array either gets a buffer of the right size or an error that names it.
#include <gtest/gtest.h>

#include <string>

#include "ir/c_api.h"
#include "ir/ndarray.h"
#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

const int64_t kHuge = (int64_t{1} << 62) + 1;

TEST(NDArrayAllocTest, OverflowingShapeIsRefusedBeforeAllocating) {
  EXPECT_ERROR(NDArray(Shape{kHuge, 4}, DType::kFloat32),
               "cannot allocate an array of shape [4611686018427387905,4]: the product of its dimensions overflows");
  EXPECT_ERROR(NDArray(Shape{0, kHuge, kHuge}, DType::kFloat32), "cannot allocate an array of shape");
  EXPECT_ERROR(NDArray(Shape{int64_t{1} << 61, 2}, DType::kFloat32), "has more bytes than a 64-bit integer");
}

TEST(NDArrayAllocTest, CApiRefusesOverflowingShape) {
  const int64_t dims[] = {kHuge, 4};
  IRNDArrayHandle out = nullptr;
  EXPECT_EQ(IRNDArrayCreate(dims, 2, 0, nullptr, &out), -1);
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(std::string(IRGetLastError()).find("shape [4611686018427387905,4]"), std::string::npos) << IRGetLastError();
}

TEST(NDArrayAllocTest, OutOfMemoryNamesBytesShapeAndDType) {
  // 16 TiB: more than any test machine has.
  EXPECT_ERROR(NDArray(Shape{int64_t{1} << 40, 4}, DType::kFloat32),
               "cannot allocate 17592186044416 bytes for array of shape [1099511627776,4] dtype float32 on cpu: "
               "out of host memory");
}

TEST(NDArrayAllocTest, OutOfMemoryInARunNamesTheNode) {
  NodeEntry big = MakeNode("zeros", "big", {}, {{"shape", "(1099511627776, 4)"}});
  Executor exec(Graph(std::vector<NodeEntry>{MakeNode("exp", "e", {big}, {})}), runtime_test::UnfusedOptions(),
                std::make_shared<VariableStore>());
  EXPECT_ERROR(exec.Run({}), "cannot allocate 17592186044416 bytes for output 0 of node 'big'");
}

TEST(NDArrayAllocTest, ReshapeRefusesOverflowingTarget) {
  NDArray empty(Shape{0}, DType::kFloat32);
  EXPECT_ERROR(empty.Reshape(Shape{0, kHuge, kHuge}), "overflows");
  EXPECT_ERROR(empty.Reshape(Shape{kHuge, kHuge, -1}), "overflows");
}

}  // namespace
}  // namespace ir
