/*!
 * \file lazy_trace.cc
 * \brief Materialization of lazy arrays: the trace (the pending DAG reachable from the roots,
 * in canonical order), its cache of Executors (LRU), the sync of live pending arrays and the
 * IR_LAZY_DUMP_DIR dumps (see include/ir/lazy.h).
 */
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <list>
#include <unordered_map>
#include <unordered_set>

#include "codegen/private_dir.h"
#include "ir/graph_io.h"
#include "ir/node.h"
#include "runtime/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief A reference to a trace value in the topology encoding: leaf i, or output of node i. */
void EncodeRef(const Array::Value* value, const std::unordered_map<const Array::Value*, size_t>& leaves,
               const std::unordered_map<const Pending*, size_t>& nodes, std::vector<uint64_t>* code) {
  if (value->node) {
    code->push_back(nodes.at(value->node.get()) + 1);
    code->push_back(value->index);
  } else {
    code->push_back(0);
    code->push_back(leaves.at(value));
  }
}

/*! \brief The pending DAG reachable from some values, in canonical (DFS post-) order. */
struct Trace {
  std::vector<const Array::Value*> roots;
  std::vector<const Array::Value*> leaves;
  std::vector<const Pending*> nodes;
  /*! \brief Per leaf: an assign root writes it in place (a variable of the graph, not a feed). */
  std::vector<bool> variable;
  /*! \brief Per node its hash and input refs, then the root refs, then the leaf signatures. */
  std::vector<uint64_t> topology;
  uint64_t key = 0;

  explicit Trace(std::vector<const Array::Value*> requested) : roots(std::move(requested)) {
    std::unordered_map<const Array::Value*, size_t> leaf_index;
    std::unordered_map<const Pending*, size_t> node_index;
    std::vector<std::pair<const Pending*, size_t>> stack;
    auto visit = [&](const Array::Value* value) {
      if (!value->node) {
        if (leaf_index.emplace(value, leaves.size()).second) leaves.push_back(value);
      } else if (!node_index.count(value->node.get())) {
        node_index.emplace(value->node.get(), kOnStack);
        stack.emplace_back(value->node.get(), 0);
      }
    };
    for (const Array::Value* root : roots) {
      visit(root);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->inputs.size()) {
          visit(node->inputs[next++].get());
          continue;
        }
        const Pending* done = node;
        stack.pop_back();
        topology.push_back(done->hash);
        for (const ValuePtr& input : done->inputs) EncodeRef(input.get(), leaf_index, node_index, &topology);
        node_index[done] = nodes.size();
        nodes.push_back(done);
      }
    }
    key = 0x7472616365;
    for (const Array::Value* root : roots) {
      EncodeRef(root, leaf_index, node_index, &topology);
      key = Mix(key, root->hash);
    }
    for (const Array::Value* leaf : leaves) {
      uint64_t signature = Mix(LeafHash(leaf->data), leaf->hash);
      topology.push_back(signature);
      key = Mix(key, signature);
    }
    variable.assign(leaves.size(), false);
    for (const Array::Value* root : roots) {
      if (IsAssign(root)) variable[leaf_index.at(root->node->inputs[0].get())] = true;
    }
  }

  /*! \brief Whether `value` is an assignment this trace runs in place (not an output). */
  static bool IsAssign(const Array::Value* value) {
    static const Op* assign = Op::Get("assign");
    return value->node && value->node->op == assign;
  }

  /*!
   * \brief The trace as a graph: leaf i is placeholder "p<i>" (a variable when assigned), node i
   * is named "<op>_<i>". The outputs are the roots but the assignments, and a no_op token that
   * depends on them (fetching an assignment would copy the variable it wrote in place).
   */
  Graph ToGraph() const {
    std::unordered_map<const Array::Value*, NodeEntry> entries;
    for (size_t i = 0; i < leaves.size(); ++i) {
      std::map<std::string, std::string> kind{{"__kind__", variable[i] ? "variable" : "placeholder"}};
      entries[leaves[i]] = NodeEntry{Node::CreateVariable("p" + std::to_string(i), kind), 0};
    }
    std::unordered_map<const Pending*, NodePtr> built;
    auto entry_of = [&](const Array::Value* value) {
      return value->node ? NodeEntry{built.at(value->node.get()), value->index} : entries.at(value);
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::vector<NodeEntry> inputs;
      for (const ValuePtr& input : nodes[i]->inputs) inputs.push_back(entry_of(input.get()));
      std::string name = nodes[i]->op->name + "_" + std::to_string(i);
      built[nodes[i]] = Node::Create(nodes[i]->op, name, nodes[i]->attrs, std::move(inputs));
    }
    std::vector<NodeEntry> outputs;
    std::vector<NodePtr> assigns;
    for (const Array::Value* root : roots) {
      if (IsAssign(root)) {
        assigns.push_back(built.at(root->node.get()));
      } else {
        outputs.push_back(entry_of(root));
      }
    }
    if (!assigns.empty()) {
      NodePtr token = Node::Create(Op::Get("no_op"), "assignments", {}, {});
      token->control_deps = std::move(assigns);
      outputs.push_back(NodeEntry{token, 0});
    }
    return Graph(std::move(outputs));
  }

  /*! \brief "sum_3 of leaves [4,3] float32, [3] float32": names the trace in errors. */
  std::string Describe() const {
    std::vector<std::string> leaf_text, root_text;
    for (const Array::Value* leaf : leaves) {
      leaf_text.push_back(StrCat(leaf->data.shape(), " ", DTypeName(leaf->data.dtype())));
    }
    for (const Array::Value* root : roots) {
      root_text.push_back(StrCat(root->node->op->name, "_", IndexOf(root->node.get())));
    }
    return StrCat(Join(root_text, ", "), " of leaves ", Join(leaf_text, ", "));
  }

 private:
  static constexpr size_t kOnStack = static_cast<size_t>(-1);
  size_t IndexOf(const Pending* node) const {
    return static_cast<size_t>(std::find(nodes.begin(), nodes.end(), node) - nodes.begin());
  }
};

/*! \brief A compiled trace: its topology (to confirm a hit) and the Executor that runs it. */
struct CachedTrace {
  uint64_t key = 0;
  std::vector<uint64_t> topology;
  std::unique_ptr<Executor> executor;
  std::vector<std::string> feed_names;
};

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

}  // namespace

class Context::Impl {
 public:
  explicit Impl(SessionOptions options) : options_(std::move(options)), device_(Device::Parse(options_.target)) {}

  /*!
   * \brief Computes `trace` and returns one array per root (undefined for an assignment). An
   * assigned leaf is not fed (a fed variable is copied): the store holds its very buffer for the
   * run, so the kernels write into it.
   */
  std::vector<NDArray> Run(const Trace& trace) {
    CachedTrace& cached = Lookup(trace);
    std::unordered_map<std::string, NDArray> feeds;
    for (size_t i = 0; i < trace.leaves.size(); ++i) {
      if (trace.variable[i]) {
        variables_->Set(cached.feed_names[i], trace.leaves[i]->data);
      } else {
        feeds.emplace(cached.feed_names[i], trace.leaves[i]->data);
      }
    }
    std::vector<NDArray> outputs;
    try {
      outputs = cached.executor->Run(feeds);
    } catch (const Error& err) {
      ReleaseVariables(trace, cached);
      Erase(trace.key);  // a trace that failed to bind is not kept: it would fail again
      throw Error(StrCat("lazy: materializing ", trace.Describe(), ": ", err.what()));
    }
    ReleaseVariables(trace, cached);
    RunStats run = cached.executor->last_stats();
    stats_.kernels_launched += run.kernels_launched;
    stats_.traces_compiled += run.bound ? 1 : 0;
    if (run.bound) DumpTrace(*cached.executor);
    std::vector<NDArray> per_root;
    size_t next = 0;
    for (const Array::Value* root : trace.roots)
      per_root.push_back(Trace::IsAssign(root) ? NDArray() : outputs[next++]);
    return per_root;
  }

  /*!
   * \brief The pending values to compute: those of `requested`, then those of every live cell
   * but `skip` (the cells' only: *live_start indexes them). Drops the expired cells.
   */
  std::vector<const Array::Value*> Roots(const std::vector<const Array::Value*>& requested,
                                         const std::unordered_set<const Array::Value*>& skip, size_t* live_start) {
    std::vector<const Array::Value*> roots;
    std::unordered_set<const Array::Value*> seen = skip;
    for (const Array::Value* value : requested) {
      if (value->node && seen.insert(value).second) roots.push_back(value);
    }
    *live_start = roots.size();
    size_t kept = 0;
    for (std::weak_ptr<Array::Cell>& weak : live_) {
      std::shared_ptr<Array::Cell> cell = weak.lock();
      if (!cell || !cell->value || !cell->value->node) continue;
      if (seen.insert(cell->value.get()).second) roots.push_back(cell->value.get());
      live_[kept++] = std::move(weak);  // still pending: it stays tracked (an invalid one too)
    }
    live_.resize(kept);
    live_compacted_ = kept;
    return roots;
  }

  /*! \brief True when `trace` is cached (a hit needs no check of the live roots: it ran before). */
  bool Cached(const Trace& trace) const {
    auto found = index_.find(trace.key);
    return found != index_.end() && found->second->topology == trace.topology;
  }

  void Track(const std::shared_ptr<Array::Cell>& cell) {
    if (live_.size() >= 2 * live_compacted_ + 1024) {  // amortized O(1): code that never materializes
      live_.erase(std::remove_if(live_.begin(), live_.end(), [](const auto& weak) { return weak.expired(); }),
                  live_.end());
      live_compacted_ = live_.size();
    }
    live_.emplace_back(cell);
  }

  /*! \brief The store lets go of the assigned buffers (their arrays may be freed). */
  void ReleaseVariables(const Trace& trace, const CachedTrace& cached) {
    for (size_t i = 0; i < trace.leaves.size(); ++i) {
      if (trace.variable[i]) variables_->Set(cached.feed_names[i], NDArray());
    }
  }

  void Erase(uint64_t key) {
    auto found = index_.find(key);
    if (found == index_.end()) return;
    lru_.erase(found->second);
    index_.erase(found);
  }

  void Trim() {
    while (lru_.size() > cache_limit_) {
      Erase(lru_.back().key);
      ++stats_.evictions;
    }
  }

  SessionOptions options_;
  /*! \brief Where the traces run: a leaf elsewhere is assigned by a copy (the run would copy it). */
  Device device_;
  Stats stats_;
  size_t cache_limit_ = 256;
  /*! \brief Cached traces, most recently used first; index_ finds them by key. */
  std::list<CachedTrace> lru_;
  std::unordered_map<uint64_t, std::list<CachedTrace>::iterator> index_;
  /*! \brief Holds an assigned leaf's buffer during a run (Run), as the graph's variable. */
  std::shared_ptr<VariableStore> variables_ = std::make_shared<VariableStore>();

 private:
  CachedTrace& Lookup(const Trace& trace) {
    auto found = index_.find(trace.key);
    if (found != index_.end() && found->second->topology == trace.topology) {
      ++stats_.cache_hits;
      lru_.splice(lru_.begin(), lru_, found->second);
      return lru_.front();
    }
    ++stats_.cache_misses;
    Erase(trace.key);
    lru_.push_front(Compile(trace));
    index_[trace.key] = lru_.begin();
    Trim();
    return lru_.front();
  }

  CachedTrace Compile(const Trace& trace) {
    CachedTrace cached;
    cached.key = trace.key;
    cached.topology = trace.topology;
    try {
      // An Executor seeds random ops from (graph seed, node name, its run number); trace nodes are
      // named by position and every Executor counts runs from 1, so two traces would draw the same
      // stream (a [256,10] initializer repeating the first values of a [784,256] one). One seed per
      // Executor, in creation order, keeps draws distinct and a program's draws reproducible.
      SessionOptions options = options_;
      options.seed = Mix(options_.seed, ++executors_made_);
      cached.executor = std::make_unique<Executor>(trace.ToGraph(), options, variables_);
    } catch (const Error& err) {
      throw Error(StrCat("lazy: materializing ", trace.Describe(), ": ", err.what()));
    }
    for (size_t i = 0; i < trace.leaves.size(); ++i) cached.feed_names.push_back("p" + std::to_string(i));
    return cached;
  }

  std::vector<std::weak_ptr<Array::Cell>> live_;
  size_t live_compacted_ = 0;
  uint64_t executors_made_ = 0;
};

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
const Stats& Context::stats() const { return impl_->stats_; }
Stats& Context::mutable_stats() { return impl_->stats_; }
void Context::ResetStats() { impl_->stats_ = Stats(); }
size_t Context::cache_size() const { return impl_->lru_.size(); }
size_t Context::cache_limit() const { return impl_->cache_limit_; }
void Context::set_cache_limit(size_t limit) {
  IR_CHECK(limit > 0) << "lazy::Context: the trace cache limit must be positive";
  impl_->cache_limit_ = limit;
  impl_->Trim();
}

void TrackLive(Context& context, const std::shared_ptr<Array::Cell>& cell) { context.impl().Track(cell); }

uint64_t NextRecordSeq() { return ++record_counter; }

namespace {

/*! \brief `roots` in recording order: the trace key does not depend on the order of a request. */
std::vector<const Array::Value*> InRecordingOrder(std::vector<const Array::Value*> roots) {
  std::sort(roots.begin(), roots.end(), [](const Array::Value* a, const Array::Value* b) {
    return a->node->seq != b->node->seq ? a->node->seq < b->node->seq : a->index < b->index;
  });
  return roots;
}

/*!
 * \brief The trace of the requested and live roots. On a cache miss the live roots are inferred
 * first: one that is invalid is left out (it throws when requested itself, not in others' traces).
 */
Trace TraceOf(Context::Impl& impl, const std::vector<const Array::Value*>& requested,
              const std::unordered_set<const Array::Value*>& skip) {
  size_t live_start = 0;
  std::vector<const Array::Value*> roots = impl.Roots(requested, skip, &live_start);
  Trace trace(InRecordingOrder(roots));
  if (impl.Cached(trace)) return trace;
  auto invalid = [](const Array::Value* value) { return !InferPending(*value); };
  auto kept_end = std::remove_if(roots.begin() + static_cast<std::ptrdiff_t>(live_start), roots.end(), invalid);
  if (kept_end == roots.end()) return trace;
  roots.erase(kept_end, roots.end());
  return Trace(InRecordingOrder(std::move(roots)));
}

/*! \brief Whether `assign`'s value has its variable's shape and dtype (inferred, so known). */
bool SameShapeAndType(const Pending& assign) {
  const Array::Value& value = *assign.inputs[1];
  if (!InferPending(value)) return false;
  const NDArray& variable = assign.inputs[0]->data;
  return value.node->shapes[value.index] == variable.shape() && value.node->dtypes[value.index] == variable.dtype();
}

/*!
 * \brief Whether each assigned leaf of `trace` can be written in place: its only holders are
 * its cell and the trace's nodes (which run before the write or are freed after it), its buffer
 * is on the target and overlaps no other leaf, and (checked on a miss: a hit ran before with
 * the same shapes) the value has its shape and dtype.
 */
bool CanWriteInPlace(const Trace& trace, const Device& device, bool cached) {
  std::unordered_map<const Array::Value*, long> readers;
  for (const Pending* node : trace.nodes) {
    for (const ValuePtr& input : node->inputs) readers[input.get()] += input->node ? 0 : 1;
  }
  for (const Array::Value* root : trace.roots) {
    if (!Trace::IsAssign(root)) continue;
    const ValuePtr& target = root->node->inputs[0];
    if (target.use_count() != 1 + readers[target.get()] || target->data.device() != device) return false;
    if (!cached && !SameShapeAndType(*root->node)) return false;
    for (const Array::Value* leaf : trace.leaves) {
      if (leaf != target.get() && leaf->data.Overlaps(target->data)) return false;
    }
  }
  return true;
}

}  // namespace

bool MaterializeAssigning(const std::vector<const Array::Value*>& requested, const std::vector<ValuePtr>& assigns,
                          const std::unordered_set<const Array::Value*>& skip) {
  Context& context = Context::Current();
  uint64_t start = NowNs();
  std::vector<const Array::Value*> wanted = requested;
  for (const ValuePtr& assign : assigns) wanted.push_back(assign.get());
  Trace trace = TraceOf(context.impl(), wanted, skip);
  if (!assigns.empty() && !CanWriteInPlace(trace, context.impl().device_, context.impl().Cached(trace))) return false;
  if (trace.roots.empty()) return true;
  const std::vector<const Array::Value*>& roots = trace.roots;
  std::vector<NDArray> outputs = context.impl().Run(trace);
  for (size_t i = 0; i < roots.size(); ++i) {
    auto* value = const_cast<Array::Value*>(roots[i]);
    value->data = std::move(outputs[i]);
    if (ActiveTapes() > 0) value->origin = value->node;  // the tape differentiates through it
    value->node.reset();                                 // frees the pending DAG nothing else references
  }
  context.mutable_stats().execute_ns += NowNs() - start;
  return true;
}

void Materialize(const std::vector<Array>& arrays) {
  std::vector<const Array::Value*> requested;
  for (const Array& array : arrays) {
    IR_CHECK(array.defined()) << "lazy::Array: use of an undefined array";
    requested.push_back(array.cell()->value.get());
  }
  MaterializeAssigning(requested, {}, {});
}

}  // namespace lazy
}  // namespace ir
