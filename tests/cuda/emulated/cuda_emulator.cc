/*!
 * \file cuda_emulator.cc
 * \brief The CUDA emulator: host memory for "cuda" arrays, CUDA C compiled with g++ behind a shim.
 */
#include "cuda_emulator.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ucontext.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>

#include "runtime/cuda/cuda_target.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace ir {
namespace test {
namespace {

// What CUDA C needs to compile as C++ on the host. Launches run on one host thread at a time,
// so thread and block indices are plain statics, set by ir_emu_run (and restored by
// ir_emu_set_index whenever a fiber resumes); no thread_local either, which LeakSanitizer
// cannot scan in dlopen'ed modules. __syncthreads switches to the block's next fiber.
const char* kShim = R"(#include <math.h>
#include <string.h>
#include <cstddef>
#include <utility>
struct ir_emu_dim3 { unsigned x, y, z; };
static ir_emu_dim3 threadIdx, blockIdx, gridDim;
static const ir_emu_dim3 blockDim = {256, 1, 1};
static void (*ir_emu_sync)(void);
static inline void __syncthreads() { ir_emu_sync(); }
#define __global__
#define __device__
#define __launch_bounds__(n)
#define __shared__ static
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, sizeof f); return f; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, sizeof d); return d; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
extern "C" void ir_emu_set_sync(void (*sync)(void)) { ir_emu_sync = sync; }
extern "C" void ir_emu_set_index(unsigned block, unsigned thread, unsigned grid) {
  blockIdx.x = block;
  threadIdx.x = thread;
  gridDim.x = grid;
}
extern "C" void ir_emu_run(void (*kernel)(void**), void** args, unsigned block, unsigned thread, unsigned grid) {
  ir_emu_set_index(block, thread, grid);
  kernel(args);
}
/* Calls kernel f with argument k read from a[k] as the type of its parameter k. */
template <typename... A, std::size_t... I>
static void ir_emu_apply(void (*f)(A...), void** a, std::index_sequence<I...>) {
  f(*static_cast<A*>(a[I])...);
}
template <typename... A>
static void ir_emu_invoke(void (*f)(A...), void** a) {
  ir_emu_apply(f, a, std::index_sequence_for<A...>());
}
)";

constexpr int kThreads = 256;

/*!
 * \brief True when the source synchronizes anywhere (a barrier outside the #define lines of
 * the prelude): its kernels then run as fibers, since a helper function may hold the barrier.
 */
bool Synchronizes(const std::string& source) {
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#define", 0) == 0) continue;
    if (line.find("__syncthreads") != std::string::npos || line.find("IR_BARRIER") != std::string::npos) return true;
  }
  return false;
}

/*!
 * \brief For every kernel (`IR_KERNEL void k(`, or a printed `__global__ ... void k(`): a caller
 * taking its arguments as void**, and whether it synchronizes.
 */
std::string Wrappers(const std::string& source) {
  static const std::regex kernel(
      R"((?:IR_KERNEL|__global__)\s+(?:__launch_bounds__\(\d+\)\s+)?void\s+(?:__launch_bounds__\(\d+\)\s+)?(\w+)\s*\()");
  bool sync = Synchronizes(source);
  std::ostringstream os;
  for (std::sregex_iterator it(source.begin(), source.end(), kernel), end; it != end; ++it) {
    std::string name = (*it)[1];
    os << "extern \"C\" const int ir_emu_sync_" << name << " = " << (sync ? 1 : 0) << ";\n"
       << "extern \"C\" void ir_emu_call_" << name << "(void** a) { ir_emu_invoke(" << name << ", a); }\n";
  }
  return os.str();
}

int Run(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  IR_CHECK(pipe != nullptr) << "cannot run " << command;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output->append(buf, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*!
 * \brief The 256 threads of one block as fibers on the calling thread: each runs until it
 * reaches __syncthreads (or returns), then the next one runs; a round over all fibers is one
 * barrier. (Host threads and a condition variable cost milliseconds per barrier.)
 */
class FiberBlock {
 public:
  using Body = std::function<void(int thread)>;
  using SetIndex = void (*)(unsigned, unsigned, unsigned);

  FiberBlock(Body body, SetIndex set_index, unsigned block, unsigned grid)
      : body_(std::move(body)),
        set_index_(set_index),
        block_(block),
        grid_(grid),
        fibers_(kThreads),
        done_(kThreads, false) {
    for (int t = 0; t < kThreads; ++t) Prepare(t);
  }

  /*! \brief Runs every fiber to completion, round after round. */
  void Run() {
    FiberBlock* outer = current_;
    current_ = this;
    for (bool pending = true; pending;) {
      pending = false;
      for (int t = 0; t < kThreads; ++t) {
        if (done_[t]) continue;
        pending = true;
        Resume(t);
      }
    }
    current_ = outer;
  }

  /*! \brief __syncthreads: back to the scheduler until the next round. */
  static void Yield() {
    FiberBlock* self = current_;
    int t = self->running_;
    self->StartSwitch(&self->fakes_[t], self->main_bottom_, self->main_size_);
    swapcontext(&self->fibers_[t], &self->scheduler_);
    self->FinishSwitch(self->fakes_[t], &self->main_bottom_, &self->main_size_);
  }

 private:
  static constexpr size_t kStackBytes = 64 << 10;

  /*! \brief Makes fiber `t` start at Entry on its own stack (apart: getcontext returns twice). */
  __attribute__((noinline)) void Prepare(int t) {
    ucontext_t* fiber = &fibers_[t];
    getcontext(fiber);
    fiber->uc_stack.ss_sp = Stack(t);
    fiber->uc_stack.ss_size = kStackBytes;
    fiber->uc_link = &scheduler_;
    makecontext(fiber, &FiberBlock::Entry, 0);
  }

  /*! \brief Runs fiber `t` until it yields or ends (apart, so no loop state lives across the switch). */
  __attribute__((noinline)) void Resume(int t) {
    running_ = t;
    set_index_(block_, static_cast<unsigned>(t), grid_);
    StartSwitch(&scheduler_fake_, Stack(t), kStackBytes);
    swapcontext(&scheduler_, &fibers_[t]);
    FinishSwitch(scheduler_fake_, nullptr, nullptr);
  }

  /*! \brief Fiber `t`'s stack, allocated once (launches run one block at a time). */
  static char* Stack(int t) {
    static auto* stacks = new std::vector<std::unique_ptr<char[]>>();
    if (stacks->empty()) {
      for (int k = 0; k < kThreads; ++k) stacks->emplace_back(new char[kStackBytes]);
    }
    return (*stacks)[t].get();
  }

  static void Entry() {
    FiberBlock* self = current_;
    int t = self->running_;
    self->FinishSwitch(nullptr, &self->main_bottom_, &self->main_size_);
    self->body_(t);
    self->done_[t] = true;
    // Returning resumes uc_link (the scheduler); a null save slot tells the sanitizer this fiber ends.
    self->StartSwitch(nullptr, self->main_bottom_, self->main_size_);
  }

  // Stack switches announced to AddressSanitizer, which otherwise takes fiber stacks for overflows.
#if defined(__SANITIZE_ADDRESS__)
  static void StartSwitch(void** fake_stack, const void* bottom, size_t size) {
    __sanitizer_start_switch_fiber(fake_stack, bottom, size);
  }
  static void FinishSwitch(void* fake_stack, const void** from_bottom, size_t* from_size) {
    __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
  }
#else
  static void StartSwitch(void**, const void*, size_t) {}
  static void FinishSwitch(void*, const void**, size_t*) {}
#endif

  static thread_local FiberBlock* current_;
  Body body_;
  SetIndex set_index_;
  unsigned block_, grid_;
  std::vector<ucontext_t> fibers_;
  std::vector<bool> done_;
  ucontext_t scheduler_;
  int running_ = 0;
  std::vector<void*> fakes_ = std::vector<void*>(kThreads, nullptr);
  void* scheduler_fake_ = nullptr;
  const void* main_bottom_ = nullptr;
  size_t main_size_ = 0;
};

thread_local FiberBlock* FiberBlock::current_ = nullptr;

void SyncThreads() { FiberBlock::Yield(); }

class EmulatedProgram final : public device::DeviceProgram {
 public:
  explicit EmulatedProgram(void* handle) : handle_(handle) {
    run_ = reinterpret_cast<RunFn>(Symbol("ir_emu_run"));
    set_index_ = reinterpret_cast<FiberBlock::SetIndex>(Symbol("ir_emu_set_index"));
    reinterpret_cast<void (*)(void (*)(void))>(Symbol("ir_emu_set_sync"))(&SyncThreads);
  }

  void Launch(const std::string& name, const std::vector<std::string>& args, int64_t groups, int64_t group_size,
              const OpContext&) override {
    if (groups <= 0) return;
    IR_CHECK(group_size == kThreads) << "emulator: kernel '" << name << "' launched with blocks of " << group_size;
    auto call = reinterpret_cast<KernelFn>(Symbol("ir_emu_call_" + name));
    bool sync = *static_cast<const int*>(Symbol("ir_emu_sync_" + name)) != 0;
    unsigned grid = static_cast<unsigned>(std::min<int64_t>(groups, 2));
    std::vector<std::string> values = args;  // the kernel reads each argument through its address
    std::vector<void*> pointers;
    for (std::string& value : values) pointers.push_back(&value[0]);
    static std::mutex launch_mutex;  // one block at a time: __shared__ statics are per block
    std::lock_guard<std::mutex> lock(launch_mutex);
    for (unsigned b = 0; b < grid; ++b) {
      if (!sync) {
        for (int t = 0; t < kThreads; ++t) run_(call, pointers.data(), b, t, grid);
        continue;
      }
      FiberBlock([&](int t) { run_(call, pointers.data(), b, static_cast<unsigned>(t), grid); }, set_index_, b, grid)
          .Run();
    }
  }

 private:
  using KernelFn = void (*)(void**);
  using RunFn = void (*)(KernelFn, void**, unsigned, unsigned, unsigned);

  void* Symbol(const std::string& name) const {
    void* symbol = dlsym(handle_, name.c_str());
    IR_CHECK(symbol != nullptr) << "emulated CUDA module has no symbol '" << name << "'";
    return symbol;
  }

  void* handle_;
  RunFn run_ = nullptr;
  FiberBlock::SetIndex set_index_ = nullptr;
};

/*! \brief The "cuda" target with the CUDA dialect, compiled by g++ behind the shim. */
class EmulatedTarget final : public device::DeviceTarget {
 public:
  const device::Dialect& dialect() const override { return cuda::CUDADialect(); }
  std::string CompilerId() const override { return "cuda-emulator g++ -O1"; }

  std::string Compile(const std::string& source) const override {
    char dir_template[] = "/tmp/ir-cuda-emu-XXXXXX";
    IR_CHECK(mkdtemp(dir_template) != nullptr) << "cannot create a directory for the emulator";
    std::string dir = dir_template;
    {
      std::ofstream out(dir + "/kernels.cc");
      out << kShim << source << "\n" << Wrappers(source);
    }
    std::string log, command = StrCat("g++ -std=c++17 -O1 -w -shared -fPIC -Wl,-Bsymbolic ", dir, "/kernels.cc -o ",
                                      dir, "/kernels.so");
    int status = Run(command, &log);
    std::ifstream in(dir + "/kernels.so", std::ios::binary);
    std::stringstream blob;
    blob << in.rdbuf();
    std::system(StrCat("rm -rf '", dir, "'").c_str());
    IR_CHECK(status == 0) << "emulator: g++ failed:\n" << log << "\n--- source ---\n" << source;
    return blob.str();
  }

  std::shared_ptr<device::DeviceProgram> Load(const std::string& blob) const override {
    int fd = memfd_create("ir-cuda-emu", MFD_CLOEXEC);
    IR_CHECK(fd >= 0 && write(fd, blob.data(), blob.size()) == static_cast<ssize_t>(blob.size()))
        << "emulator: cannot write the module to memory";
    // glibc knows loaded libraries by path: the fd stays open, so no later module gets this name.
    void* handle = dlopen(StrCat("/proc/self/fd/", fd).c_str(), RTLD_NOW | RTLD_LOCAL);
    IR_CHECK(handle != nullptr) << "emulator: cannot load the module: " << dlerror();
    return std::make_shared<EmulatedProgram>(handle);
  }
};

/*! \brief "cuda" device memory as aligned host memory. */
class HostMemoryAPI final : public DeviceAPI {
 public:
  void* Alloc(size_t bytes) override {
    void* ptr = nullptr;
    IR_CHECK(posix_memalign(&ptr, 256, bytes == 0 ? 256 : bytes) == 0) << "emulator: out of memory";
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

}  // namespace

void InstallCUDAEmulator() {
  DeviceAPI::Register(DeviceType::kCUDA, [](int) -> DeviceAPI* {
    static HostMemoryAPI api;
    return &api;
  });
  device::RegisterDeviceTarget(std::make_shared<EmulatedTarget>());
}

}  // namespace test
}  // namespace ir
