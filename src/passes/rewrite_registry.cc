/*!
 * \file rewrite_registry.cc
 * \brief Rule sets (shipped, loaded from files, registered by op libraries), the registries of
 * guards and attribute functions, and CheckRules (ops exist, the cost order goes down).
 */
#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "ir/op.h"
#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

/*! \brief A set as registered: text parsed on first use, or already parsed. */
struct SetEntry {
  std::string name;
  /*! \brief Where it came from, for errors: a path ("rules/NAME.rules" when shipped), "IR_REGISTER_RULES(NAME)". */
  std::string origin;
  std::string text;
  std::unique_ptr<RuleFile> parsed;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<SetEntry>> sets;
  /*! \brief Replaced parses, kept alive: a GetRuleSet reference handed out before stays valid. */
  std::vector<std::unique_ptr<RuleFile>> replaced;
  /*! \brief Whether the registered sets have passed CheckRulesTogether since the last registration. */
  bool checked_together = false;
  /*! \brief Guards the maps below (apart from `mutex`: checking a rule set looks guards up). */
  std::mutex guard_mutex;
  std::map<std::string, std::pair<int, std::pair<std::string, FGuard>>> guards;
  std::map<std::string, std::pair<int, std::pair<std::string, FAttrFunction>>> attr_functions;

  static Registry& Get() {
    static Registry* registry = new Registry();  // never destroyed: used from static destructors
    return *registry;
  }
  SetEntry* Find(const std::string& name) {
    for (auto& s : sets) {
      if (s->name == name) return s.get();
    }
    return nullptr;
  }
  SetEntry& Slot(const std::string& name, const std::string& origin) {
    checked_together = false;
    SetEntry* found = Find(name);
    if (found == nullptr) {
      sets.push_back(std::make_unique<SetEntry>());
      found = sets.back().get();
      found->name = name;
    }
    found->origin = origin.empty() ? StrCat("IR_REGISTER_RULES(", name, ")") : origin;
    return *found;
  }
  /*! \brief Parses and checks `entry` alone if it has not been (the caller holds `mutex`). */
  const RuleFile& Parsed(SetEntry* entry) {
    if (!entry->parsed) {
      RuleFile file = ParseRules(entry->text, entry->name);
      CheckRules(file);
      entry->parsed = std::make_unique<RuleFile>(std::move(file));
    }
    return *entry->parsed;
  }
  /*!
   * \brief The sets but those in `except`, parsed (the caller holds `mutex`); a set that fails
   * its own checks throws when `strict`, else is left out (its use reports it).
   */
  std::vector<RuleSource> Sources(const std::vector<std::string>& except, bool strict) {
    std::vector<RuleSource> out;
    for (auto& s : sets) {
      if (std::find(except.begin(), except.end(), s->name) != except.end()) continue;
      try {
        out.push_back(RuleSource{&Parsed(s.get()), s->origin});
      } catch (const Error&) {
        if (strict) throw;
      }
    }
    return out;
  }
};

/*! \brief Op nodes and total weight of a term: the cost order rules must lower. */
std::pair<int, double> Cost(const Term& t, const std::map<std::string, double>& weights) {
  std::pair<int, double> cost{0, 0};
  if (t.kind != Term::Kind::kOp) return cost;
  auto w = weights.find(t.name);
  cost = {1, w == weights.end() ? 1.0 : w->second};
  for (const Term& a : t.args) {
    auto c = Cost(a, weights);
    cost.first += c.first;
    cost.second += c.second;
  }
  return cost;
}

void CheckTerm(const Term& t, bool replacement, const Rule& r) {
  auto where = [&] { return StrCat(r.set, ":", r.line, ": rule '", r.name, "': "); };
  if (t.kind != Term::Kind::kOp) return;
  const Op* op = Op::Find(t.name);
  if (op == nullptr) throw Error(StrCat(where(), "unknown op '", t.name, "'"));
  if (!op->get_num_inputs && op->num_inputs != kVariadic && t.args.size() != op->num_inputs) {
    throw Error(StrCat(where(), t.name, " takes ", op->num_inputs, " inputs, the rule gives ", t.args.size()));
  }
  if (!op->get_num_outputs && t.output >= static_cast<int>(op->num_outputs)) {
    throw Error(StrCat(where(), t.name, " has ", op->num_outputs, " outputs; the rule names output ", t.output));
  }
  for (const auto& kv : t.attrs) {
    if (kv.second[0] != '@') continue;
    if (!replacement) throw Error(StrCat(where(), "attribute functions (", kv.second, ") belong in replacements"));
    std::string fn = kv.second.substr(1, kv.second.find('(') - 1);
    if (FindAttrFunction(fn) == nullptr) throw Error(StrCat(where(), "unknown attribute function '@", fn, "'"));
  }
  for (const Term& a : t.args) CheckTerm(a, replacement, r);
}

}  // namespace

void CheckRules(const RuleFile& file) {
  std::map<std::string, double> weights(file.weights.begin(), file.weights.end());
  for (const std::string& name : file.commutative) {
    const Op* op = Op::Find(name);
    if (op == nullptr || op->num_inputs != 2) {
      throw Error(StrCat(file.set, ": 'commutative: ", name, "' names no op of two inputs"));
    }
  }
  for (const Rule& r : file.rules) {
    CheckTerm(r.pattern, false, r);
    CheckTerm(r.replacement, true, r);
    for (const Guard& g : r.guards) {
      int arity = 0;
      if (FindGuard(g.name, &arity) == nullptr) {
        throw Error(StrCat(file.set, ":", r.line, ": rule '", r.name, "': unknown guard '", g.name, "'"));
      }
      if (arity != static_cast<int>(g.args.size())) {
        throw Error(StrCat(file.set, ":", r.line, ": rule '", r.name, "': guard ", g.name, " takes ", arity,
                           " arguments, not ", g.args.size()));
      }
    }
    auto before = Cost(r.pattern, weights), after = Cost(r.replacement, weights);
    bool lowers = after.first < before.first || (after.first == before.first && after.second < before.second);
    if (!lowers && r.why.empty()) {
      throw Error(StrCat(file.set, ":", r.line, ": rule '", r.name, "' does not lower the cost order (", before.first,
                         " op nodes of weight ", before.second, " become ", after.first, " of weight ", after.second,
                         "): say 'why:' it is worth it, or adjust 'weight:'"));
    }
  }
}

void RegisterRuleSet(RuleFile file, const std::string& origin) {
  CheckRules(file);
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.mutex);
  // Checked with every set it would apply with (it replaces a set of its own name) before it
  // is registered; the registry stays checked if it was.
  std::string where = origin.empty() ? StrCat("rule set '", file.set, "'") : origin;
  std::vector<RuleSource> together = reg.Sources({file.set}, false);
  together.push_back(RuleSource{&file, where});
  CheckRulesTogether(together);
  bool was_checked = reg.checked_together;
  SetEntry& slot = reg.Slot(file.set, where);
  slot.text.clear();
  if (slot.parsed) reg.replaced.push_back(std::move(slot.parsed));
  slot.parsed = std::make_unique<RuleFile>(std::move(file));
  reg.checked_together = was_checked;
}

void RegisterRuleText(const std::string& set, const std::string& text, const std::string& origin) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.mutex);
  SetEntry& slot = reg.Slot(set, origin);
  slot.text = text;
  if (slot.parsed) reg.replaced.push_back(std::move(slot.parsed));
}

std::string LoadRuleFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(StrCat("cannot read rule file '", path, "'"));
  std::ostringstream text;
  text << in.rdbuf();
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  RegisterRuleSet(ParseRules(text.str(), stem), path);
  return stem;
}

std::vector<RuleSource> RegisteredRuleSets(const std::vector<std::string>& except) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.Sources(except, true);
}

std::vector<std::string> ListRuleSets() {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.mutex);
  std::vector<std::string> names;
  for (const auto& s : reg.sets) names.push_back(s->name);
  return names;
}

const RuleFile& GetRuleSet(const std::string& name) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.mutex);
  SetEntry* entry = reg.Find(name);
  if (entry == nullptr) {
    std::string known;
    for (const auto& s : reg.sets) known += (known.empty() ? "" : ", ") + s->name;
    throw Error(StrCat("no rule set '", name, "' (registered: ", known.empty() ? "none" : known, ")"));
  }
  const RuleFile& file = reg.Parsed(entry);
  if (!reg.checked_together) {
    CheckRulesTogether(reg.Sources({}, false));
    reg.checked_together = true;
  }
  return file;
}

void RegisterGuard(const std::string& name, int num_args, const std::string& doc, FGuard fn) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.guard_mutex);
  reg.guards[name] = {num_args, {doc, std::move(fn)}};
}

void RegisterAttrFunction(const std::string& name, int num_args, const std::string& doc, FAttrFunction fn) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.guard_mutex);
  reg.attr_functions[name] = {num_args, {doc, std::move(fn)}};
}

const FGuard* FindGuard(const std::string& name, int* num_args) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.guard_mutex);
  auto it = reg.guards.find(name);
  if (it == reg.guards.end()) return nullptr;
  if (num_args != nullptr) *num_args = it->second.first;
  return &it->second.second.second;
}

const FAttrFunction* FindAttrFunction(const std::string& name, int* num_args) {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.guard_mutex);
  auto it = reg.attr_functions.find(name);
  if (it == reg.attr_functions.end()) return nullptr;
  if (num_args != nullptr) *num_args = it->second.first;
  return &it->second.second.second;
}

std::vector<std::string> DescribeGuards() {
  Registry& reg = Registry::Get();
  std::lock_guard<std::mutex> lock(reg.guard_mutex);
  std::vector<std::string> out;
  for (const auto& g : reg.guards) out.push_back(StrCat(g.first, "(", g.second.first, "): ", g.second.second.first));
  for (const auto& f : reg.attr_functions) {
    out.push_back(StrCat("@", f.first, "(", f.second.first, "): ", f.second.second.first));
  }
  return out;
}

}  // namespace rewrite
}  // namespace ir
