/*!
 * \file session.cc
 * \brief Session: one Executor per distinct (fetches, targets), variables shared by all.
 *
 * Thread-safe: the executor cache and the last run are guarded here; each Executor makes its
 * own runs safe (per-run workspaces, the VariableStore's run lock).
 */
#include <map>
#include <mutex>

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
    Executor* executor = ExecutorFor(fetches, targets);
    std::vector<NDArray> outputs = executor->Run(feeds);
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

  Executor* ExecutorFor(const std::vector<NodeEntry>& fetches, const std::vector<NodePtr>& targets) {
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
    std::unique_ptr<Executor>& slot = executors_[key];
    if (!slot) slot.reset(new Executor(GraphFor(fetches, targets), options_, variables_));
    return slot.get();
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
  /*! \brief Guards executors_ and last_ (executors live as long as the session). */
  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<Executor>> executors_;
  Executor* last_ = nullptr;
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
