/*!
 * \file merge_subsumed.h
 * \brief Simplify's last step: nodes whose op declares FSubsumedBy (ir/subsume.h) become an
 * output of the sibling node that computes them too (merge_subsumed.cc).
 */
#ifndef IR_PASSES_MERGE_SUBSUMED_H_
#define IR_PASSES_MERGE_SUBSUMED_H_

#include <string>
#include <vector>

#include "ir/node.h"

namespace ir {
namespace rewrite {

/*!
 * \brief Whether `n`'s op does more than compute its outputs: stateful, mutating an input, or raising
 * for some values (a check, TF's Assert). Simplify neither merges nor rewrites such nodes, nor
 * MergeSubsumed (simplify.cc).
 */
bool OpActs(const Node& n);

/*!
 * \brief The graph of `outputs` with every subsumed node replaced (ir/subsume.h): its op nodes
 * copied (variables kept), `outputs` unchanged when nothing merges. Each merge is recorded in
 * `merged` as "<node> into <sibling>".
 */
std::vector<NodeEntry> MergeSubsumed(const std::vector<NodeEntry>& outputs, std::vector<std::string>* merged);

}  // namespace rewrite
}  // namespace ir

#endif  // IR_PASSES_MERGE_SUBSUMED_H_
