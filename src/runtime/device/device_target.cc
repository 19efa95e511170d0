/*!
 * \file device_target.cc
 * \brief The registry of device targets, and what the layer registers for each: printer,
 * compiler (the target's, with the launch table), defaults, kernel selection.
 */
#include "runtime/device/device_target.h"

#include <map>
#include <mutex>

#include "runtime/device/device_module.h"
#include "runtime/device/device_printer.h"
#include "runtime/device/kernel_selection.h"

namespace ir {
namespace device {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<DeviceTarget>> targets;
};

Registry& Targets() {
  static auto* registry = new Registry();  // used until exit
  return *registry;
}

/*! \brief The registered target's compiler, its blob prefixed with the launch table of the source. */
class LayerCompiler final : public KernelCompiler {
 public:
  explicit LayerCompiler(std::string target) : target_(std::move(target)) {}
  std::string Id() const override { return StrCat("device-layer-1 ", GetDeviceTarget(target_).CompilerId()); }
  std::string Compile(const std::string& source) const override {
    return PackBlob(ParseLaunchLines(source), GetDeviceTarget(target_).Compile(source));
  }
  std::shared_ptr<CompiledModule> Load(const std::string& blob) const override {
    LaunchTable launches;
    std::string binary;
    UnpackBlob(blob, &launches, &binary);
    return std::make_shared<DeviceModule>(GetDeviceTarget(target_).Load(binary), std::move(launches));
  }

 private:
  std::string target_;
};

}  // namespace

void CheckOnDevice(const NDArray& array, Device device, const std::string& what) {
  IR_CHECK(array.device() == device) << what << " is on " << array.device().ToString() << ", but the kernel runs on "
                                     << device.ToString();
}

void DeviceModule::Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) {
  auto it = launches_.find(name);
  IR_CHECK(it != launches_.end()) << "the device module has no generated kernel '" << name << "'";
  DeviceArgs packed;
  for (size_t i = 0; i < args.size(); ++i) {
    CheckOnDevice(args[i], ctx.device, StrCat("argument ", i, " of kernel '", name, "'"));
    packed.Array(args[i]);
  }
  program_->Launch(name, packed.values(), it->second.groups, it->second.group_size, ctx);
}

std::shared_ptr<DeviceModule> GetModule(const std::string& target, const std::string& source) {
  auto module = std::dynamic_pointer_cast<DeviceModule>(KernelCache::Global().GetOrCompile(target, source));
  IR_CHECK(module != nullptr) << "the '" << target << "' kernel compiler is not the device layer's";
  return module;
}

void RegisterDeviceTarget(std::shared_ptr<DeviceTarget> target) {
  const Dialect& d = target->dialect();
  std::string name = d.target;
  {
    std::lock_guard<std::mutex> lock(Targets().mutex);
    Targets().targets[name] = target;
  }
  KernelPrinter::Register(name, MakeDevicePrinter(d));
  KernelCompiler::Register(name, std::make_shared<LayerCompiler>(name));
  TargetDefaults defaults;
  defaults.fmax = d.fmax;
  TargetDefaults::Register(name, defaults);
  runtime::RegisterKernelSelector(d.device_type,
                                  [name](const Op* op) { return SelectKernel(GetDeviceTarget(name), op); });
}

const DeviceTarget& GetDeviceTarget(const std::string& name) {
  std::lock_guard<std::mutex> lock(Targets().mutex);
  auto it = Targets().targets.find(name);
  IR_CHECK(it != Targets().targets.end()) << "no device target '" << name << "' is registered";
  return *it->second;
}

}  // namespace device
}  // namespace ir
