/*!
 * \file cuda_driver.cc
 * \brief Loading the CUDA driver with dlopen, and per-device contexts and streams.
 */
#include "runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace ir {
namespace cuda {
namespace {

// Expands a driver macro (cuMemAlloc -> cuMemAlloc_v2) before quoting it: the ABI name.
#define IR_CUDA_QUOTE_(x) #x
#define IR_CUDA_SYMBOL_NAME_(x) IR_CUDA_QUOTE_(x)
#define IR_CUDA_RESOLVE_(field, symbol) \
  api->field = reinterpret_cast<decltype(api->field)>(Resolve(handle, library, IR_CUDA_SYMBOL_NAME_(symbol)))

void* Resolve(void* handle, const std::string& library, const char* symbol) {
  void* fn = dlsym(handle, symbol);
  IR_CHECK(fn != nullptr) << "no CUDA device: the driver " << library << " has no entry point " << symbol
                          << " (driver too old for CUDA 12+ PTX?)";
  return fn;
}

void ResolveAll(void* handle, const std::string& library, DriverAPI* api) {
  IR_CUDA_RESOLVE_(Init, cuInit);
  IR_CUDA_RESOLVE_(DeviceGetCount, cuDeviceGetCount);
  IR_CUDA_RESOLVE_(DeviceGet, cuDeviceGet);
  IR_CUDA_RESOLVE_(DeviceGetAttribute, cuDeviceGetAttribute);
  IR_CUDA_RESOLVE_(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
  IR_CUDA_RESOLVE_(CtxSetCurrent, cuCtxSetCurrent);
  IR_CUDA_RESOLVE_(CtxSynchronize, cuCtxSynchronize);
  IR_CUDA_RESOLVE_(MemAlloc, cuMemAlloc);
  IR_CUDA_RESOLVE_(MemFree, cuMemFree);
  IR_CUDA_RESOLVE_(MemcpyHtoDAsync, cuMemcpyHtoDAsync);
  IR_CUDA_RESOLVE_(MemcpyDtoHAsync, cuMemcpyDtoHAsync);
  IR_CUDA_RESOLVE_(MemcpyDtoDAsync, cuMemcpyDtoDAsync);
  IR_CUDA_RESOLVE_(ModuleLoadDataEx, cuModuleLoadDataEx);
  IR_CUDA_RESOLVE_(ModuleGetFunction, cuModuleGetFunction);
  IR_CUDA_RESOLVE_(LaunchKernel, cuLaunchKernel);
  IR_CUDA_RESOLVE_(StreamCreate, cuStreamCreate);
  IR_CUDA_RESOLVE_(StreamSynchronize, cuStreamSynchronize);
  IR_CUDA_RESOLVE_(GetErrorString, cuGetErrorString);
}

#undef IR_CUDA_RESOLVE_

// Why cuInit failed, in the words of the "no CUDA device" error.
std::string InitFailure(const DriverAPI& api, CUresult result) {
  if (result == CUDA_ERROR_STUB_LIBRARY) return "the driver is a stub (CUDA_ERROR_STUB_LIBRARY)";
  if (result == CUDA_ERROR_NO_DEVICE) return "the driver sees no device (CUDA_ERROR_NO_DEVICE)";
  const char* text = nullptr;
  api.GetErrorString(result, &text);
  return StrCat("cuInit failed with CUDA error ", static_cast<int>(result), " (", text ? text : "unknown", ")");
}

std::shared_ptr<const DriverAPI> LoadChecked(void* handle, const std::string& library) {
  auto api = std::make_shared<DriverAPI>();
  ResolveAll(handle, library, api.get());
  CUresult result = api->Init(0);
  IR_CHECK(result == CUDA_SUCCESS) << "no CUDA device: " << InitFailure(*api, result);
  int count = 0;
  api->Check(api->DeviceGetCount(&count), "cuDeviceGetCount");
  IR_CHECK(count > 0) << "no CUDA device: the driver reports 0 devices";
  return api;
}

std::string DriverLibrary() {
  const char* path = std::getenv("IR_CUDA_DRIVER");
  return path != nullptr && *path ? path : "libcuda.so.1";
}

struct DriverState {
  std::mutex mutex;
  std::shared_ptr<const DriverAPI> api;
  std::string failure;
  bool tried = false;
};

DriverState& State() {
  static auto* state = new DriverState();  // never destroyed: device memory may be freed at exit
  return *state;
}

}  // namespace

void DriverAPI::Check(CUresult result, const std::string& what) const {
  if (result == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (GetErrorString != nullptr) GetErrorString(result, &text);
  throw Error(StrCat("CUDA error ", static_cast<int>(result), " (", text ? text : "unknown", ") in ", what));
}

std::shared_ptr<const DriverAPI> LoadDriver(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error(StrCat("no CUDA device: ", library, " not found (", reason ? reason : "dlopen failed", ")"));
  }
  try {
    return LoadChecked(handle, library);  // the handle stays open: the entry points live in it
  } catch (const Error&) {
    // Unload a failed driver: the stub shares the real driver's soname, and a later dlopen of
    // "libcuda.so.1" must find the real one, not this.
    dlclose(handle);
    throw;
  }
}

const DriverAPI& Driver() {
  DriverState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.tried) {
    state.tried = true;
    try {
      state.api = LoadDriver(DriverLibrary());
    } catch (const Error& err) {
      state.failure = err.what();  // a machine without a driver does not grow one: remember why
    }
  }
  if (state.api == nullptr) throw Error(state.failure);
  return *state.api;
}

bool DeviceAvailable() {
  try {
    Driver();
    return true;
  } catch (const Error&) {
    return false;
  }
}

Device::Device(int id) : id_(id) {
  const DriverAPI& api = Driver();
  int count = 0;
  api.Check(api.DeviceGetCount(&count), "cuDeviceGetCount");
  IR_CHECK(id >= 0 && id < count) << "no CUDA device cuda:" << id << " (this machine has " << count << ")";
  CUdevice device = 0;
  api.Check(api.DeviceGet(&device, id), "cuDeviceGet");
  api.Check(api.DevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
  Activate();
  api.Check(api.StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  int major = 0, minor = 0;
  api.Check(api.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            "cuDeviceGetAttribute");
  api.Check(api.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
            "cuDeviceGetAttribute");
  compute_capability_ = major * 10 + minor;
  int units = 0, threads = 0;
  api.Check(api.DeviceGetAttribute(&units, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "cuDeviceGetAttribute");
  api.Check(api.DeviceGetAttribute(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, device),
            "cuDeviceGetAttribute");
  resident_threads_ = int64_t{units} * threads;
}

Device& Device::Get(int id) {
  static std::mutex mutex;
  static auto* devices = new std::map<int, std::unique_ptr<Device>>();  // live for the process
  std::lock_guard<std::mutex> lock(mutex);
  auto it = devices->find(id);
  if (it == devices->end()) it = devices->emplace(id, std::unique_ptr<Device>(new Device(id))).first;
  return *it->second;
}

void Device::Activate() const { Driver().Check(Driver().CtxSetCurrent(context_), "cuCtxSetCurrent"); }

}  // namespace cuda
}  // namespace ir
