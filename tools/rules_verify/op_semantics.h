/*!
 * \file op_semantics.h
 * \brief What ops compute, over symbolic tensors. Elementwise and broadcasting ops are read
 * from their FCodeGen expressions (so the verifier checks the math the kernels run); the
 * others (shape ops, reductions, matmul, softmax, cross entropy, one_hot) are modeled here
 * over element arrays. Over IEEE, an op whose rounding the kernels do not pin down (a sum's
 * order, libm's exp) is opaque: an uninterpreted function of its operands.
 */
#ifndef IR_TOOLS_RULES_VERIFY_OP_SEMANTICS_H_
#define IR_TOOLS_RULES_VERIFY_OP_SEMANTICS_H_

#include <vector>

#include "ir/node.h"
#include "smt_model.h"

namespace ir {
namespace rules_verify {

/*!
 * \brief The outputs of a node of `attrs.op` (attributes parsed) on `inputs`.
 * \throws ir::Error "cannot model op X" when the verifier does not know the op's math.
 */
std::vector<SymTensor> ApplyOp(SmtModel* model, const NodeAttrs& attrs, const std::vector<SymTensor>& inputs);

/*! \brief `t` broadcast to `shape` (NumPy rules; the caller checked that it broadcasts). */
SymTensor BroadcastTo(const SymTensor& t, const Shape& shape);

/*! \brief Parses an integer list attribute: "(1,0)", "[1, 0]", "1,0", "()" or "-1". */
std::vector<int64_t> ParseIntList(const std::string& text);

}  // namespace rules_verify
}  // namespace ir

#endif  // IR_TOOLS_RULES_VERIFY_OP_SEMANTICS_H_
