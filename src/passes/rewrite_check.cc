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
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

/*! \brief Appends `t` as the rule language writes it, attributes sorted. */
void AppendWritten(const Term& t, std::string* out) {
  switch (t.kind) {
    case Term::Kind::kVar:
      *out += t.name;
      return;
    case Term::Kind::kLiteral: {
      // %g: what an ostream prints by default (the rule language's own spelling of a number).
      char text[32];
      std::snprintf(text, sizeof(text), "%s%g", std::signbit(t.literal) ? "-" : "", std::fabs(t.literal));
      *out += text;
      return;
    }
    case Term::Kind::kOp:
      break;
  }
  *out += t.name;
  if (!t.attrs.empty()) {
    std::vector<std::pair<std::string, std::string>> attrs = t.attrs;
    std::sort(attrs.begin(), attrs.end());
    *out += '{';
    for (size_t i = 0; i < attrs.size(); ++i) *out += StrCat(i ? "," : "", attrs[i].first, "=", attrs[i].second);
    *out += '}';
  }
  *out += '(';
  for (size_t i = 0; i < t.args.size(); ++i) {
    if (i) *out += ", ";
    AppendWritten(t.args[i], out);
  }
  *out += ')';
  if (t.output != 0) *out += StrCat(".", t.output);
}

std::string Written(const Term& t) {
  std::string out;
  AppendWritten(t, &out);
  return out;
}

/*!
 * \brief The terms of one search, hash-consed: a term is an id, equal terms (commutative
 * arguments in either order) have one id, and a rewrite below the root builds only the nodes
 * above it. The search visits thousands of terms per starting pattern; as copied trees with
 * text keys it took most of a process's first Simplify (0.9 s, 7 s under ASan).
 */
class Terms {
 public:
  struct Node {
    Term::Kind kind = Term::Kind::kVar;
    std::string name;
    double literal = 0;
    int output = 0;
    std::vector<std::pair<std::string, std::string>> attrs;  // sorted
    std::vector<int> args;                                   // a commutative op's two in id order
    int size = 1;                                            // nodes in the tree

    bool operator==(const Node& o) const {
      return kind == o.kind && name == o.name && output == o.output && args == o.args && attrs == o.attrs &&
             std::memcmp(&literal, &o.literal, sizeof(double)) == 0;
    }
  };

  explicit Terms(const std::set<std::string>* commutative) : commutative_(commutative) {}

  const Node& operator[](int id) const { return nodes_[static_cast<size_t>(id)]; }
  bool Commutes(const std::string& op, size_t arity) const { return arity == 2 && commutative_->count(op) != 0; }

  int Intern(Node n) {
    if (n.kind == Term::Kind::kOp) {
      std::sort(n.attrs.begin(), n.attrs.end());
      if (Commutes(n.name, n.args.size()) && n.args[1] < n.args[0]) std::swap(n.args[0], n.args[1]);
      n.size = 1;
      for (int a : n.args) n.size += nodes_[static_cast<size_t>(a)].size;
    }
    auto found = ids_.find(n);
    if (found != ids_.end()) return found->second;
    int id = static_cast<int>(nodes_.size());
    nodes_.push_back(n);
    ids_.emplace(std::move(n), id);
    return id;
  }

  /*! \brief `t`'s root as a node, without its arguments. */
  static Node Root(const Term& t) {
    Node n;
    n.kind = t.kind;
    n.name = t.name;
    n.literal = t.literal;
    n.output = t.output;
    n.attrs = t.attrs;
    return n;
  }

  int Intern(const Term& t) {
    Node n = Root(t);
    for (const Term& a : t.args) n.args.push_back(Intern(a));
    return Intern(std::move(n));
  }

 private:
  struct Hash {
    size_t operator()(const Node& n) const {
      size_t h = std::hash<std::string>()(n.name) ^ (static_cast<size_t>(n.kind) << 1) ^
                 (static_cast<size_t>(n.output) << 4) ^ std::hash<double>()(n.literal);
      for (int a : n.args) h = h * 1000003u + static_cast<size_t>(a);
      for (const auto& kv : n.attrs) h = h * 31u + std::hash<std::string>()(kv.second);
      return h;
    }
  };
  const std::set<std::string>* commutative_;
  std::vector<Node> nodes_;
  std::unordered_map<Node, int, Hash> ids_;
};

bool Symbolic(const std::string& value) { return !value.empty() && (value[0] == '?' || value[0] == '@'); }

/*! \brief Attribute texts equal as the matcher compares them (numbers as numbers). */
bool SameText(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char *end_a = nullptr, *end_b = nullptr;
  double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  return !a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0' && x == y;
}

struct Bindings {
  std::map<std::string, int> vars;
  std::map<std::string, std::string> attrs;
};

bool MatchAttrs(const Term& p, const Terms::Node& t, Bindings* b) {
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

bool Match(const Term& p, int id, const Terms& terms, Bindings* b) {
  const Terms::Node& t = terms[id];
  switch (p.kind) {
    case Term::Kind::kVar: {
      auto bound = b->vars.emplace(p.name, id);
      return bound.second || bound.first->second == id;
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
  // A failed match leaves `b` as it was only where a commutative node retries its arguments
  // swapped: elsewhere failure reaches the caller, who drops `b` or restores its own copy.
  const bool commutes = terms.Commutes(p.name, p.args.size());
  Bindings before;
  if (commutes) before = *b;
  if (MatchAttrs(p, t, b)) {
    bool ok = true;
    for (size_t i = 0; ok && i < p.args.size(); ++i) ok = Match(p.args[i], t.args[i], terms, b);
    if (ok) return true;
  }
  if (!commutes) return false;
  *b = before;
  if (!MatchAttrs(p, t, b) || !Match(p.args[0], t.args[1], terms, b) || !Match(p.args[1], t.args[0], terms, b)) {
    *b = before;
    return false;
  }
  return true;
}

int Instantiate(const Term& r, const Bindings& b, Terms* terms) {
  if (r.kind == Term::Kind::kVar) {
    auto bound = b.vars.find(r.name);
    if (bound != b.vars.end()) return bound->second;
  }
  Terms::Node n = Terms::Root(r);
  for (auto& kv : n.attrs) {
    auto bound = b.attrs.find(kv.second);
    if (bound != b.attrs.end()) kv.second = bound->second;
  }
  for (const Term& a : r.args) n.args.push_back(Instantiate(a, b, terms));
  return terms->Intern(std::move(n));
}

struct IndexedRule {
  const Rule* rule;
  const std::string* origin;
};

using Steps = std::vector<std::pair<int, const IndexedRule*>>;

/*! \brief Every term one rewrite away from a term (at any position), with the rule that made it; memoized. */
class Rewriter {
 public:
  Rewriter(const std::unordered_map<std::string, std::vector<IndexedRule>>* by_root, Terms* terms)
      : by_root_(by_root), terms_(terms) {}

  const Steps& Successors(int id) {
    auto known = memo_.find(id);
    if (known != memo_.end()) return known->second;
    Steps out;
    const Terms::Node node = (*terms_)[id];  // a copy: interning below may move the nodes
    if (node.kind == Term::Kind::kOp) {
      auto rules = by_root_->find(node.name);
      if (rules != by_root_->end()) {
        for (const IndexedRule& ir : rules->second) {
          Bindings b;
          if (Match(ir.rule->pattern, id, *terms_, &b))
            out.emplace_back(Instantiate(ir.rule->replacement, b, terms_), &ir);
        }
      }
      for (size_t i = 0; i < node.args.size(); ++i) {
        const Steps& inner = Successors(node.args[i]);  // rehashing keeps references valid
        for (const auto& s : inner) {
          Terms::Node copy = node;
          copy.args[i] = s.first;
          out.emplace_back(terms_->Intern(std::move(copy)), s.second);
        }
      }
    }
    return memo_.emplace(id, std::move(out)).first->second;
  }

 private:
  const std::unordered_map<std::string, std::vector<IndexedRule>>* by_root_;
  Terms* terms_;
  std::unordered_map<int, Steps> memo_;
};

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
  Terms terms(&commutative);
  Rewriter rewriter(&by_root, &terms);
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
    const int start_id = terms.Intern(start.pattern);
    // visited term -> (the term it came from, the rule that rewrote it)
    std::unordered_map<int, std::pair<int, const IndexedRule*>> from;
    std::deque<std::pair<int, int>> queue;
    from[start_id] = {-1, nullptr};
    queue.emplace_back(start_id, 0);
    while (!queue.empty() && from.size() < kMaxTerms) {
      const int id = queue.front().first, depth = queue.front().second;
      queue.pop_front();
      const Steps& next = rewriter.Successors(id);
      for (const auto& n : next) {
        if (n.first == start_id) {
          std::vector<const IndexedRule*> path{n.second};
          for (int k = id; from[k].second != nullptr; k = from[k].first) path.push_back(from[k].second);
          std::reverse(path.begin(), path.end());
          std::string chain;
          for (const IndexedRule* p : path) {
            chain += StrCat("'", p->rule->name, "' (", *p->origin, ":", p->rule->line, ") -> ");
          }
          throw Error(StrCat("rule cycle: ", chain, "back to ", Written(start.pattern),
                             ": these rules rewrite a term back to itself, so simplification "
                             "would not terminate; remove or guard one of them"));
        }
        if (depth + 1 >= kCycleSearchDepth || terms[n.first].size > kMaxTermNodes || from.count(n.first)) continue;
        from[n.first] = {id, n.second};
        queue.emplace_back(n.first, depth + 1);
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
