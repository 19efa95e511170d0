/*!
 * \file lazy_context.cc
 * \brief The lazy Context: its cache of compiled traces (LRU), their runs, the live pending
 * arrays, the stats, the current Context of each thread and the IR_LAZY_DUMP_DIR dumps (see
 * include/ir/lazy.h).
 */
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "codegen/private_dir.h"
#include "ir/graph_io.h"
#include "runtime/lazy/lazy_trace.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief Number of traces dumped by this process (names the files trace-<n>.txt). */
std::atomic<int> dumped_traces{0};

/*! \brief Writes the trace's graph after the pipeline under $IR_LAZY_DUMP_DIR, if set. */
void DumpTrace(const Executor& executor) {
  const char* dir = std::getenv("IR_LAZY_DUMP_DIR");
  if (!dir || !*dir) return;
  std::string why;
  PrivateDir private_dir(dir, &why);  // dumps show the program: only its user may write there
  IR_CHECK(private_dir.valid()) << "IR_LAZY_DUMP_DIR '" << dir << "' is refused: " << why;
  std::string name = StrCat("trace-", dumped_traces++, ".txt");
  IR_CHECK(private_dir.Write(name, StrCat("# lazy trace after the pipeline\n", PrintGraphText(executor.bound_graph()))))
      << "cannot write IR_LAZY_DUMP_DIR '" << dir << "/" << name << "'";
}

thread_local Context* current_context = nullptr;
thread_local uint64_t record_counter = 0;
std::atomic<uint64_t> contexts_made{0};

}  // namespace

Context::Impl::Impl(SessionOptions options)
    : options_(std::move(options)), device_(Device::Parse(options_.target)), id_(++contexts_made) {}

std::vector<NDArray> Context::Impl::Run(const Trace& trace, DagLock& dag) {
  std::shared_ptr<CachedTrace> cached = Find(trace);
  Graph graph = cached ? Graph() : trace.ToGraph();
  std::vector<NDArray> read, written;
  for (size_t i = 0; i < trace.leaves.size(); ++i)
    (trace.variable[i] ? written : read).push_back(trace.leaves[i]->data);
  dag.unlock();
  std::vector<NDArray> outputs;
  Stats delta;
  (cached ? delta.cache_hits : delta.cache_misses) = 1;
  try {
    if (!cached) cached = Insert(trace, std::move(graph), &delta);
    BufferLocks locks(read, written);
    std::unordered_map<std::string, NDArray> feeds;
    for (size_t i = 0, r = 0, w = 0; i < trace.leaves.size(); ++i) {
      if (trace.variable[i]) {
        cached->variables->Set(cached->feed_names[i], written[w++]);
      } else {
        feeds.emplace(cached->feed_names[i], read[r++]);
      }
    }
    try {
      outputs = cached->executor->Run(feeds);
    } catch (const Error&) {
      ReleaseVariables(trace, *cached);
      Erase(trace.key);  // a trace that failed to bind is not kept: it would fail again
      throw;
    }
    ReleaseVariables(trace, *cached);
    RunStats run = cached->executor->last_stats();
    delta.kernels_launched = run.kernels_launched;
    delta.traces_compiled = run.bound ? 1 : 0;
    if (run.bound) DumpTrace(*cached->executor);
  } catch (const Error& err) {
    AddStats(delta);
    dag.lock();
    throw Error(StrCat("lazy: materializing ", trace.Describe(), ": ", err.what()));
  }
  AddStats(delta);
  dag.lock();
  std::vector<NDArray> per_root;
  size_t next = 0;
  for (const ValuePtr& root : trace.roots)
    per_root.push_back(Trace::IsAssign(root.get()) ? NDArray() : outputs[next++]);
  return per_root;
}

bool Context::Impl::Cached(const Trace& trace) const {
  auto found = index_.find(trace.key);
  return found != index_.end() && (*found->second)->topology == trace.topology;
}

void Context::Impl::Track(const std::vector<Array>& outputs, uint64_t ns) {
  std::lock_guard<std::mutex> state(state_mutex_);
  if (live_.size() >= 2 * live_compacted_ + 1024) {  // amortized O(1): code that never materializes
    live_.erase(std::remove_if(live_.begin(), live_.end(), [](const auto& weak) { return weak.expired(); }),
                live_.end());
    live_compacted_ = live_.size();
  }
  for (const Array& output : outputs) live_.emplace_back(output.cell());
  stats_.ops_recorded += 1;
  stats_.record_ns += ns;
}

void Context::Impl::AddStats(const Stats& d) {
  std::lock_guard<std::mutex> state(state_mutex_);
  Stats& s = stats_;
  s.kernels_launched += d.kernels_launched;
  s.traces_compiled += d.traces_compiled;
  s.cache_hits += d.cache_hits;
  s.cache_misses += d.cache_misses;
  s.record_ns += d.record_ns;
  s.execute_ns += d.execute_ns;
  s.ops_recorded += d.ops_recorded;
  s.evictions += d.evictions;
  s.tape_cache_hits += d.tape_cache_hits;
  s.tape_cache_misses += d.tape_cache_misses;
}

Stats Context::Impl::stats() const {
  std::lock_guard<std::mutex> state(state_mutex_);
  return stats_;
}

void Context::Impl::ResetStats() {
  std::lock_guard<std::mutex> state(state_mutex_);
  stats_ = Stats();
}

void Context::Impl::ReleaseVariables(const Trace& trace, const CachedTrace& cached) {
  for (size_t i = 0; i < trace.leaves.size(); ++i) {
    if (trace.variable[i]) cached.variables->Set(cached.feed_names[i], NDArray());
  }
}

void Context::Impl::Erase(uint64_t key) {
  auto found = index_.find(key);
  if (found == index_.end()) return;
  lru_.erase(found->second);
  index_.erase(found);
}

size_t Context::Impl::Trim() {
  size_t evicted = 0;
  for (; lru_.size() > cache_limit_; ++evicted) Erase(lru_.back()->key);
  return evicted;
}

std::shared_ptr<CachedTrace> Context::Impl::Find(const Trace& trace) {
  auto found = index_.find(trace.key);
  if (found == index_.end() || (*found->second)->topology != trace.topology) return nullptr;
  lru_.splice(lru_.begin(), lru_, found->second);
  return lru_.front();
}

std::shared_ptr<CachedTrace> Context::Impl::Insert(const Trace& trace, Graph graph, Stats* delta) {
  auto cached = std::make_shared<CachedTrace>();
  cached->key = trace.key;
  cached->topology = trace.topology;
  // An Executor seeds random ops from (graph seed, node name, its run number); trace nodes are
  // named by position and every Executor counts runs from 1, so two traces would draw the same
  // stream (a [256,10] initializer repeating the first values of a [784,256] one). One seed per
  // Executor, in creation order, keeps draws distinct and a program's draws reproducible.
  SessionOptions options = options_;
  options.seed = Mix(options_.seed, ++executors_made_);
  cached->executor = std::make_unique<Executor>(std::move(graph), options, cached->variables);
  for (size_t i = 0; i < trace.leaves.size(); ++i) cached->feed_names.push_back("p" + std::to_string(i));
  Erase(trace.key);
  lru_.push_front(cached);
  index_[trace.key] = lru_.begin();
  delta->evictions += Trim();
  return cached;
}

std::vector<ValuePtr> Context::Impl::Roots(const std::vector<ValuePtr>& requested,
                                           const std::unordered_set<const Array::Value*>& skip, size_t* live_start) {
  std::vector<ValuePtr> roots;
  std::unordered_set<const Array::Value*> seen = skip;
  for (const ValuePtr& value : requested) {
    if (value->node && seen.insert(value.get()).second) roots.push_back(value);
  }
  *live_start = roots.size();
  std::vector<std::shared_ptr<Array::Cell>> cells;  // released after state_mutex_ (a release may free nodes)
  {
    std::lock_guard<std::mutex> state(state_mutex_);
    size_t kept = 0;
    for (std::weak_ptr<Array::Cell>& weak : live_) {
      std::shared_ptr<Array::Cell> cell = weak.lock();
      if (!cell) continue;
      ValuePtr value = cell->value();
      if (!value || !value->node) continue;
      // (a value this thread's running trace computes is left to it: its host callback runs this)
      bool computing = value->claimed_by == std::this_thread::get_id();
      if (!value->node->isolated && !computing && seen.insert(value.get()).second) roots.push_back(std::move(value));
      live_[kept++] = std::move(weak);  // still pending: it stays tracked (an invalid one too)
      cells.push_back(std::move(cell));
    }
    live_.resize(kept);
    live_compacted_ = kept;
  }
  return roots;
}

Context::Context(SessionOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Context::~Context() = default;

Context& Context::Current() {
  if (current_context) return *current_context;
  thread_local Context default_context;
  return default_context;
}

Context::Scope::Scope(Context* context) : previous_(current_context) { current_context = context; }
Context::Scope::~Scope() { current_context = previous_; }

const SessionOptions& Context::options() const { return impl_->options_; }
Stats Context::stats() const { return impl_->stats(); }
void Context::ResetStats() { impl_->ResetStats(); }
size_t Context::cache_size() const {
  std::lock_guard<std::recursive_mutex> run(impl_->run_mutex_);
  return impl_->lru_.size();
}
size_t Context::cache_limit() const {
  std::lock_guard<std::recursive_mutex> run(impl_->run_mutex_);
  return impl_->cache_limit_;
}
void Context::set_cache_limit(size_t limit) {
  IR_CHECK(limit > 0) << "lazy::Context: the trace cache limit must be positive";
  std::lock_guard<std::recursive_mutex> run(impl_->run_mutex_);
  impl_->cache_limit_ = limit;
  Stats delta;
  delta.evictions = impl_->Trim();
  impl_->AddStats(delta);
}

void TrackRecorded(Context& context, const std::vector<Array>& outputs, uint64_t ns) {
  context.impl().Track(outputs, ns);
}
void AddStats(Context& context, const Stats& delta) { context.impl().AddStats(delta); }
uint64_t ContextId(Context& context) { return context.impl().id_; }

uint64_t NextRecordSeq() { return ++record_counter; }

}  // namespace lazy
}  // namespace ir
