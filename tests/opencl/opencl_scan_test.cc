// cumsum and cumprod's device kernel (array_scan.cc) against their CPU kernel, every flag and axis.
#include <gtest/gtest.h>

#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::ExpectSameOnDevice;

TEST(OpenCLScanTest, CumsumAndCumprodMatchTheCpu) {
  IR_REQUIRE_OPENCL();
  NDArray x = test::RandomArray(Shape{3, 5, 4}, DType::kFloat32, 11, 0.5, 1.5);
  NDArray ints = test::RandomArray(Shape{6, 3}, DType::kInt64, 12, -3, 3);
  for (const char* op : {"cumsum", "cumprod"}) {
    for (const char* axis : {"0", "1", "-1"}) {
      for (const char* exclusive : {"false", "true"}) {
        for (const char* reverse : {"false", "true"}) {
          ExpectSameOnDevice(op, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}}, {x});
        }
      }
    }
    ExpectSameOnDevice(op, {{"axis", "0"}, {"reverse", "true"}}, {ints});
  }
}

}  // namespace
}  // namespace ir
