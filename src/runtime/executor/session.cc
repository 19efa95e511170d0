/*!
 * \file session.cc
 * \brief Session: one Executor per distinct (fetches, targets, op nodes fed), variables shared by all.
 *
 * A feed may name an op node as well as a placeholder: as in TensorFlow, the run then uses the
 * fed value instead of computing the node (tf.placeholder_with_default is an identity of its
 * default that a run may feed).
 *
 * Thread-safe: the executor cache and the last run are guarded here; each Executor makes its
 * own runs safe (per-run workspaces, the VariableStore's run lock).
 */
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/runtime.h"

namespace ir {

class Session::Impl {
 public:
  explicit Impl(SessionOptions options) : options_(std::move(options)), variables_(std::make_shared<VariableStore>()) {
    Device::Parse(options_.target);  // a bad target is an error now, not at the first run
  }

  std::vector<NDArray> Run(const std::vector<NodeEntry>& fetches, const std::unordered_map<std::string, NDArray>& feeds,
                           const std::vector<NodePtr>& targets) {
    IR_CHECK(!fetches.empty() || !targets.empty()) << "Session::Run: nothing to fetch and no target to run";
    Executor* executor = ExecutorFor(fetches, targets, feeds);
    // Numbered across the session: random ops of two fetch lists must not replay one stream.
    std::vector<NDArray> outputs = executor->Run(feeds, run_count_.fetch_add(1));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_ = executor;
    }
    outputs.resize(fetches.size());  // drops the targets' token
    return outputs;
  }

  VariableStore& variables() { return *variables_; }
  RunStats last_stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_ ? last_->last_stats() : RunStats();
  }
  const SessionOptions& options() const { return options_; }
  const Graph& last_graph() const {
    std::lock_guard<std::mutex> lock(mutex_);
    IR_CHECK(last_ != nullptr) << "the session has not run anything yet: no graph";
    return last_->bound_graph();
  }

 private:
  /*! \brief Cache key: the fetched entries and target nodes (kept alive by their executor). */
  using Key = std::vector<std::pair<const Node*, uint32_t>>;

  /*! \brief The graph of one (fetches, targets) and, per set of op nodes fed, its executor. */
  struct Entry {
    Graph graph;
    /*! \brief The graph's single-output op nodes by name: a feed naming one replaces its value. */
    std::unordered_map<std::string, NodePtr> op_nodes;
    std::map<std::set<std::string>, std::unique_ptr<Executor>> executors;
  };

  Executor* ExecutorFor(const std::vector<NodeEntry>& fetches, const std::vector<NodePtr>& targets,
                        const std::unordered_map<std::string, NDArray>& feeds) {
    Key key;
    for (const NodeEntry& e : fetches) {
      IR_CHECK(e.node != nullptr) << "Session::Run: a fetch is a null entry";
      key.emplace_back(e.node.get(), e.index);
    }
    for (const NodePtr& t : targets) {
      IR_CHECK(t != nullptr) << "Session::Run: a target is null";
      key.emplace_back(t.get(), kTargetMark);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Entry>& entry = entries_[key];
    if (!entry) entry = MakeEntry(GraphFor(fetches, targets));
    std::set<std::string> fed_ops;
    for (const auto& feed : feeds) {
      if (entry->op_nodes.count(feed.first)) fed_ops.insert(feed.first);
    }
    std::unique_ptr<Executor>& slot = entry->executors[fed_ops];
    if (!slot) slot.reset(new Executor(Substituted(entry->graph, entry->op_nodes, fed_ops), options_, variables_));
    return slot.get();
  }

  static std::unique_ptr<Entry> MakeEntry(Graph graph) {
    auto entry = std::make_unique<Entry>();
    PostOrderDFSVisit(graph.outputs, [&entry](const NodePtr& node) {
      if (!node->is_variable() && node->num_outputs() == 1) entry->op_nodes.emplace(node->attrs.name, node);
    });
    entry->graph = std::move(graph);
    return entry;
  }

  /*!
   * \brief `graph` with each op node named in `fed` replaced by a placeholder of its name (as
   * TensorFlow lets a run feed any tensor: tf.placeholder_with_default, or overriding a value).
   */
  static Graph Substituted(const Graph& graph, const std::unordered_map<std::string, NodePtr>& op_nodes,
                           const std::set<std::string>& fed) {
    if (fed.empty()) return graph;
    std::unordered_map<const Node*, NodePtr> copies;
    for (const std::string& name : fed) {
      copies[op_nodes.at(name).get()] = Node::CreateVariable(name, {{"__kind__", "placeholder"}});
    }
    PostOrderDFSVisit(graph.outputs, [&copies](const NodePtr& node) {
      if (copies.count(node.get())) return;
      bool changed = false;
      for (const NodeEntry& e : node->inputs) changed = changed || copies.count(e.node.get());
      for (const NodePtr& dep : node->control_deps) changed = changed || copies.count(dep.get());
      if (!changed) return;
      NodePtr copy = Node::Create();
      copy->attrs = node->attrs;
      for (const NodeEntry& e : node->inputs) {
        auto it = copies.find(e.node.get());
        copy->inputs.push_back(it == copies.end() ? e : NodeEntry{it->second, e.index});
      }
      for (const NodePtr& dep : node->control_deps) {
        auto it = copies.find(dep.get());
        copy->control_deps.push_back(it == copies.end() ? dep : it->second);
      }
      copies[node.get()] = copy;
    });
    Graph result = graph;
    for (NodeEntry& out : result.outputs) {
      auto it = copies.find(out.node.get());
      if (it != copies.end()) out.node = it->second;
    }
    return result;
  }

  /*! \brief The fetches, plus a no_op that depends on every target when there are targets. */
  static Graph GraphFor(const std::vector<NodeEntry>& fetches, const std::vector<NodePtr>& targets) {
    Graph graph(fetches);
    if (!targets.empty()) {
      NodeEntry token = MakeNode("no_op", "__session_targets__", {});
      token.node->control_deps = targets;
      graph.outputs.push_back(token);
    }
    return graph;
  }

  static constexpr uint32_t kTargetMark = static_cast<uint32_t>(-1);

  SessionOptions options_;
  std::shared_ptr<VariableStore> variables_;
  /*! \brief Guards entries_ and last_ (executors live as long as the session). */
  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<Entry>> entries_;
  Executor* last_ = nullptr;
  std::atomic<uint64_t> run_count_{0};
};

Session::Session(SessionOptions options) : impl_(new Impl(std::move(options))) {}
Session::~Session() = default;
std::vector<NDArray> Session::Run(const std::vector<NodeEntry>& fetches,
                                  const std::unordered_map<std::string, NDArray>& feeds,
                                  const std::vector<NodePtr>& targets) {
  return impl_->Run(fetches, feeds, targets);
}
VariableStore& Session::variables() { return impl_->variables(); }
RunStats Session::last_stats() const { return impl_->last_stats(); }
const SessionOptions& Session::options() const { return impl_->options(); }
const Graph& Session::last_graph() const { return impl_->last_graph(); }

}  // namespace ir
