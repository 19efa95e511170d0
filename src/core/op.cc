/*!
 * \file op.cc
 * \brief The op registry: ops by name, aliases, and attribute maps by key.
 */
#include "ir/op.h"

#include <cxxabi.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/json_util.h"
#include "core/op_registry.h"
#include "core/registration_transaction.h"

namespace ir {

namespace {

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

namespace detail {

std::string TypeName(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  return name;
}

std::string AttrTypeMismatch(const Op& op, const OpMapBase& map, const std::type_info& type) {
  if (map.type == std::type_index(type)) return "";
  return StrCat("op '", op.name, "': attribute '", map.key, "' is set as ", TypeName(type),
                " but was first registered as ", TypeName(*map.type_info));
}

std::unique_ptr<OpMapBase> NewOpMap(const std::function<OpMapBase*()>& create, const std::string& key,
                                    const std::type_info& type) {
  std::unique_ptr<OpMapBase> map(create());
  map->key = key;
  map->type = type;
  map->type_info = &type;
  return map;
}

OpMapBase* GetOpMap(const std::string& key, const std::type_info& type) {
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  OpMapBase* map = nullptr;
  if (RegistrationTransaction* transaction = RegistrationTransaction::Current()) {
    map = transaction->StagedMap(key);
  }
  if (map == nullptr) {
    auto it = reg->attrs.find(key);
    if (it == reg->attrs.end()) return nullptr;
    map = it->second.get();
  }
  IR_CHECK(map->type == std::type_index(type))
      << "op attribute '" << key << "' has type " << TypeName(*map->type_info) << ", not " << TypeName(type);
  return map;
}

void SetOpAttr(const Op& op, const std::string& key, const std::type_info& type,
               const std::function<OpMapBase*()>& create, const std::function<void(OpMapBase*)>& update) {
  if (RegistrationTransaction* transaction = RegistrationTransaction::Current()) {
    transaction->SetAttr(op, key, type, create, update);
    return;
  }
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  auto it = reg->attrs.find(key);
  if (it == reg->attrs.end()) it = reg->attrs.emplace(key, NewOpMap(create, key, type)).first;
  std::string mismatch = AttrTypeMismatch(op, *it->second, type);
  if (!mismatch.empty()) throw Error(mismatch);
  update(it->second.get());
}

}  // namespace detail

Op& Op::Register(const std::string& name) {
  if (detail::RegistrationTransaction* transaction = detail::RegistrationTransaction::Current()) {
    return transaction->Register(name);
  }
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  if (Op* op = reg->FindLocked(name)) return *op;
  std::unique_ptr<Op> op(new Op());
  op->name = name;
  op->index_ = static_cast<uint32_t>(reg->ops.size());
  return *reg->AddLocked(std::move(op));
}

const Op* Op::Find(const std::string& name) {
  if (detail::RegistrationTransaction* transaction = detail::RegistrationTransaction::Current()) {
    if (const Op* staged = transaction->FindStaged(name)) return staged;
  }
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  return reg->FindLocked(name);
}

const Op* Op::Get(const std::string& name) {
  if (const Op* op = Find(name)) return op;
  std::vector<std::string> names = ListNames();
  std::vector<std::string> close;
  for (const std::string& candidate : names) {
    if (EditDistance(candidate, name) <= std::max<size_t>(1, name.size() / 4)) close.push_back(candidate);
  }
  std::string hint = close.empty() ? "" : StrCat("; did you mean ", Join(close, ", "), "?");
  throw Error(StrCat("unknown op '", name, "'", hint));
}

std::vector<std::string> Op::ListNames() {
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  std::vector<std::string> names;
  for (const auto& op : reg->ops) names.push_back(op->name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Op::ListAttrKeys() {
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  std::vector<std::string> keys;
  for (const auto& kv : reg->attrs) keys.push_back(kv.first);
  return keys;
}

bool Op::HasAttr(const std::string& key, const Op* op) {
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  auto it = reg->attrs.find(key);
  return it != reg->attrs.end() && it->second->Has(op);
}

Op& Op::describe(const std::string& text) {
  description = text;
  return *this;
}

Op& Op::add_argument(const std::string& arg_name, const std::string& type, const std::string& arg_description) {
  arguments.push_back(ArgumentInfo{arg_name, type, arg_description});
  return *this;
}

Op& Op::add_arguments(const std::vector<dmlc::ParamFieldInfo>& fields) {
  for (const auto& field : fields) add_argument(field.name, field.type_info_str, field.description);
  return *this;
}

Op& Op::set_num_inputs(uint32_t n) {
  num_inputs = n;
  return *this;
}

Op& Op::set_num_inputs(std::function<uint32_t(const NodeAttrs&)> fn) {
  get_num_inputs = std::move(fn);
  return *this;
}

Op& Op::set_num_outputs(uint32_t n) {
  num_outputs = n;
  return *this;
}

Op& Op::set_num_outputs(std::function<uint32_t(const NodeAttrs&)> fn) {
  get_num_outputs = std::move(fn);
  return *this;
}

Op& Op::set_input_names(const std::vector<std::string>& names) {
  input_names = names;
  for (const std::string& input : names) add_argument(input, "Tensor", "input");
  return *this;
}

Op& Op::set_attr_parser(std::function<void(NodeAttrs*)> parser) {
  attr_parser = std::move(parser);
  return *this;
}

Op& Op::add_alias(const std::string& alias) {
  if (detail::RegistrationTransaction* transaction = detail::RegistrationTransaction::Current()) {
    transaction->AddAlias(*this, alias);
    return *this;
  }
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  auto it = reg->by_name.find(alias);
  if (it != reg->by_name.end() && it->second != this) {
    detail::ReportRegistrationError(
        StrCat("alias '", alias, "' of op '", name, "' is already the name of op '", it->second->name, "'"));
    return *this;
  }
  reg->by_name[alias] = this;
  return *this;
}

uint32_t Op::InputCount(const NodeAttrs& attrs) const { return get_num_inputs ? get_num_inputs(attrs) : num_inputs; }

uint32_t Op::OutputCount(const NodeAttrs& attrs) const {
  return get_num_outputs ? get_num_outputs(attrs) : num_outputs;
}

}  // namespace ir
