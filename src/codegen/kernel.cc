/*!
 * \file kernel.cc
 * \brief Kernel descriptions, content hashing, and the per-target printer and compiler registries.
 */
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

#include "ir/codegen.h"

namespace ir {

std::string HashHex(const std::string& text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

int64_t Kernel::NumIterations() const {
  int64_t n = 1;
  for (int64_t e : extents) n *= e;
  return n;
}

std::string Kernel::Describe() const {
  std::ostringstream os;
  os << (kind == kMap      ? "map"
         : kind == kReduce ? "reduce"
                           : "row")
     << " " << name << " extents(" << Join(extents, ",") << ")\n";
  for (size_t i = 0; i < params.size(); ++i) {
    os << "  param " << i << " " << params[i].name << ": " << DTypeName(params[i].dtype)
       << (params[i].is_output ? " out" : " in") << "\n";
  }
  for (const auto& let : lets) os << "  let " << let.first << " = " << ast::ToString(let.second) << "\n";
  for (const auto& store : stores)
    os << "  store " << params.at(store.first).name << " = " << ast::ToString(store.second) << "\n";
  if (kind == kReduce) {
    os << "  reduce " << reduce_kind << " into " << params.at(reduce_output).name << " of "
       << ast::ToString(reduce_value) << "\n";
  }
  for (size_t k = 0; k < stages.size(); ++k) {
    const RowStage& st = stages[k];
    os << "  stage " << k << "\n";
    for (const auto& let : st.row_lets) os << "    row let " << let.first << " = " << ast::ToString(let.second) << "\n";
    for (const auto& let : st.lets) os << "    let " << let.first << " = " << ast::ToString(let.second) << "\n";
    for (const auto& r : st.reloads)
      os << "    reload " << st.lets.at(r.first).first << " from slot " << r.second << "\n";
    for (const auto& s : st.saves) os << "    save " << s.second << " to slot " << s.first << "\n";
    for (const auto& store : st.stores)
      os << "    store " << params.at(store.first).name << " = " << ast::ToString(store.second) << "\n";
    if (!st.reduce_kind.empty())
      os << "    reduce " << st.reduce_kind << " into " << st.result << " of " << ast::ToString(st.reduce_value)
         << "\n";
  }
  for (DType t : scratch) os << "  scratch " << DTypeName(t) << "\n";
  for (const auto& store : row_stores)
    os << "  row store " << params.at(store.first).name << " = " << ast::ToString(store.second) << "\n";
  return os.str();
}

void Kernel::AssignCanonicalName() {
  name.clear();
  name = "fused_" + HashHex(Describe()).substr(0, 12);
}

namespace {

template <typename T>
struct TargetRegistry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<T>> entries;

  void Register(const std::string& target, std::shared_ptr<T> entry) {
    std::lock_guard<std::mutex> lock(mutex);
    entries[target] = std::move(entry);
  }
  const T& Get(const std::string& target, const char* what) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(target);
    if (it != entries.end()) return *it->second;
    std::vector<std::string> known;
    for (const auto& kv : entries) known.push_back(kv.first);
    throw Error(StrCat("no ", what, " for target '", target, "' in this build (available: ", Join(known, ", "), ")"));
  }
};

TargetRegistry<KernelPrinter>& Printers() {
  static auto* registry = new TargetRegistry<KernelPrinter>();
  return *registry;
}

TargetRegistry<KernelCompiler>& Compilers() {
  static auto* registry = new TargetRegistry<KernelCompiler>();
  return *registry;
}

struct DefaultsRegistry {
  std::mutex mutex;
  std::map<std::string, TargetDefaults> entries;
};

DefaultsRegistry& Defaults() {
  static auto* registry = new DefaultsRegistry();
  return *registry;
}

}  // namespace

void TargetDefaults::Register(const std::string& target, TargetDefaults defaults) {
  std::lock_guard<std::mutex> lock(Defaults().mutex);
  Defaults().entries[target] = defaults;
}

TargetDefaults TargetDefaults::Get(const std::string& target) {
  std::lock_guard<std::mutex> lock(Defaults().mutex);
  auto it = Defaults().entries.find(TargetKind(target));
  return it == Defaults().entries.end() ? TargetDefaults() : it->second;
}

const KernelPrinter& KernelPrinter::Get(const std::string& target) { return Printers().Get(target, "kernel printer"); }

void KernelPrinter::Register(const std::string& target, std::shared_ptr<KernelPrinter> printer) {
  Printers().Register(target, std::move(printer));
}

const KernelCompiler& KernelCompiler::Get(const std::string& target) {
  return Compilers().Get(target, "kernel compiler");
}

void KernelCompiler::Register(const std::string& target, std::shared_ptr<KernelCompiler> compiler) {
  Compilers().Register(target, std::move(compiler));
}

}  // namespace ir
