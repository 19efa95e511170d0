// An op library loaded at run time (tests/core/libs/device_ops.cc, built against include/ir/
// only) brings an opaque op with its device kernel in portable kernel C: the device layer runs
// it on the OpenCL device, not on the host, and it matches the op's CPU kernel.
#include <gtest/gtest.h>

#include <string>

#include "ir/op.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

TEST(OpenCLOpLibraryTest, LoadedOpaqueOpRunsItsPortableDeviceKernel) {
  IR_REQUIRE_OPENCL();
  LoadOpLibrary(std::string(IR_TEST_LIB_DIR) + "/libdevice_ops.so");
  EXPECT_NO_THROW(opencl_test::DeviceKernelOf("mirror_rows"));
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    opencl_test::ExpectSameOnDevice("mirror_rows", {{"scale", "-1.5"}}, {test::RandomArray(Shape{5, 7}, dtype, 3)});
    opencl_test::ExpectSameOnDevice("mirror_rows", {}, {test::RandomArray(Shape{1, 300}, dtype, 4)});
  }
}

}  // namespace
}  // namespace ir
