#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <vector>

#include "ir/ndarray.h"
#include "opencl/opencl_test_util.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::OpenCLDevice;

TEST(OpenCLDeviceTest, RoundTripsThroughDeviceMemory) {
  IR_REQUIRE_OPENCL();
  NDArray host = NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArray dev = host.CopyTo(OpenCLDevice());
  EXPECT_EQ(dev.device(), OpenCLDevice());
  EXPECT_EQ(dev.ToVector<float>(), std::vector<float>({1, 2, 3, 4, 5, 6}));
  EXPECT_ERROR(dev.data(), "copy it to the cpu first");
}

TEST(OpenCLDeviceTest, HonorsByteOffsetsOfViews) {
  IR_REQUIRE_OPENCL();
  NDArray dev = NDArray::FromVector<int32_t>({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).CopyTo(OpenCLDevice());
  // Row 1 starts 8 bytes in: far below any sub-buffer alignment.
  NDArray rows = dev.Slice(1, 3);
  EXPECT_EQ(rows.byte_offset(), 8u);
  EXPECT_EQ(rows.ToVector<int32_t>(), std::vector<int32_t>({2, 3, 4, 5}));
  rows.CopyFrom(NDArray::FromVector<int32_t>({2, 2}, {-1, -2, -3, -4}));
  EXPECT_EQ(dev.ToVector<int32_t>(), std::vector<int32_t>({0, 1, -1, -2, -3, -4, 6, 7, 8, 9}));
}

TEST(OpenCLDeviceTest, CopiesWithinTheDeviceBetweenOffsets) {
  IR_REQUIRE_OPENCL();
  NDArray dev = NDArray::FromVector<double>({4}, {1, 2, 3, 4}).CopyTo(OpenCLDevice());
  NDArray other = NDArray::FromVector<double>({6}, {0, 0, 0, 0, 0, 0}).CopyTo(OpenCLDevice());
  other.Slice(3, 5).CopyFrom(dev.Slice(1, 3));
  DeviceAPI::Get(OpenCLDevice())->Synchronize();
  EXPECT_EQ(other.ToVector<double>(), std::vector<double>({0, 0, 0, 2, 3, 0}));
  NDArray copy = dev.Slice(2, 4).CopyTo(OpenCLDevice());
  EXPECT_EQ(copy.byte_offset(), 0u);
  EXPECT_EQ(copy.ToVector<double>(), std::vector<double>({3, 4}));
}

TEST(OpenCLDeviceTest, HandlesEmptyArraysAndBools) {
  IR_REQUIRE_OPENCL();
  NDArray empty(Shape{0, 3}, DType::kFloat32, OpenCLDevice());
  EXPECT_TRUE(empty.CopyTo(Device::CPU()).ToVector<float>().empty());
  NDArray flags = NDArray::FromVector<bool>({3}, {true, false, true}).CopyTo(OpenCLDevice());
  EXPECT_EQ(flags.ToVector<bool>(), std::vector<bool>({true, false, true}));
}

TEST(OpenCLDeviceTest, NamesAMissingDevice) {
  IR_REQUIRE_OPENCL();
  EXPECT_ERROR(DeviceAPI::Get(Device{DeviceType::kOpenCL, 99}), "no OpenCL device opencl:99");
}

/*! \brief Opens opencl:0 with IR_OPENCL_DEVICE=`choice`; exits 0, or 3 after printing the error. */
void OpenWithChoice(const char* choice) {
  setenv("IR_OPENCL_DEVICE", choice, 1);
  try {
    DeviceAPI::Get(OpenCLDevice());
  } catch (const Error& err) {
    std::cerr << err.what();
    std::exit(3);
  }
  std::exit(0);
}

TEST(OpenCLDeviceDeathTest, IrOpenclDeviceMustNameADevice) {
  // A fresh process for each choice (the device table is read once per process); nothing
  // before the statements may open a device, so a machine without one gets its own message.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(OpenWithChoice("7:3"), testing::ExitedWithCode(3),
              "IR_OPENCL_DEVICE=7:3 names no OpenCL device|no OpenCL platform/device found");
  EXPECT_EXIT(OpenWithChoice("gpu"), testing::ExitedWithCode(3),
              "IR_OPENCL_DEVICE must be 'platform:device'|no OpenCL platform/device found");
}

}  // namespace
}  // namespace ir
