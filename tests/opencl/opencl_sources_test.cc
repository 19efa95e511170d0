// Every portable device kernel source builds on OpenCL for every one of its element types.
#include <gtest/gtest.h>

#include "ir/codegen.h"
#include "ir/device_kernel.h"
#include "opencl/opencl_test_util.h"
#include "runtime/device/device_source.h"
#include "runtime/device/device_target.h"
#include "test_util.h"

namespace ir {
namespace {

TEST(OpenCLSourcesTest, EveryDeviceKernelSourceBuildsForEachOfItsDTypes) {
  IR_REQUIRE_OPENCL();
  const device::DeviceTarget& target = device::GetDeviceTarget("opencl");
  std::vector<const DeviceKernelSource*> sources = DeviceKernelSources();
  ASSERT_GT(sources.size(), 5u) << "the op files register their device kernel sources";
  for (const DeviceKernelSource* source : sources) {
    ASSERT_FALSE(source->dtypes.empty()) << source->name;
    for (DType dtype : source->dtypes) {
      SCOPED_TRACE(StrCat(source->name, " for ", DTypeName(dtype)));
      std::string text = device::RenderKernelSource(target.dialect(), *source, dtype);
      EXPECT_NO_THROW(KernelCache::Global().GetOrCompile("opencl", text));
    }
  }
}

TEST(OpenCLSourcesTest, RenderingRejectsDTypesASourceLacks) {
  const device::DeviceTarget& target = device::GetDeviceTarget("opencl");
  DeviceKernelSource source{
      "test_float_only", "IR_KERNEL void test_float_only(IR_ARRAY(T, y)) { IR_OFFSET(y); }\n", {DType::kFloat32}};
  EXPECT_ERROR(device::RenderKernelSource(target.dialect(), source, DType::kInt32),
               "'test_float_only' has no int32 version (it has float32)");
  std::string text = device::RenderKernelSource(target.dialect(), source, DType::kFloat32);
  EXPECT_NE(text.find("#define IR_GROUP_SIZE 128"), std::string::npos) << text;
  EXPECT_NE(text.find("typedef float T;"), std::string::npos) << text;
}

}  // namespace
}  // namespace ir
