/*!
 * \file ast.cc
 * \brief Expression constructors with dtype checks, canonical printing and an evaluator.
 */
#include "ir/ast.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ir {
namespace ast {

namespace {

Expr Make(ExprKind kind, DType dtype, std::string name, std::vector<Expr> args, double value = 0) {
  for (const Expr& arg : args) IR_CHECK(arg != nullptr) << "AST: null operand of '" << name << "'";
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->dtype = dtype;
  node->name = std::move(name);
  node->args = std::move(args);
  node->value = value;
  return node;
}

bool IsComparison(const std::string& op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
}

bool IsLogical(const std::string& op) { return op == "&&" || op == "||"; }

bool IsArithmetic(const std::string& op) {
  return op == "+" || op == "-" || op == "*" || op == "/" || op == "%";
}

// Rounds a double result to what a value of `dtype` can hold, as generated code would.
double RoundTo(double value, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return static_cast<double>(static_cast<float>(value));
    case DType::kInt32: return static_cast<double>(static_cast<int32_t>(value));
    case DType::kInt64: return static_cast<double>(static_cast<int64_t>(value));
    case DType::kBool: return value != 0 ? 1.0 : 0.0;
    default: return value;
  }
}

double CallMath(const std::string& fn, const std::vector<double>& a) {
  if (fn == "exp") return std::exp(a[0]);
  if (fn == "log") return std::log(a[0]);
  if (fn == "log1p") return std::log1p(a[0]);
  if (fn == "expm1") return std::expm1(a[0]);
  if (fn == "sqrt") return std::sqrt(a[0]);
  if (fn == "rsqrt") return 1.0 / std::sqrt(a[0]);
  if (fn == "sin") return std::sin(a[0]);
  if (fn == "cos") return std::cos(a[0]);
  if (fn == "tanh") return std::tanh(a[0]);
  if (fn == "floor") return std::floor(a[0]);
  if (fn == "ceil") return std::ceil(a[0]);
  if (fn == "rint") return std::nearbyint(a[0]);
  if (fn == "fabs") return std::fabs(a[0]);
  if (fn == "pow") return std::pow(a[0], a[1]);
  if (fn == "fmin") return std::fmin(a[0], a[1]);
  if (fn == "fmax") return std::fmax(a[0], a[1]);
  throw Error(StrCat("AST: unknown math function '", fn, "'"));
}

double EvalBinary(const std::string& op, double a, double b, DType operand) {
  bool integer = operand == DType::kInt32 || operand == DType::kInt64;
  if (op == "+") return a + b;
  if (op == "-") return a - b;
  if (op == "*") return a * b;
  if (op == "/") return integer ? std::trunc(a / b) : a / b;
  if (op == "%") return std::fmod(a, b);
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "&&") return a != 0 && b != 0;
  if (op == "||") return a != 0 || b != 0;
  throw Error(StrCat("AST: unknown binary operator '", op, "'"));
}

}  // namespace

const std::vector<std::string>& MathFunctions() {
  static const std::vector<std::string> functions = {"exp",   "log",  "log1p", "expm1", "sqrt", "rsqrt",
                                                     "sin",   "cos",  "tanh",  "floor", "ceil", "rint",
                                                     "fabs",  "pow",  "fmin",  "fmax"};
  return functions;
}

Expr Const(double value, DType dtype) { return Make(ExprKind::kConst, dtype, "", {}, RoundTo(value, dtype)); }

Expr Var(const std::string& name, DType dtype) { return Make(ExprKind::kVar, dtype, name, {}); }

Expr Load(const std::string& buffer, Expr index, DType dtype) {
  IR_CHECK(index && (index->dtype == DType::kInt64 || index->dtype == DType::kInt32))
      << "AST: load from '" << buffer << "' needs an integer index";
  return Make(ExprKind::kLoad, dtype, buffer, {std::move(index)});
}

Expr Unary(const std::string& op, Expr x) {
  IR_CHECK(op == "-" || op == "!") << "AST: unknown unary operator '" << op << "'";
  IR_CHECK(x != nullptr) << "AST: null operand of '" << op << "'";
  IR_CHECK(op == "!" || x->dtype != DType::kBool) << "AST: cannot negate a bool";
  DType dtype = op == "!" ? DType::kBool : x->dtype;
  return Make(ExprKind::kUnary, dtype, op, {std::move(x)});
}

Expr Binary(const std::string& op, Expr a, Expr b) {
  IR_CHECK(a != nullptr && b != nullptr) << "AST: null operand of '" << op << "'";
  IR_CHECK(IsComparison(op) || IsLogical(op) || IsArithmetic(op)) << "AST: unknown binary operator '" << op << "'";
  IR_CHECK(a->dtype == b->dtype) << "AST: operands of '" << op << "' have dtypes " << DTypeName(a->dtype)
                                 << " and " << DTypeName(b->dtype);
  IR_CHECK(op != "%" || !DTypeIsFloat(a->dtype)) << "AST: '%' needs integers (use floor for floats)";
  IR_CHECK(!IsLogical(op) || a->dtype == DType::kBool) << "AST: '" << op << "' needs bool operands";
  IR_CHECK(!IsArithmetic(op) || a->dtype != DType::kBool) << "AST: arithmetic '" << op << "' on bool";
  DType result = IsComparison(op) || IsLogical(op) ? DType::kBool : a->dtype;
  return Make(ExprKind::kBinary, result, op, {std::move(a), std::move(b)});
}

Expr Call(const std::string& function, std::vector<Expr> args) {
  const auto& known = MathFunctions();
  IR_CHECK(std::find(known.begin(), known.end(), function) != known.end())
      << "AST: unknown math function '" << function << "'";
  size_t arity = function == "pow" || function == "fmin" || function == "fmax" ? 2 : 1;
  IR_CHECK(args.size() == arity) << "AST: " << function << " takes " << arity << " argument(s), got "
                                 << args.size();
  DType dtype = args[0] ? args[0]->dtype : DType::kUnknown;
  IR_CHECK(DTypeIsFloat(dtype)) << "AST: " << function << " needs float arguments, got " << DTypeName(dtype);
  for (const Expr& arg : args) {
    IR_CHECK(arg && arg->dtype == dtype) << "AST: arguments of " << function << " must share one dtype";
  }
  return Make(ExprKind::kCall, dtype, function, std::move(args));
}

Expr Cast(Expr x, DType dtype) {
  IR_CHECK(dtype != DType::kUnknown) << "AST: cast to unknown dtype";
  return Make(ExprKind::kCast, dtype, "", {std::move(x)});
}

Expr Select(Expr condition, Expr if_true, Expr if_false) {
  IR_CHECK(condition && condition->dtype == DType::kBool) << "AST: select needs a bool condition";
  IR_CHECK(if_true && if_false && if_true->dtype == if_false->dtype)
      << "AST: select branches must share one dtype";
  DType dtype = if_true->dtype;
  return Make(ExprKind::kSelect, dtype, "", {std::move(condition), std::move(if_true), std::move(if_false)});
}

std::string ToString(const Expr& expr) {
  std::ostringstream os;
  switch (expr->kind) {
    case ExprKind::kConst: {
      os.precision(17);
      os << "(const " << DTypeName(expr->dtype) << " " << expr->value << ")";
      return os.str();
    }
    case ExprKind::kVar: return StrCat("(var ", DTypeName(expr->dtype), " ", expr->name, ")");
    case ExprKind::kLoad: return StrCat("(load ", DTypeName(expr->dtype), " ", expr->name, " ", ToString(expr->args[0]), ")");
    case ExprKind::kCast: return StrCat("(cast ", DTypeName(expr->dtype), " ", ToString(expr->args[0]), ")");
    case ExprKind::kSelect: os << "(select"; break;
    case ExprKind::kUnary:
    case ExprKind::kBinary:
    case ExprKind::kCall: os << "(" << expr->name; break;
  }
  for (const Expr& arg : expr->args) os << " " << ToString(arg);
  os << ")";
  return os.str();
}

double Evaluate(const Expr& expr, const std::function<double(const std::string& name, int64_t index)>& lookup) {
  auto eval = [&](size_t i) { return Evaluate(expr->args[i], lookup); };
  double result = 0;
  switch (expr->kind) {
    case ExprKind::kConst: return expr->value;
    case ExprKind::kVar: result = lookup(expr->name, -1); break;
    case ExprKind::kLoad: result = lookup(expr->name, static_cast<int64_t>(eval(0))); break;
    case ExprKind::kUnary: result = expr->name == "-" ? -eval(0) : (eval(0) == 0 ? 1.0 : 0.0); break;
    case ExprKind::kBinary: result = EvalBinary(expr->name, eval(0), eval(1), expr->args[0]->dtype); break;
    case ExprKind::kCall: {
      std::vector<double> args;
      for (size_t i = 0; i < expr->args.size(); ++i) args.push_back(eval(i));
      result = CallMath(expr->name, args);
      break;
    }
    case ExprKind::kCast: result = eval(0); break;
    case ExprKind::kSelect: result = eval(0) != 0 ? eval(1) : eval(2); break;
  }
  return RoundTo(result, expr->dtype);
}

}  // namespace ast
}  // namespace ir
