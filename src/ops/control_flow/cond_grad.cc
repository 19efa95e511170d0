/*!
 * \file cond_grad.cc
 * \brief The gradient of cond: a cond on the same predicate over the branches' gradients, or,
 * when a branch's gradient reads values of nodes with effects, _cond_grad, which takes them from
 * what the cond saved when its branch ran (so they never run twice).
 */
#include <memory>
#include <string>
#include <vector>

#include "ops/control_flow/control_flow_gradient.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

/*! \brief How many values the forward cond takes besides the predicate (the params of body 2). */
size_t NumArgs(const NodeAttrs& attrs) { return attrs.subgraphs.size() == 4 ? attrs.subgraphs[2]->params.size() : 0; }

std::vector<NodeEntry> CondGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  const NodeAttrs& attrs = node->attrs;
  std::vector<NodeEntry> inputs = node->inputs;
  inputs.insert(inputs.end(), ograds.begin(), ograds.end());
  BodyGradient then_grad = GradientBody(*attrs.subgraphs.at(0), attrs.name + "_grad/then");
  BodyGradient else_grad = GradientBody(*attrs.subgraphs.at(1), attrs.name + "_grad/else");
  NodePtr grad;
  if (then_grad.forward == nullptr && else_grad.forward == nullptr) {
    grad = Node::Create(Op::Get("cond"), attrs.name + "_grad", {}, std::move(inputs),
                        {then_grad.gradient, else_grad.gradient});
  } else {
    inputs.push_back(Out(node, 0));  // what the cond saves for this node
    grad = Node::Create(
        Op::Get("_cond_grad"), attrs.name + "_grad", {}, std::move(inputs),
        {then_grad.gradient, else_grad.gradient, then_grad.forward ? then_grad.forward : attrs.subgraphs[0],
         else_grad.forward ? else_grad.forward : attrs.subgraphs[1]});
  }
  std::vector<NodeEntry> result{NodeEntry()};  // the predicate gets none
  for (uint32_t i = 0; i + 1 < node->inputs.size(); ++i) result.push_back(Out(grad, i));
  return result;
}

void ParseCondGrad(NodeAttrs* attrs) {
  IR_CHECK(attrs->subgraphs.size() == 4)
      << NodeDesc(*attrs) << " needs 4 bodies (then and else gradients, then and else saving branches), got "
      << attrs->subgraphs.size();
  size_t m = NumArgs(*attrs);
  for (size_t k = 0; k < 4; ++k) {
    const Subgraph& body = *attrs->subgraphs[k];
    IR_CHECK(k < 2 ? body.graph.outputs.size() == m : body.params.size() == m)
        << NodeDesc(*attrs) << ": body " << k << (k < 2 ? " returns " : " takes ")
        << (k < 2 ? body.graph.outputs.size() : body.params.size()) << " values, expected " << m;
  }
}

/*! \brief Output j is the gradient of argument j: input 1 + j's shape (or dtype). */
template <typename T>
bool LikeArgs(const NodeAttrs& attrs, std::vector<T>* in, std::vector<T>* out) {
  IR_CHECK(in->size() >= out->size() + 2)
      << NodeDesc(attrs) << " takes the predicate, " << out->size() << " arguments, the output gradients and the "
      << "cond's output 0; got " << in->size() << " inputs";
  for (size_t j = 0; j < out->size(); ++j) (*out)[j] = (*in)[1 + j];
  return AllKnown(*in, *out);
}

/*! \brief The gradient of the branch the cond took, on the values it saved. */
std::vector<NDArray> CondGradCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                     const BodyRunner& run_body) {
  SavedRuns* runs = ForwardRuns(ctx, attrs);
  IR_CHECK(runs != nullptr && runs->bodies.size() == 1)
      << NodeDesc(attrs) << ": what its cond saved did not reach it (is the cond's output fed?), and the "
      << "branch's nodes with effects (assign, host callback, collective) must not run again";
  BodyCall call;
  call.index = runs->bodies[0];
  call.args.assign(in.begin() + 1, in.end() - 1);
  call.records.assign(call.args.size(), nullptr);
  const BodyResult& saved = runs->saved[0];
  call.args.insert(call.args.end(), saved.outputs.begin(), saved.outputs.end());
  call.records.insert(call.records.end(), saved.records.begin(), saved.records.end());
  return run_body.Run(call).outputs;
}

}  // namespace

IR_REGISTER_OP(cond).set_attr<FGradient>("FGradient", CondGradient);

IR_REGISTER_OP(_cond_grad)
    .describe(
        "Gradient of a cond whose branches hold nodes with effects: inputs (pred, args, output gradients, the "
        "cond's output 0); runs the taken branch's gradient (bodies 0 and 1) on the values the cond saved when "
        "it ran that branch's saving body (bodies 2 and 3); returns the args' gradients.")
    .set_num_inputs(kVariadic)
    .set_num_outputs([](const NodeAttrs& attrs) { return static_cast<uint32_t>(NumArgs(attrs)); })
    .set_attr_parser(ParseCondGrad)
    .set_attr<FInferShape>("FInferShape", LikeArgs<Shape>)
    .set_attr<FInferType>("FInferType", LikeArgs<DType>)
    .set_attr<FControlFlow>("FControlFlow", CondGradCompute)
    .set_attr<FForwardInput>("FForwardInput",
                             [](const NodeAttrs&, uint32_t num_inputs) { return static_cast<int>(num_inputs) - 1; })
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
