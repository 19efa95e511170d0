/*!
 * \file c_family_printer.h
 * \brief What the C, OpenCL C and CUDA C printers share: expressions, literals, lets, stores.
 *
 * A dialect overrides the spelling of types, literals and math functions and prints the
 * kernel frame (signature, loops or thread indexing); the body of an element is common.
 */
#ifndef IR_CODEGEN_C_FAMILY_PRINTER_H_
#define IR_CODEGEN_C_FAMILY_PRINTER_H_

#include <sstream>
#include <string>

#include "ir/codegen.h"

namespace ir {
namespace codegen {

class CFamilyPrinter : public KernelPrinter {
 public:
  /*! \brief The element type of a buffer or value (bool is a byte in buffers). */
  virtual std::string TypeName(DType dtype) const = 0;
  /*! \brief A literal at full precision ("0.100000001f", "1e-30", "5LL"). */
  virtual std::string Literal(double value, DType dtype) const;
  /*! \brief A call of an AST math function on printed arguments. */
  virtual std::string MathCall(const std::string& function, DType dtype, const std::vector<std::string>& args) const;
  /*! \brief Infinity / NaN of a float dtype. */
  virtual std::string SpecialFloat(double value, DType dtype) const;

  std::string PrintExpr(const ast::Expr& expr) const;
  /*!
   * \brief The statements computing one element: lets as consts, then the stores.
   * `position` is the element's flat index in the domain the stores write to.
   */
  void PrintElement(const Kernel& kernel, const std::string& position, const std::string& indent,
                    std::ostringstream& os) const;
  /*! \brief The combine step of a reduction: "acc = acc + v" (or max/min/prod). */
  std::string Combine(const std::string& kind, const std::string& acc, const std::string& value, DType dtype) const;
  /*! \brief The initial accumulator of a reduction (0, 1, -inf, +inf). */
  std::string ReduceInit(const std::string& kind, DType dtype) const;
  /*! \brief Row-major flat index of the domain position (i0, i1, ...) over `extents`. */
  static std::string FlatIndex(const std::vector<int64_t>& extents);
};

}  // namespace codegen
}  // namespace ir

#endif  // IR_CODEGEN_C_FAMILY_PRINTER_H_
