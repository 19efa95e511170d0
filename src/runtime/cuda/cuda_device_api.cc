/*!
 * \file cuda_device_api.cc
 * \brief Device memory of CUDA devices through the driver API.
 *
 * Handles are CUdeviceptr values. Every transfer is queued on the device's stream, the one
 * kernels run on, so copies and kernels stay ordered; copies to the host wait for the whole
 * context (a kernel may have been queued on a caller's stream), copies from the host wait for
 * their own transfer (the caller may free the source right after).
 */
#include "ir/ndarray.h"
#include "runtime/cuda/cuda_driver.h"

namespace ir {
namespace cuda {
namespace {

CUdeviceptr Ptr(const void* handle, size_t offset) { return reinterpret_cast<CUdeviceptr>(handle) + offset; }

class CUDADeviceAPI final : public DeviceAPI {
 public:
  explicit CUDADeviceAPI(int id) : device_(Device::Get(id)), api_(Driver()) {}

  void* Alloc(size_t bytes) override {
    device_.Activate();
    CUdeviceptr ptr = 0;
    // cuMemAlloc rejects 0 bytes; an empty array still needs a distinct, valid handle.
    CUresult result = api_.MemAlloc(&ptr, bytes == 0 ? 256 : bytes);
    IR_CHECK(result == CUDA_SUCCESS) << "out of memory on cuda:" << device_.id() << " allocating " << bytes
                                     << " bytes (CUDA error " << static_cast<int>(result) << ")";
    return reinterpret_cast<void*>(ptr);
  }

  void Free(void* handle) override {
    // Called from destructors: never throws. Kernels queued on the buffer finish first.
    device_.Activate();
    api_.StreamSynchronize(device_.stream());
    api_.MemFree(Ptr(handle, 0));
  }

  void CopyToHost(const void* src, size_t src_offset, void* dst, size_t bytes) override {
    device_.Activate();
    api_.Check(api_.CtxSynchronize(), "cuCtxSynchronize before a copy to the host");
    api_.Check(api_.MemcpyDtoHAsync(dst, Ptr(src, src_offset), bytes, device_.stream()), "cuMemcpyDtoHAsync");
    api_.Check(api_.StreamSynchronize(device_.stream()), "cuStreamSynchronize");
  }

  void CopyFromHost(const void* src, void* dst, size_t dst_offset, size_t bytes) override {
    device_.Activate();
    api_.Check(api_.MemcpyHtoDAsync(Ptr(dst, dst_offset), src, bytes, device_.stream()), "cuMemcpyHtoDAsync");
    api_.Check(api_.StreamSynchronize(device_.stream()), "cuStreamSynchronize");
  }

  void CopyWithin(const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes) override {
    if (bytes == 0) return;
    device_.Activate();
    api_.Check(api_.MemcpyDtoDAsync(Ptr(dst, dst_offset), Ptr(src, src_offset), bytes, device_.stream()),
               "cuMemcpyDtoDAsync");
  }

  void Synchronize() override {
    device_.Activate();
    api_.Check(api_.CtxSynchronize(), "cuCtxSynchronize");
  }

 private:
  Device& device_;
  const DriverAPI& api_;
};

struct RegisterCUDA {
  RegisterCUDA() {
    DeviceAPI::Register(DeviceType::kCUDA, [](int id) -> DeviceAPI* {
      return new CUDADeviceAPI(id);  // one per device, kept by the registry for the process
    });
  }
} register_cuda;

}  // namespace
}  // namespace cuda
}  // namespace ir
