/*!
 * \file variable_store.cc
 * \brief VariableStore: the persistent values of a session's variables, and the lock runs
 * that read or update them hold.
 */
#include "ir/runtime.h"

namespace ir {

bool VariableStore::Has(const std::string& name) const {
  std::lock_guard<std::mutex> lock(values_mutex_);
  return values_.count(name) != 0;
}

NDArray VariableStore::Get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(values_mutex_);
  auto it = values_.find(name);
  IR_CHECK(it != values_.end()) << "variable '" << name << "' is not initialized (run its initializer first)";
  return it->second;
}

NDArray VariableStore::Read(const std::string& name, Device device) const {
  std::shared_lock<std::shared_mutex> no_updates = LockForRead();
  return Get(name).CopyTo(device);
}

void VariableStore::Set(const std::string& name, NDArray value) {
  std::lock_guard<std::mutex> lock(values_mutex_);
  values_[name] = std::move(value);
}

std::vector<std::string> VariableStore::Names() const {
  std::lock_guard<std::mutex> lock(values_mutex_);
  std::vector<std::string> names;
  for (const auto& kv : values_) names.push_back(kv.first);
  return names;
}

std::shared_lock<std::shared_mutex> VariableStore::LockForRead() const {
  return std::shared_lock<std::shared_mutex>(runs_mutex_);
}

std::unique_lock<std::shared_mutex> VariableStore::LockForUpdate() const {
  return std::unique_lock<std::shared_mutex>(runs_mutex_);
}

}  // namespace ir
