/*!
 * \file subgraph.cc
 * \brief Helpers on bodies (Subgraph): inlining them and inferring their outputs' shapes and dtypes.
 */
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/pass.h"

namespace ir {

std::vector<NodeEntry> InlineSubgraph(const Subgraph& body, const std::vector<NodeEntry>& args,
                                      const std::string& prefix) {
  std::unordered_map<const Node*, NodeEntry> params;
  for (size_t i = 0; i < body.params.size(); ++i) params[body.params[i].get()] = args.at(i);
  std::unordered_map<const Node*, NodePtr> copies;
  auto entry = [&](const NodeEntry& e) {
    auto p = params.find(e.node.get());
    if (p != params.end()) return p->second;
    auto c = copies.find(e.node.get());
    return c == copies.end() ? e : NodeEntry{c->second, e.index};
  };
  PostOrderDFSVisit(body.graph.outputs, [&](const NodePtr& node) {
    if (node->is_variable()) return;
    NodePtr copy = Node::Create();
    copy->attrs = node->attrs;
    copy->attrs.name = prefix + "/" + node->attrs.name;
    for (const NodeEntry& in : node->inputs) copy->inputs.push_back(entry(in));
    for (const NodePtr& dep : node->control_deps) copy->control_deps.push_back(entry(NodeEntry{dep, 0}).node);
    copies[node.get()] = copy;
  });
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& e : body.graph.outputs) outputs.push_back(entry(e));
  return outputs;
}

namespace {

/*! \brief Runs inference pass `pass` on `body` seeded by the params' values through `inputs_key`. */
template <typename Value>
std::vector<Value> InferSubgraph(const Subgraph& body, const std::vector<Value>& args, const Value& unknown,
                                 const char* pass, const char* inputs_key, const char* result_key,
                                 const std::string& where) {
  Graph g(body.graph.outputs);
  const IndexedGraph& idx = g.indexed_graph();
  std::vector<Value> seeds;
  for (uint32_t nid : idx.input_nodes()) {
    Value seed = unknown;
    for (size_t i = 0; i < body.params.size(); ++i) {
      if (body.params[i].get() == idx[nid].source) seed = args.at(i);
    }
    seeds.push_back(seed);
  }
  g.SetAttr(inputs_key, std::move(seeds));
  try {
    g = ApplyPass(std::move(g), pass);
  } catch (const Error& err) {
    throw Error(where + ": " + err.what());
  }
  const auto& values = g.GetAttr<std::vector<Value>>(result_key);
  const IndexedGraph& done = g.indexed_graph();
  std::vector<Value> results;
  for (const NodeEntry& e : g.outputs) results.push_back(values[done.entry_id(e)]);
  return results;
}

}  // namespace

std::vector<Shape> InferSubgraphShapes(const Subgraph& body, const std::vector<Shape>& params,
                                       const std::string& where) {
  return InferSubgraph<Shape>(body, params, Shape(), "InferShape", "shape_inputs", "shape", where);
}

std::vector<DType> InferSubgraphTypes(const Subgraph& body, const std::vector<DType>& params,
                                      const std::string& where) {
  return InferSubgraph<DType>(body, params, DType::kUnknown, "InferType", "dtype_inputs", "dtype", where);
}

}  // namespace ir
