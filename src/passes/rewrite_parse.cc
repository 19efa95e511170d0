/*!
 * \file rewrite_parse.cc
 * \brief The rule language's parser (docs/REWRITE_RULES.md): text to RuleFile, with errors
 * that name the set, the line and what was expected.
 */
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsIdent(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

/*! \brief Splits `s` at commas outside brackets and quotes; pieces are trimmed. */
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  bool quoted = false;
  std::string cur;
  for (char c : s) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '(' || c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ')' || c == ']' || c == '}')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty() || !out.empty()) out.push_back(Trim(cur));
  return out;
}

/*! \brief Reads terms from one clause's text; errors name `where` ("set:line"). */
class TermParser {
 public:
  TermParser(const std::string& text, std::string where) : s_(text), where_(std::move(where)) {}

  Term ParseAll() {
    Term t = ParseTerm();
    Skip();
    if (pos_ != s_.size()) Fail("unexpected '" + s_.substr(pos_) + "' after the term");
    return t;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw Error(StrCat(where_, ": ", what, " (in '", s_, "', at column ", pos_ + 1, ")"));
  }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Peek(char c) {
    Skip();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) Fail(StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
  }
  std::string Ident() {
    Skip();
    size_t b = pos_;
    while (pos_ < s_.size() && IsIdentChar(s_[pos_])) ++pos_;
    std::string id = s_.substr(b, pos_ - b);
    if (!IsIdent(id)) Fail("expected a name");
    return id;
  }
  /*! \brief Text up to the next ',' or '}' outside brackets and quotes. */
  std::string AttrValue() {
    Skip();
    size_t b = pos_;
    int depth = 0;
    bool quoted = false;
    for (; pos_ < s_.size(); ++pos_) {
      char c = s_[pos_];
      if (c == '"') quoted = !quoted;
      if (quoted) continue;
      if (depth == 0 && (c == ',' || c == '}')) break;
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
    }
    std::string v = Trim(s_.substr(b, pos_ - b));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    if (v.empty()) Fail("expected an attribute value");
    return v;
  }

  Term ParseTerm() {
    // Patterns are small: a limit keeps hostile text from exhausting the stack.
    if (++depth_ > kMaxDepth) Fail(StrCat("terms nest deeper than ", kMaxDepth));
    Term t = ParseTermBody();
    --depth_;
    return t;
  }

  Term ParseTermBody() {
    Skip();
    if (pos_ >= s_.size()) Fail("expected a term");
    char c = s_[pos_];
    Term t;
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.') {
      const char* begin = s_.c_str() + pos_;
      char* end = nullptr;
      t.kind = Term::Kind::kLiteral;
      t.literal = std::strtod(begin, &end);
      if (end == begin) Fail("expected a number");
      pos_ += static_cast<size_t>(end - begin);
      return t;
    }
    t.name = Ident();
    if (!Peek('(') && !Peek('{')) return t;  // a variable
    t.kind = Term::Kind::kOp;
    if (Peek('{')) {
      ++pos_;
      while (!Peek('}')) {
        std::string key = Ident();
        Expect('=');
        t.attrs.emplace_back(key, AttrValue());
        if (Peek(',')) ++pos_;
      }
      ++pos_;
    }
    Expect('(');
    while (!Peek(')')) {
      t.args.push_back(ParseTerm());
      if (!Peek(')')) Expect(',');
    }
    ++pos_;
    if (Peek('.')) {
      ++pos_;
      Skip();
      size_t b = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (b == pos_) Fail("expected an output index after '.'");
      t.output = std::atoi(s_.substr(b, pos_ - b).c_str());
    }
    return t;
  }

  static constexpr int kMaxDepth = 64;
  const std::string& s_;
  std::string where_;
  size_t pos_ = 0;
  int depth_ = 0;
};

/*! \brief Names of the variables and attribute variables a term uses. */
void CollectVars(const Term& t, std::set<std::string>* vars, std::set<std::string>* attr_vars) {
  if (t.kind == Term::Kind::kVar) vars->insert(t.name);
  for (const auto& kv : t.attrs) {
    for (size_t at = kv.second.find('?'); at != std::string::npos; at = kv.second.find('?', at + 1)) {
      size_t end = at + 1;
      while (end < kv.second.size() && IsIdentChar(kv.second[end])) ++end;
      attr_vars->insert(kv.second.substr(at, end - at));
    }
  }
  for (const Term& a : t.args) CollectVars(a, vars, attr_vars);
}

bool HasLiteral(const Term& t) {
  if (t.kind == Term::Kind::kLiteral) return true;
  for (const Term& a : t.args) {
    if (HasLiteral(a)) return true;
  }
  return false;
}

RuleTag ParseTag(const std::string& text, const std::string& where) {
  static const std::map<std::string, RuleTag> tags = {{"exact", RuleTag::kExact},
                                                      {"rounding", RuleTag::kRounding},
                                                      {"stabilizing", RuleTag::kStabilizing},
                                                      {"nsz", RuleTag::kNsz},
                                                      {"fast_math", RuleTag::kFastMath}};
  auto it = tags.find(text);
  if (it != tags.end()) return it->second;
  if (text == "real") {
    // No silent mapping: real rules ran by default though some (x + 0 -> x) change -0.
    throw Error(StrCat(where,
                       ": tag 'real' was split (docs/REWRITE_RULES.md, \"Tags\"): tag the rule by what "
                       "ir-rules-verify proves: rounding (the same special values, finite results within ",
                       kRoundingUlps,
                       " ULP), stabilizing (equal where the pattern is finite, finite where it overflows), "
                       "nsz (exact but for the sign of zero) or fast_math"));
  }
  throw Error(StrCat(where, ": unknown tag '", text, "' (expected exact, rounding, stabilizing, nsz or fast_math)"));
}

Guard ParseGuard(const std::string& text, const std::string& where) {
  Guard g;
  std::string s = Trim(text);
  if (s.compare(0, 4, "not ") == 0) {
    g.negated = true;
    s = Trim(s.substr(4));
  }
  size_t open = s.find('(');
  if (open == std::string::npos || s.back() != ')' || !IsIdent(Trim(s.substr(0, open)))) {
    throw Error(StrCat(where, ": expected a guard 'name(args)', got '", text, "'"));
  }
  g.name = Trim(s.substr(0, open));
  std::string inner = s.substr(open + 1, s.size() - open - 2);
  if (!Trim(inner).empty()) g.args = SplitTopLevel(inner);
  return g;
}

/*! \brief Checks that what the replacement and guards use is bound by the pattern. */
void CheckBound(const Rule& r, const std::string& where) {
  std::set<std::string> pvars, pattrs, rvars, rattrs;
  CollectVars(r.pattern, &pvars, &pattrs);
  CollectVars(r.replacement, &rvars, &rattrs);
  if (r.pattern.kind != Term::Kind::kOp) throw Error(StrCat(where, ": rule '", r.name, "': a pattern is an op term"));
  if (HasLiteral(r.replacement)) {
    throw Error(
        StrCat(where, ": rule '", r.name, "': literals are patterns only (build constants with zeros_like/ones_like)"));
  }
  for (const std::string& v : rvars) {
    if (!pvars.count(v)) throw Error(StrCat(where, ": rule '", r.name, "': replacement variable '", v, "' is unbound"));
  }
  for (const std::string& v : rattrs) {
    if (!pattrs.count(v)) throw Error(StrCat(where, ": rule '", r.name, "': attribute variable '", v, "' is unbound"));
  }
  for (const Guard& g : r.guards) {
    for (const std::string& a : g.args) {
      bool bound = a.empty() || !(IsIdent(a) || a[0] == '?') || (a[0] == '?' ? pattrs.count(a) : pvars.count(a));
      if (!bound) throw Error(StrCat(where, ": rule '", r.name, "': guard ", g.name, " uses unbound '", a, "'"));
    }
  }
}

/*! \brief Parses one rule's clauses (`body`: lines with their line numbers). */
Rule ParseRuleBody(Rule r, const std::vector<std::pair<int, std::string>>& body, const std::string& set) {
  std::map<std::string, std::string> clauses;
  std::map<std::string, int> clause_line;
  std::string current;
  for (const auto& line : body) {
    std::string text = Trim(line.second);
    size_t colon = text.find(':');
    std::string key = colon == std::string::npos ? "" : Trim(text.substr(0, colon));
    if (key == "match" || key == "rewrite" || key == "where" || key == "test" || key == "why") {
      if (clauses.count(key)) throw Error(StrCat(set, ":", line.first, ": second '", key, ":' clause"));
      current = key;
      clauses[key] = Trim(text.substr(colon + 1));
      clause_line[key] = line.first;
    } else if (!current.empty()) {
      clauses[current] += " " + text;  // a clause continues on the next line
    } else {
      throw Error(StrCat(set, ":", line.first, ": expected 'match:', 'rewrite:', 'where:', 'test:' or 'why:'"));
    }
  }
  for (const char* need : {"match", "rewrite"}) {
    if (!clauses.count(need)) throw Error(StrCat(set, ":", r.line, ": rule '", r.name, "' has no '", need, ":'"));
  }
  auto where = [&](const std::string& key) { return StrCat(set, ":", clause_line[key]); };
  r.pattern = TermParser(clauses["match"], where("match")).ParseAll();
  r.replacement = TermParser(clauses["rewrite"], where("rewrite")).ParseAll();
  if (clauses.count("where")) {
    for (const std::string& g : SplitTopLevel(clauses["where"])) r.guards.push_back(ParseGuard(g, where("where")));
  }
  if (clauses.count("test")) {
    for (const std::string& item : SplitTopLevel(clauses["test"])) {
      size_t eq = item.find('='), space = item.find(' ');
      if (!item.empty() && item[0] == '?' && eq != std::string::npos) {
        r.test.emplace_back(Trim(item.substr(0, eq)), Trim(item.substr(eq + 1)));
      } else if (space != std::string::npos && IsIdent(item.substr(0, space))) {
        r.test.emplace_back(item.substr(0, space), Trim(item.substr(space + 1)));
      } else {
        throw Error(StrCat(where("test"), ": expected 'x f32[2,3]' or '?a = value', got '", item, "'"));
      }
    }
  }
  r.why = clauses.count("why") ? clauses["why"] : "";
  CheckBound(r, StrCat(set, ":", r.line));
  return r;
}

/*! \brief `commutative: a, b` or `weight: op = 2, op2 = 0.5`. */
void ParseDeclaration(const std::string& key, const std::string& value, int line, const std::string& set,
                      RuleFile* file) {
  for (const std::string& item : SplitTopLevel(value)) {
    if (key == "commutative") {
      if (!IsIdent(item)) throw Error(StrCat(set, ":", line, ": expected an op name, got '", item, "'"));
      file->commutative.push_back(item);
      continue;
    }
    size_t eq = item.find('=');
    char* end = nullptr;
    std::string number = eq == std::string::npos ? "" : Trim(item.substr(eq + 1));
    double w = std::strtod(number.c_str(), &end);
    if (eq == std::string::npos || number.empty() || *end != '\0' || !(w >= 0) || !std::isfinite(w)) {
      throw Error(StrCat(set, ":", line, ": expected 'op = weight' (a number >= 0), got '", item, "'"));
    }
    file->weights.emplace_back(Trim(item.substr(0, eq)), w);
  }
}

}  // namespace

const char* TagName(RuleTag tag) {
  switch (tag) {
    case RuleTag::kExact:
      return "exact";
    case RuleTag::kRounding:
      return "rounding";
    case RuleTag::kStabilizing:
      return "stabilizing";
    case RuleTag::kNsz:
      return "nsz";
    default:
      return "fast_math";
  }
}

RuleFile ParseRules(const std::string& text, const std::string& set) {
  RuleFile file;
  file.set = set;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  Rule* open = nullptr;
  Rule pending;
  std::vector<std::pair<int, std::string>> body;
  std::set<std::string> names;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string line = Trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (open != nullptr) {
      if (line == "}") {
        file.rules.push_back(ParseRuleBody(pending, body, set));
        open = nullptr;
      } else {
        body.emplace_back(line_no, line);
      }
      continue;
    }
    std::istringstream words(line);
    std::string first, name, tag, brace;
    words >> first;
    if (first == "rule") {
      words >> name >> tag >> brace;
      std::string rest;
      if (!IsIdent(name) || brace != "{" || (words >> rest)) {
        throw Error(StrCat(set, ":", line_no, ": expected 'rule NAME TAG {' on one line, got '", line, "'"));
      }
      if (!names.insert(name).second) throw Error(StrCat(set, ":", line_no, ": rule '", name, "' defined twice"));
      pending = Rule();
      pending.name = name;
      pending.tag = ParseTag(tag, StrCat(set, ":", line_no));
      pending.set = set;
      pending.line = line_no;
      body.clear();
      open = &pending;
      continue;
    }
    size_t colon = line.find(':');
    std::string key = colon == std::string::npos ? "" : Trim(line.substr(0, colon));
    if (key != "commutative" && key != "weight") {
      throw Error(StrCat(set, ":", line_no, ": expected 'rule', 'commutative:' or 'weight:', got '", line, "'"));
    }
    ParseDeclaration(key, line.substr(colon + 1), line_no, set, &file);
  }
  if (open != nullptr) throw Error(StrCat(set, ":", pending.line, ": rule '", pending.name, "' is not closed by '}'"));
  return file;
}

}  // namespace rewrite
}  // namespace ir
