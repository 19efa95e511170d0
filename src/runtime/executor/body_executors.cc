/*!
 * \file body_executors.cc
 * \brief Executors of control-flow bodies (see body_executors.h).
 */
#include "runtime/executor/body_executors.h"

#include "runtime/executor/graph_inputs.h"

namespace ir {
namespace runtime {

std::unordered_map<std::string, NDArray> BodyExecutors::Body::Feeds(const NodeAttrs& node, size_t index,
                                                                    const std::vector<NDArray>& args) const {
  IR_CHECK(args.size() == feed_names.size())
      << NodeDesc(node) << ": body " << index << " takes " << feed_names.size() << " arguments, got " << args.size();
  std::unordered_map<std::string, NDArray> feeds;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!feed_names[i].empty()) feeds.emplace(feed_names[i], args[i]);
  }
  return feeds;
}

std::unordered_map<std::string, ForwardRecordPtr> BodyExecutors::Body::FeedRecords(
    const std::vector<ForwardRecordPtr>& records) const {
  std::unordered_map<std::string, ForwardRecordPtr> by_name;
  for (size_t i = 0; i < records.size() && i < feed_names.size(); ++i) {
    if (records[i] && !feed_names[i].empty()) by_name.emplace(feed_names[i], records[i]);
  }
  return by_name;
}

BodyExecutors::Body& BodyExecutors::Get(const Subgraph& body, const std::vector<bool>& donate,
                                        const SessionOptions& options,
                                        const std::shared_ptr<VariableStore>& variables) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Body>& slot = bodies_[{&body, donate}];
  if (slot) return *slot;
  auto made = std::make_unique<Body>();
  const IndexedGraph& idx = body.graph.indexed_graph();
  for (const NodePtr& param : body.params) {
    made->feed_names.push_back(idx.has_node(param.get()) ? param->attrs.name : std::string());
  }
  Graph graph = body.graph;
  std::vector<std::string> donated;
  for (size_t i = 0; i < donate.size() && i < made->feed_names.size(); ++i) {
    if (donate[i] && !made->feed_names[i].empty()) donated.push_back(made->feed_names[i]);
  }
  if (!donated.empty()) graph.SetAttr("memory.donated_inputs", std::move(donated));
  made->executor = std::make_unique<Executor>(std::move(graph), options, variables);
  slot = std::move(made);
  return *slot;
}

bool BodiesUpdateVariables(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (const auto& body : idx[nid].source->attrs.subgraphs) {
      std::vector<GraphInput> inputs = ClassifyInputs(body->graph);
      for (const GraphInput& input : inputs) {
        if (input.mutated) return true;
      }
      if (BodiesUpdateVariables(body->graph)) return true;
    }
  }
  return false;
}

}  // namespace runtime
}  // namespace ir
