/*!
 * \file c_family_printer.cc
 * \brief Expression printing shared by the C-family dialects.
 */
#include "codegen/c_family_printer.h"

#include <cmath>
#include <cstdio>

namespace ir {
namespace codegen {

std::string CFamilyPrinter::SpecialFloat(double value, DType) const {
  if (std::isnan(value)) return "NAN";
  return value > 0 ? "INFINITY" : "(-INFINITY)";
}

std::string CFamilyPrinter::Literal(double value, DType dtype) const {
  char buf[40];
  switch (dtype) {
    case DType::kFloat32:
      if (!std::isfinite(value)) return SpecialFloat(value, dtype);
      std::snprintf(buf, sizeof(buf), "%.9gf", value);
      break;
    case DType::kFloat64:
      if (!std::isfinite(value)) return SpecialFloat(value, dtype);
      std::snprintf(buf, sizeof(buf), "%.17g", value);
      break;
    case DType::kInt32:
      std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(value));
      break;
    case DType::kInt64:
      std::snprintf(buf, sizeof(buf), "((%s)%lld)", TypeName(dtype).c_str(), static_cast<long long>(value));
      break;
    case DType::kBool:
      return value != 0 ? "1" : "0";
    default:
      throw Error(StrCat("codegen: literal of dtype ", DTypeName(dtype)));
  }
  std::string text = buf;
  // "1f" is not a float literal in C: make sure a float literal has a '.' or an exponent.
  if (dtype == DType::kFloat32 && text.find_first_of(".e") == std::string::npos) text.insert(text.size() - 1, ".0");
  if (dtype == DType::kFloat64 && text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string CFamilyPrinter::MathCall(const std::string& function, DType dtype,
                                     const std::vector<std::string>& args) const {
  std::string suffix = dtype == DType::kFloat32 ? "f" : "";
  if (function == "rsqrt") return StrCat("(", Literal(1, dtype), " / sqrt", suffix, "(", args[0], "))");
  std::string name = function == "rint" ? "nearbyint" : function;
  return StrCat(name, suffix, "(", Join(args, ", "), ")");
}

std::string CFamilyPrinter::PrintExpr(const ast::Expr& expr) const {
  switch (expr->kind) {
    case ast::ExprKind::kConst:
      return Literal(expr->value, expr->dtype);
    case ast::ExprKind::kVar:
      return expr->name;
    case ast::ExprKind::kLoad:
      return StrCat(expr->name, "[", PrintExpr(expr->args[0]), "]");
    case ast::ExprKind::kUnary:
      return StrCat("(", expr->name, PrintExpr(expr->args[0]), ")");
    case ast::ExprKind::kBinary:
      return StrCat("(", PrintExpr(expr->args[0]), " ", expr->name, " ", PrintExpr(expr->args[1]), ")");
    case ast::ExprKind::kCall: {
      std::vector<std::string> args;
      for (const ast::Expr& arg : expr->args) args.push_back(PrintExpr(arg));
      return MathCall(expr->name, expr->dtype, args);
    }
    case ast::ExprKind::kCast:
      if (expr->dtype == DType::kBool) return StrCat("(", PrintExpr(expr->args[0]), " != 0)");
      return StrCat("((", TypeName(expr->dtype), ")", PrintExpr(expr->args[0]), ")");
    case ast::ExprKind::kSelect:
      return StrCat("(", PrintExpr(expr->args[0]), " ? ", PrintExpr(expr->args[1]), " : ", PrintExpr(expr->args[2]),
                    ")");
  }
  throw Error("codegen: unknown expression kind");
}

void CFamilyPrinter::PrintElement(const Kernel& kernel, const std::string& position, const std::string& indent,
                                  std::ostringstream& os) const {
  for (const auto& let : kernel.lets) {
    os << indent << "const " << TypeName(let.second->dtype) << " " << let.first << " = " << PrintExpr(let.second)
       << ";\n";
  }
  for (const auto& store : kernel.stores) {
    os << indent << kernel.params.at(store.first).name << "[" << position << "] = " << PrintExpr(store.second) << ";\n";
  }
}

std::string CFamilyPrinter::Combine(const std::string& kind, const std::string& acc, const std::string& value,
                                    DType dtype) const {
  if (kind == "sum" || kind == "mean") return StrCat(acc, " = ", acc, " + ", value, ";");
  if (kind == "prod") return StrCat(acc, " = ", acc, " * ", value, ";");
  // Written as a comparison (not fmax) so NaN handling matches the reference kernels.
  std::string op = kind == "max" ? ">" : "<";
  (void)dtype;
  return StrCat(acc, " = (", value, " ", op, " ", acc, ") ? ", value, " : ", acc, ";");
}

std::string CFamilyPrinter::ReduceInit(const std::string& kind, DType dtype) const {
  if (kind == "sum" || kind == "mean") return Literal(0, dtype);
  if (kind == "prod") return Literal(1, dtype);
  if (DTypeIsFloat(dtype)) return SpecialFloat(kind == "max" ? -INFINITY : INFINITY, dtype);
  std::string type = TypeName(dtype);
  if (dtype == DType::kInt32) return kind == "max" ? "(-2147483647 - 1)" : "2147483647";
  return kind == "max" ? StrCat("((", type, ")(-9223372036854775807 - 1))")
                       : StrCat("((", type, ")9223372036854775807)");
}

std::string CFamilyPrinter::FlatIndex(const std::vector<int64_t>& extents) {
  if (extents.empty()) return "0";
  std::string index = "i0";
  for (size_t d = 1; d < extents.size(); ++d) index = StrCat("(", index, " * ", extents[d], " + i", d, ")");
  return index;
}

}  // namespace codegen
}  // namespace ir
