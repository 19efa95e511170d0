/*!
 * \file cpu_device_api.cc
 * \brief Host memory: 64-byte aligned (a cache line, and the widest vector register).
 *
 * Large blocks (>= 1 MiB) are kept for reuse after they are freed, up to IR_CPU_CACHE_MB
 * (default 1024) in all: glibc returns such blocks to the kernel, and every run that
 * allocates a fresh output would then pay a page fault per 4 KiB and the kernel's zeroing
 * (a 64 MiB output: ~10 ms, as much as the kernel that fills it). IR_CPU_CACHE_MB=0 turns
 * the cache off; sanitizer builds never cache, so use-after-free stays detectable.
 */
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "ir/ndarray.h"

namespace ir {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

constexpr size_t kCachedMin = size_t{1} << 20;

/*!
 * \brief Bytes of physical memory. A larger block cannot be backed, and asking for one anyway
 * (say 16 TiB from a shape typo) aborts sanitizer builds instead of failing cleanly.
 */
size_t PhysicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return SIZE_MAX;
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
}

size_t CacheLimit() {
  if (kSanitized) return 0;
  const char* env = std::getenv("IR_CPU_CACHE_MB");
  return (env != nullptr && *env ? std::strtoull(env, nullptr, 10) : 1024) << 20;
}

/*! \brief Freed large blocks by size, reused by the next allocation of exactly that size. */
class BlockCache {
 public:
  void* Take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    // The block given back last (its lines are the likeliest still in cache): equal keys sit in
    // the order they were given.
    auto range = blocks_.equal_range(bytes);
    if (range.first == range.second) return nullptr;
    auto it = std::prev(range.second);
    void* ptr = it->second;
    blocks_.erase(it);
    cached_ -= bytes;
    sizes_[ptr] = bytes;
    return ptr;
  }
  void Remember(void* ptr, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[ptr] = bytes;
  }
  /*! \brief Keeps `ptr` for reuse; false when it is not a large block or the cache is full. */
  bool Give(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sizes_.find(ptr);
    if (it == sizes_.end()) return false;
    size_t bytes = it->second;
    sizes_.erase(it);
    if (cached_ + bytes > limit_) return false;
    blocks_.emplace(bytes, ptr);
    cached_ += bytes;
    return true;
  }
  size_t limit() const { return limit_; }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> blocks_;
  std::map<void*, size_t> sizes_;  // live large blocks
  size_t cached_ = 0;
  const size_t limit_ = CacheLimit();
};

class CPUDeviceAPI final : public DeviceAPI {
 public:
  void* Alloc(size_t bytes) override {
    bool large = bytes >= kCachedMin && cache_.limit() > 0;
    if (large) {
      if (void* reused = cache_.Take(bytes)) return reused;
    }
    static const size_t physical = PhysicalMemory();
    IR_CHECK(bytes <= physical) << "out of host memory: " << bytes << " bytes requested, the machine has " << physical;
    void* ptr = nullptr;
    // posix_memalign with size 0 may return null; keep a valid unique pointer.
    int rc = posix_memalign(&ptr, 64, bytes == 0 ? 64 : bytes);
    IR_CHECK(rc == 0 && ptr != nullptr) << "out of host memory: " << bytes << " bytes requested";
    if (large) cache_.Remember(ptr, bytes);
    return ptr;
  }
  void Free(void* handle) override {
    if (!cache_.Give(handle)) std::free(handle);
  }
  void CopyToHost(const void* src, size_t src_offset, void* dst, size_t bytes) override {
    std::memmove(dst, static_cast<const char*>(src) + src_offset, bytes);
  }
  void CopyFromHost(const void* src, void* dst, size_t dst_offset, size_t bytes) override {
    std::memmove(static_cast<char*>(dst) + dst_offset, src, bytes);
  }
  void CopyWithin(const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes) override {
    std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset, bytes);
  }

 private:
  BlockCache cache_;
};

struct RegisterCPU {
  RegisterCPU() {
    DeviceAPI::Register(DeviceType::kCPU, [](int id) -> DeviceAPI* {
      IR_CHECK(id == 0) << "there is one cpu device (cpu:0), not cpu:" << id;
      // Never destroyed, like the registry: a thread still releasing arrays while the process
      // exits (the collective engine's, a user's) must not call into a destroyed device.
      static CPUDeviceAPI* api = new CPUDeviceAPI();
      return api;
    });
  }
} register_cpu;

}  // namespace
}  // namespace ir
