/*!
 * \file ast.h
 * \brief The expression AST that ops use to describe their elementwise math (FCodeGen).
 *
 * An op's FCodeGen maps the element expressions of its inputs to the element expressions
 * of its outputs. Code generators wrap those expressions in loops with indexing and print
 * them as C, OpenCL C or CUDA C. Expressions are immutable and shared.
 */
#ifndef IR_AST_H_
#define IR_AST_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/node.h"

namespace ir {
namespace ast {

enum class ExprKind {
  /*! \brief A literal; `value` holds it (integers up to 2^53 are exact). */
  kConst,
  /*! \brief A named scalar (a kernel argument or a let-bound value). */
  kVar,
  /*! \brief `name` is the operator: "-" (negate) or "!" (logical not). */
  kUnary,
  /*!
   * \brief `name` is the operator: "+", "-", "*", "/" (integer division truncates), "%"
   * (integers only), "<", "<=", ">", ">=", "==", "!=", "&&", "||".
   */
  kBinary,
  /*! \brief `name` is a math function from MathFunctions(). */
  kCall,
  /*! \brief Conversion of args[0] to `dtype`. */
  kCast,
  /*! \brief args[0] ? args[1] : args[2]. */
  kSelect,
  /*! \brief Element args[0] (a flat index of type int64) of buffer `name`. */
  kLoad,
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  DType dtype;
  double value = 0;
  std::string name;
  std::vector<Expr> args;
  /*! \brief Frees a deep tree without recursing to its depth. */
  ~ExprNode();
};

/*!
 * \brief The math functions a Call may name, each available in every dialect:
 * exp log log1p expm1 sqrt rsqrt sin cos tanh floor ceil rint fabs pow fmin fmax.
 */
const std::vector<std::string>& MathFunctions();

Expr Const(double value, DType dtype);
Expr Var(const std::string& name, DType dtype);
Expr Load(const std::string& buffer, Expr index, DType dtype);
/*! \brief A unary operator ("-" or "!"); "!" yields bool. */
Expr Unary(const std::string& op, Expr x);
/*!
 * \brief A binary operator. Arithmetic needs operands of one dtype and keeps it;
 * comparisons and logical operators yield bool. Throws on a dtype mismatch.
 */
Expr Binary(const std::string& op, Expr a, Expr b);
/*! \brief A math function call; all arguments must share a float dtype, which it returns. */
Expr Call(const std::string& function, std::vector<Expr> args);
Expr Cast(Expr x, DType dtype);
Expr Select(Expr condition, Expr if_true, Expr if_false);

inline Expr operator+(Expr a, Expr b) { return Binary("+", std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return Binary("-", std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return Binary("*", std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return Binary("/", std::move(a), std::move(b)); }
inline Expr operator-(Expr a) { return Unary("-", std::move(a)); }
/*! \brief A literal of the same dtype as `like`. */
inline Expr ConstLike(double value, const Expr& like) { return Const(value, like->dtype); }

/*!
 * \brief `expr` rebuilt so that no subexpression is deeper than `max_depth` (a leaf has depth
 * 1): each subexpression that would be is replaced by `bind(subexpression)`, typically a
 * variable the caller defines first. Iterative, and shared subexpressions are rebuilt once.
 * ToString, Evaluate and the kernel printers recurse to an expression's depth; codegen
 * bounds it with this, so no input (add_n of 10,000 terms, say) controls their recursion.
 */
Expr BoundDepth(const Expr& expr, int max_depth, const std::function<Expr(const Expr&)>& bind);

/*! \brief Canonical text of an expression (an s-expression), equal for equal trees. */
std::string ToString(const Expr& expr);

/*!
 * \brief Evaluates an expression in double precision, rounding to each node's dtype the way
 * generated code does (float32 results are rounded to float, integers truncate).
 * `lookup` returns the value of variables and loads (given the name and flat index).
 */
double Evaluate(const Expr& expr, const std::function<double(const std::string& name, int64_t index)>& lookup);

}  // namespace ast

/*!
 * \brief "FCodeGen": the element expressions of a node's outputs given those of its inputs.
 * Returns an empty vector when the op cannot be generated for these input dtypes; fusion
 * then leaves the node to its kernel.
 */
using FCodeGen = std::function<std::vector<ast::Expr>(const NodeAttrs& attrs, const std::vector<ast::Expr>& inputs)>;

}  // namespace ir

#endif  // IR_AST_H_
