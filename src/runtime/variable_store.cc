/*!
 * \file variable_store.cc
 * \brief VariableStore: the persistent values of a session's variables.
 */
#include "ir/runtime.h"

namespace ir {

const NDArray& VariableStore::Get(const std::string& name) const {
  auto it = values_.find(name);
  IR_CHECK(it != values_.end()) << "variable '" << name << "' is not initialized (run its initializer first)";
  return it->second;
}

std::vector<std::string> VariableStore::Names() const {
  std::vector<std::string> names;
  for (const auto& kv : values_) names.push_back(kv.first);
  return names;
}

}  // namespace ir
