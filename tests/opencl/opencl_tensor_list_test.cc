// tensor_list_push_back and tensor_list_pop_back on the OpenCL device against the CPU (their
// row copies run as device copies), and the empty-list error there.
#include <gtest/gtest.h>

#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::ExpectSameOnDevice;
using test::RandomArray;

TEST(OpenCLTensorListTest, PushAndPopMatchTheCpu) {
  IR_REQUIRE_OPENCL();
  NDArray list = RandomArray(Shape{4, 3, 2}, DType::kFloat32, 1);
  ExpectSameOnDevice("tensor_list_push_back", {}, {list, RandomArray(Shape{3, 2}, DType::kFloat32, 2)});
  ExpectSameOnDevice("tensor_list_push_back", {},
                     {NDArray(Shape{2, 0, 0}, DType::kFloat32), RandomArray(Shape{3, 2}, DType::kFloat32, 3)});
  ExpectSameOnDevice("tensor_list_pop_back", {}, {list});
  ExpectSameOnDevice("tensor_list_pop_back", {}, {RandomArray(Shape{1, 5}, DType::kFloat32, 4)});
}

}  // namespace
}  // namespace ir
