/*!
 * \file cond_while_infer.h
 * \brief What the cond and while_loop ops (cond_while.cc) share with their parsing and inference
 * through bodies (cond_while_infer.cc): the loop's parameters, the body accessors, the parsers and
 * the FInferShape / FInferType functions of cond, while_loop and _while_loop_grad.
 */
#ifndef IR_OPS_CONTROL_FLOW_COND_WHILE_INFER_H_
#define IR_OPS_CONTROL_FLOW_COND_WHILE_INFER_H_

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_common.h"

namespace ir {
namespace op {

struct WhileParam : public dmlc::Parameter<WhileParam> {
  int maximum_iterations;
  std::string shape_invariants;
  bool back_prop;
  int parallel_iterations;
  DMLC_DECLARE_PARAMETER(WhileParam) {
    DMLC_DECLARE_FIELD(maximum_iterations).set_default(-1).describe("Most iterations to run; -1 for no bound.");
    DMLC_DECLARE_FIELD(shape_invariants)
        .set_default("")
        .describe(
            "Per loop variable, the shape it keeps across iterations (-1 or ? for a dimension that may "
            "change), as [[-1,2],[]]; empty: inferred.");
    DMLC_DECLARE_FIELD(back_prop).set_default(true).describe("Whether gradients may flow through the loop.");
    DMLC_DECLARE_FIELD(parallel_iterations)
        .set_default(10)
        .describe("Accepted for TensorFlow; iterations run in order.");
  }
};

/*! \brief Body `k` of a control-flow node. */
const Subgraph& Body(const NodeAttrs& attrs, size_t k);
/*! \brief The number of params / outputs of body `body` (0 when the node has no such body). */
uint32_t NumParams(const NodeAttrs& attrs, size_t body);
uint32_t NumResults(const NodeAttrs& attrs, size_t body);

/*! \brief Parses a cond (bodies then_branch, else_branch). */
void ParseCond(NodeAttrs* attrs);
/*!
 * \brief Parses a while_loop (bodies cond, body) or _while_loop_grad (bodies cond, body, gradient
 * and, when the gradient reads values the loop saves, the body returning them after its own).
 */
void ParseWhile(NodeAttrs* attrs);

/*! \brief cond's inference: the branches' outputs (a branch whose inference fails is left out). */
bool CondShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);
bool CondType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);
/*! \brief while_loop's and _while_loop_grad's inference: the loop variables across iterations. */
bool WhileShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);
bool WhileType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_CONTROL_FLOW_COND_WHILE_INFER_H_
