/*!
 * \file control_flow_graphs.h
 * \brief Control-flow graphs the backend tests share (OpenCL, CUDA): bodies built from lambdas,
 * a cond, a while_loop over an elementwise chain and an RNN-like loop over tensor arrays.
 */
#ifndef IR_TESTS_OPS_CONTROL_FLOW_GRAPHS_H_
#define IR_TESTS_OPS_CONTROL_FLOW_GRAPHS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ops/op_harness.h"

namespace ir {
namespace test {

/*! \brief Entry 0 of a new node of `op` named `name`. */
inline NodeEntry N(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
                   const std::map<std::string, std::string>& attrs = {}) {
  return MakeNode(op, name, std::move(in), attrs);
}

/*! \brief A body over fresh params named `prefix`/p<i>, returning fn(params). */
inline std::shared_ptr<const Subgraph> MakeBody(
    const std::string& prefix, size_t n, const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& fn) {
  auto body = std::make_shared<Subgraph>();
  std::vector<NodeEntry> params;
  for (size_t i = 0; i < n; ++i) {
    params.push_back(Var(prefix + "/p" + std::to_string(i)));
    body->params.push_back(params.back().node);
  }
  body->graph.outputs = fn(params);
  return body;
}

/*! \brief A node of control-flow op `op` over `inputs` with `bodies`. */
inline NodePtr ControlFlow(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
                           std::vector<std::shared_ptr<const Subgraph>> bodies,
                           const std::map<std::string, std::string>& attrs = {}) {
  return Node::Create(Op::Get(op), name, attrs, std::move(inputs), std::move(bodies));
}

/*! \brief cond(pred, a, b): tanh(a * b) if pred else exp(a) - b. */
inline NodePtr SquashOrSubtract() {
  auto then_branch = MakeBody("c/then", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("tanh", "c/t", {N("multiply", "c/m", {p[0], p[1]})})};
  });
  auto else_branch = MakeBody("c/else", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("subtract", "c/s", {N("exp", "c/e", {p[0]}), p[1]})};
  });
  return ControlFlow("cond", "c", {Var("pred"), Var("a"), Var("b")}, {then_branch, else_branch});
}

/*! \brief while (i < n) { i += 1; x = sigmoid(x * x * 0.5 + x) } over loop vars (i0, n, x). */
inline NodePtr ElementwiseLoop() {
  auto cond = MakeBody("w/cond", 3, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("less", "w/less", {p[0], p[1]})};
  });
  auto body = MakeBody("w/body", 3, [](std::vector<NodeEntry> p) {
    NodeEntry sq = N("multiply", "w/sq", {p[2], p[2]});
    NodeEntry next = N("add", "w/next", {N("multiply_scalar", "w/half", {sq}, {{"scalar", "0.5"}}), p[2]});
    return std::vector<NodeEntry>{N("add_scalar", "w/inc", {p[0]}, {{"scalar", "1"}}), p[1],
                                  N("sigmoid", "w/sig", {next})};
  });
  return ControlFlow("while_loop", "w", {Var("i0"), Var("n"), Var("x")}, {cond, body});
}

/*!
 * \brief for t in [t0, n): h = tanh(x[t] W + h U); out[t] = h. Loop vars (t, n, h, xs, outs, W, U):
 * xs [T, B, I] is read with tensor_array_read, outs [T, B, H] written with tensor_array_write.
 * Feeds: t0, n, h0, xs, outs0, W, U.
 */
inline NodePtr RnnLoop() {
  auto cond = MakeBody("rnn/cond", 7, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("less", "rnn/less", {p[0], p[1]})};
  });
  auto body = MakeBody("rnn/body", 7, [](std::vector<NodeEntry> p) {
    NodeEntry x_t = N("tensor_array_read", "rnn/x_t", {p[3], p[0]});
    NodeEntry pre = N("add", "rnn/pre", {N("matmul", "rnn/xw", {x_t, p[5]}), N("matmul", "rnn/hu", {p[2], p[6]})});
    NodeEntry h = N("tanh", "rnn/h", {pre});
    NodeEntry outs = N("tensor_array_write", "rnn/write", {p[4], p[0], h});
    return std::vector<NodeEntry>{
        N("add_scalar", "rnn/inc", {p[0]}, {{"scalar", "1"}}), p[1], h, p[3], outs, p[5], p[6]};
  });
  return ControlFlow("while_loop", "rnn", {Var("t0"), Var("n"), Var("h0"), Var("xs"), Var("outs0"), Var("W"), Var("U")},
                     {cond, body});
}

/*! \brief Feeds of RnnLoop: 7 rows of batch 4, input 5, hidden 6; the loop runs `steps` of them. */
inline std::unordered_map<std::string, NDArray> RnnFeeds(int steps) {
  const int64_t T = 7, B = 4, I = 5, H = 6;
  return {{"t0", NDArray::Scalar<int32_t>(0)},
          {"n", NDArray::Scalar<int32_t>(steps)},
          {"h0", RandomArray({B, H}, DType::kFloat32, 7)},
          {"xs", RandomArray({T, B, I}, DType::kFloat32, 8)},
          {"outs0", NDArray::FromVector<float>(Shape{T, B, H}, std::vector<float>(T * B * H))},
          {"W", RandomArray({I, H}, DType::kFloat32, 9)},
          {"U", RandomArray({H, H}, DType::kFloat32, 10, -0.5, 0.5)}};
}

/*! \brief The gradients of sum(h) + sum(outs^2) of an RnnLoop node with respect to h0, xs, W and U. */
inline std::vector<NodeEntry> RnnLossGradients(const NodePtr& loop) {
  NodeEntry loss =
      N("add", "loss", {N("sum", "sum_h", {{loop, 2}}), N("sum", "sum_outs", {N("square", "sq", {{loop, 4}})})});
  return Gradients({loss}, {loop->inputs[2], loop->inputs[3], loop->inputs[5], loop->inputs[6]});
}

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_OPS_CONTROL_FLOW_GRAPHS_H_
