/*!
 * \file function_inline.h
 * \brief Flattening TF2 function calls: every call of a library function is replaced by the
 * function's body, so the importer sees one graph.
 */
#ifndef IR_TF_FUNCTION_INLINE_H_
#define IR_TF_FUNCTION_INLINE_H_

#include <vector>

#include "ir_tf_graph.pb.h"

namespace ir {
namespace tf {

/*!
 * \brief The graph's nodes with every call of a library function (PartitionedCall,
 * StatefulPartitionedCall, or an op named after a function) inlined, recursively:
 *  - body node `n` becomes `<call>/n`; argument `a` becomes an Identity `<call>/a` of the call's
 *    input; body nodes without inputs take the call's control inputs;
 *  - the call becomes an IdentityN named `<call>` whose outputs are the function's results and
 *    whose control inputs are its control results;
 *  - body references `node:out_arg:i` become `node:k` (k counts the outputs of earlier output
 *    arguments), and attribute placeholders take the values bound in the call's `f`.
 * \throws ir::Error for unknown functions, argument count mismatches, bad references or
 *         recursion deeper than 32 calls, naming the call and the function.
 */
std::vector<tfproto::NodeDef> InlineFunctions(const tfproto::GraphDef& graph);
/*! \brief The same for `nodes` calling functions of `library` (a function body being imported). */
std::vector<tfproto::NodeDef> InlineFunctions(const std::vector<tfproto::NodeDef>& nodes,
                                              const tfproto::FunctionDefLibrary& library);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUNCTION_INLINE_H_
