/*!
 * \file fold_constants.h
 * \brief The FoldConstants pass and the `constant` nodes it makes.
 *
 * FoldConstants (src/passes/fold_constants.cc) needs "shape" and "dtype". It evaluates, with
 * each op's own CPU kernel (FCompute), every node whose inputs are constants or whose op reads
 * only its inputs' shapes (TShapeOnly: shape, size, rank...) when those shapes are known, and
 * replaces what it evaluated by `constant` nodes (a node without inputs, such as `range`, only
 * when it is a graph output: otherwise it is as cheap as a constant). It skips variables, stateful ops
 * (TIsStateful), ops that mutate inputs, nodes with a control dependency on anything that has
 * effects (a stateful or mutating op among it, its inputs or its own dependencies; dependencies
 * on effect-free nodes, such as TensorFlow's no-op shape asserts, do not stop folding), and
 * outputs larger than the option "fold_constants.max_bytes" (int, default 1 MiB). It provides "shape" and
 * "dtype" for the new graph, keeps "shape_inputs"/"dtype_inputs" aligned with its inputs, and
 * sets "fold_constants.num_folded" (int): how many nodes it evaluated.
 */
#ifndef IR_FOLD_CONSTANTS_H_
#define IR_FOLD_CONSTANTS_H_

#include <map>
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

#endif  // IR_FOLD_CONSTANTS_H_
