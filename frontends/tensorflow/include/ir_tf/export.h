/*!
 * \file export.h
 * \brief A Graph of our ops written as a TensorFlow GraphDef (tinyflow's tf.train.write_graph).
 *
 * The inverse of the importer for the ops a TF1 model is built from: placeholders, variables and
 * their assignments, constants and fills, elementwise and scalar arithmetic, comparisons, matmul,
 * reductions, shape ops, softmax and its cross entropies, conv2d and pooling, the random
 * initializers. Attribute values TensorFlow takes as inputs (axes, shapes, scalars) become Const
 * nodes named after the node ("<node>/axis"). A node keeps its name; its outputs are "name" and
 * "name:i" as TensorFlow's. Control flow and gradient-only ops are not exported.
 */
#ifndef IR_TF_EXPORT_H_
#define IR_TF_EXPORT_H_

#include <string>

#include "ir/graph.h"

namespace ir {
namespace tf {

/*!
 * \brief The binary (or, with `as_text`, text-format) GraphDef of every node of `graph`.
 * \throws ir::Error naming the node whose op (or attribute) has no TensorFlow form here.
 */
std::string ExportGraphDef(const Graph& graph, bool as_text);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_EXPORT_H_
