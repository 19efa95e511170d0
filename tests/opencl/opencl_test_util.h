/*!
 * \file opencl_test_util.h
 * \brief Helpers of the OpenCL tests: skipping without a device, and running one op's kernel
 * on the CPU and on the OpenCL device with the same inputs.
 */
#ifndef IR_TESTS_OPENCL_OPENCL_TEST_UTIL_H_
#define IR_TESTS_OPENCL_OPENCL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/ndarray.h"
#include "ir/node.h"
#include "ir/op_kernel.h"

namespace ir {
namespace opencl_test {

using Attrs = std::map<std::string, std::string>;

/*! \brief The device tests run on. */
inline Device OpenCLDevice() { return Device{DeviceType::kOpenCL, 0}; }

/*! \brief Empty when an OpenCL device can be used, else why not. */
std::string WhyNoOpenCL();

/*! \brief Skips the test (with the reason) when there is no OpenCL device. */
#define IR_REQUIRE_OPENCL()                                                    \
  do {                                                                         \
    std::string why_ = ::ir::opencl_test::WhyNoOpenCL();                       \
    if (!why_.empty()) GTEST_SKIP() << "no OpenCL device, skipping: " << why_; \
  } while (0)

/*! \brief What running one op gave: its outputs and its inputs afterwards (mutated ones changed), on the host. */
struct OpResult {
  std::vector<NDArray> outputs;
  std::vector<NDArray> inputs;
};

/*! \brief The kernel the device layer selects for `op` on OpenCL; throws when it would run on the host. */
FCompute DeviceKernelOf(const std::string& op);

/*!
 * \brief Runs op `op` with `attrs` on `inputs` (host arrays) on `device`: the op's FCompute on
 * the CPU, its OpenCL kernel (DeviceKernelOf) on an OpenCL device.
 * Inputs and outputs are copied across; `seed` is OpContext::seed.
 */
OpResult RunOpOn(Device device, const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs,
                 uint64_t seed = 7, bool is_train = true);

/*! \brief Expects the OpenCL kernel of `op` to match its CPU kernel on `inputs` (outputs and inputs after). */
void ExpectSameOnDevice(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs,
                        double atol = 1e-5, double rtol = 1e-5);

/*! \brief `array` (on the host) as a view at a nonzero byte offset of a larger device buffer. */
NDArray OffsetCopyOnDevice(const NDArray& array);

}  // namespace opencl_test
}  // namespace ir

#endif  // IR_TESTS_OPENCL_OPENCL_TEST_UTIL_H_
