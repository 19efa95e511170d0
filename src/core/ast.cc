/*!
 * \file ast.cc
 * \brief Expression constructors with dtype checks, canonical printing and an evaluator.
 */
#include "ir/ast.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

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

bool IsArithmetic(const std::string& op) { return op == "+" || op == "-" || op == "*" || op == "/" || op == "%"; }

// Rounds a double result to what a value of `dtype` can hold, as generated code would.
double RoundTo(double value, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<double>(static_cast<float>(value));
    case DType::kInt32:
      return static_cast<double>(static_cast<int32_t>(value));
    case DType::kInt64:
      return static_cast<double>(static_cast<int64_t>(value));
    case DType::kBool:
      return value != 0 ? 1.0 : 0.0;
    default:
      return value;
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
  if (fn == "erf") return std::erf(a[0]);
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
  static const std::vector<std::string> functions = {"exp",  "log",  "log1p", "expm1", "sqrt",  "rsqrt",
                                                     "sin",  "cos",  "tanh",  "erf",   "floor", "ceil",
                                                     "rint", "fabs", "pow",   "fmin",  "fmax"};
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
  IR_CHECK(a->dtype == b->dtype) << "AST: operands of '" << op << "' have dtypes " << DTypeName(a->dtype) << " and "
                                 << DTypeName(b->dtype);
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
  IR_CHECK(args.size() == arity) << "AST: " << function << " takes " << arity << " argument(s), got " << args.size();
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
  IR_CHECK(if_true && if_false && if_true->dtype == if_false->dtype) << "AST: select branches must share one dtype";
  DType dtype = if_true->dtype;
  return Make(ExprKind::kSelect, dtype, "", {std::move(condition), std::move(if_true), std::move(if_false)});
}

ExprNode::~ExprNode() {
  // Unlink subtrees this node alone holds, so a long chain is freed in a loop.
  std::vector<Expr> orphans;
  auto unlink = [&orphans](std::vector<Expr>* args) {
    for (Expr& arg : *args) {
      if (arg && arg.use_count() == 1) orphans.push_back(std::move(arg));
    }
    args->clear();
  };
  unlink(&args);
  while (!orphans.empty()) {
    Expr node = std::move(orphans.back());
    orphans.pop_back();
    // The last owner is this loop, so the node may give up its arguments before it dies.
    unlink(&const_cast<ExprNode*>(node.get())->args);
  }
}

Expr BoundDepth(const Expr& expr, int max_depth, const std::function<Expr(const Expr&)>& bind) {
  IR_CHECK(max_depth >= 2) << "AST: depth bound " << max_depth << " leaves no room for an operator";
  struct Rebuilt {
    Expr expr;
    int depth;
  };
  std::unordered_map<const ExprNode*, Rebuilt> done;
  std::unordered_map<const ExprNode*, Expr> bound;  // rebuilt subexpression -> what stands for it
  std::vector<std::pair<Expr, size_t>> stack = {{expr, 0}};
  while (!stack.empty()) {
    Expr node = stack.back().first;
    size_t next = stack.back().second;
    if (next < node->args.size()) {
      ++stack.back().second;
      const Expr& arg = node->args[next];
      if (!done.count(arg.get())) stack.emplace_back(arg, 0);
      continue;
    }
    stack.pop_back();
    if (done.count(node.get())) continue;
    int depth = 1;
    bool changed = false;
    std::vector<Expr> args;
    for (const Expr& arg : node->args) {
      const Rebuilt& r = done.at(arg.get());
      depth = std::max(depth, r.depth + 1);
      changed = changed || r.expr != arg;
      args.push_back(r.expr);
    }
    Expr result = node;
    if (changed) {
      auto copy = std::make_shared<ExprNode>();
      copy->kind = node->kind;
      copy->dtype = node->dtype;
      copy->value = node->value;
      copy->name = node->name;
      copy->args = std::move(args);
      result = copy;
    }
    // Bind the arguments, not the node: the node stays at depth 2 and the root keeps its form.
    if (depth > max_depth) {
      auto copy = std::make_shared<ExprNode>(*result);
      for (Expr& arg : copy->args) {
        if (arg->kind == ExprKind::kConst || arg->kind == ExprKind::kVar) continue;
        auto it = bound.find(arg.get());
        if (it == bound.end()) it = bound.emplace(arg.get(), bind(arg)).first;
        arg = it->second;
      }
      result = copy;
      depth = 2;
    }
    done[node.get()] = Rebuilt{result, depth};
  }
  return done.at(expr.get()).expr;
}

std::string ToString(const Expr& expr) {
  std::ostringstream os;
  switch (expr->kind) {
    case ExprKind::kConst: {
      os.precision(17);
      os << "(const " << DTypeName(expr->dtype) << " " << expr->value << ")";
      return os.str();
    }
    case ExprKind::kVar:
      return StrCat("(var ", DTypeName(expr->dtype), " ", expr->name, ")");
    case ExprKind::kLoad:
      return StrCat("(load ", DTypeName(expr->dtype), " ", expr->name, " ", ToString(expr->args[0]), ")");
    case ExprKind::kCast:
      return StrCat("(cast ", DTypeName(expr->dtype), " ", ToString(expr->args[0]), ")");
    case ExprKind::kSelect:
      os << "(select";
      break;
    case ExprKind::kUnary:
    case ExprKind::kBinary:
    case ExprKind::kCall:
      os << "(" << expr->name;
      break;
  }
  for (const Expr& arg : expr->args) os << " " << ToString(arg);
  os << ")";
  return os.str();
}

double Evaluate(const Expr& expr, const std::function<double(const std::string& name, int64_t index)>& lookup) {
  auto eval = [&](size_t i) { return Evaluate(expr->args[i], lookup); };
  double result = 0;
  switch (expr->kind) {
    case ExprKind::kConst:
      return expr->value;
    case ExprKind::kVar:
      result = lookup(expr->name, -1);
      break;
    case ExprKind::kLoad:
      result = lookup(expr->name, static_cast<int64_t>(eval(0)));
      break;
    case ExprKind::kUnary:
      result = expr->name == "-" ? -eval(0) : (eval(0) == 0 ? 1.0 : 0.0);
      break;
    case ExprKind::kBinary:
      result = EvalBinary(expr->name, eval(0), eval(1), expr->args[0]->dtype);
      break;
    case ExprKind::kCall: {
      std::vector<double> args;
      for (size_t i = 0; i < expr->args.size(); ++i) args.push_back(eval(i));
      result = CallMath(expr->name, args);
      break;
    }
    case ExprKind::kCast:
      result = eval(0);
      break;
    case ExprKind::kSelect:
      result = eval(0) != 0 ? eval(1) : eval(2);
      break;
  }
  return RoundTo(result, expr->dtype);
}

}  // namespace ast
}  // namespace ir
