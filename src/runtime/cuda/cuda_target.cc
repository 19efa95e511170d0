/*!
 * \file cuda_target.cc
 * \brief The "cuda" target's dialect table and its DeviceTarget: NVRTC to PTX, PTX loaded by
 * the driver. Registering it gives CUDA the device layer's printer, kernel cache compiler,
 * defaults and kernel selection.
 */
#include "runtime/cuda/cuda_target.h"

#include "runtime/cuda/cuda_driver.h"

namespace ir {
namespace cuda {
namespace {

// NVRTC includes no headers: the integer names of portable kernels, INFINITY and NAN.
const char* kHeader = R"(typedef unsigned char uchar;
typedef unsigned int uint;
typedef unsigned long ulong;
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
)";

device::Dialect MakeDialect() {
  device::Dialect d;
  d.target = "cuda";
  d.device_type = DeviceType::kCUDA;
  d.header = kHeader;
  d.kernel_qualifier = "extern \"C\" __global__ __launch_bounds__(256)";
  d.shared_qualifier = "__shared__";
  d.function_qualifier = "__device__ inline";
  d.barrier = "__syncthreads()";
  d.global_id = "(long)blockIdx.x * blockDim.x + threadIdx.x";
  d.global_size = "(long)gridDim.x * blockDim.x";
  d.local_id = "threadIdx.x";
  d.local_size = "blockDim.x";
  d.group_id = "blockIdx.x";
  d.num_groups = "gridDim.x";
  d.native_rsqrt = true;  // rsqrtf / rsqrt: what the CUDA printer always used
  d.group_size = 256;     // the __launch_bounds__ above
  d.max_groups = 1 << 16;
  d.fmax = 8;
  return d;
}

class CUDATarget final : public device::DeviceTarget {
 public:
  const device::Dialect& dialect() const override { return CUDADialect(); }
  std::string CompilerId() const override { return NVRTCId(); }
  std::string Compile(const std::string& source) const override { return CompileToPTX(source); }
  std::shared_ptr<device::DeviceProgram> Load(const std::string& blob) const override { return LoadPTX(blob); }
  int64_t ConcurrentWorkItems() const override { return Device::Get(0).resident_threads(); }
};

struct RegisterCUDATarget {
  RegisterCUDATarget() { device::RegisterDeviceTarget(std::make_shared<CUDATarget>()); }
} register_cuda_target;

}  // namespace

const device::Dialect& CUDADialect() {
  static const device::Dialect* dialect = new device::Dialect(MakeDialect());  // used until exit
  return *dialect;
}

}  // namespace cuda
}  // namespace ir
