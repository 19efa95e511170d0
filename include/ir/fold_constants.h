/*!
 * \file fold_constants.h
 * \brief The FoldConstants pass (run it by name through ApplyPasses) and the `constant` nodes it makes.
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
 *
 * The pass is in the passes layer; the `constant` node helpers it uses (MakeConstantNode,
 * ConstantNodeValue) are core's, declared in ir/constant.h, which this header includes.
 */
#ifndef IR_FOLD_CONSTANTS_H_
#define IR_FOLD_CONSTANTS_H_

#include "ir/constant.h"

#endif  // IR_FOLD_CONSTANTS_H_
