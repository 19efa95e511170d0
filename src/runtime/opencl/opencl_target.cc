/*!
 * \file opencl_target.cc
 * \brief The "opencl" device target: its dialect table, program build (clBuildProgram for
 * device opencl:0, program binaries as cache blobs) and kernel launch. Everything else
 * (printing, kernel selection, portable kernels) is the device layer's.
 *
 * Build flags keep IEEE semantics (no -cl-fast-relaxed-math); single-precision division and
 * sqrt are correctly rounded where the device can do it, as they are on the CPU.
 */
#include <map>
#include <mutex>

#include "runtime/device/device_target.h"
#include "runtime/opencl/opencl_runtime.h"

namespace ir {
namespace opencl {
namespace {

device::Dialect OpenCLDialect() {
  device::Dialect d;
  d.target = "opencl";
  d.device_type = DeviceType::kOpenCL;
  // No contraction into fma: multiplies and adds round as they do in the CPU kernels.
  d.header = "#pragma OPENCL FP_CONTRACT OFF\n";
  d.fp64_enable = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable";
  d.kernel_qualifier = "__kernel";
  d.global_qualifier = "__global";
  d.shared_qualifier = "__local";
  d.function_qualifier = "inline";
  d.barrier = "barrier(CLK_LOCAL_MEM_FENCE)";
  d.global_id = "get_global_id(0)";
  d.global_size = "get_global_size(0)";
  d.local_id = "get_local_id(0)";
  d.local_size = "get_local_size(0)";
  d.group_id = "get_group_id(0)";
  d.num_groups = "get_num_groups(0)";
  d.overloaded_math = true;
  d.native_rsqrt = false;  // its error bound is looser than the CPU's correctly rounded 1 / sqrt
  d.group_size = 128;
  d.max_groups = 1024;
  d.fmax = 8;
  return d;
}

std::string BuildFlags(const CLDevice& device) {
  std::string flags = "-cl-std=CL1.2";
  if (device.correctly_rounded_sqrt) flags += " -cl-fp32-correctly-rounded-divide-sqrt";
  return flags;
}

std::string BuildLog(cl_program program, const CLDevice& device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr);
  return log.c_str();
}

/*! \brief Builds `program`; on failure releases it and throws with the device's log and `context`. */
void Build(cl_program program, const CLDevice& device, const std::string& context) {
  cl_int rc = clBuildProgram(program, 1, &device.device, BuildFlags(device).c_str(), nullptr, nullptr);
  if (rc == CL_SUCCESS) return;
  std::string log = BuildLog(program, device);
  clReleaseProgram(program);
  throw Error(StrCat("OpenCL kernel build failed on ", device.Describe(), ": ", ErrorName(rc), "\n--- build log ---\n",
                     log, context));
}

std::string ProgramBinary(cl_program program) {
  size_t size = 0;
  Check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr), "clGetProgramInfo");
  std::string binary(size, '\0');
  unsigned char* data = reinterpret_cast<unsigned char*>(&binary[0]);
  Check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr), "clGetProgramInfo");
  return binary;
}

/*! \brief A built program on opencl:0; kernels are created on first use. */
class OpenCLProgram final : public device::DeviceProgram {
 public:
  OpenCLProgram(const CLDevice& device, cl_program program) : device_(device), program_(program) {}
  ~OpenCLProgram() override {
    for (auto& kv : kernels_) clReleaseKernel(kv.second);
    clReleaseProgram(program_);
  }
  OpenCLProgram(const OpenCLProgram&) = delete;
  OpenCLProgram& operator=(const OpenCLProgram&) = delete;

  void Launch(const std::string& name, const std::vector<std::string>& args, int64_t groups, int64_t group_size,
              const OpContext& ctx) override {
    if (groups <= 0) return;
    IR_CHECK(ctx.device.type == DeviceType::kOpenCL && ctx.device.id == device_.id)
        << "OpenCL kernel '" << name << "' launched for " << ctx.device.ToString()
        << ", built for opencl:" << device_.id;
    // clSetKernelArg is not thread-safe per kernel: argument setting and enqueueing are locked.
    std::lock_guard<std::mutex> lock(mutex_);
    cl_kernel kernel = Kernel(name);
    for (size_t i = 0; i < args.size(); ++i) {
      cl_int rc = clSetKernelArg(kernel, static_cast<cl_uint>(i), args[i].size(), args[i].data());
      IR_CHECK(rc == CL_SUCCESS) << "OpenCL kernel '" << name << "': cannot set argument " << i << " ("
                                 << args[i].size() << " bytes): " << ErrorName(rc);
    }
    size_t local = static_cast<size_t>(group_size), global = static_cast<size_t>(groups) * local;
    cl_int rc =
        clEnqueueNDRangeKernel(QueueOf(device_, ctx.queue), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
    IR_CHECK(rc == CL_SUCCESS) << "cannot launch OpenCL kernel '" << name << "' (" << groups << " groups of "
                               << group_size << ") on " << device_.Describe() << ": " << ErrorName(rc);
  }

 private:
  cl_kernel Kernel(const std::string& name) {
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return it->second;
    cl_int rc = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program_, name.c_str(), &rc);
    IR_CHECK(rc == CL_SUCCESS) << "OpenCL program has no kernel '" << name << "': " << ErrorName(rc);
    return kernels_.emplace(name, kernel).first->second;
  }

  const CLDevice& device_;
  cl_program program_;
  std::mutex mutex_;
  std::map<std::string, cl_kernel> kernels_;
};

class OpenCLTarget final : public device::DeviceTarget {
 public:
  const device::Dialect& dialect() const override { return dialect_; }

  std::string CompilerId() const override {
    const CLDevice& device = GetDevice(0);
    return StrCat("opencl ", device.Describe(), " ", BuildFlags(device));
  }

  std::string Compile(const std::string& source) const override {
    const CLDevice& device = GetDevice(0);
    const char* text = source.c_str();
    size_t length = source.size();
    cl_int rc = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(device.context, 1, &text, &length, &rc);
    Check(rc, "clCreateProgramWithSource");
    Build(program, device, StrCat("\n--- source ---\n", source));
    std::string binary;
    try {
      binary = ProgramBinary(program);
    } catch (...) {
      clReleaseProgram(program);
      throw;
    }
    clReleaseProgram(program);
    IR_CHECK(!binary.empty()) << "OpenCL driver gave an empty program binary on " << device.Describe();
    return binary;
  }

  std::shared_ptr<device::DeviceProgram> Load(const std::string& binary) const override {
    const CLDevice& device = GetDevice(0);
    const unsigned char* data = reinterpret_cast<const unsigned char*>(binary.data());
    size_t size = binary.size();
    cl_int status = CL_SUCCESS, rc = CL_SUCCESS;
    cl_program program = clCreateProgramWithBinary(device.context, 1, &device.device, &size, &data, &status, &rc);
    if (rc != CL_SUCCESS || status != CL_SUCCESS) {
      if (program != nullptr) clReleaseProgram(program);
      throw Error(StrCat("cannot load an OpenCL program binary on ", device.Describe(), ": ",
                         ErrorName(rc != CL_SUCCESS ? rc : status)));
    }
    Build(program, device, " (while loading a cached program binary)");
    return std::make_shared<OpenCLProgram>(device, program);
  }

  bool SupportsFloat64() const override { return GetDevice(0).fp64; }
  int64_t ConcurrentWorkItems() const override { return GetDevice(0).concurrent_work_items; }

 private:
  device::Dialect dialect_ = OpenCLDialect();
};

struct RegisterOpenCLTarget {
  RegisterOpenCLTarget() { device::RegisterDeviceTarget(std::make_shared<OpenCLTarget>()); }
} register_opencl_target;

}  // namespace
}  // namespace opencl
}  // namespace ir
