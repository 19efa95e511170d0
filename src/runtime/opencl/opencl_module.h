/*!
 * \file opencl_module.h
 * \brief A built OpenCL program (the CompiledModule of target "opencl") and the arguments
 * its kernels are launched with.
 *
 * Kernels run on device opencl:0, the device the "opencl" KernelCompiler builds for.
 */
#ifndef IR_RUNTIME_OPENCL_OPENCL_MODULE_H_
#define IR_RUNTIME_OPENCL_OPENCL_MODULE_H_

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "runtime/opencl/opencl_kernel_info.h"
#include "runtime/opencl/opencl_runtime.h"

namespace ir {
namespace opencl {

/*! \brief The arguments of one kernel launch, in order. */
class KernelArgs {
 public:
  /*! \brief An array: its cl_mem, then its offset in elements (a `long`): two kernel arguments. */
  KernelArgs& Array(const NDArray& array);
  /*! \brief A scalar or a plain struct passed by value (types with the same layout on host and device). */
  template <typename T>
  KernelArgs& Value(const T& value) {
    std::string bytes(sizeof(T), '\0');
    std::memcpy(&bytes[0], &value, sizeof(T));
    args_.push_back(std::move(bytes));
    return *this;
  }
  /*! \brief `value` converted to the element type of `dtype` (bool: uchar 0 or 1). */
  KernelArgs& TypedValue(DType dtype, double value);
  /*! \brief Sets every argument of `kernel`. */
  void Apply(cl_kernel kernel, const std::string& name) const;

 private:
  std::vector<std::string> args_;
};

/*! \brief Work-items per group of launches that leave the size to the module. */
constexpr int64_t kDefaultGroupSize = 64;

/*! \brief A built program on one device; kernels are created on first use. */
class OpenCLModule final : public CompiledModule {
 public:
  OpenCLModule(const CLDevice& device, cl_program program, std::map<std::string, LaunchInfo> launches);
  ~OpenCLModule() override;
  OpenCLModule(const OpenCLModule&) = delete;
  OpenCLModule& operator=(const OpenCLModule&) = delete;

  /*! \brief Runs generated kernel `name` on its arrays with the geometry recorded by the printer. */
  void Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) override;
  /*!
   * \brief Enqueues kernel `name` over `global` work-items (rounded up to whole groups) in
   * groups of `local` (0: kDefaultGroupSize, or less where the kernel allows less) on `queue`
   * (null: the device's queue), without waiting for it.
   */
  void Run(const std::string& name, const KernelArgs& args, int64_t global, int64_t local, void* queue);
  const CLDevice& device() const { return device_; }

 private:
  const CLDevice& device_;
  cl_program program_;
  std::map<std::string, LaunchInfo> launches_;
  // clSetKernelArg is not thread-safe per kernel: argument setting and enqueueing are locked.
  struct Entry {
    cl_kernel kernel;
    int64_t max_group_size;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> kernels_;
};

/*! \brief Checks that `array` lives on OpenCL device `device` (errors name `what`). */
void CheckOnDevice(const NDArray& array, const CLDevice& device, const std::string& what);

}  // namespace opencl
}  // namespace ir

#endif  // IR_RUNTIME_OPENCL_OPENCL_MODULE_H_
