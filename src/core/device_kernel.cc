/*!
 * \file device_kernel.cc
 * \brief Launch arguments of portable kernels, and the registry of portable kernel sources.
 */
#include <algorithm>
#include <memory>
#include <mutex>

#include "core/registration_transaction.h"
#include "ir/device_kernel.h"

namespace ir {
namespace {

struct SourceRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<DeviceKernelSource>> sources;
  /*!
   * \brief Sources of op libraries being loaded, by their loader's transaction: listed when the
   * library's registrations are applied, else kept unlisted (the library still refers to them).
   */
  std::vector<std::pair<const detail::RegistrationTransaction*, std::unique_ptr<DeviceKernelSource>>> staged;
};

SourceRegistry& Sources() {
  static auto* registry = new SourceRegistry();  // used until exit
  return *registry;
}

}  // namespace

DeviceArgs& DeviceArgs::Array(const NDArray& array) {
  size_t elem = DTypeSize(array.dtype());
  IR_CHECK(array.byte_offset() % elem == 0)
      << "device kernel argument: byte offset " << array.byte_offset() << " is not a multiple of the "
      << DTypeName(array.dtype()) << " element size";
  Value(array.handle());
  return Value(static_cast<int64_t>(array.byte_offset() / elem));
}

DeviceArgs& DeviceArgs::NullArray() {
  Value(static_cast<void*>(nullptr));
  return Value(int64_t{0});
}

DeviceArgs& DeviceArgs::Scalar(DType dtype, double value) {
  switch (dtype) {
    case DType::kFloat32:
      return Value(static_cast<float>(value));
    case DType::kFloat64:
      return Value(value);
    case DType::kInt32:
      return Value(static_cast<int32_t>(value));
    case DType::kInt64:
      return Value(static_cast<int64_t>(value));
    case DType::kBool:
      return Value(static_cast<uint8_t>(value != 0));
    default:
      throw Error(StrCat("device kernel argument of dtype ", DTypeName(dtype)));
  }
}

const DeviceKernelSource& RegisterDeviceKernelSource(DeviceKernelSource source) {
  SourceRegistry& registry = Sources();
  std::lock_guard<std::mutex> lock(registry.mutex);
  detail::RegistrationTransaction* transaction = detail::RegistrationTransaction::Current();
  bool taken = false;
  for (const auto& existing : registry.sources) taken = taken || existing->name == source.name;
  for (const auto& pending : registry.staged) {
    taken = taken || (pending.first == transaction && pending.second->name == source.name);
  }
  std::string error = StrCat("device kernel source '", source.name, "' is registered twice");
  auto stored = std::make_unique<DeviceKernelSource>(std::move(source));
  const DeviceKernelSource* result = stored.get();
  if (transaction == nullptr) {
    IR_CHECK(!taken) << error;
    registry.sources.push_back(std::move(stored));
    return *result;
  }
  // An op library is loading (inside dlopen, where nothing may throw): its loader decides.
  if (taken) transaction->ReportError(error);
  registry.staged.emplace_back(transaction, std::move(stored));
  transaction->OnApply([result] {
    SourceRegistry& sources = Sources();
    std::lock_guard<std::mutex> apply_lock(sources.mutex);
    auto it = std::find_if(sources.staged.begin(), sources.staged.end(),
                           [result](const auto& pending) { return pending.second.get() == result; });
    sources.sources.push_back(std::move(it->second));
    sources.staged.erase(it);
  });
  return *result;
}

std::vector<const DeviceKernelSource*> DeviceKernelSources() {
  SourceRegistry& registry = Sources();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<const DeviceKernelSource*> sources;
  for (const auto& source : registry.sources) sources.push_back(source.get());
  return sources;
}

}  // namespace ir
