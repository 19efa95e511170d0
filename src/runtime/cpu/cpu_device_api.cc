/*!
 * \file cpu_device_api.cc
 * \brief Host memory: 64-byte aligned (a cache line, and the widest vector register).
 */
#include <cstdlib>
#include <cstring>

#include "ir/ndarray.h"

namespace ir {
namespace {

class CPUDeviceAPI final : public DeviceAPI {
 public:
  void* Alloc(size_t bytes) override {
    void* ptr = nullptr;
    // posix_memalign with size 0 may return null; keep a valid unique pointer.
    int rc = posix_memalign(&ptr, 64, bytes == 0 ? 64 : bytes);
    IR_CHECK(rc == 0 && ptr != nullptr) << "out of host memory allocating " << bytes << " bytes";
    return ptr;
  }
  void Free(void* handle) override { std::free(handle); }
  void CopyToHost(const void* src, size_t src_offset, void* dst, size_t bytes) override {
    std::memmove(dst, static_cast<const char*>(src) + src_offset, bytes);
  }
  void CopyFromHost(const void* src, void* dst, size_t dst_offset, size_t bytes) override {
    std::memmove(static_cast<char*>(dst) + dst_offset, src, bytes);
  }
  void CopyWithin(const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes) override {
    std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset, bytes);
  }
};

struct RegisterCPU {
  RegisterCPU() {
    DeviceAPI::Register(DeviceType::kCPU, [](int id) -> DeviceAPI* {
      IR_CHECK(id == 0) << "there is one cpu device (cpu:0), not cpu:" << id;
      static CPUDeviceAPI api;
      return &api;
    });
  }
} register_cpu;

}  // namespace
}  // namespace ir
