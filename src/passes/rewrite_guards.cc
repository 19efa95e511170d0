/*!
 * \file rewrite_guards.cc
 * \brief The guards and attribute functions the shipped rules (the files in rules/) name.
 *
 * A guard sees the bindings of a match (values with their inferred shapes and dtypes,
 * attribute texts) and answers whether the rule may fire; whenever something it needs is not
 * known (an unknown shape, an attribute text it cannot read) it answers false, which is always
 * safe. Attribute functions compute the text of a replacement's attribute.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

using Args = std::vector<std::string>;

// ---------------------------------------------------------------- reading bindings

/*! \brief The value bound to variable `name`, or nullptr. */
const Value* ValueOf(const Bindings& b, const std::string& name) {
  auto it = b.values.find(name);
  return it == b.values.end() ? nullptr : &it->second;
}

/*! \brief The text bound to attribute variable `name` (written `?a`; looked up with and without the `?`). */
const std::string* AttrOf(const Bindings& b, const std::string& name) {
  auto it = b.attrs.find(name);
  if (it == b.attrs.end() && !name.empty() && name[0] == '?') it = b.attrs.find(name.substr(1));
  return it == b.attrs.end() ? nullptr : &it->second;
}

/*! \brief A number written in full ("1", "-0", "0.5", "1e-3"); false for anything else. */
bool ParseNumber(const std::string& text, double* out) {
  const char* begin = text.c_str();
  char* end = nullptr;
  *out = std::strtod(begin, &end);
  if (end == begin) return false;
  while (*end == ' ') ++end;
  return *end == '\0';
}

/*! \brief The numbers of a list text: "(1, 2)", "[1,2]", "(1 2)", "(1,)", "()", or one number "3". */
bool ParseNumbers(std::string text, std::vector<double>* out) {
  out->clear();
  for (char& c : text) {
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') c = ' ';
  }
  std::istringstream items(text);
  std::string item;
  while (items >> item) {
    double v = 0;
    if (!ParseNumber(item, &v)) return false;
    out->push_back(v);
  }
  return true;
}

/*! \brief Integers of a list text (as ParseNumbers); false when one is not an integer. */
bool ParseInts(const std::string& text, std::vector<int64_t>* out) {
  std::vector<double> values;
  if (!ParseNumbers(text, &values)) return false;
  out->clear();
  for (double v : values) {
    if (v != std::floor(v) || std::fabs(v) > 1e15) return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

/*! \brief `axis` in [-rank, rank) made non-negative; false when out of range. */
bool NormalizeAxis(int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return true;
}

/*! \brief The single axis an axis text ("-1", "(1,)", "[1]") names in a tensor of `rank`. */
bool SingleAxis(const std::string& text, int rank, int* out) {
  std::vector<int64_t> axes;
  return rank >= 0 && ParseInts(text, &axes) && axes.size() == 1 && NormalizeAxis(axes[0], rank, out);
}

/*! \brief A transpose's permutation of `rank` dimensions (empty text: reversed). */
bool Permutation(const std::string& text, int rank, std::vector<int>* perm) {
  std::vector<int64_t> axes;
  if (rank < 0 || !ParseInts(text, &axes)) return false;
  perm->assign(rank, 0);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (axes.empty()) {
      (*perm)[i] = rank - 1 - i;
    } else if (static_cast<int>(axes.size()) != rank || !NormalizeAxis(axes[i], rank, &(*perm)[i])) {
      return false;
    }
    if (seen[(*perm)[i]]) return false;
    seen[(*perm)[i]] = true;
  }
  return true;
}

std::string FormatNumber(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string FormatInts(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

// ---------------------------------------------------------------- registration helpers

bool KnownSame(const Value& a, const Value& b) { return a.shape.is_known() && a.shape == b.shape; }

/*! \brief Registers a guard over values only: `fn` gets the bound values (false when one is unbound). */
void ValueGuard(const std::string& name, int n, const std::string& doc,
                std::function<bool(const Bindings&, const std::vector<const Value*>&)> fn) {
  RegisterGuard(name, n, doc, [fn](const Bindings& b, const Args& args) {
    std::vector<const Value*> values;
    for (const auto& a : args) {
      values.push_back(ValueOf(b, a));
      if (!values.back()) return false;
    }
    return fn(b, values);
  });
}

/*! \brief Registers an attribute function of two numbers. */
void NumberFunction(const std::string& name, const std::string& doc, double (*fn)(double, double)) {
  RegisterAttrFunction(name, 2, doc, [name, fn](const Bindings& b, const Args& args) {
    double x = 0, y = 0;
    const std::string *tx = AttrOf(b, args[0]), *ty = AttrOf(b, args[1]);
    IR_CHECK(tx && ty && ParseNumber(*tx, &x) && ParseNumber(*ty, &y))
        << "@" << name << "(" << args[0] << ", " << args[1] << "): the arguments are not bound numbers";
    return FormatNumber(fn(x, y));
  });
}

void RegisterShapeGuards() {
  ValueGuard("result_like", 1, "the matched root has x's known shape and dtype (a rule replacing x op c by x needs it)",
             [](const Bindings& b, const auto& v) {
               return KnownSame(b.root, *v[0]) && b.root.dtype == v[0]->dtype && v[0]->dtype != DType::kUnknown;
             });
  ValueGuard("same_shape", 2, "a and b have the same known shape",
             [](const Bindings&, const auto& v) { return KnownSame(*v[0], *v[1]); });
  ValueGuard("known_shape", 1, "x's shape is known",
             [](const Bindings&, const auto& v) { return v[0]->shape.is_known(); });
  ValueGuard("known_rank", 1, "x's rank is known",
             [](const Bindings&, const auto& v) { return v[0]->shape.rank_known(); });
  ValueGuard("larger", 2, "x has more elements than y (both shapes known): a collapse of x to y sums, not copies",
             [](const Bindings&, const auto& v) {
               return v[0]->shape.is_known() && v[1]->shape.is_known() && v[0]->shape.Size() > v[1]->shape.Size();
             });
  ValueGuard("bias_for", 2, "c is a vector as long as m's known last dimension (rank >= 2), of m's dtype",
             [](const Bindings&, const auto& v) {
               const Shape &c = v[0]->shape, &m = v[1]->shape;
               return c.ndim() == 1 && m.ndim() >= 2 && c[0] >= 0 && c[0] == m[m.ndim() - 1] &&
                      v[0]->dtype == v[1]->dtype && v[0]->dtype != DType::kUnknown;
             });
  RegisterGuard("matmul_cols", 3,
                "c is a vector as long as the columns of matmul(., b) (b's known last dimension, or the one "
                "before it when the flag ?tb is true), of b's dtype",
                [](const Bindings& b, const Args& args) {
                  const Value *c = ValueOf(b, args[0]), *m = ValueOf(b, args[1]);
                  const std::string* tb = AttrOf(b, args[2]);
                  if (!c || !m || !tb || c->shape.ndim() != 1 || m->shape.ndim() < 2) return false;
                  bool transposed = *tb == "true" || *tb == "True" || *tb == "1";
                  int64_t cols = m->shape[m->shape.ndim() - (transposed ? 2 : 1)];
                  return cols >= 0 && c->shape[0] == cols && c->dtype == m->dtype && c->dtype != DType::kUnknown;
                });
  RegisterGuard("has_rank", 2, "x's rank is known and equals the literal n", [](const Bindings& b, const Args& args) {
    const Value* x = ValueOf(b, args[0]);
    double n = 0;
    return x && ParseNumber(args[1], &n) && x->shape.ndim() == n;
  });
}

void RegisterDTypeGuards() {
  ValueGuard("is_int", 1, "x's dtype is int32 or int64", [](const Bindings&, const auto& v) {
    return v[0]->dtype == DType::kInt32 || v[0]->dtype == DType::kInt64;
  });
  RegisterGuard("dtype_is", 2, "x's known dtype is the one the attribute ?t names (a cast to it changes nothing)",
                [](const Bindings& b, const Args& args) {
                  const Value* x = ValueOf(b, args[0]);
                  const std::string* t = AttrOf(b, args[1]);
                  return x && t && x->dtype != DType::kUnknown && *t == DTypeName(x->dtype);
                });
}

void RegisterAxisGuards() {
  RegisterGuard("last_axis", 2, "the axis text ?a (\"-1\", \"1\", \"(1,)\", \"[1]\") names exactly x's last axis",
                [](const Bindings& b, const Args& args) {
                  const std::string* a = AttrOf(b, args[0]);
                  const Value* x = ValueOf(b, args[1]);
                  int axis = -1;
                  return a && x && SingleAxis(*a, x->shape.ndim(), &axis) && axis == x->shape.ndim() - 1;
                });
  RegisterGuard("same_axis", 3, "the axis texts ?a and ?b name the same single axis of x",
                [](const Bindings& b, const Args& args) {
                  const std::string *a = AttrOf(b, args[0]), *c = AttrOf(b, args[1]);
                  const Value* x = ValueOf(b, args[2]);
                  int i = -1, j = -2;
                  return a && c && x && SingleAxis(*a, x->shape.ndim(), &i) && SingleAxis(*c, x->shape.ndim(), &j) &&
                         i == j;
                });
  RegisterGuard("reduces_all", 2, "the axis list ?r is empty or names every axis of a tensor of rank n (a literal)",
                [](const Bindings& b, const Args& args) {
                  const std::string* r = AttrOf(b, args[0]);
                  std::vector<int64_t> axes;
                  double n = 0;
                  if (!r || !ParseInts(*r, &axes) || !ParseNumber(args[1], &n)) return false;
                  std::vector<bool> seen(static_cast<size_t>(std::max(n, 0.0)), false);
                  for (int64_t a : axes) {
                    int i = -1;
                    if (!NormalizeAxis(a, static_cast<int>(seen.size()), &i)) return false;
                    seen[i] = true;
                  }
                  return axes.empty() || std::find(seen.begin(), seen.end(), false) == seen.end();
                });
  RegisterGuard("one_hot_depth", 2, "the one_hot depth ?d equals x's known last dimension",
                [](const Bindings& b, const Args& args) {
                  const std::string* d = AttrOf(b, args[0]);
                  const Value* x = ValueOf(b, args[1]);
                  double depth = 0;
                  return d && x && x->shape.ndim() >= 1 && ParseNumber(*d, &depth) &&
                         depth == x->shape[x->shape.ndim() - 1];
                });
}

void RegisterPermGuards() {
  RegisterGuard("identity_perm", 2, "the transpose axes ?p leave x's known rank of dimensions in place",
                [](const Bindings& b, const Args& args) {
                  const std::string* p = AttrOf(b, args[0]);
                  const Value* x = ValueOf(b, args[1]);
                  std::vector<int> perm;
                  if (!p || !x || !Permutation(*p, x->shape.ndim(), &perm)) return false;
                  for (size_t i = 0; i < perm.size(); ++i) {
                    if (perm[i] != static_cast<int>(i)) return false;
                  }
                  return true;
                });
  RegisterGuard("swaps_last_two", 2, "the transpose axes ?p swap x's last two axes and keep the others (rank >= 2)",
                [](const Bindings& b, const Args& args) {
                  const std::string* p = AttrOf(b, args[0]);
                  const Value* x = ValueOf(b, args[1]);
                  std::vector<int> perm;
                  if (!p || !x || x->shape.ndim() < 2 || !Permutation(*p, x->shape.ndim(), &perm)) return false;
                  int n = x->shape.ndim();
                  for (int i = 0; i < n - 2; ++i) {
                    if (perm[i] != i) return false;
                  }
                  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
                });
  RegisterGuard("no_copy_dims", 1, "the reshape target ?s has no 0 (which would copy a dimension of its input)",
                [](const Bindings& b, const Args& args) {
                  const std::string* s = AttrOf(b, args[0]);
                  std::vector<int64_t> dims;
                  if (!s || !ParseInts(*s, &dims)) return false;
                  for (int64_t d : dims) {
                    if (d == 0) return false;
                  }
                  return true;
                });
  RegisterGuard("all_ones", 1, "every entry of the list ?r is 1 (a tile that repeats nothing)",
                [](const Bindings& b, const Args& args) {
                  const std::string* r = AttrOf(b, args[0]);
                  std::vector<int64_t> reps;
                  if (!r || !ParseInts(*r, &reps)) return false;
                  for (int64_t v : reps) {
                    if (v != 1) return false;
                  }
                  return true;
                });
}

void RegisterNumberGuards() {
  RegisterGuard("attr_is", 2, "the attribute ?a is the number v, the sign of zero included (-0 is not 0)",
                [](const Bindings& b, const Args& args) {
                  const std::string* a = AttrOf(b, args[0]);
                  double x = 0, v = 0;
                  return a && ParseNumber(*a, &x) && ParseNumber(args[1], &v) && x == v &&
                         std::signbit(x) == std::signbit(v);
                });
  RegisterGuard("pow2", 1, "the attribute ?a is +-2^k with |k| < 126, so x / a and x * (1 / a) round alike",
                [](const Bindings& b, const Args& args) {
                  const std::string* a = AttrOf(b, args[0]);
                  double x = 0;
                  if (!a || !ParseNumber(*a, &x) || !std::isfinite(x) || x == 0) return false;
                  int exp = 0;
                  return std::fabs(std::frexp(x, &exp)) == 0.5 && std::abs(exp - 1) < 126;
                });
  ValueGuard("no_ordering", 1, "neither the matched root nor x's node waits on control dependencies",
             [](const Bindings& b, const auto& v) {
               return b.root.entry.node && b.root.entry.node->control_deps.empty() && v[0]->entry.node &&
                      v[0]->entry.node->control_deps.empty();
             });
}

void RegisterAttrFunctions() {
  NumberFunction("mul", "?a * ?b (a scalar attribute)", [](double a, double c) { return a * c; });
  NumberFunction("add", "?a + ?b (a scalar attribute)", [](double a, double c) { return a + c; });
  NumberFunction("sub", "?a - ?b (a scalar attribute)", [](double a, double c) { return a - c; });
  NumberFunction("div", "?a / ?b (a scalar attribute)", [](double a, double c) { return a / c; });
  RegisterAttrFunction("neg", 1, "-?a (a scalar attribute)", [](const Bindings& b, const Args& args) {
    const std::string* a = AttrOf(b, args[0]);
    double x = 0;
    IR_CHECK(a && ParseNumber(*a, &x)) << "@neg(" << args[0] << "): not a bound number";
    return FormatNumber(-x);
  });
  RegisterAttrFunction("recip", 1, "1 / ?a (a scalar attribute)", [](const Bindings& b, const Args& args) {
    const std::string* a = AttrOf(b, args[0]);
    double x = 0;
    IR_CHECK(a && ParseNumber(*a, &x)) << "@recip(" << args[0] << "): not a bound number";
    return FormatNumber(1 / x);
  });
  RegisterAttrFunction("not", 1, "the negation of the boolean attribute ?t", [](const Bindings& b, const Args& args) {
    const std::string* t = AttrOf(b, args[0]);
    IR_CHECK(t) << "@not(" << args[0] << "): not bound";
    return (*t == "true" || *t == "True" || *t == "1") ? std::string("false") : std::string("true");
  });
  RegisterAttrFunction("axis_of", 2, "the single axis the text ?a names in x, as a non-negative integer",
                       [](const Bindings& b, const Args& args) {
                         const std::string* a = AttrOf(b, args[0]);
                         const Value* x = ValueOf(b, args[1]);
                         int axis = -1;
                         IR_CHECK(a && x && SingleAxis(*a, x->shape.ndim(), &axis))
                             << "@axis_of(" << args[0] << ", " << args[1] << "): not a single axis of a known rank";
                         return std::to_string(axis);
                       });
  RegisterAttrFunction("shape_of", 1, "x's known shape as a list \"(d0,d1,...)\"",
                       [](const Bindings& b, const Args& args) {
                         const Value* x = ValueOf(b, args[0]);
                         IR_CHECK(x && x->shape.is_known()) << "@shape_of(" << args[0] << "): the shape is not known";
                         return FormatInts(x->shape.dims());
                       });
  RegisterAttrFunction("reduced_count", 2,
                       "how many elements of x's known shape a reduction over the axis list ?r sums",
                       [](const Bindings& b, const Args& args) {
                         const std::string* r = AttrOf(b, args[0]);
                         const Value* x = ValueOf(b, args[1]);
                         std::vector<int64_t> axes;
                         IR_CHECK(r && x && x->shape.is_known() && ParseInts(*r, &axes))
                             << "@reduced_count(" << args[0] << ", " << args[1] << "): unknown axes or shape";
                         int64_t count = axes.empty() ? x->shape.Size() : 1;
                         for (int64_t a : axes) {
                           int axis = -1;
                           IR_CHECK(NormalizeAxis(a, x->shape.ndim(), &axis)) << "@reduced_count: axis " << a;
                           count *= x->shape[axis];
                         }
                         return std::to_string(count);
                       });
  RegisterAttrFunction("compose_perm", 3,
                       "the axes of transpose{?outer}(transpose{?inner}(x)) as one transpose of x (x's rank known)",
                       [](const Bindings& b, const Args& args) {
                         const std::string *inner = AttrOf(b, args[0]), *outer = AttrOf(b, args[1]);
                         const Value* x = ValueOf(b, args[2]);
                         std::vector<int> q, p;
                         IR_CHECK(inner && outer && x && Permutation(*inner, x->shape.ndim(), &q) &&
                                  Permutation(*outer, x->shape.ndim(), &p))
                             << "@compose_perm: permutations of an unknown rank";
                         std::vector<int64_t> composed;
                         for (int i : p) composed.push_back(q[i]);
                         return FormatInts(composed);
                       });
}

int RegisterAll() {
  RegisterShapeGuards();
  RegisterDTypeGuards();
  RegisterAxisGuards();
  RegisterPermGuards();
  RegisterNumberGuards();
  RegisterAttrFunctions();
  return 0;
}

int registered_guards __attribute__((unused)) = RegisterAll();

}  // namespace
}  // namespace rewrite
}  // namespace ir
