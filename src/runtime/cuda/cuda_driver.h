/*!
 * \file cuda_driver.h
 * \brief The CUDA driver API, loaded at run time with dlopen, and the devices it serves.
 *
 * libcuda is never linked: a binary linked to it does not start where no driver is
 * installed. The driver is dlopen'ed on first use ("libcuda.so.1", or $IR_CUDA_DRIVER);
 * a missing library, the toolkit's stub (CUDA_ERROR_STUB_LIBRARY) and CUDA_ERROR_NO_DEVICE
 * all become one clean ir::Error starting with "no CUDA device".
 */
#ifndef IR_RUNTIME_CUDA_CUDA_DRIVER_H_
#define IR_RUNTIME_CUDA_CUDA_DRIVER_H_

#include <cuda.h>

#include <memory>
#include <string>

#include "ir/base.h"

namespace ir {
namespace cuda {

/*! \brief Driver entry points, resolved by their versioned ABI names (cuMemAlloc_v2...). */
struct DriverAPI {
  decltype(&::cuInit) Init = nullptr;
  decltype(&::cuDeviceGetCount) DeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) DeviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain = nullptr;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) CtxSynchronize = nullptr;
  decltype(&::cuMemAlloc) MemAlloc = nullptr;
  decltype(&::cuMemFree) MemFree = nullptr;
  decltype(&::cuMemcpyHtoDAsync) MemcpyHtoDAsync = nullptr;
  decltype(&::cuMemcpyDtoHAsync) MemcpyDtoHAsync = nullptr;
  decltype(&::cuMemcpyDtoDAsync) MemcpyDtoDAsync = nullptr;
  decltype(&::cuModuleLoadDataEx) ModuleLoadDataEx = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  decltype(&::cuStreamCreate) StreamCreate = nullptr;
  decltype(&::cuStreamSynchronize) StreamSynchronize = nullptr;
  decltype(&::cuGetErrorString) GetErrorString = nullptr;

  /*! \brief Throws ir::Error "CUDA error <code> (<text>) in <what>" unless `result` is success. */
  void Check(CUresult result, const std::string& what) const;
};

/*!
 * \brief Loads the driver library `library`, resolves every entry point and runs cuInit.
 * Throws the "no CUDA device: ..." error when the library is absent, is the stub, or sees no
 * device. Not cached: Driver() is the process-wide, cached entry.
 */
std::shared_ptr<const DriverAPI> LoadDriver(const std::string& library);

/*! \brief The process's driver ($IR_CUDA_DRIVER or "libcuda.so.1"), loaded once it succeeds. */
const DriverAPI& Driver();

/*! \brief True when Driver() would succeed (a driver and at least one device exist). */
bool DeviceAvailable();

/*! \brief One device: its primary context and the stream its work is queued on. */
class Device {
 public:
  /*! \brief The device of index `id`, initialized on first use; throws when absent. */
  static Device& Get(int id);
  /*! \brief Makes this device's context current on the calling thread. */
  void Activate() const;
  CUstream stream() const { return stream_; }
  int id() const { return id_; }
  /*! \brief Compute capability as major * 10 + minor (e.g. 90). */
  int compute_capability() const { return compute_capability_; }
  /*! \brief Threads resident at once: multiprocessors times resident threads per multiprocessor. */
  int64_t resident_threads() const { return resident_threads_; }

 private:
  explicit Device(int id);
  int id_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  int compute_capability_ = 0;
  int64_t resident_threads_ = 0;
};

}  // namespace cuda
}  // namespace ir

#endif  // IR_RUNTIME_CUDA_CUDA_DRIVER_H_
