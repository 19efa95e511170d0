/*!
 * \file rules_differential_test.cc
 * \brief Every shipped rule, run: its pattern instantiated at its `test:` clause as a graph,
 * evaluated with Simplify restricted to that rule and without Simplify, on random inputs that
 * mix NaN, +-Inf, +-0, denormals and huge values with normal ones. The rule must fire, and the
 * results must agree as its tag promises (docs/REWRITE_RULES.md, "Tags"): exact bit for bit,
 * nsz bit for bit but for the sign of zero, rounding with the same special values and finite
 * results within tolerance; stabilizing within tolerance where the unsimplified result is
 * finite and normal, NaN for NaN inputs, and finite on large logits where the unsimplified
 * result overflows; fast_math within tolerance on finite inputs where the result is finite.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/pass.h"
#include "ir/rewrite.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

using rewrite::Rule;
using rewrite::RuleTag;
using rewrite::Term;

/*! \brief The rule sets compiled from the files in rules/. */
const char* const kShippedSets[] = {"algebra", "gradient", "nn", "shape"};

/*! \brief A `test:` clause value such as "f32[2,3]" or "i32[]": the dtype and shape. */
void ParseSpec(const std::string& spec, DType* dtype, Shape* shape) {
  static const std::map<std::string, DType> kDTypes = {
      {"f32", DType::kFloat32}, {"f64", DType::kFloat64}, {"i32", DType::kInt32},
      {"i64", DType::kInt64},   {"bool", DType::kBool},
  };
  size_t bracket = spec.find('[');
  ASSERT_NE(bracket, std::string::npos) << spec;
  ASSERT_TRUE(kDTypes.count(spec.substr(0, bracket))) << spec;
  *dtype = kDTypes.at(spec.substr(0, bracket));
  std::vector<int64_t> dims;
  std::string inner = spec.substr(bracket + 1, spec.find(']') - bracket - 1);
  for (size_t start = 0; start < inner.size();) {
    size_t comma = std::min(inner.find(',', start), inner.size());
    dims.push_back(std::stoll(inner.substr(start, comma - start)));
    start = comma + 1;
  }
  *shape = Shape(dims);
}

/*! \brief A graph built from a rule's pattern at its test clause, with feeds for its variables. */
class Instance {
 public:
  explicit Instance(const Rule& rule) {
    for (const auto& [key, value] : rule.test) {
      if (!key.empty() && key[0] == '?') {
        attrs_[key] = value;
      } else {
        specs_[key] = value;
      }
    }
    // A value guard holds of what its variable's producer tells: positive(x) of x = exp(v).
    for (const rewrite::Guard& g : rule.guards) {
      if (g.name == "positive" || g.name == "nonzero") producers_[g.args[0]] = "exp";
      if (g.name == "nonnegative") producers_[g.args[0]] = "square";
    }
    root_ = Build(rule.pattern);
  }

  NodeEntry root() const { return root_; }
  /*! \brief The variables, by name, with their dtypes and shapes. */
  const std::map<std::string, std::pair<DType, Shape>>& variables() const { return variables_; }

 private:
  NodeEntry Build(const Term& term) {
    if (term.kind == Term::Kind::kVar) return Variable(term.name);
    if (term.kind == Term::Kind::kLiteral) {
      char text[40];
      std::snprintf(text, sizeof(text), "%.17g", term.literal);
      return MakeNode("constant", Name(), {}, {{"dtype", "float32"}, {"shape", "()"}, {"value", text}});
    }
    std::vector<NodeEntry> args;
    for (const Term& arg : term.args) args.push_back(Build(arg));
    std::map<std::string, std::string> dict;
    for (const auto& [key, value] : term.attrs) {
      if (value.empty() || value[0] != '?') {
        dict[key] = value;
        continue;
      }
      auto it = attrs_.find(value);
      if (it == attrs_.end()) it = attrs_.find(value.substr(1));
      if (it != attrs_.end()) dict[key] = it->second;  // unset: the op's default
    }
    return MakeNode(term.name, Name(), args, dict, static_cast<uint32_t>(term.output));
  }

  NodeEntry Variable(const std::string& name) {
    auto it = entries_.find(name);
    if (it != entries_.end()) return it->second;
    DType dtype = DType::kFloat32;
    Shape shape{2, 3};
    if (specs_.count(name)) ParseSpec(specs_.at(name), &dtype, &shape);
    variables_[name] = {dtype, shape};
    NodeEntry variable{Node::CreateVariable(name), 0};
    auto producer = producers_.find(name);
    if (producer != producers_.end()) variable = MakeNode(producer->second, Name(), {variable});
    return entries_[name] = variable;
  }

  std::string Name() { return "n" + std::to_string(count_++); }

  std::map<std::string, std::string> attrs_, specs_, producers_;
  std::map<std::string, NodeEntry> entries_;
  std::map<std::string, std::pair<DType, Shape>> variables_;
  NodeEntry root_;
  int count_ = 0;
};

/*! \brief What a draw of random inputs mixes into normal values in [-3, 3]. */
enum class Draw {
  /*! \brief About a third NaN, +-Inf, +-0, denormals or huge values. */
  kSpecial,
  /*! \brief +-0, denormals and huge finite values (fast_math promises nothing of NaN and Inf). */
  kFinite,
  /*! \brief About a third NaN, no other special value (so a NaN result comes from a NaN input). */
  kNaN,
  /*! \brief Values up to +-1e4, where exp overflows (stabilizing rules must stay finite there). */
  kLarge,
};

/*!
 * \brief Random elements of `draw`'s kind. Integers lie in [0, 2] (valid class indices of the
 * test clauses' depth 3).
 */
NDArray RandomInput(DType dtype, const Shape& shape, Draw draw, std::mt19937* rng) {
  static const double kInf = std::numeric_limits<double>::infinity();
  static const std::map<Draw, std::vector<double>> kMixed = {
      {Draw::kSpecial, {std::nan(""), kInf, -kInf, 0.0, -0.0, 1e-40, -1e-40, 3e38, -3e38, -1e30}},
      {Draw::kFinite, {0.0, -0.0, 1e-40, -1e-40, 3e38, -3e38, -1e30}},
      {Draw::kNaN, {std::nan("")}},
      {Draw::kLarge, {1e4, -1e4, 300, -300, 90, -90}},
  };
  NDArray out(shape, dtype);
  std::uniform_real_distribution<double> normal(-3, 3), coin(0, 1);
  std::uniform_int_distribution<int> index(0, 2);
  const std::vector<double>& special = kMixed.at(draw);
  std::uniform_int_distribution<size_t> pick(0, special.size() - 1);
  for (int64_t i = 0; i < shape.Size(); ++i) {
    double v = coin(*rng) < (draw == Draw::kLarge ? 0.6 : 0.35) ? special[pick(*rng)] : normal(*rng);
    switch (dtype) {
      case DType::kFloat32:
        out.data<float>()[i] = static_cast<float>(v);
        break;
      case DType::kFloat64:
        out.data<double>()[i] = v;
        break;
      case DType::kInt32:
        out.data<int32_t>()[i] = index(*rng);
        break;
      case DType::kInt64:
        out.data<int64_t>()[i] = index(*rng);
        break;
      default:
        out.data<bool>()[i] = coin(*rng) < 0.5;
        break;
    }
  }
  return out;
}

/*! \brief The draws a rule's tag makes promises about. */
std::vector<Draw> DrawsOf(RuleTag tag) {
  switch (tag) {
    case RuleTag::kExact:
    case RuleTag::kNsz:
    case RuleTag::kRounding:
      return {Draw::kSpecial};
    case RuleTag::kStabilizing:
      return {Draw::kFinite, Draw::kNaN, Draw::kLarge};
    default:
      return {Draw::kFinite};
  }
}

/*! \brief The graph with Simplify applying `rule` alone (its set, every other rule of it disabled). */
Graph SimplifyWithOnly(Graph graph, const Rule& rule) {
  std::vector<std::string> disabled;
  for (const Rule& other : rewrite::GetRuleSet(rule.set).rules) {
    if (other.name != rule.name) disabled.push_back(other.name);
  }
  graph.SetAttr("simplify.sets", std::vector<std::string>{rule.set});
  graph.SetAttr("simplify.disable", disabled);
  graph.SetAttr("simplify.fast_math", rule.tag == RuleTag::kFastMath ? 1 : 0);
  graph.SetAttr("simplify.nsz", rule.tag == RuleTag::kNsz ? 1 : 0);
  return ApplyPass(graph, "Simplify");
}

bool Fired(const Graph& graph, const std::string& rule) {
  for (const std::string& line : graph.GetAttrOr("simplify.fired", std::vector<std::string>())) {
    if (line == rule || line.rfind(rule + " ", 0) == 0) return true;
  }
  return false;
}

bool Close(double expected, double actual) { return std::fabs(actual - expected) <= 1e-5 + 1e-4 * std::fabs(expected); }

bool SameBits(double expected, double actual) {
  return (std::isnan(expected) && std::isnan(actual)) ||
         (expected == actual && std::signbit(expected) == std::signbit(actual));
}

/*! \brief Compares one output element as `tag` promises on `draw`; "" when it agrees, else why not. */
std::string Disagreement(RuleTag tag, Draw draw, double expected, double actual) {
  switch (tag) {
    case RuleTag::kExact:
      return SameBits(expected, actual) ? "" : "not bit for bit";
    case RuleTag::kNsz:
      return SameBits(expected, actual) || (expected == 0 && actual == 0) ? "" : "not bit for bit but the zero sign";
    case RuleTag::kRounding:
      if (std::isnan(expected) || std::isnan(actual) || std::isinf(expected) || std::isinf(actual) ||
          (expected == 0 && actual == 0)) {
        return SameBits(expected, actual) ? "" : "a special value changed";
      }
      return Close(expected, actual) ? "" : "outside the tolerance";
    case RuleTag::kStabilizing:
      if (draw == Draw::kNaN) return std::isnan(expected) && !std::isnan(actual) ? "a NaN input gave a number" : "";
      if (draw == Draw::kLarge && !std::isfinite(expected)) {
        return std::isfinite(actual) ? "" : "not finite where the pattern overflows";
      }
      if (expected == 0 && actual == 0) return SameBits(expected, actual) ? "" : "the sign of zero changed";
      if (!std::isnormal(expected)) return "";  // promised only where the pattern is finite and normal
      return Close(expected, actual) ? "" : "outside the tolerance";
    default:
      return !std::isfinite(expected) || Close(expected, actual) ? "" : "outside the tolerance";
  }
}

/*! \brief Checks one rule on random draws of its inputs of each kind its tag promises about. */
void CheckRule(const Rule& rule) {
  SCOPED_TRACE(rule.set + ":" + std::to_string(rule.line) + " rule " + rule.name + " (" + rewrite::TagName(rule.tag) +
               ")");
  Instance instance(rule);
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(rule.name)));
  for (Draw draw : DrawsOf(rule.tag)) {
    for (int trial = 0; trial < 6; ++trial) {
      std::map<std::string, NDArray> feeds;
      for (const auto& [name, spec] : instance.variables()) {
        feeds.emplace(name, RandomInput(spec.first, spec.second, draw, &rng));
      }
      Graph plain = test::InferFromFeeds({instance.root()}, feeds);
      Graph simplified = SimplifyWithOnly(plain, rule);
      ASSERT_TRUE(Fired(simplified, rule.name)) << "the rule did not fire on its own test instance";
      NDArray expected = test::EvalGraphWithKernels(plain, feeds).at(0);
      NDArray actual = test::EvalGraphWithKernels(simplified, feeds).at(0);
      ASSERT_EQ(expected.shape(), actual.shape());
      ASSERT_EQ(expected.dtype(), actual.dtype());
      std::vector<double> want = test::Values(expected), got = test::Values(actual);
      for (size_t i = 0; i < want.size(); ++i) {
        std::string why = Disagreement(rule.tag, draw, want[i], got[i]);
        ASSERT_TRUE(why.empty()) << why << " at element " << i << ": " << got[i] << " instead of " << want[i]
                                 << " (draw " << static_cast<int>(draw) << ", trial " << trial << ")";
      }
    }
  }
}

TEST(RulesDifferentialTest, EveryShippedRuleFiresAndKeepsItsPromise) {
  size_t rules = 0;
  for (const char* set : kShippedSets) {
    for (const Rule& rule : rewrite::GetRuleSet(set).rules) {
      CheckRule(rule);
      ++rules;
    }
  }
  EXPECT_GE(rules, 60u);
}

}  // namespace
}  // namespace ir
