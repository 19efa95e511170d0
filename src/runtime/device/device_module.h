/*!
 * \file device_module.h
 * \brief The CompiledModule of every device target: a target's DeviceProgram with the launch
 * table of its generated kernels.
 */
#ifndef IR_RUNTIME_DEVICE_DEVICE_MODULE_H_
#define IR_RUNTIME_DEVICE_DEVICE_MODULE_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "ir/device_kernel.h"
#include "runtime/device/device_target.h"
#include "runtime/device/launch_table.h"

namespace ir {
namespace device {

/*! \brief A loaded program and how its generated kernels are launched. */
class DeviceModule final : public CompiledModule {
 public:
  DeviceModule(std::shared_ptr<DeviceProgram> program, LaunchTable launches)
      : program_(std::move(program)), launches_(std::move(launches)) {}
  /*! \brief Runs generated kernel `name` on its arrays (each on ctx.device) with its recorded launch. */
  void Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) override;
  DeviceProgram& program() const { return *program_; }

 private:
  std::shared_ptr<DeviceProgram> program_;
  LaunchTable launches_;
};

/*! \brief The module of `source` on target `target`, compiled once through the KernelCache. */
std::shared_ptr<DeviceModule> GetModule(const std::string& target, const std::string& source);

/*! \brief Checks that `array` is on `device` (errors name `what`). */
void CheckOnDevice(const NDArray& array, Device device, const std::string& what);

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_DEVICE_MODULE_H_
