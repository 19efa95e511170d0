/*!
 * \file constant.h
 * \brief `constant` nodes: making one from an array and reading the array one holds.
 *
 * Implemented in core (src/core/constant.cc), so every layer may use them: the FoldConstants pass
 * (ir/fold_constants.h) binds what it evaluates as such nodes, frontends import constants as
 * them, and ops that evaluate part of a graph (a while_loop's known condition) read them back.
 */
#ifndef IR_CONSTANT_H_
#define IR_CONSTANT_H_

#include <string>

#include "ir/ndarray.h"
#include "ir/node.h"

namespace ir {

/*!
 * \brief A new `constant` node named `name` holding `value`. One element (or none) is held as
 * the text attribute `value` (a literal for fused kernels); more are held as an array in the
 * node's parsed attrs, sharing `value`'s buffer when it is on the CPU (so the caller must not
 * write to it afterwards), and written as `data_base64` only when the graph is saved.
 */
NodeEntry MakeConstantNode(const std::string& name, const NDArray& value);

/*!
 * \brief The value a node of op `constant` holds (computed by the op's kernel), or an undefined
 * array when `node` is anything else.
 */
NDArray ConstantNodeValue(const Node& node);

}  // namespace ir

#endif  // IR_CONSTANT_H_
