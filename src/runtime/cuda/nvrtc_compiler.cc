/*!
 * \file nvrtc_compiler.cc
 * \brief CUDA C to PTX with NVRTC.
 *
 * NVRTC is linked (it ships with the toolkit and needs no device); the driver is loaded at run
 * time (cuda_driver.h), so compiling works on machines without a GPU and only loading needs one.
 * The virtual architecture matches device 0 when a driver can be asked (capped to what this
 * NVRTC supports; the driver JIT-compiles PTX for newer devices), else compute_90.
 */
#include <nvrtc.h>

#include <algorithm>
#include <vector>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_target.h"

namespace ir {
namespace cuda {
namespace {

constexpr int kDefaultArch = 90;

void CheckNVRTC(nvrtcResult result, const char* what) {
  IR_CHECK(result == NVRTC_SUCCESS) << "NVRTC error in " << what << ": " << nvrtcGetErrorString(result);
}

/*! \brief The compute capability to compile for: device 0's, or kDefaultArch without a device. */
int TargetArch() {
  if (!DeviceAvailable()) return kDefaultArch;
  int wanted = Device::Get(0).compute_capability();
  int count = 0;
  CheckNVRTC(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(count);
  CheckNVRTC(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  int best = archs.empty() ? kDefaultArch : archs.front();
  for (int arch : archs) {
    if (arch <= wanted) best = std::max(best, arch);
  }
  return best;
}

/*! \brief Frees an NVRTC program however the compilation ends. */
class Program {
 public:
  explicit Program(const std::string& source) {
    CheckNVRTC(nvrtcCreateProgram(&program_, source.c_str(), "ir_kernels.cu", 0, nullptr, nullptr),
               "nvrtcCreateProgram");
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

  std::string Log() const {
    size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size == 0) return "";
    std::string log(size, '\0');
    nvrtcGetProgramLog(program_, &log[0]);
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    return log;
  }

 private:
  nvrtcProgram program_ = nullptr;
};

/*!
 * \brief NVRTC options, decided on first use (asking the driver is not for static initialization).
 * No contraction into fma (as OpenCL's FP_CONTRACT OFF): multiplies and adds round as in the CPU
 * kernels, so the random ops draw the CPU's numbers bit for bit.
 */
const std::vector<std::string>& Options() {
  static const std::vector<std::string> options{StrCat("-arch=compute_", TargetArch()), "-std=c++17", "--fmad=false"};
  return options;
}

}  // namespace

std::string NVRTCId() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return StrCat("nvrtc ", major, ".", minor, " ", Join(Options(), " "));
}

std::string CompileToPTX(const std::string& source) {
  Program program(source);
  std::vector<const char*> options;
  for (const std::string& option : Options()) options.push_back(option.c_str());
  nvrtcResult result = nvrtcCompileProgram(program.get(), static_cast<int>(options.size()), options.data());
  IR_CHECK(result == NVRTC_SUCCESS) << "NVRTC compilation failed (" << nvrtcGetErrorString(result) << ", "
                                    << Join(Options(), " ") << "):\n"
                                    << program.Log() << "\n--- source ---\n"
                                    << source;
  size_t size = 0;
  CheckNVRTC(nvrtcGetPTXSize(program.get(), &size), "nvrtcGetPTXSize");
  std::string ptx(size, '\0');
  CheckNVRTC(nvrtcGetPTX(program.get(), &ptx[0]), "nvrtcGetPTX");
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // the size counts the terminator
  return ptx;
}

}  // namespace cuda
}  // namespace ir
