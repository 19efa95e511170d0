/*!
 * \file opencl_compiler.cc
 * \brief The "opencl" KernelCompiler (clBuildProgram for device opencl:0, program binaries
 * as cache blobs) and OpenCLModule, which launches the built kernels.
 *
 * Build flags keep IEEE semantics (no -cl-fast-relaxed-math); single-precision division and
 * sqrt are correctly rounded where the device can do it, as they are on the CPU.
 */
#include <algorithm>
#include <vector>

#include "runtime/opencl/opencl_module.h"

namespace ir {
namespace opencl {

KernelArgs& KernelArgs::Array(const NDArray& array) {
  size_t elem = DTypeSize(array.dtype());
  IR_CHECK(array.byte_offset() % elem == 0)
      << "OpenCL kernel argument: byte offset " << array.byte_offset() << " is not a multiple of the "
      << DTypeName(array.dtype()) << " element size";
  Value(static_cast<cl_mem>(array.handle()));
  return Value(static_cast<cl_long>(array.byte_offset() / elem));
}

KernelArgs& KernelArgs::TypedValue(DType dtype, double value) {
  switch (dtype) {
    case DType::kFloat32:
      return Value(static_cast<cl_float>(value));
    case DType::kFloat64:
      return Value(static_cast<cl_double>(value));
    case DType::kInt32:
      return Value(static_cast<cl_int>(value));
    case DType::kInt64:
      return Value(static_cast<cl_long>(value));
    case DType::kBool:
      return Value(static_cast<cl_uchar>(value != 0));
    default:
      throw Error(StrCat("OpenCL kernel argument of dtype ", DTypeName(dtype)));
  }
}

void KernelArgs::Apply(cl_kernel kernel, const std::string& name) const {
  for (size_t i = 0; i < args_.size(); ++i) {
    cl_int rc = clSetKernelArg(kernel, static_cast<cl_uint>(i), args_[i].size(), args_[i].data());
    IR_CHECK(rc == CL_SUCCESS) << "OpenCL kernel '" << name << "': cannot set argument " << i << " (" << args_[i].size()
                               << " bytes): " << ErrorName(rc);
  }
}

void CheckOnDevice(const NDArray& array, const CLDevice& device, const std::string& what) {
  Device d = array.device();
  IR_CHECK(d.type == DeviceType::kOpenCL && d.id == device.id)
      << what << " is on " << d.ToString() << ", but OpenCL kernels run on opencl:" << device.id;
}

OpenCLModule::OpenCLModule(const CLDevice& device, cl_program program, std::map<std::string, LaunchInfo> launches)
    : device_(device), program_(program), launches_(std::move(launches)) {}

OpenCLModule::~OpenCLModule() {
  for (auto& kv : kernels_) clReleaseKernel(kv.second.kernel);
  clReleaseProgram(program_);
}

void OpenCLModule::Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) {
  auto it = launches_.find(name);
  IR_CHECK(it != launches_.end()) << "OpenCL module has no generated kernel '" << name << "'";
  KernelArgs kernel_args;
  for (size_t i = 0; i < args.size(); ++i) {
    CheckOnDevice(args[i], device_, StrCat("argument ", i, " of kernel '", name, "'"));
    kernel_args.Array(args[i]);
  }
  Run(name, kernel_args, it->second.global, it->second.local, ctx.queue);
}

void OpenCLModule::Run(const std::string& name, const KernelArgs& args, int64_t global, int64_t local, void* queue) {
  if (global <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(name);
  if (it == kernels_.end()) {
    cl_int rc = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program_, name.c_str(), &rc);
    IR_CHECK(rc == CL_SUCCESS) << "OpenCL module has no kernel '" << name << "': " << ErrorName(rc);
    size_t most = 1;
    Check(clGetKernelWorkGroupInfo(kernel, device_.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(most), &most, nullptr),
          "clGetKernelWorkGroupInfo");
    it = kernels_.emplace(name, Entry{kernel, static_cast<int64_t>(most)}).first;
  }
  // One work-group size for every launch of a kernel: POCL generates a kernel's code per
  // work-group size, and would choose a new one for every new global size.
  if (local <= 0) local = std::min(kDefaultGroupSize, it->second.max_group_size);
  args.Apply(it->second.kernel, name);
  size_t global_size = static_cast<size_t>((global + local - 1) / local * local);
  size_t local_size = static_cast<size_t>(local);
  cl_int rc = clEnqueueNDRangeKernel(QueueOf(device_, queue), it->second.kernel, 1, nullptr, &global_size, &local_size,
                                     0, nullptr, nullptr);
  IR_CHECK(rc == CL_SUCCESS) << "cannot launch OpenCL kernel '" << name << "' (global " << global_size << ", local "
                             << local << ") on " << device_.Describe() << ": " << ErrorName(rc);
}

namespace {

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

class OpenCLCompiler final : public KernelCompiler {
 public:
  std::string Id() const override {
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
    return PackBlob(ParseLaunchLines(source), binary);
  }

  std::shared_ptr<CompiledModule> Load(const std::string& blob) const override {
    const CLDevice& device = GetDevice(0);
    std::map<std::string, LaunchInfo> launches;
    std::string binary;
    UnpackBlob(blob, &launches, &binary);
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
    return std::make_shared<OpenCLModule>(device, program, std::move(launches));
  }
};

struct RegisterOpenCLCompiler {
  RegisterOpenCLCompiler() { KernelCompiler::Register("opencl", std::make_shared<OpenCLCompiler>()); }
} register_opencl_compiler;

}  // namespace
}  // namespace opencl
}  // namespace ir
