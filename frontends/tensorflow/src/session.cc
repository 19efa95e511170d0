/*!
 * \file session.cc
 * \brief TFSession: tf.Session.run semantics over an ir::Session, one import per distinct
 * request (names and feed shapes).
 */
#include "ir_tf/session.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>

#include "ir/pass.h"
#include "ir/pipeline.h"
#include "ir_tf/checkpoint.h"
#include "ir_tf/import.h"

namespace ir {
namespace tf {
namespace {

/*! \brief A node name for a fed tensor name ("x:0" -> "x"). */
std::string NodeName(const std::string& tensor) {
  return tensor.size() > 2 && tensor.compare(tensor.size() - 2, 2, ":0") == 0 ? tensor.substr(0, tensor.size() - 2)
                                                                              : tensor;
}

SessionOptions WithPipeline(SessionOptions options) {
  if (options.passes.empty()) options.passes = TFSession::Pipeline(options);
  return options;
}

}  // namespace

class TFSession::Impl {
 public:
  Impl(TFModel model, SessionOptions options) : model_(std::move(model)), session_(WithPipeline(std::move(options))) {}

  std::vector<NDArray> Run(const std::map<std::string, NDArray>& feeds, const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets) {
    timings_ = TFRunTimings();
    ImportOptions request;
    request.dump_dir = session_.options().dump_dir;
    std::unordered_map<std::string, NDArray> fed;
    std::string key;
    for (const std::string& name : fetches) request.outputs.push_back(model_.ResolveName(name));
    for (const std::string& name : targets) request.outputs.push_back("^" + NodeName(model_.ResolveName(name)));
    key = Join(request.outputs, ",") + "|";
    for (const auto& kv : feeds) {
      std::string node = NodeName(model_.ResolveName(kv.first));
      IR_CHECK(kv.second.defined()) << "feed '" << kv.first << "' is an undefined array";
      request.feed_shapes[node] = kv.second.shape();
      fed[node] = kv.second;
      key += StrCat(node, DTypeName(kv.second.dtype()), kv.second.shape().ToString(), ";");
    }
    Imported& imported = imports_[key];
    if (imported.graph.outputs.empty()) {
      auto start = std::chrono::steady_clock::now();
      imported.graph = ImportGraphDef(model_.graph_def, request);
      const IndexedGraph& idx = imported.graph.indexed_graph();
      for (uint32_t nid : idx.input_nodes()) imported.inputs.insert(idx[nid].source->attrs.name);
      timings_.import_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    const Graph& graph = imported.graph;
    // Feeds the requested outputs do not depend on are not inputs of this graph: leave them out.
    for (auto it = fed.begin(); it != fed.end();) it = imported.inputs.count(it->first) ? std::next(it) : fed.erase(it);
    std::vector<NodeEntry> fetch_entries(graph.outputs.begin(), graph.outputs.begin() + fetches.size());
    std::vector<NodePtr> target_nodes;
    for (size_t i = fetches.size(); i < graph.outputs.size(); ++i) target_nodes.push_back(graph.outputs[i].node);
    std::vector<NDArray> out = session_.Run(fetch_entries, fed, target_nodes);
    timings_.bind_ms = session_.last_stats().bind_ms;
    timings_.run_ms = session_.last_stats().run_ms;
    return out;
  }

  std::vector<std::string> RestoreCheckpoint(const std::string& prefix) {
    CheckpointReader reader(prefix);
    std::map<std::string, std::string> by_key;
    for (const auto& kv : model_.checkpoint_keys) by_key[kv.second] = kv.first;
    std::vector<std::string> names;
    for (const auto& kv : reader.tensors()) {
      if (!reader.IsNumeric(kv.first)) continue;
      auto mapped = by_key.find(kv.first);
      std::string name = mapped != by_key.end() ? mapped->second : kv.first;
      session_.variables().Set(name, reader.Read(kv.first));
      names.push_back(name);
    }
    return names;
  }

  /*! \brief One import: its graph and the names of its inputs. */
  struct Imported {
    Graph graph;
    std::set<std::string> inputs;
  };

  TFModel model_;
  Session session_;
  std::map<std::string, Imported> imports_;
  TFRunTimings timings_;
};

TFSession::TFSession(TFModel model, SessionOptions options) : impl_(new Impl(std::move(model), std::move(options))) {}
TFSession::~TFSession() = default;

std::vector<NDArray> TFSession::Run(const std::map<std::string, NDArray>& feeds,
                                    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  return impl_->Run(feeds, fetches, targets);
}

std::vector<std::string> TFSession::RestoreCheckpoint(const std::string& prefix) {
  return impl_->RestoreCheckpoint(prefix);
}
const TFModel& TFSession::model() const { return impl_->model_; }
Session& TFSession::session() { return impl_->session_; }
const TFRunTimings& TFSession::last_timings() const { return impl_->timings_; }

/*!
 * The pipeline an imported TF graph runs with: folding first, then the rewrite rules (TF graphs
 * bring gradient tuples (identities waiting on no_ops), reshapes to the shape a value has,
 * decomposed softmax and cross-entropy...), fusion when its passes are registered.
 */
IR_REGISTER_PIPELINE(tf_session, {{"InferShape"},
                                  {"InferType"},
                                  {"FoldConstants"},
                                  {"Simplify", "simplify"},
                                  {"Fusion", "fusion", true},
                                  {"CodeGen", "fusion", true},
                                  {"RTCGen", "fusion", true},
                                  {"PlanMemory"}});

std::vector<std::string> TFSession::Pipeline(const SessionOptions& options) {
  return ir::Pipeline("tf_session").Passes({{"simplify", options.simplify}, {"fusion", options.fusion}});
}

}  // namespace tf
}  // namespace ir
