/*!
 * \file rewrite_check.cc
 * \brief CheckRulesTogether: what holds across the rule sets that apply together, for the
 * loader (LoadRuleFile, the registry on first use) and ir-rules-verify alike: rule names are
 * unique, and no sequence of rules rewrites a term back to itself.
 *
 * The cycle search rewrites terms symbolically: a rule's pattern, its variables standing for
 * unknown values, is rewritten by every rule at every position, breadth first, up to
 * kCycleSearchDepth rewrites; reaching the starting term again (as a term, with commutative
 * arguments in either order) is a cycle. Guards are taken as satisfiable and an attribute the
 * term does not fix as matching, so the search may report a cycle that guards would break; it
 * misses a cycle longer than its depth, or past its 2,000 terms per start (Simplify's
 * once-per-node rule for growing rules still stops those).
 */
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

/*! \brief Bounds of the search from one starting pattern (the depth is kCycleSearchDepth). */
constexpr size_t kMaxTerms = 2000;
constexpr int kMaxTermNodes = 64;

struct Bindings {
  std::map<std::string, Term> vars;
  std::map<std::string, std::string> attrs;
};

int Nodes(const Term& t) {
  int n = 1;
  for (const Term& a : t.args) n += Nodes(a);
  return n;
}

/*! \brief A canonical text of `t`: attributes sorted, commutative arguments in key order. */
std::string Key(const Term& t, const std::set<std::string>& commutative) {
  switch (t.kind) {
    case Term::Kind::kVar:
      return "$" + t.name;
    case Term::Kind::kLiteral:
      return StrCat(std::signbit(t.literal) ? "-" : "", std::fabs(t.literal));
    case Term::Kind::kOp:
      break;
  }
  std::vector<std::pair<std::string, std::string>> attrs = t.attrs;
  std::sort(attrs.begin(), attrs.end());
  std::vector<std::string> args;
  for (const Term& a : t.args) args.push_back(Key(a, commutative));
  if (args.size() == 2 && commutative.count(t.name)) std::sort(args.begin(), args.end());
  std::string out = t.name;
  if (!attrs.empty()) {
    out += "{";
    for (size_t i = 0; i < attrs.size(); ++i) out += StrCat(i ? "," : "", attrs[i].first, "=", attrs[i].second);
    out += "}";
  }
  out += "(";
  for (size_t i = 0; i < args.size(); ++i) out += StrCat(i ? ", " : "", args[i]);
  out += ")";
  if (t.output != 0) out += StrCat(".", t.output);
  return out;
}

/*! \brief `t` as the rule language writes it (variables plain). */
std::string Written(const Term& t) {
  std::string key = Key(t, {});
  key.erase(std::remove(key.begin(), key.end(), '$'), key.end());
  return key;
}

bool Symbolic(const std::string& value) { return !value.empty() && (value[0] == '?' || value[0] == '@'); }

/*! \brief Attribute texts equal as the matcher compares them (numbers as numbers). */
bool SameText(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char *end_a = nullptr, *end_b = nullptr;
  double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  return !a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0' && x == y;
}

bool MatchAttrs(const Term& p, const Term& t, Bindings* b) {
  for (const auto& kv : p.attrs) {
    const std::string* value = nullptr;
    for (const auto& tv : t.attrs) {
      if (tv.first == kv.first) value = &tv.second;
    }
    if (kv.second[0] == '?') {
      if (value == nullptr) continue;  // the op's default: unknown here
      auto bound = b->attrs.find(kv.second);
      if (bound == b->attrs.end()) {
        b->attrs[kv.second] = *value;
      } else if (!Symbolic(bound->second) && !Symbolic(*value) && !SameText(bound->second, *value)) {
        return false;
      }
    } else if (value != nullptr && !Symbolic(*value) && !SameText(kv.second, *value)) {
      return false;
    }
  }
  return true;
}

bool Match(const Term& p, const Term& t, const std::set<std::string>& commutative, Bindings* b) {
  switch (p.kind) {
    case Term::Kind::kVar: {
      auto bound = b->vars.find(p.name);
      if (bound == b->vars.end()) {
        b->vars[p.name] = t;
        return true;
      }
      return Key(bound->second, commutative) == Key(t, commutative);
    }
    case Term::Kind::kLiteral: {
      if (t.kind == Term::Kind::kLiteral)
        return t.literal == p.literal && std::signbit(t.literal) == std::signbit(p.literal);
      if (t.kind != Term::Kind::kOp || std::signbit(p.literal)) return false;
      if (p.literal == 0) return t.name == "zeros" || t.name == "zeros_like";
      return p.literal == 1 && (t.name == "ones" || t.name == "ones_like");
    }
    case Term::Kind::kOp:
      break;
  }
  if (t.kind != Term::Kind::kOp || t.name != p.name || t.output != p.output || t.args.size() != p.args.size()) {
    return false;
  }
  Bindings before = *b;
  if (MatchAttrs(p, t, b)) {
    bool ok = true;
    for (size_t i = 0; ok && i < p.args.size(); ++i) ok = Match(p.args[i], t.args[i], commutative, b);
    if (ok) return true;
  }
  *b = before;
  if (p.args.size() != 2 || !commutative.count(p.name)) return false;
  if (!MatchAttrs(p, t, b) || !Match(p.args[0], t.args[1], commutative, b) ||
      !Match(p.args[1], t.args[0], commutative, b)) {
    *b = before;
    return false;
  }
  return true;
}

Term Instantiate(const Term& r, const Bindings& b) {
  if (r.kind == Term::Kind::kVar) {
    auto bound = b.vars.find(r.name);
    return bound == b.vars.end() ? r : bound->second;
  }
  Term out = r;
  for (auto& kv : out.attrs) {
    auto bound = b.attrs.find(kv.second);
    if (bound != b.attrs.end()) kv.second = bound->second;
  }
  for (Term& a : out.args) a = Instantiate(a, b);
  return out;
}

struct IndexedRule {
  const Rule* rule;
  const std::string* origin;
};

/*! \brief Every term one rewrite away from `t` (at any position), with the rule that made it. */
void Successors(const Term& t, const std::unordered_map<std::string, std::vector<IndexedRule>>& by_root,
                const std::set<std::string>& commutative, std::vector<std::pair<Term, const IndexedRule*>>* out) {
  if (t.kind != Term::Kind::kOp) return;
  auto rules = by_root.find(t.name);
  if (rules != by_root.end()) {
    for (const IndexedRule& ir : rules->second) {
      Bindings b;
      if (Match(ir.rule->pattern, t, commutative, &b)) out->emplace_back(Instantiate(ir.rule->replacement, b), &ir);
    }
  }
  for (size_t i = 0; i < t.args.size(); ++i) {
    std::vector<std::pair<Term, const IndexedRule*>> inner;
    Successors(t.args[i], by_root, commutative, &inner);
    for (auto& s : inner) {
      Term copy = t;
      copy.args[i] = std::move(s.first);
      out->emplace_back(std::move(copy), s.second);
    }
  }
}

void CheckNames(const std::vector<RuleSource>& sets) {
  std::map<std::string, std::pair<const Rule*, const std::string*>> seen;
  for (const RuleSource& s : sets) {
    for (const Rule& r : s.file->rules) {
      auto it = seen.emplace(r.name, std::make_pair(&r, &s.origin));
      if (it.second) continue;
      const Rule& first = *it.first->second.first;
      throw Error(StrCat(s.origin, ":", r.line, ": rule '", r.name, "' is already defined at ",
                         *it.first->second.second, ":", first.line, " (set '", first.set,
                         "'): rule names are unique across all rule sets; rename one"));
    }
  }
}

void CheckCycles(const std::vector<RuleSource>& sets) {
  std::set<std::string> commutative;
  std::unordered_map<std::string, std::vector<IndexedRule>> by_root;
  for (const RuleSource& s : sets) {
    commutative.insert(s.file->commutative.begin(), s.file->commutative.end());
    for (const Rule& r : s.file->rules) by_root[r.pattern.name].push_back(IndexedRule{&r, &s.origin});
  }
  // Every cycle holds a rule that does not lower the cost order (they say why:): starting from
  // those first, a cycle is reported from its own pattern, not from a term that contains it.
  std::vector<const Rule*> starts;
  for (int growing = 1; growing >= 0; --growing) {
    for (const RuleSource& s : sets) {
      for (const Rule& r : s.file->rules) {
        if (r.why.empty() != static_cast<bool>(growing)) starts.push_back(&r);
      }
    }
  }
  for (const Rule* start_rule : starts) {
    const Rule& start = *start_rule;
    const std::string start_key = Key(start.pattern, commutative);
    // visited term -> (the term it came from, the rule that rewrote it)
    std::unordered_map<std::string, std::pair<std::string, const IndexedRule*>> from;
    std::deque<std::pair<Term, int>> queue;
    from[start_key] = {"", nullptr};
    queue.emplace_back(start.pattern, 0);
    while (!queue.empty() && from.size() < kMaxTerms) {
      Term term = std::move(queue.front().first);
      int depth = queue.front().second;
      queue.pop_front();
      std::vector<std::pair<Term, const IndexedRule*>> next;
      Successors(term, by_root, commutative, &next);
      std::string key = Key(term, commutative);
      for (auto& n : next) {
        std::string next_key = Key(n.first, commutative);
        if (next_key == start_key) {
          std::vector<const IndexedRule*> path{n.second};
          for (std::string k = key; !from[k].first.empty() || from[k].second != nullptr; k = from[k].first) {
            path.push_back(from[k].second);
          }
          std::reverse(path.begin(), path.end());
          std::string chain;
          for (const IndexedRule* p : path) {
            chain += StrCat("'", p->rule->name, "' (", *p->origin, ":", p->rule->line, ") -> ");
          }
          throw Error(StrCat("rule cycle: ", chain, "back to ", Written(start.pattern),
                             ": these rules rewrite a term back to itself, so simplification "
                             "would not terminate; remove or guard one of them"));
        }
        if (depth + 1 >= kCycleSearchDepth || Nodes(n.first) > kMaxTermNodes || from.count(next_key)) continue;
        from[next_key] = {key, n.second};
        queue.emplace_back(std::move(n.first), depth + 1);
      }
    }
  }
}

}  // namespace

void CheckRulesTogether(const std::vector<RuleSource>& sets) {
  CheckNames(sets);
  CheckCycles(sets);
}

}  // namespace rewrite
}  // namespace ir
