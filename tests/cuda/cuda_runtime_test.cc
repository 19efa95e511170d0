#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cuda_test_util.h"
#include "ir/codegen.h"
#include "ir/runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_target.h"
#include "test_util.h"

namespace ir {
namespace {

const char* kKernel = R"(extern "C" __global__ void scale(float* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    x[i] = 2.0f * x[i];
  }
}
)";

// The no-device path can only be checked where there is no device.
#define SKIP_IF_GPU()                                        \
  if (cuda::DeviceAvailable())                               \
  GTEST_SKIP() << "a CUDA device is present: the no-device " \
                  "path cannot be exercised here"

TEST(CUDARuntimeTest, MissingDriverLibraryIsANoDeviceError) {
  EXPECT_ERROR(cuda::LoadDriver("libcuda-that-does-not-exist.so.1"),
               "no CUDA device: libcuda-that-does-not-exist.so.1 not found");
}

TEST(CUDARuntimeTest, StubDriverIsANoDeviceError) {
  // With a real driver loaded, dlopen of the stub (same soname) would give the real one.
  SKIP_IF_GPU();
  std::string stub = StrCat(IR_TEST_SOURCE_DIR, "/does-not-matter");
  for (const char* path :
       {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"}) {
    if (access(path, R_OK) == 0) stub = path;
  }
  if (access(stub.c_str(), R_OK) != 0) GTEST_SKIP() << "the toolkit has no stub libcuda.so";
  EXPECT_ERROR(cuda::LoadDriver(stub), "no CUDA device: the driver is a stub (CUDA_ERROR_STUB_LIBRARY)");
}

TEST(CUDARuntimeTest, DeviceMemoryWithoutADeviceIsACleanError) {
  SKIP_IF_GPU();
  EXPECT_ERROR(DeviceAPI::Get(Device{DeviceType::kCUDA, 0}), "no CUDA device");
  EXPECT_ERROR(NDArray(Shape{4}, DType::kFloat32, Device::Parse("cuda:0")), "no CUDA device");
  EXPECT_ERROR(NDArray::FromVector<float>(Shape{2}, {1, 2}).CopyTo(Device::Parse("cuda")), "no CUDA device");
}

TEST(CUDARuntimeTest, LoadingPTXWithoutADeviceIsACleanError) {
  SKIP_IF_GPU();
  EXPECT_ERROR(device::GetDeviceTarget("cuda").Load(test::CompileCUDA(kKernel)), "no CUDA device");
  const KernelCompiler& compiler = KernelCompiler::Get("cuda");
  EXPECT_ERROR(compiler.Load(compiler.Compile(kKernel)), "no CUDA device");
}

TEST(CUDARuntimeTest, SessionOnCUDAWithoutADeviceIsACleanError) {
  SKIP_IF_GPU();
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    SessionOptions options;
    options.target = "cuda";
    options.fusion = fusion;
    Session session(options);
    NodeEntry x = test::Var("x");
    NodeEntry y = test::Apply("exp", "y", {test::Apply("negative", "n", {x})});
    EXPECT_ERROR(session.Run({y}, {{"x", NDArray::FromVector<float>(Shape{3}, {1, 2, 3})}}), "no CUDA device");
  }
}

TEST(CUDARuntimeTest, CompileErrorsCarryTheLogAndTheSource) {
  std::string source = "extern \"C\" __global__ void broken(float* x) { x[0] = undeclared_value; }\n";
  try {
    KernelCompiler::Get("cuda").Compile(source);
    ADD_FAILURE() << "a kernel using an undeclared identifier compiled";
  } catch (const Error& err) {
    std::string message = err.what();
    EXPECT_NE(message.find("NVRTC compilation failed"), std::string::npos) << message;
    EXPECT_NE(message.find("identifier \"undeclared_value\" is undefined"), std::string::npos) << message;
    EXPECT_NE(message.find("--- source ---\n" + source), std::string::npos) << message;
  }
}

TEST(CUDARuntimeTest, LoadRejectsBlobsThatAreNotPTX) {
  EXPECT_ERROR(device::GetDeviceTarget("cuda").Load("\x7f"
                                                    "ELF garbage"),
               "not a PTX module");
}

TEST(CUDARuntimeTest, CompilerIdNamesNVRTCAndTheArchitecture) {
  std::string id = KernelCompiler::Get("cuda").Id();
  EXPECT_NE(id.find("nvrtc "), std::string::npos) << id;
  EXPECT_NE(id.find("-arch=compute_"), std::string::npos) << id;
  if (!cuda::DeviceAvailable()) {
    EXPECT_NE(id.find("-arch=compute_90"), std::string::npos) << id;
  }
}

/*! \brief The "cuda" compiler, loading PTX without a device (to exercise the cache's disk path). */
class PTXCheckingCompiler final : public KernelCompiler {
 public:
  std::string Id() const override { return cuda::NVRTCId(); }
  std::string Compile(const std::string& source) const override { return test::CompileCUDA(source); }
  std::shared_ptr<CompiledModule> Load(const std::string& blob) const override {
    IR_CHECK(test::PtxasErrors(blob).empty()) << "cached blob is not valid PTX";
    return std::make_shared<Loaded>();
  }

 private:
  struct Loaded final : public CompiledModule {
    void Launch(const std::string&, const std::vector<NDArray>&, const OpContext&) override {}
  };
};

/*! \brief Points IR_KERNEL_CACHE_DIR at a fresh directory for one test. */
class ScopedCacheDir {
 public:
  ScopedCacheDir() {
    std::string pattern = "/tmp/ir-cuda-cache-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    path_ = mkdtemp(name.data());
    const char* old = std::getenv("IR_KERNEL_CACHE_DIR");
    if (old != nullptr) old_ = old;
    setenv("IR_KERNEL_CACHE_DIR", path_.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (old_.empty()) {
      unsetenv("IR_KERNEL_CACHE_DIR");
    } else {
      setenv("IR_KERNEL_CACHE_DIR", old_.c_str(), 1);
    }
    std::system(StrCat("rm -rf '", path_, "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, old_;
};

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CUDARuntimeTest, KernelCacheStoresPTXAndAFreshCacheHitsDisk) {
  ScopedCacheDir dir;
  KernelCompiler::Register("cuda-ptx-check", std::make_shared<PTXCheckingCompiler>());
  KernelCache first;
  first.GetOrCompile("cuda-ptx-check", kKernel);
  EXPECT_EQ(first.stats().compilations, 1);
  KernelCache second;
  second.GetOrCompile("cuda-ptx-check", kKernel);
  EXPECT_EQ(second.stats().compilations, 0);
  EXPECT_EQ(second.stats().disk_hits, 1);
  // The real target stores its PTX too, even where loading it then fails for want of a device.
  if (!cuda::DeviceAvailable()) {
    KernelCache cache;
    EXPECT_ERROR(cache.GetOrCompile("cuda", kKernel), "no CUDA device");
  } else {
    KernelCache().GetOrCompile("cuda", kKernel);
  }
  int ptx_entries = 0;
  for (const char* target : {"cuda-ptx-check", "cuda"}) {
    std::string key = HashHex(StrCat(target, "\n", KernelCompiler::Get(target).Id(), "\n", kKernel));
    std::string entry = ReadWholeFile(StrCat(dir.path(), "/", target, "-", key, ".kbin"));
    if (entry.find(".visible .entry scale(") != std::string::npos) ++ptx_entries;
  }
  EXPECT_EQ(ptx_entries, 2) << "both cache entries hold the PTX of the kernel";
}

}  // namespace
}  // namespace ir
