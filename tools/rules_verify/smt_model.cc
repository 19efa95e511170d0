/*!
 * \file smt_model.cc
 * \brief Elements in Z3: sorts, constants, arithmetic, casts, math functions and their axioms,
 * and the translation of FCodeGen expressions.
 */
#include "smt_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>

namespace ir {
namespace rules_verify {
namespace {

bool IsFloat(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kFloat64; }
bool IsInt(DType dtype) { return dtype == DType::kInt32 || dtype == DType::kInt64; }
unsigned IntBits(DType dtype) { return dtype == DType::kInt32 ? 32 : 64; }

/*! \brief The exact decimal expansion of a finite double (every double has a finite one). */
std::string ExactDecimal(double value) {
  std::vector<char> text(1200);
  std::snprintf(text.data(), text.size(), "%.1100f", value);
  std::string s(text.data());
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

/*! \brief floor(x) as an integer (Z3's to_int). */
z3::expr ToInt(const z3::expr& x) { return z3::expr(x.ctx(), Z3_mk_real2int(x.ctx(), x)); }

bool IsApp(const z3::expr& e, Z3_decl_kind kind) { return e.is_app() && e.decl().decl_kind() == kind; }

}  // namespace

z3::sort SmtModel::SortOf(DType dtype) const {
  switch (dtype) {
    case DType::kFloat32:
      return ieee() ? ctx_->fpa_sort(8, 24) : ctx_->real_sort();
    case DType::kFloat64:
      return ieee() ? ctx_->fpa_sort(11, 53) : ctx_->real_sort();
    case DType::kInt32:
    case DType::kInt64:
      return ctx_->bv_sort(IntBits(dtype));
    case DType::kBool:
      return ctx_->bool_sort();
    default:
      throw Error(StrCat("cannot model dtype ", DTypeName(dtype)));
  }
}

z3::expr SmtModel::Fresh(const std::string& name, DType dtype) const {
  return ctx_->constant(name.c_str(), SortOf(dtype));
}

z3::expr SmtModel::Rne() const { return z3::expr(*ctx_, Z3_mk_fpa_rne(*ctx_)); }

z3::expr SmtModel::Constant(double value, DType dtype) const {
  if (dtype == DType::kBool) return ctx_->bool_val(value != 0);
  if (IsInt(dtype)) return ctx_->bv_val(static_cast<int64_t>(value), IntBits(dtype));
  z3::sort sort = SortOf(dtype);
  if (domain_ == Domain::kReal) {
    if (!std::isfinite(value)) throw Error(StrCat("cannot model the constant ", value, " over the reals"));
    return ctx_->real_val(ExactDecimal(value).c_str());
  }
  if (std::isnan(value)) return ctx_->fpa_nan(sort);
  if (std::isinf(value)) return ctx_->fpa_inf(sort, value < 0);
  if (dtype == DType::kFloat32) return ctx_->fpa_val(static_cast<float>(value));
  return ctx_->fpa_val(value);
}

z3::expr SmtModel::Arith(char op, const z3::expr& a, const z3::expr& b, DType dtype) const {
  if (IsFloat(dtype) && ieee()) {
    Z3_context c = *ctx_;
    switch (op) {
      case '+':
        return z3::expr(*ctx_, Z3_mk_fpa_add(c, Rne(), a, b));
      case '-':
        return z3::expr(*ctx_, Z3_mk_fpa_sub(c, Rne(), a, b));
      case '*':
        return z3::expr(*ctx_, Z3_mk_fpa_mul(c, Rne(), a, b));
      case '/':
        return z3::expr(*ctx_, Z3_mk_fpa_div(c, Rne(), a, b));
    }
  }
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      if (IsFloat(dtype)) {
        divisors_.push_back(b);
        conditions_.push_back(b != 0);
      }
      return a / b;  // bit-vectors: signed, truncating (C's division)
    case '%':
      if (IsInt(dtype)) return z3::srem(a, b);
  }
  throw Error(StrCat("cannot model operator '", op, "' on ", DTypeName(dtype)));
}

z3::expr SmtModel::Compare(const std::string& op, const z3::expr& a, const z3::expr& b, DType dtype) const {
  if (op == "==" || op == "!=") {
    z3::expr eq = a.is_fpa() ? z3::expr(*ctx_, Z3_mk_fpa_eq(*ctx_, a, b)) : a == b;
    return op == "==" ? eq : !eq;
  }
  if (dtype == DType::kBool) throw Error(StrCat("cannot model '", op, "' on bool"));
  if (op == "<") return a < b;  // fp.lt, bvslt or <: false when a NaN is involved
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  throw Error(StrCat("cannot model comparison '", op, "'"));
}

z3::expr SmtModel::Cast(const z3::expr& x, DType from, DType to) const {
  if (from == to) return x;
  z3::sort target = SortOf(to);
  if (to == DType::kBool) return from == DType::kBool ? x : !Compare("==", x, Constant(0, from), from);
  if (from == DType::kBool) return z3::ite(x, Constant(1, to), Constant(0, to));
  if (IsInt(from) && IsInt(to)) {
    return IntBits(to) > IntBits(from) ? z3::sext(x, IntBits(to) - IntBits(from)) : x.extract(IntBits(to) - 1, 0);
  }
  Z3_context c = *ctx_;
  if (ieee()) {
    if (IsFloat(from) && IsFloat(to)) return z3::expr(*ctx_, Z3_mk_fpa_to_fp_float(c, Rne(), x, target));
    if (IsInt(from)) return z3::expr(*ctx_, Z3_mk_fpa_to_fp_signed(c, Rne(), x, target));
    return z3::expr(*ctx_, Z3_mk_fpa_to_sbv(c, Z3_mk_fpa_rtz(c), x, IntBits(to)));  // C truncates
  }
  if (IsFloat(from) && IsFloat(to)) return x;
  if (IsInt(from)) return z3::to_real(z3::bv2int(x, true));
  z3::expr truncated = z3::ite(x >= 0, ToInt(x), -ToInt(-x));
  return z3::int2bv(IntBits(to), truncated);
}

z3::func_decl SmtModel::Function(const std::string& name, const std::vector<z3::sort>& domain, const z3::sort& range) {
  std::string key = name;
  for (const z3::sort& s : domain) key += "|" + s.to_string();
  key += "->" + range.to_string();
  auto it = functions_.find(key);
  if (it != functions_.end()) return it->second;
  z3::sort_vector sorts(*ctx_);
  for (const z3::sort& s : domain) sorts.push_back(s);
  z3::func_decl f = z3::function(name.c_str(), sorts, range);
  functions_.emplace(key, f);
  return f;
}

z3::expr SmtModel::Opaque(const std::string& name, const std::vector<z3::expr>& args, DType result,
                          bool propagates_nan) {
  opaque_.insert(name);
  if (propagates_nan) propagates_nan_.insert(name);
  std::vector<z3::sort> sorts;
  z3::expr_vector values(*ctx_);
  for (const z3::expr& a : args) {
    sorts.push_back(a.get_sort());
    values.push_back(a);
  }
  return Function(name, sorts, SortOf(result))(values);
}

z3::expr SmtModel::RealCall(const std::string& fn, const std::vector<z3::expr>& args) {
  const z3::expr& x = args[0];
  z3::sort real = ctx_->real_sort();
  auto unary = [&](const char* name, const z3::expr& arg) { return Function(name, {real}, real)(arg); };
  // Where each function has a real value (what a stabilizing rule's pattern assumes of itself).
  if (fn == "log" || fn == "rsqrt") conditions_.push_back(x > 0);
  if (fn == "log1p") conditions_.push_back(1 + x > 0);
  if (fn == "sqrt") conditions_.push_back(x >= 0);
  if (fn == "exp" || fn == "log" || fn == "sqrt" || fn == "sin" || fn == "cos" || fn == "rint")
    return unary(fn.c_str(), x);
  if (fn == "log1p") return unary("log", 1 + x);
  if (fn == "expm1") return unary("exp", x) - 1;
  if (fn == "rsqrt") return 1 / unary("sqrt", x);
  if (fn == "tanh") return (unary("exp", x) - unary("exp", -x)) / (unary("exp", x) + unary("exp", -x));
  if (fn == "fabs") return z3::ite(x >= 0, x, -x);
  if (fn == "floor") return z3::to_real(ToInt(x));
  if (fn == "ceil") return -z3::to_real(ToInt(-x));
  if (fn == "fmin") return z3::ite(x <= args[1], x, args[1]);
  if (fn == "fmax") return z3::ite(x >= args[1], x, args[1]);
  int64_t k = 0;
  if (fn == "pow" && args[1].is_numeral_i64(k) && k >= -4 && k <= 4) {
    z3::expr power = ctx_->real_val(1);
    for (int64_t i = 0; i < (k < 0 ? -k : k); ++i) power = power * x;
    if (k < 0) conditions_.push_back(power != 0);
    return k < 0 ? 1 / power : power;
  }
  if (fn == "pow") {
    conditions_.push_back(x > 0);
    return Function("pow", {real, real}, real)(x, args[1]);
  }
  throw Error(StrCat("cannot model math function ", fn));
}

z3::expr SmtModel::IeeeCall(const std::string& fn, const std::vector<z3::expr>& args, DType dtype) {
  Z3_context c = *ctx_;
  const z3::expr& x = args[0];
  if (fn == "sqrt") return z3::expr(*ctx_, Z3_mk_fpa_sqrt(c, Rne(), x));
  if (fn == "fabs") return z3::expr(*ctx_, Z3_mk_fpa_abs(c, x));
  if (fn == "floor") return z3::expr(*ctx_, Z3_mk_fpa_round_to_integral(c, Z3_mk_fpa_rtn(c), x));
  if (fn == "ceil") return z3::expr(*ctx_, Z3_mk_fpa_round_to_integral(c, Z3_mk_fpa_rtp(c), x));
  if (fn == "rint") return z3::expr(*ctx_, Z3_mk_fpa_round_to_integral(c, Rne(), x));
  if (fn == "fmin") return z3::expr(*ctx_, Z3_mk_fpa_min(c, x, args[1]));
  if (fn == "fmax") return z3::expr(*ctx_, Z3_mk_fpa_max(c, x, args[1]));
  // Every dialect prints rsqrt as 1 / sqrt(x), and its CPU kernel computes that.
  if (fn == "rsqrt") return Arith('/', Constant(1, dtype), z3::expr(*ctx_, Z3_mk_fpa_sqrt(c, Rne(), x)), dtype);
  // The rounding model's contract of pow: x^1 and x^2 correctly rounded, as libm's are to within
  // their error (which a rounding rule's bound adds to).
  if (fn == "pow" && domain_ == Domain::kRounding) {
    for (int k : {1, 2}) {
      if (z3::expr(args[1] == Constant(k, dtype)).simplify().is_true()) return k == 1 ? x : Arith('*', x, x, dtype);
    }
  }
  // libm's (and the devices') exp, log, tanh... are not correctly rounded: congruence and their
  // special values only (IeeeAxioms).
  std::vector<z3::sort> sorts(args.size(), SortOf(dtype));
  z3::expr_vector values(*ctx_);
  for (const z3::expr& a : args) values.push_back(a);
  return Function(fn, sorts, SortOf(dtype))(values);
}

z3::expr SmtModel::Call(const std::string& fn, const std::vector<z3::expr>& args, DType dtype) {
  return domain_ == Domain::kReal ? RealCall(fn, args) : IeeeCall(fn, args, dtype);
}

z3::expr SmtModel::Translate(const ast::Expr& e, const std::map<std::string, z3::expr>& vars) {
  auto arg = [&](size_t i) { return Translate(e->args[i], vars); };
  switch (e->kind) {
    case ast::ExprKind::kConst:
      return Constant(e->value, e->dtype);
    case ast::ExprKind::kVar: {
      auto it = vars.find(e->name);
      if (it == vars.end()) throw Error(StrCat("cannot model the free variable ", e->name));
      return it->second;
    }
    case ast::ExprKind::kUnary:
      return e->name == "!" ? !arg(0) : -arg(0);
    case ast::ExprKind::kBinary: {
      const std::string& op = e->name;
      if (op == "&&") return arg(0) && arg(1);
      if (op == "||") return arg(0) || arg(1);
      if (op.size() == 1 && std::strchr("+-*/%", op[0])) return Arith(op[0], arg(0), arg(1), e->dtype);
      return Compare(op, arg(0), arg(1), e->args[0]->dtype);
    }
    case ast::ExprKind::kCall: {
      std::vector<z3::expr> args;
      for (size_t i = 0; i < e->args.size(); ++i) args.push_back(arg(i));
      return Call(e->name, args, e->dtype);
    }
    case ast::ExprKind::kCast:
      return Cast(arg(0), e->args[0]->dtype, e->dtype);
    case ast::ExprKind::kSelect:
      return z3::ite(arg(0), arg(1), arg(2));
    case ast::ExprKind::kLoad:
      break;
  }
  throw Error("cannot model a buffer load");
}

namespace {

bool Named(const z3::expr& e, const char* name) {
  return e.is_app() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED && e.decl().name().str() == name;
}

}  // namespace

void CollectApps(const z3::expr& e, std::set<unsigned>* seen, std::vector<z3::expr>* apps) {
  if (!e.is_app() || !seen->insert(e.id()).second) return;
  for (unsigned i = 0; i < e.num_args(); ++i) CollectApps(e.arg(i), seen, apps);
  if (e.decl().decl_kind() == Z3_OP_UNINTERPRETED && e.num_args() > 0) apps->push_back(e);
}

z3::expr SmtModel::OrderFreeSum(const std::vector<z3::expr>& terms, DType dtype) {
  // The kernels start from +0: one term t sums to +0 + t (-0 becomes +0).
  if (terms.size() == 1) return Arith('+', Constant(0, dtype), terms[0], dtype);
  std::vector<z3::expr> sorted = terms;
  std::sort(sorted.begin(), sorted.end(), [](const z3::expr& a, const z3::expr& b) { return a.id() < b.id(); });
  sums_.insert(StrCat("order_free_sum", sorted.size()));
  return Opaque(StrCat("order_free_sum", sorted.size()), sorted, dtype);
}

bool SmtModel::HasOpaque(const z3::expr& e) const {
  std::vector<z3::expr> stack = {e};
  std::set<unsigned> seen;
  while (!stack.empty()) {
    z3::expr t = stack.back();
    stack.pop_back();
    if (!t.is_app() || !seen.insert(t.id()).second) continue;
    if (t.decl().decl_kind() == Z3_OP_UNINTERPRETED && opaque_.count(t.decl().name().str())) return true;
    for (unsigned i = 0; i < t.num_args(); ++i) stack.push_back(t.arg(i));
  }
  return false;
}

z3::expr_vector SmtModel::Axioms(const z3::expr_vector& roots) {
  if (domain_ != Domain::kReal) return IeeeAxioms(roots);
  z3::expr_vector axioms(*ctx_);
  z3::sort real = ctx_->real_sort();
  z3::func_decl exp = Function("exp", {real}, real), log = Function("log", {real}, real);
  z3::func_decl sqrt = Function("sqrt", {real}, real);
  axioms.push_back(exp(ctx_->real_val(0)) == 1);
  axioms.push_back(log(ctx_->real_val(1)) == 0);
  // Ground instances over the terms the proof uses (quantified axioms loop or give up).
  // The laws add exp and log terms of parts; three rounds cover laws applied to their results.
  std::set<unsigned> seen;
  std::vector<z3::expr> apps;
  for (unsigned i = 0; i < roots.size(); ++i) CollectApps(roots[i], &seen, &apps);
  for (int round = 0; round < 3; ++round) {
    std::vector<z3::expr> fresh;
    z3::expr_vector produced(*ctx_);
    auto E = [&](const z3::expr& u) {
      produced.push_back(exp(u));
      return exp(u);
    };
    for (const z3::expr& t : apps) {
      const z3::expr x = t.arg(0);
      if (Named(t, "exp")) {
        axioms.push_back(t > 0);
        if (Named(x, "log")) axioms.push_back(z3::implies(x.arg(0) > 0, t == x.arg(0)));
        // exp of a sum, difference, negation or small multiple, in terms of exp of the parts.
        if (IsApp(x, Z3_OP_ADD) && x.num_args() == 2) axioms.push_back(t == E(x.arg(0)) * E(x.arg(1)));
        if (IsApp(x, Z3_OP_SUB) && x.num_args() == 2) axioms.push_back(t * E(x.arg(1)) == E(x.arg(0)));
        if (IsApp(x, Z3_OP_UMINUS)) axioms.push_back(t * E(x.arg(0)) == 1);
        int64_t k = 0;
        if (IsApp(x, Z3_OP_MUL) && x.num_args() == 2) {
          for (int side = 0; side < 2; ++side) {
            if (x.arg(side).is_numeral_i64(k) && k >= 2 && k <= 4) {
              z3::expr power = E(x.arg(1 - side));
              for (int64_t i = 1; i < k; ++i) power = power * E(x.arg(1 - side));
              axioms.push_back(t == power);
            }
          }
        }
      } else if (Named(t, "log")) {
        if (Named(x, "exp")) axioms.push_back(t == x.arg(0));
        bool mul = IsApp(x, Z3_OP_MUL), div = IsApp(x, Z3_OP_DIV);
        if ((mul || div) && x.num_args() == 2) {
          z3::expr a = x.arg(0), b = x.arg(1);
          z3::expr rhs = mul ? log(a) + log(b) : log(a) - log(b);
          axioms.push_back(z3::implies(a > 0 && b > 0, t == rhs));
          produced.push_back(rhs);
        }
      } else if (Named(t, "sqrt")) {
        axioms.push_back(t >= 0);
        axioms.push_back(z3::implies(x >= 0, t * t == x));
      }
    }
    for (unsigned i = 0; i < produced.size(); ++i) CollectApps(produced[i], &seen, &fresh);
    apps = fresh;
  }
  return axioms;
}

std::string ElementText(const z3::expr& v) {
  if (v.is_bool()) return v.is_true() ? "true" : "false";
  if (v.is_bv()) {
    uint64_t u = 0;
    if (!v.is_numeral_u64(u)) return v.to_string();
    unsigned bits = v.get_sort().bv_size();
    if (bits < 64 && (u >> (bits - 1)) != 0) u |= ~uint64_t{0} << bits;  // two's complement
    return std::to_string(static_cast<int64_t>(u));
  }
  if (v.is_arith()) {
    if (!v.is_numeral()) return v.to_string();
    std::string text = v.get_decimal_string(6);
    if (!text.empty() && text.back() == '?') text.back() = '~';  // rounded: "0.333333~"
    return text;
  }
  if (z3::expr(v.ctx(), Z3_mk_fpa_is_nan(v.ctx(), v)).simplify().is_true()) return "NaN";  // no unique bits
  z3::expr bits = z3::expr(v.ctx(), Z3_mk_fpa_to_ieee_bv(v.ctx(), v)).simplify();
  uint64_t raw = 0;
  if (!bits.is_numeral_u64(raw)) return v.to_string();
  double d = 0;
  if (v.get_sort().fpa_ebits() == 8) {
    uint32_t u = static_cast<uint32_t>(raw);
    float f;
    std::memcpy(&f, &u, sizeof f);
    d = f;
  } else {
    std::memcpy(&d, &raw, sizeof d);
  }
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Inf" : "+Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "+0";
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", d);
  return text;
}

}  // namespace rules_verify
}  // namespace ir
