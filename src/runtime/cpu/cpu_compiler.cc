/*!
 * \file cpu_compiler.cc
 * \brief Compiles generated C with the system C compiler into a shared object and loads it.
 *
 * gcc in C mode compiles about twice as fast as g++ (MACHINE_NOTES). Flags: -O3
 * -march=native for the host's vector units (less the ones above IR_MAX_CPU_ISA); -fno-math-errno and
 * -fno-trapping-math let loops over math functions vectorize (with the prelude's `omp declare simd` declarations,
 * through libmvec) while NaN and infinity keep their IEEE meaning (no -ffast-math);
 * -ffp-contract=off: gcc's GNU C default would fuse a * b + c into one fma, which rounds once
 * and overflows differently (the OpenCL prelude and NVRTC's --fmad=false say the same);
 * -fopenmp for the parallel loops. Loaded objects are never closed: closing a library that
 * used OpenMP crashes at exit. The compiler (IR_CC: one program, no arguments) runs from an
 * argument vector, never through a shell, and is killed after IR_COMPILE_TIMEOUT seconds.
 */
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/subprocess.h"
#include "ir/codegen.h"
#include "ir/cpu_isa.h"

namespace ir {
namespace {

/*! \brief The compiler's flags; below AVX-512, IR_MAX_CPU_ISA takes the vector units above its level off -march=native.
 */
const std::vector<std::string>& Flags() {
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> f = {
        "-O3",      "-march=native", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
        "-fopenmp", "-shared",       "-fPIC",           "-std=gnu11"};
    if (MaxCpuIsa() == CpuIsa::kAvx2) f.insert(f.begin() + 2, "-mno-avx512f");  // and every AVX-512 extension
    if (MaxCpuIsa() == CpuIsa::kBaseline) f.insert(f.begin() + 2, "-mno-avx");  // and AVX2, FMA, AVX-512
    return f;
  }();
  return flags;
}

// IR_CC names one program (a path, or a name looked up in PATH), never a command line.
std::string CompilerPath() {
  const char* cc = std::getenv("IR_CC");
  return cc != nullptr && *cc ? cc : "gcc";
}

// Seconds a compilation may take (IR_COMPILE_TIMEOUT, default 300) before it is killed.
double CompileTimeout() {
  const char* text = std::getenv("IR_COMPILE_TIMEOUT");
  if (text == nullptr || *text == '\0') return 300;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  IR_CHECK(*end == '\0' && std::isfinite(seconds) && seconds > 0)
      << "IR_COMPILE_TIMEOUT='" << text << "' is not a positive number of seconds";
  return seconds;
}

// Runs `args` (the compiler first); throws naming it when it is missing or overruns the timeout.
ProcessResult RunCompiler(const std::vector<std::string>& args) {
  double timeout = CompileTimeout();
  ProcessResult result = RunProcess(args, timeout);
  if (result.not_found) {
    throw Error(StrCat("C compiler '", args[0], "' not found (install gcc or set IR_CC to one program, without ",
                       "arguments): ", result.output));
  }
  if (result.timed_out) {
    throw Error(StrCat("C compiler '", args[0], "' did not finish within ", timeout,
                       " s (IR_COMPILE_TIMEOUT) and was killed: ", DescribeCommand(args)));
  }
  return result;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  IR_CHECK(out.good()) << "cannot write '" << path << "'";
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ir-cc-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    IR_CHECK(mkdtemp(buf.data()) != nullptr)
        << "cannot create a temporary directory for kernel compilation ('" << pattern << "'): " << std::strerror(errno);
    path_ = buf.data();
  }
  ~TempDir() {
    for (const char* name : {"/kernels.c", "/kernels.so"}) std::remove((path_ + name).c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class CPUModule final : public CompiledModule {
 public:
  explicit CPUModule(void* handle) : handle_(handle) {}
  void Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) override {
    std::vector<const NDArray*> pointers;
    for (const NDArray& arg : args) pointers.push_back(&arg);
    Resolve(name)(pointers.data(), pointers.size(), ctx);
  }
  Launcher Resolve(const std::string& name) override {
    using Entry = void (*)(void* const*);
    void* symbol = dlsym(handle_, name.c_str());
    IR_CHECK(symbol != nullptr) << "compiled module has no kernel '" << name << "'";
    Entry entry = reinterpret_cast<Entry>(symbol);
    return [entry](const NDArray* const* args, size_t n, const OpContext&) {
      constexpr size_t kInline = 64;  // kernels have up to F_max inputs plus outputs: no allocation per launch
      void* inline_pointers[kInline] = {};
      std::vector<void*> heap_pointers(n > kInline ? n : 0);
      void** pointers = n > kInline ? heap_pointers.data() : inline_pointers;
      for (size_t i = 0; i < n; ++i) pointers[i] = args[i]->data();
      entry(pointers);
    };
  }

 private:
  void* handle_;
};

class CPUCompiler final : public KernelCompiler {
 public:
  std::string Id() const override {
    static const std::string id = [] {
      std::string version = RunCompiler({CompilerPath(), "-dumpfullversion"}).output;
      // -march=native depends on the host: its CPU model is part of the identity.
      std::string cpu;
      std::ifstream info("/proc/cpuinfo");
      for (std::string line; std::getline(info, line);) {
        if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) cpu += line;
        if (line.empty() && !cpu.empty()) break;
      }
      std::string flags;
      for (const std::string& flag : Flags()) flags += flag + " ";
      return StrCat(CompilerPath(), " ", version, " ", flags, "cpu:", HashHex(cpu));
    }();
    return id;
  }

  std::string Compile(const std::string& source) const override {
    TempDir dir;
    WriteFile(dir.path() + "/kernels.c", source);
    std::vector<std::string> args = {CompilerPath()};
    args.insert(args.end(), Flags().begin(), Flags().end());
    args.insert(args.end(), {dir.path() + "/kernels.c", "-o", dir.path() + "/kernels.so", "-lmvec", "-lm"});
    ProcessResult result = RunCompiler(args);
    IR_CHECK(result.exit_code == 0) << "kernel compilation failed (" << DescribeCommand(args) << ", exit status "
                                    << result.exit_code << "):\n"
                                    << result.output << "\n--- source ---\n"
                                    << source;
    return ReadFile(dir.path() + "/kernels.so");
  }

  std::shared_ptr<CompiledModule> Load(const std::string& blob) const override {
    // An anonymous in-memory file: nothing left on disk, nothing another process can race on.
    int fd = memfd_create("ir-kernels", MFD_CLOEXEC);
    IR_CHECK(fd >= 0) << "memfd_create failed";
    size_t written = 0;
    while (written < blob.size()) {
      ssize_t n = write(fd, blob.data() + written, blob.size() - written);
      if (n <= 0) {
        close(fd);
        throw Error("cannot write a compiled kernel module to memory");
      }
      written += static_cast<size_t>(n);
    }
    // glibc recognizes loaded libraries by path: the fd stays open (as the module stays
    // loaded) so no later module can get the same /proc/self/fd/N name.
    std::string path = StrCat("/proc/self/fd/", fd);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      close(fd);
      const char* reason = dlerror();
      throw Error(StrCat("cannot load compiled kernel module: ", reason ? reason : "unknown error"));
    }
    return std::make_shared<CPUModule>(handle);
  }
};

struct RegisterCPUCompiler {
  RegisterCPUCompiler() {
    KernelCompiler::Register("cpu", std::make_shared<CPUCompiler>());
    // F_max 8: the LeNet step and the wide sweep stop improving beyond it (docs/PERFORMANCE.md).
    TargetDefaults::Register("cpu", TargetDefaults{8});
  }
} register_cpu_compiler;

}  // namespace
}  // namespace ir
