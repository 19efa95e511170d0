/*!
 * \file subsume.h
 * \brief "FSubsumedBy", the contract by which an op tells Simplify that its node is one output of
 * another node it sits beside, so the two run as one kernel.
 *
 * A node N of an op with FSubsumedBy, and a sibling S: a node of another op reading the same first
 * input. FSubsumedBy(N, S) returns false if S cannot compute N's value; else true, with S's
 * attributes as they must become (`widened`: S's own when S already computes that value) and the
 * index of S's output that then equals N's output 0. Simplify (src/passes/merge_subsumed.cc)
 * replaces N's output 0 by that output of S widened, when S does not depend on N, N has no
 * control dependencies and S's other outputs keep their values when widened (the op promises it).
 * For pure ops with one output. The attention rules' case: `_fused_attention_dv(do, q, k)` is
 * `fused_attention_grad{with_dv=true}(do, q, k, v, o, lse).2`, computed in the same pass over the
 * key tiles as dq and dk instead of recomputing the probabilities once more.
 */
#ifndef IR_SUBSUME_H_
#define IR_SUBSUME_H_

#include <cstdint>
#include <functional>

#include "ir/node.h"

namespace ir {

/*! \brief "FSubsumedBy" (see the file comment). */
using FSubsumedBy = std::function<bool(const Node& self, const Node& sibling, NodeAttrs* widened, uint32_t* output)>;

}  // namespace ir

#endif  // IR_SUBSUME_H_
