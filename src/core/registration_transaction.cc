/*!
 * \file registration_transaction.cc
 * \brief Staging, checking and committing the registrations of a loading op library.
 */
#include "core/registration_transaction.h"

#include <mutex>

#include "core/op_registry.h"

namespace ir {
namespace detail {

namespace {

thread_local RegistrationTransaction* current_transaction = nullptr;

std::string CountText(uint32_t n) { return n == kVariadic ? std::string("variadic") : std::to_string(n); }

std::string ArgumentsText(const std::vector<ArgumentInfo>& arguments) {
  std::vector<std::string> names;
  for (const ArgumentInfo& arg : arguments) names.push_back(arg.name);
  return "(" + Join(names, ", ") + ")";
}

/*! \brief Why redeclaration `staged` of registered op `real` changes more than its attributes. */
std::vector<std::string> Changes(const Op& real, const Op& staged) {
  std::vector<std::string> changes;
  if (staged.name != real.name) changes.push_back(StrCat("its name (to '", staged.name, "')"));
  if (staged.description != real.description) changes.push_back("its description");
  if (staged.num_inputs != real.num_inputs) {
    changes.push_back(
        StrCat("its number of inputs (", CountText(real.num_inputs), " -> ", CountText(staged.num_inputs), ")"));
  }
  if (staged.num_outputs != real.num_outputs) {
    changes.push_back(
        StrCat("its number of outputs (", CountText(real.num_outputs), " -> ", CountText(staged.num_outputs), ")"));
  }
  if (staged.get_num_inputs || staged.get_num_outputs) changes.push_back("how it counts inputs or outputs");
  if (staged.input_names != real.input_names) {
    changes.push_back(
        StrCat("its input names ([", Join(real.input_names, ", "), "] -> [", Join(staged.input_names, ", "), "])"));
  }
  // The staged copy starts without arguments: documenting them again identically is harmless.
  bool same_arguments = staged.arguments.size() == real.arguments.size();
  for (size_t i = 0; same_arguments && i < staged.arguments.size(); ++i) {
    const ArgumentInfo &a = staged.arguments[i], &b = real.arguments[i];
    same_arguments = a.name == b.name && a.type == b.type && a.description == b.description;
  }
  if (!staged.arguments.empty() && !same_arguments) {
    changes.push_back(
        StrCat("its parameters ", ArgumentsText(real.arguments), " -> ", ArgumentsText(staged.arguments)));
  }
  if (staged.attr_parser) changes.push_back("its parameter parser");
  return changes;
}

}  // namespace

RegistrationTransaction::RegistrationTransaction() : previous_(current_transaction), active_(true) {
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  base_ = static_cast<uint32_t>(reg->ops.size());
  current_transaction = this;
}

RegistrationTransaction::~RegistrationTransaction() { Deactivate(); }

RegistrationTransaction* RegistrationTransaction::Current() { return current_transaction; }

void RegistrationTransaction::Deactivate() {
  if (!active_) return;
  active_ = false;
  current_transaction = previous_;
}

Op& RegistrationTransaction::Register(const std::string& name) {
  auto redeclared = redeclared_.find(name);
  if (redeclared != redeclared_.end()) return *redeclared->second.staged;
  if (Op* staged = Staged(name)) return *staged;
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  if (Op* real = reg->FindLocked(name)) {
    if (real->index() >= base_) {
      ReportError(StrCat("op '", name, "' was registered by another thread while the library loaded"));
    }
    // Start from the registered op, less what a redeclaration may only repeat identically.
    std::unique_ptr<Op> staged(new Op(*real));
    staged->arguments.clear();
    staged->attr_parser = nullptr;
    staged->get_num_inputs = nullptr;
    staged->get_num_outputs = nullptr;
    Op& result = *staged;
    redeclared_.emplace(name, Redeclared{real, std::move(staged)});
    return result;
  }
  new_ops_.emplace_back(new Op());
  Op* op = new_ops_.back().get();
  op->name = name;
  OpRegistry::SetIndex(op, base_ + static_cast<uint32_t>(new_ops_.size() - 1));
  return *op;
}

const Op* RegistrationTransaction::FindStaged(const std::string& name) const { return Staged(name); }

Op* RegistrationTransaction::Staged(const std::string& name) const {
  for (const auto& op : new_ops_) {
    if (op->name == name) return op.get();
  }
  auto alias = aliases_.find(name);
  return alias == aliases_.end() ? nullptr : alias->second;
}

Op* RegistrationTransaction::Target(Op* staged) const {
  for (const auto& kv : redeclared_) {
    if (kv.second.staged.get() == staged) return kv.second.real;
  }
  return staged;  // a new op: it becomes the registered one
}

void RegistrationTransaction::AddAlias(Op& op, const std::string& alias) {
  Op* staged = Staged(alias);
  if (staged != nullptr && Target(staged) != Target(&op)) {
    ReportError(StrCat("alias '", alias, "' of op '", op.name, "' is already the name of op '", staged->name, "'"));
    return;
  }
  aliases_[alias] = &op;
}

OpMapBase* RegistrationTransaction::StagedMap(const std::string& key) const {
  auto it = maps_.find(key);
  return it == maps_.end() ? nullptr : it->second.get();
}

void RegistrationTransaction::SetAttr(const Op& op, const std::string& key, const std::type_info& type,
                                      const std::function<OpMapBase*()>& create,
                                      const std::function<void(OpMapBase*)>& update) {
  auto it = maps_.find(key);
  if (it == maps_.end()) {
    OpRegistry* reg = OpRegistry::Global();
    std::lock_guard<std::recursive_mutex> lock(reg->mutex);
    auto real = reg->attrs.find(key);
    std::unique_ptr<OpMapBase> map = real != reg->attrs.end() ? real->second->Clone() : NewOpMap(create, key, type);
    it = maps_.emplace(key, std::move(map)).first;
  }
  std::string mismatch = AttrTypeMismatch(op, *it->second, type);
  if (!mismatch.empty()) {
    ReportError(mismatch);
    return;
  }
  update(it->second.get());
}

std::vector<std::string> RegistrationTransaction::Conflicts() const {
  OpRegistry* reg = OpRegistry::Global();
  std::vector<std::string> errors = errors_;
  for (const auto& kv : redeclared_) {
    std::vector<std::string> changes = Changes(*kv.second.real, *kv.second.staged);
    if (!changes.empty()) {
      errors.push_back(StrCat("op '", kv.second.real->name, "' already exists: a library may add attributes",
                              " to it but not change ", Join(changes, ", ")));
    }
  }
  for (const auto& op : new_ops_) {
    if (reg->FindLocked(op->name) != nullptr) {
      errors.push_back(StrCat("op '", op->name, "' was registered by another thread while the library loaded"));
    }
  }
  for (const auto& kv : aliases_) {
    Op* registered = reg->FindLocked(kv.first);
    if (registered != nullptr && registered != Target(kv.second)) {
      errors.push_back(StrCat("alias '", kv.first, "' of op '", kv.second->name, "' is already the name of op '",
                              registered->name, "'"));
    }
  }
  return errors;
}

std::vector<std::string> RegistrationTransaction::Finish() {
  Deactivate();
  OpRegistry* reg = OpRegistry::Global();
  std::lock_guard<std::recursive_mutex> lock(reg->mutex);
  std::vector<std::string> errors = Conflicts();
  if (!errors.empty()) return errors;
  // Ops registered by other threads meanwhile shift the new ops' indices.
  const uint32_t base_now = static_cast<uint32_t>(reg->ops.size());
  auto remap = [&](uint32_t index) { return index < base_ ? index : base_now + (index - base_); };
  for (auto& op : new_ops_) {
    OpRegistry::SetIndex(op.get(), remap(op->index()));
    reg->AddLocked(std::move(op));
  }
  new_ops_.clear();
  for (const auto& kv : aliases_) reg->by_name[kv.first] = Target(kv.second);
  for (auto& kv : maps_) {
    auto real = reg->attrs.find(kv.first);
    if (real == reg->attrs.end()) real = reg->attrs.emplace(kv.first, kv.second->CloneEmpty()).first;
    OpMapBase& target = *real->second;
    const OpMapBase& staged = *kv.second;
    for (uint32_t i = 0; i < staged.slots(); ++i) {
      int before = i < base_ ? target.priority(i) : 0;
      if (staged.priority(i) != before) target.CopySlot(staged, i, remap(i));
    }
  }
  for (const auto& apply : on_apply_) apply();
  on_apply_.clear();
  return {};
}

void ReportRegistrationError(const std::string& message) {
  if (RegistrationTransaction* transaction = RegistrationTransaction::Current()) {
    transaction->ReportError(message);
    return;
  }
  throw Error(message);
}

}  // namespace detail
}  // namespace ir
