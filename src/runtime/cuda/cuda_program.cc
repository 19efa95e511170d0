/*!
 * \file cuda_program.cc
 * \brief PTX programs: loaded through the driver on each device they run on, kernels launched
 * on the stream of the run (or the device's own).
 */
#include <map>
#include <mutex>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_target.h"

namespace ir {
namespace cuda {
namespace {

CUstream StreamOf(const OpContext& ctx) {
  if (ctx.queue != nullptr) return static_cast<CUstream>(ctx.queue);
  return Device::Get(ctx.device.id).stream();
}

/*! \brief A PTX module, loaded on a device the first time it runs there. */
class CUDAProgram final : public device::DeviceProgram {
 public:
  explicit CUDAProgram(std::string ptx) : ptx_(std::move(ptx)) {
    std::lock_guard<std::mutex> lock(mutex_);
    ModuleOn(0);  // so a missing driver or a bad blob fails in Load
  }

  void Launch(const std::string& kernel, const std::vector<std::string>& args, int64_t groups, int64_t group_size,
              const OpContext& ctx) override {
    if (groups <= 0) return;
    IR_CHECK(ctx.device.type == DeviceType::kCUDA)
        << "CUDA kernel '" << kernel << "' launched for device " << ctx.device.ToString();
    CUfunction function;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      function = Function(ctx.device.id, kernel);
    }
    // cuLaunchKernel reads each argument through its address.
    std::vector<void*> pointers;
    for (const std::string& arg : args) pointers.push_back(const_cast<char*>(arg.data()));
    const DriverAPI& api = Driver();
    api.Check(api.LaunchKernel(function, static_cast<unsigned>(groups), 1, 1, static_cast<unsigned>(group_size), 1, 1,
                               0, StreamOf(ctx), pointers.data(), nullptr),
              StrCat("cuLaunchKernel(", kernel, ", ", groups, " blocks of ", group_size, ")"));
  }

 private:
  CUmodule ModuleOn(int device) {
    Device::Get(device).Activate();
    auto module = modules_.find(device);
    if (module != modules_.end()) return module->second;
    char log[8192] = {0};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
    CUmodule loaded = nullptr;
    const DriverAPI& api = Driver();
    CUresult result = api.ModuleLoadDataEx(&loaded, ptx_.c_str(), 2, options, values);
    if (result != CUDA_SUCCESS) {
      const char* text = nullptr;
      api.GetErrorString(result, &text);
      throw Error(StrCat("cannot load PTX on cuda:", device, ": CUDA error ", static_cast<int>(result), " (",
                         text ? text : "unknown", ")\n", log));
    }
    return modules_.emplace(device, loaded).first->second;
  }

  CUfunction Function(int device, const std::string& name) {
    CUmodule module = ModuleOn(device);
    auto key = std::make_pair(device, name);
    auto fn = functions_.find(key);
    if (fn != functions_.end()) return fn->second;
    CUfunction function = nullptr;
    Driver().Check(Driver().ModuleGetFunction(&function, module, name.c_str()),
                   StrCat("cuModuleGetFunction(", name, ")"));
    return functions_.emplace(key, function).first->second;
  }

  std::string ptx_;
  std::mutex mutex_;
  std::map<int, CUmodule> modules_;
  std::map<std::pair<int, std::string>, CUfunction> functions_;
};

}  // namespace

std::shared_ptr<device::DeviceProgram> LoadPTX(const std::string& ptx) {
  IR_CHECK(ptx.find(".version") != std::string::npos && ptx.find(".target") != std::string::npos)
      << "not a PTX module (" << ptx.size() << " bytes)";
  return std::make_shared<CUDAProgram>(ptx);
}

}  // namespace cuda
}  // namespace ir
