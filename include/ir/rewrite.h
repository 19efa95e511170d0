/*!
 * \file rewrite.h
 * \brief Graph rewrite rules as data: the rule language's syntax tree, its parser, the rule
 * sets (shipped files, user files, op libraries' rules), and the guards and attribute
 * functions rules may name. The Simplify pass applies them; docs/REWRITE_RULES.md is the
 * language's manual, and ir-rules-verify proves each rule with an SMT solver.
 *
 * A rule (see docs/REWRITE_RULES.md):
 *
 *     rule log_of_softmax stabilizing {
 *       match:   log(softmax{axis=?a}(x))
 *       rewrite: log_softmax{axis=?a}(x)
 *       test:    x f32[2,3]
 *     }
 */
#ifndef IR_REWRITE_H_
#define IR_REWRITE_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/base.h"
#include "ir/graph.h"
#include "ir/node.h"

namespace ir {
namespace rewrite {

/*!
 * \brief What a rule promises (docs/REWRITE_RULES.md, "Tags"; ir-rules-verify proves it). exact,
 * rounding and stabilizing rules run by default; nsz and fast_math rules change special values
 * and run only on request (SimplifyOptions::nsz, SimplifyOptions::fast_math).
 */
enum class RuleTag {
  /*! \brief IEEE float32 results bit for bit (NaN for NaN, -0 for -0, Inf for Inf). */
  kExact,
  /*!
   * \brief The same special values (NaN, +-Inf, the sign of zero) as the pattern, finite results
   * within kRoundingUlps (or, for sums taken in another order, the summation bound).
   */
  kRounding,
  /*!
   * \brief Equal to the pattern over the reals wherever the pattern is finite, finite where it
   * overflows; NaN inputs still give NaN and zeros keep their sign (log(softmax) -> log_softmax).
   */
  kStabilizing,
  /*! \brief Bit for bit except the sign of zero (x + 0 -> x gives -0 where the pattern gives +0). */
  kNsz,
  /*! \brief Equal over the reals where the guards hold, but special values change (x - x -> 0 for NaN). */
  kFastMath,
};

/*! \brief The ULP bound of a rounding rule's finite results (elementwise rules; ir-rules-verify proves it). */
constexpr int kRoundingUlps = 2;

/*! \brief "exact", "rounding", "stabilizing", "nsz" or "fast_math". */
const char* TagName(RuleTag tag);

/*! \brief A pattern or replacement term. */
struct Term {
  enum class Kind {
    /*! \brief A variable (`x`): matches any value; the same name twice must be the same value. */
    kVar,
    /*! \brief An op applied to terms: `op{key=value,...}(args).output`. */
    kOp,
    /*! \brief A number: matches a constant whose every element equals it (+0 and -0 differ). */
    kLiteral,
  };
  Kind kind = Kind::kVar;
  /*! \brief The variable's or the op's name. */
  std::string name;
  /*! \brief kLiteral: the value. */
  double literal = 0;
  /*! \brief kOp: the output the term denotes (`.1`), 0 by default. */
  int output = 0;
  /*!
   * \brief kOp: attribute constraints (pattern) or values (replacement), as written: a value
   * text, `?v` (an attribute variable: binds in a pattern, substitutes in a replacement), or
   * `@fn(arg,...)` (replacement only: an attribute function of bound values).
   */
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<Term> args;
};

/*! \brief A guard: a named predicate over bound variables (`x`), attribute variables (`?a`) and literals. */
struct Guard {
  std::string name;
  std::vector<std::string> args;
  /*! \brief Written `not name(...)`. */
  bool negated = false;
};

/*! \brief One rule. */
struct Rule {
  std::string name;
  RuleTag tag = RuleTag::kExact;
  Term pattern;
  Term replacement;
  std::vector<Guard> guards;
  /*!
   * \brief The `test:` clause, for the verifier and the differential test: each variable's
   * dtype and shape ("x" -> "f32[2,3]"), each attribute variable's value ("?a" -> "-1").
   */
  std::vector<std::pair<std::string, std::string>> test;
  /*! \brief The `why:` clause: why a rule that does not lower the cost order is worth it. */
  std::string why;
  /*! \brief The rule set (file stem or registered name) and the line the rule starts on. */
  std::string set;
  int line = 0;
};

/*! \brief A parsed rule file: rules plus the file's declarations. */
struct RuleFile {
  std::string set;
  std::vector<Rule> rules;
  /*! \brief `commutative: add, multiply`: ops whose two arguments a pattern may match swapped. */
  std::vector<std::string> commutative;
  /*! \brief `weight: op = n`: an op's weight in the cost order (default 1). */
  std::vector<std::pair<std::string, double>> weights;
};

/*!
 * \brief Parses rule-language text. `set` names the rule set (errors say "set:line").
 * Checks syntax and that every replacement variable is bound by the pattern; ops, guards and
 * attribute functions are checked against the registries by CheckRules.
 * \throws ir::Error naming the set, the line and what was expected.
 */
RuleFile ParseRules(const std::string& text, const std::string& set);

/*!
 * \brief Checks parsed rules against what is registered: ops exist (with that many inputs and
 * outputs), guards and attribute functions exist, and each rule lowers the cost order
 * (fewer op nodes, or as many with a lower total weight) or says `why:` it may not.
 * \throws ir::Error naming the rule.
 */
void CheckRules(const RuleFile& file);

/*! \brief A parsed rule set and where it came from (a path; "rules/algebra.rules" when shipped): errors name it. */
struct RuleSource {
  const RuleFile* file = nullptr;
  std::string origin;
};
/*!
 * \brief Checks rule sets that apply together (every registered set, by default): a rule name
 * is defined once across all of them (the error names both origins and lines), and no
 * sequence of their rules rewrites a rule's pattern back to itself (a cycle such as
 * `a -> b -> a`: the error names the rules in the order they fire). The cycle search starts
 * from every rule's pattern (those that say `why:` first, as every cycle holds one), treats
 * guards as satisfiable, and is bounded (kCycleSearchDepth rewrites, 2,000 terms per start).
 * \throws ir::Error
 */
void CheckRulesTogether(const std::vector<RuleSource>& sets);
/*! \brief How many rewrites CheckRulesTogether follows from each starting pattern. */
constexpr int kCycleSearchDepth = 6;
/*!
 * \brief Every registered set, parsed and checked (CheckRules), with its origin, except those
 * named in `except` (the sets a file being loaded replaces).
 */
std::vector<RuleSource> RegisteredRuleSets(const std::vector<std::string>& except = {});
/*!
 * \brief Checks a rule set (CheckRules, then CheckRulesTogether with every registered set but
 * the one of its name, which it replaces) and registers it; `origin` names it in errors
 * (default "rule set 'NAME'"). \throws ir::Error, registering nothing.
 */
void RegisterRuleSet(RuleFile file, const std::string& origin = "");
/*!
 * \brief Registers rule-language text as set `set`, parsed and checked on first use (so a
 * static initializer never throws; the error then names the set and line).
 */
void RegisterRuleText(const std::string& set, const std::string& text, const std::string& origin = "");
/*! \brief Reads and parses a rule file and registers it (RegisterRuleSet); the set is named after the file's stem. */
std::string LoadRuleFile(const std::string& path);
/*! \brief Every registered rule set (the shipped files first, then in registration order). */
std::vector<std::string> ListRuleSets();
/*!
 * \brief The rule set named `name`, parsed and checked; throws listing the sets when unknown.
 * The first use after a RegisterRuleText also checks the registered sets together
 * (CheckRulesTogether), so an op library's rule that reuses a name or closes a cycle is an error.
 */
const RuleFile& GetRuleSet(const std::string& name);

/*!
 * \brief Registers rules from an op library (or any static initializer), written in the rule
 * language: `IR_REGISTER_RULES(my_ops, R"(rule ... )")`.
 */
#define IR_REGISTER_RULES(SetName, Text)                                 \
  static int IR_UNIQUE_NAME_(__ir_rules_) __attribute__((unused)) = [] { \
    ::ir::rewrite::RegisterRuleText(#SetName, Text);                     \
    return 0;                                                            \
  }()

/*! \brief What guards and attribute functions see of a matched value. */
struct Value {
  NodeEntry entry;
  /*! \brief Shape and dtype as inferred (unknown rank / kUnknown when not known). */
  Shape shape;
  DType dtype = DType::kUnknown;
  /*! \brief How many inputs and graph outputs read it (-1 when not known: a value built by a rewrite). */
  int uses = -1;
};

/*! \brief The bindings of a match, as guards see them. */
struct Bindings {
  std::map<std::string, Value> values;
  /*! \brief Attribute variables: the attribute's text (its default when the node did not set it). */
  std::map<std::string, std::string> attrs;
  /*! \brief The matched root. */
  Value root;
};

/*!
 * \brief A guard: true when the rule may fire. `args` are the guard's arguments as written
 * (variables, `?attr` variables, literals); look them up in `b`. Returning false for "not
 * known" (an unknown shape, say) is always safe.
 */
using FGuard = std::function<bool(const Bindings& b, const std::vector<std::string>& args)>;
/*! \brief An attribute function `@fn(args)`: the attribute text of the replacement. */
using FAttrFunction = std::function<std::string(const Bindings& b, const std::vector<std::string>& args)>;

/*! \brief Registers a guard (op libraries may add their own). `doc` is its one-line meaning. */
void RegisterGuard(const std::string& name, int num_args, const std::string& doc, FGuard fn);
/*! \brief Registers an attribute function. */
void RegisterAttrFunction(const std::string& name, int num_args, const std::string& doc, FAttrFunction fn);
/*! \brief The guard named `name`, or nullptr; `num_args` receives its arity. */
const FGuard* FindGuard(const std::string& name, int* num_args = nullptr);
/*! \brief The attribute function named `name`, or nullptr. */
const FAttrFunction* FindAttrFunction(const std::string& name, int* num_args = nullptr);
/*! \brief "name(arity): doc" for every guard and attribute function, sorted. */
std::vector<std::string> DescribeGuards();

/*! \brief Which rules Simplify applies. */
struct SimplifyOptions {
  /*! \brief Also apply the nsz and fast_math rules (they change special values). */
  bool fast_math = false;
  /*! \brief Also apply the nsz rules (bit for bit but for the sign of zero); implied by fast_math. */
  bool nsz = false;
  /*! \brief Rule sets to apply; empty = every registered set. */
  std::vector<std::string> sets;
  /*! \brief Rules never to apply, by name. */
  std::vector<std::string> disabled;
  /*! \brief Rule names whose failures to match are explained in "simplify.explain". */
  std::vector<std::string> explain;
};

/*! \brief Whether Simplify applies rules of `tag` under `options` (exact, rounding, stabilizing: always). */
bool TagEnabled(RuleTag tag, const SimplifyOptions& options);

/*! \brief What SimplifyEntries did. */
struct SimplifyResult {
  /*! \brief The graph's outputs, rewritten. */
  std::vector<NodeEntry> outputs;
  /*! \brief "rule @ node" per rewrite, in the order they fired. */
  std::vector<std::string> fired;
  /*! \brief Why rules named in SimplifyOptions::explain did not fire, "rule @ node: reason". */
  std::vector<std::string> explained;
};

/*!
 * \brief Merges equal subexpressions and applies the selected rules to a fixed point, bottom
 * up, deterministically. `graph` provides the outputs and the attributes shape inference
 * reads (shape_inputs, dtype_inputs). The nodes of `protect` are kept as they are (never
 * rewritten, copied or matched inside a pattern): the values a gradient is taken against.
 * Nodes that change are copied; the caller's nodes are never edited.
 */
SimplifyResult SimplifyEntries(const Graph& graph, const SimplifyOptions& options,
                               const std::vector<NodeEntry>& protect = {});

/*! \brief SimplifyOptions read from graph attributes "simplify.fast_math", "simplify.nsz", "simplify.sets", ... */
SimplifyOptions SimplifyOptionsFromGraph(const Graph& graph);

}  // namespace rewrite
}  // namespace ir

#endif  // IR_REWRITE_H_
