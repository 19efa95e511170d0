/*!
 * \file row_graphs.h
 * \brief Row computations written op by op (softmax, log-softmax, layer norm forward and
 * backward, softmax cross-entropy with its p - y gradient): each fuses into one "row" kernel.
 * Shared by the planner, CPU, OpenCL, CUDA and golden tests.
 */
#ifndef IR_TESTS_OPS_ROW_GRAPHS_H_
#define IR_TESTS_OPS_ROW_GRAPHS_H_

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/node.h"
#include "ops/op_harness.h"

namespace ir {
namespace row_graphs {

/*! \brief A graph to run: its fetches and feeds. */
struct RowGraph {
  std::string name;
  std::vector<NodeEntry> fetches;
  std::unordered_map<std::string, NDArray> feeds;
};

inline NodeEntry In(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

inline NodeEntry Op(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
                    const std::map<std::string, std::string>& attrs = {}) {
  return MakeNode(op, name, std::move(in), attrs);
}

/*! \brief A reduction over the last axis that keeps it (one value per row, [rows, 1]). */
inline NodeEntry RowReduce(const std::string& op, const std::string& name, NodeEntry x) {
  return Op(op, name, {std::move(x)}, {{"axis", "-1"}, {"keepdims", "true"}});
}

inline NodeEntry Softmax(NodeEntry x, const std::string& p = "sm") {
  NodeEntry e = Op("exp", p + "_e", {Op("subtract", p + "_shift", {x, RowReduce("max", p + "_max", x)})});
  return Op("divide", p + "_out", {e, RowReduce("sum", p + "_sum", e)});
}

inline NodeEntry LogSoftmax(NodeEntry x, const std::string& p = "lsm") {
  NodeEntry shifted = Op("subtract", p + "_shift", {x, RowReduce("max", p + "_max", x)});
  NodeEntry lse = Op("log", p + "_lse", {RowReduce("sum", p + "_sum", Op("exp", p + "_e", {shifted}))});
  return Op("subtract", p + "_out", {shifted, lse});
}

/*! \brief (x - mean) * rsqrt(var + eps): the normalized rows and the per-row rsqrt. */
inline std::pair<NodeEntry, NodeEntry> Normalize(NodeEntry x, const std::string& p) {
  NodeEntry centered = Op("subtract", p + "_centered", {x, RowReduce("mean", p + "_mean", x)});
  NodeEntry var = RowReduce("mean", p + "_var", Op("square", p + "_sq", {centered}));
  NodeEntry rstd = Op("rsqrt", p + "_rstd", {Op("add_scalar", p + "_eps", {var}, {{"scalar", "1e-5"}})});
  return {Op("multiply", p + "_xhat", {centered, rstd}), rstd};
}

inline NodeEntry LayerNorm(NodeEntry x, NodeEntry gamma, NodeEntry beta, const std::string& p = "ln") {
  NodeEntry xhat = Normalize(x, p).first;
  return Op("add", p + "_out", {Op("multiply", p + "_scaled", {xhat, gamma}), beta});
}

/*! \brief dx of layer norm: rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma. */
inline NodeEntry LayerNormGrad(NodeEntry x, NodeEntry dy, NodeEntry gamma, const std::string& p = "lng") {
  auto norm = Normalize(x, p);
  NodeEntry g = Op("multiply", p + "_g", {dy, gamma});
  NodeEntry proj = Op("multiply", p + "_proj",
                      {norm.first, RowReduce("mean", p + "_gx", Op("multiply", p + "_gxh", {g, norm.first}))});
  NodeEntry inner =
      Op("subtract", p + "_inner", {Op("subtract", p + "_gc", {g, RowReduce("mean", p + "_gm", g)}), proj});
  return Op("multiply", p + "_dx", {inner, norm.second});
}

/*! \brief Per-row loss -sum(y * log_softmax(x)) ([rows]) and its gradient softmax(x) - y. */
inline std::vector<NodeEntry> SoftmaxXent(NodeEntry x, NodeEntry y, const std::string& p = "xent") {
  NodeEntry logp = LogSoftmax(x, p + "_lsm");
  NodeEntry loss =
      Op("negative", p + "_loss", {Op("sum", p + "_dot", {Op("multiply", p + "_ylogp", {y, logp})}, {{"axis", "-1"}})});
  NodeEntry grad = Op("subtract", p + "_grad", {Op("exp", p + "_p", {logp}), y});
  return {loss, grad};
}

/*! \brief Every row graph over float rows of shape [rows, cols], inputs uniform in [lo, hi). */
inline std::vector<RowGraph> AllRowGraphs(int64_t rows, int64_t cols, uint64_t seed = 1, double lo = -3,
                                          double hi = 3) {
  auto rand = [&](const Shape& s, uint64_t k) { return test::RandomArray(s, DType::kFloat32, seed * 7 + k, lo, hi); };
  NDArray x = rand({rows, cols}, 1), dy = rand({rows, cols}, 2), gamma = rand({cols}, 3), beta = rand({cols}, 4);
  NDArray y = test::RandomArray({rows, cols}, DType::kFloat32, seed * 7 + 5, 0, 1);
  std::vector<RowGraph> graphs;
  graphs.push_back({"softmax", {Softmax(In("x"))}, {{"x", x}}});
  graphs.push_back({"log_softmax", {LogSoftmax(In("x"))}, {{"x", x}}});
  graphs.push_back(
      {"layer_norm", {LayerNorm(In("x"), In("gamma"), In("beta"))}, {{"x", x}, {"gamma", gamma}, {"beta", beta}}});
  graphs.push_back(
      {"layer_norm_grad", {LayerNormGrad(In("x"), In("dy"), In("gamma"))}, {{"x", x}, {"dy", dy}, {"gamma", gamma}}});
  graphs.push_back({"softmax_xent", SoftmaxXent(In("x"), In("y")), {{"x", x}, {"y", y}}});
  return graphs;
}

}  // namespace row_graphs
}  // namespace ir

#endif  // IR_TESTS_OPS_ROW_GRAPHS_H_
