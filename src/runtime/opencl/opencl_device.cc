/*!
 * \file opencl_device.cc
 * \brief OpenCL devices (selection, context, queue) and their DeviceAPI: cl_mem buffers.
 *
 * Handles are cl_mem; byte offsets are passed to the copy commands (no sub-buffers, whose
 * origin must be aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN). Reads are blocking (the caller
 * reads the host memory next), writes from the host are blocking (the caller may free its
 * memory on return), copies within the device are queued without waiting: the queue is in
 * order, so later kernels see them.
 */
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "ir/ndarray.h"
#include "runtime/opencl/opencl_runtime.h"

namespace ir {
namespace opencl {
namespace {

std::string PlatformString(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  Check(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string text(size, '\0');
  Check(clGetPlatformInfo(platform, what, size, &text[0], nullptr), "clGetPlatformInfo");
  return text.c_str();
}

std::string DeviceString(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  Check(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string text(size, '\0');
  Check(clGetDeviceInfo(device, what, size, &text[0], nullptr), "clGetDeviceInfo");
  return text.c_str();
}

template <typename T>
T DeviceValue(cl_device_id device, cl_device_info what) {
  T value{};
  Check(clGetDeviceInfo(device, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

struct Found {
  cl_platform_id platform;
  cl_device_id device;
  int platform_index;
  int device_index;
};

/*! \brief Every device of every platform, in platform order. */
std::vector<Found> Enumerate() {
  cl_uint num_platforms = 0;
  cl_int rc = clGetPlatformIDs(0, nullptr, &num_platforms);
  // The ICD loader reports "no platform" as CL_PLATFORM_NOT_FOUND_KHR (-1001).
  if (rc != CL_SUCCESS || num_platforms == 0) return {};
  std::vector<cl_platform_id> platforms(num_platforms);
  Check(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<Found> found;
  for (cl_uint p = 0; p < num_platforms; ++p) {
    cl_uint num_devices = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(num_devices);
    Check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr), "clGetDeviceIDs");
    for (cl_uint d = 0; d < num_devices; ++d) {
      found.push_back(Found{platforms[p], devices[d], static_cast<int>(p), static_cast<int>(d)});
    }
  }
  return found;
}

std::string ListDevices(const std::vector<Found>& found) {
  std::vector<std::string> names;
  for (const Found& f : found) {
    names.push_back(StrCat(f.platform_index, ":", f.device_index, " ", DeviceString(f.device, CL_DEVICE_NAME)));
  }
  return Join(names, ", ");
}

/*! \brief Index in `found` of opencl:0: $IR_OPENCL_DEVICE, else the first GPU, else the first device. */
size_t Preferred(const std::vector<Found>& found) {
  const char* env = std::getenv("IR_OPENCL_DEVICE");
  if (env != nullptr && *env) {
    std::string text = env;
    size_t colon = text.find(':');
    IR_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < text.size() &&
             text.find_first_not_of("0123456789:") == std::string::npos)
        << "IR_OPENCL_DEVICE must be 'platform:device' (indices), got '" << text << "'";
    int p = std::stoi(text.substr(0, colon)), d = std::stoi(text.substr(colon + 1));
    for (size_t i = 0; i < found.size(); ++i) {
      if (found[i].platform_index == p && found[i].device_index == d) return i;
    }
    throw Error(StrCat("IR_OPENCL_DEVICE=", text, " names no OpenCL device (available: ", ListDevices(found), ")"));
  }
  for (size_t i = 0; i < found.size(); ++i) {
    if (DeviceValue<cl_device_type>(found[i].device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) return i;
  }
  return 0;
}

std::unique_ptr<CLDevice> Open(const Found& f, int id) {
  auto dev = std::make_unique<CLDevice>();
  dev->id = id;
  dev->platform = f.platform;
  dev->device = f.device;
  dev->platform_name = PlatformString(f.platform, CL_PLATFORM_NAME);
  dev->name = DeviceString(f.device, CL_DEVICE_NAME);
  dev->driver_version = DeviceString(f.device, CL_DRIVER_VERSION);
  dev->version = DeviceString(f.device, CL_DEVICE_VERSION);
  dev->fp64 = DeviceString(f.device, CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos;
  auto single = DeviceValue<cl_device_fp_config>(f.device, CL_DEVICE_SINGLE_FP_CONFIG);
  dev->correctly_rounded_sqrt = (single & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  dev->max_work_group_size = DeviceValue<size_t>(f.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  // A CPU core runs one SIMD vector of work-items at a time, a GPU unit some thousand threads.
  bool cpu = (DeviceValue<cl_device_type>(f.device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  dev->concurrent_work_items = DeviceValue<cl_uint>(f.device, CL_DEVICE_MAX_COMPUTE_UNITS) * int64_t{cpu ? 8 : 1024};
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(f.platform), 0};
  cl_int rc = CL_SUCCESS;
  dev->context = clCreateContext(props, 1, &f.device, nullptr, nullptr, &rc);
  Check(rc, "clCreateContext");
  dev->queue = clCreateCommandQueue(dev->context, f.device, 0, &rc);
  Check(rc, "clCreateCommandQueue");
  return dev;
}

class DeviceTable {
 public:
  const CLDevice& Get(int id) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!enumerated_) {
      found_ = Enumerate();
      IR_CHECK(!found_.empty()) << "no OpenCL platform/device found (install an OpenCL driver, e.g. pocl-opencl-icd)";
      size_t first = Preferred(found_);
      order_.push_back(first);
      for (size_t i = 0; i < found_.size(); ++i) {
        if (i != first) order_.push_back(i);
      }
      devices_.resize(order_.size());
      enumerated_ = true;
    }
    IR_CHECK(id >= 0 && id < static_cast<int>(order_.size()))
        << "no OpenCL device opencl:" << id << " (there are " << order_.size() << ": " << ListDevices(found_) << ")";
    if (!devices_[id]) devices_[id] = Open(found_[order_[id]], id);
    return *devices_[id];
  }

 private:
  std::mutex mutex_;
  bool enumerated_ = false;
  std::vector<Found> found_;
  std::vector<size_t> order_;
  std::vector<std::unique_ptr<CLDevice>> devices_;
};

class OpenCLDeviceAPI final : public DeviceAPI {
 public:
  explicit OpenCLDeviceAPI(const CLDevice& device) : dev_(device) {}

  void* Alloc(size_t bytes) override {
    cl_int rc = CL_SUCCESS;
    // A zero-byte buffer is invalid in OpenCL; keep a valid unique handle.
    cl_mem mem = clCreateBuffer(dev_.context, CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &rc);
    IR_CHECK(rc == CL_SUCCESS) << "cannot allocate " << bytes << " bytes on opencl:" << dev_.id << " (" << dev_.name
                               << "): " << ErrorName(rc);
    return mem;
  }
  void Free(void* handle) override { clReleaseMemObject(static_cast<cl_mem>(handle)); }
  void CopyToHost(const void* src, size_t src_offset, void* dst, size_t bytes) override {
    if (bytes == 0) return;
    Check(clEnqueueReadBuffer(dev_.queue, Mem(src), CL_TRUE, src_offset, bytes, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer (device to host copy)");
  }
  void CopyFromHost(const void* src, void* dst, size_t dst_offset, size_t bytes) override {
    if (bytes == 0) return;
    Check(clEnqueueWriteBuffer(dev_.queue, Mem(dst), CL_TRUE, dst_offset, bytes, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer (host to device copy)");
  }
  void CopyWithin(const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes) override {
    if (bytes == 0 || (src == dst && src_offset == dst_offset)) return;
    Check(clEnqueueCopyBuffer(dev_.queue, Mem(src), Mem(dst), src_offset, dst_offset, bytes, 0, nullptr, nullptr),
          "clEnqueueCopyBuffer (device copy)");
  }
  void Synchronize() override { Check(clFinish(dev_.queue), "clFinish"); }

 private:
  static cl_mem Mem(const void* handle) { return static_cast<cl_mem>(const_cast<void*>(handle)); }
  const CLDevice& dev_;
};

struct RegisterOpenCL {
  RegisterOpenCL() {
    DeviceAPI::Register(DeviceType::kOpenCL, [](int id) -> DeviceAPI* { return new OpenCLDeviceAPI(GetDevice(id)); });
  }
} register_opencl;

}  // namespace

std::string CLDevice::Describe() const {
  return StrCat(platform_name, " / ", name, " (", version, ", driver ", driver_version, ")");
}

const CLDevice& GetDevice(int id) {
  static DeviceTable* table = new DeviceTable();  // devices live as long as the process
  return table->Get(id);
}

std::string ErrorName(cl_int code) {
  static const std::pair<cl_int, const char*> kNames[] = {
      {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
      {CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE"},
      {CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE"},
      {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
      {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
      {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
      {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
      {CL_MISALIGNED_SUB_BUFFER_OFFSET, "CL_MISALIGNED_SUB_BUFFER_OFFSET"},
      {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
      {CL_INVALID_DEVICE, "CL_INVALID_DEVICE"},
      {CL_INVALID_CONTEXT, "CL_INVALID_CONTEXT"},
      {CL_INVALID_COMMAND_QUEUE, "CL_INVALID_COMMAND_QUEUE"},
      {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
      {CL_INVALID_BINARY, "CL_INVALID_BINARY"},
      {CL_INVALID_BUILD_OPTIONS, "CL_INVALID_BUILD_OPTIONS"},
      {CL_INVALID_PROGRAM, "CL_INVALID_PROGRAM"},
      {CL_INVALID_PROGRAM_EXECUTABLE, "CL_INVALID_PROGRAM_EXECUTABLE"},
      {CL_INVALID_KERNEL_NAME, "CL_INVALID_KERNEL_NAME"},
      {CL_INVALID_KERNEL, "CL_INVALID_KERNEL"},
      {CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX"},
      {CL_INVALID_ARG_VALUE, "CL_INVALID_ARG_VALUE"},
      {CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE"},
      {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
      {CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION"},
      {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
      {CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
      {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
  };
  for (const auto& entry : kNames) {
    if (entry.first == code) return StrCat(entry.second, " (", code, ")");
  }
  return StrCat("error ", code);
}

}  // namespace opencl
}  // namespace ir
