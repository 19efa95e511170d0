/*!
 * \file rewrite_value_guards.cc
 * \brief The value guards positive, nonnegative and nonzero: what the producers of a value tell
 * of its sign over the reals (exp is positive, square nonnegative, a constant's elements are
 * known...), looked up a few producers deep. They are facts over the reals, NaN and Inf aside
 * (exp underflows to 0, sqrt(-0) is -0): ir-rules-verify assumes them as such, so only rules
 * proved over the reals (fast_math, and the real parts of stabilizing proofs) may lean on them.
 */
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "ir/fold_constants.h"
#include "ir/op.h"
#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

/*! \brief What is known of a value's sign: bit flags. */
enum SignFacts : unsigned { kNonnegative = 1, kNonzero = 2, kPositive = kNonnegative | kNonzero };

constexpr int kMaxDepth = 8;

bool Has(unsigned facts, unsigned want) { return (facts & want) == want; }

/*! \brief The facts every element of `values` satisfies. */
unsigned FactsOfNumbers(const std::vector<double>& values) {
  unsigned facts = kPositive;
  for (double v : values) {
    if (!(v >= 0)) facts &= ~static_cast<unsigned>(kNonnegative);  // NaN: nothing
    if (!(v != 0) || std::isnan(v)) facts &= ~static_cast<unsigned>(kNonzero);
  }
  return facts;
}

/*! \brief A node attribute as a number; false when absent or not a number. */
bool NumberAttr(const Node& n, const char* key, double* out) {
  auto it = n.attrs.dict.find(key);
  if (it == n.attrs.dict.end()) return false;
  char* end = nullptr;
  *out = std::strtod(it->second.c_str(), &end);
  return end != it->second.c_str() && *end == '\0';
}

unsigned Facts(const NodeEntry& e, int depth);

/*! \brief a + b (or a sum of several): nonnegative terms, positive when one term is. */
unsigned SumFacts(const Node& n, int depth) {
  unsigned any = 0, all = kNonnegative;
  for (const NodeEntry& in : n.inputs) {
    unsigned f = Facts(in, depth + 1);
    any |= f;
    all &= f;
  }
  if (!Has(all, kNonnegative)) return 0;
  return Has(any, kPositive) ? kPositive : kNonnegative;
}

/*! \brief x op s for a scalar attribute s (add_scalar, multiply_scalar). */
unsigned ScalarFacts(const Node& n, bool product, int depth) {
  double s = 0;
  if (!NumberAttr(n, "scalar", &s) || n.inputs.empty()) return 0;
  unsigned x = Facts(n.inputs[0], depth + 1);
  if (product) return FactsOfNumbers({s}) & x;  // signs multiply: what both factors have
  if (Has(x, kNonnegative) && s > 0) return kPositive;
  return Has(x, kNonnegative) && s >= 0 ? x : 0;
}

unsigned ConstantFacts(const Node& n) {
  NDArray value = ConstantNodeValue(n);
  if (!value.defined() || !value.shape().is_known() || value.Size() > (1 << 16)) return 0;
  switch (value.dtype()) {
    case DType::kFloat32: {
      std::vector<float> v = value.ToVector<float>();
      return FactsOfNumbers(std::vector<double>(v.begin(), v.end()));
    }
    case DType::kFloat64:
      return FactsOfNumbers(value.ToVector<double>());
    default:
      return 0;
  }
}

unsigned Facts(const NodeEntry& e, int depth) {
  const Node& n = *e.node;
  if (n.is_variable() || depth > kMaxDepth || e.index != 0) return 0;
  static const std::set<std::string> positive = {"exp", "sigmoid", "softplus", "softmax", "ones", "ones_like"};
  static const std::set<std::string> nonnegative = {"relu", "relu6", "zeros", "zeros_like"};
  // The same elements rearranged, or one of them (max, min).
  static const std::set<std::string> same = {"identity",    "reshape", "reshape_like", "transpose",
                                             "expand_dims", "squeeze", "broadcast_to", "broadcast_like",
                                             "tile",        "max",     "min"};
  const std::string& op = n.op()->name;
  if (positive.count(op)) return kPositive;
  if (nonnegative.count(op)) return kNonnegative;
  if (same.count(op)) return n.inputs.empty() ? 0 : Facts(n.inputs[0], depth + 1);
  if (op == "constant") return ConstantFacts(n);
  if (op == "fill") {
    double v = 0;
    return NumberAttr(n, "value", &v) ? FactsOfNumbers({v}) : 0;
  }
  // A sum of nonnegative elements is nonnegative (of positive ones, 0 over an empty axis).
  if (op == "sum" || op == "mean") return Facts(n.inputs[0], depth + 1) & kNonnegative;
  if (op == "abs" || op == "square") return kNonnegative | (Facts(n.inputs[0], depth + 1) & kNonzero);
  if (op == "sqrt" || op == "reciprocal" || op == "rsqrt") {
    unsigned x = Facts(n.inputs[0], depth + 1);
    if (op == "sqrt") return Has(x, kNonnegative) ? x : 0;
    return Has(x, kPositive) ? kPositive : x & kNonzero;
  }
  if (op == "negative") return Facts(n.inputs[0], depth + 1) & kNonzero;
  if (op == "add" || op == "add_n") return SumFacts(n, depth);
  if ((op == "multiply" || op == "divide") && n.inputs.size() == 2) {
    unsigned a = Facts(n.inputs[0], depth + 1), b = Facts(n.inputs[1], depth + 1);
    if (op == "multiply" && n.inputs[0] == n.inputs[1]) return kNonnegative | (a & kNonzero);  // x * x
    // Signs multiply (a quotient only by a nonzero divisor): what both operands have.
    return op == "multiply" || Has(b, kNonzero) ? a & b : 0;
  }
  if (op == "add_scalar") return ScalarFacts(n, false, depth);
  if (op == "multiply_scalar") return ScalarFacts(n, true, depth);
  return 0;
}

/*! \brief Registers a guard true when the value bound to its argument has all of `want`. */
void SignGuard(const char* name, unsigned want, const char* doc) {
  RegisterGuard(name, 1, doc, [want](const Bindings& b, const std::vector<std::string>& args) {
    auto it = b.values.find(args[0]);
    return it != b.values.end() && it->second.entry.node != nullptr && Has(Facts(it->second.entry, 0), want);
  });
}

int RegisterValueGuards() {
  SignGuard("positive", kPositive,
            "x > 0 over the reals, by its producers (exp, sigmoid, softplus, softmax, ones, a positive constant, "
            "sums and products of such...): NaN, Inf and underflow to 0 aside");
  SignGuard("nonnegative", kNonnegative,
            "x >= 0 over the reals, by its producers (abs, square, relu, sqrt, zeros and the positive ones...)");
  SignGuard("nonzero", kNonzero,
            "x != 0 over the reals, by its producers (a nonzero constant, the positive ones, their negatives...)");
  return 0;
}

int registered_value_guards __attribute__((unused)) = RegisterValueGuards();

}  // namespace
}  // namespace rewrite
}  // namespace ir
