/*!
 * \file lazy_trace.h
 * \brief What the materialization (lazy_trace.cc) and the Context (lazy_context.cc) share: the
 * trace of a materialization, the compiled traces, the Context's state (see include/ir/lazy.h).
 */
#ifndef IR_RUNTIME_LAZY_LAZY_TRACE_H_
#define IR_RUNTIME_LAZY_LAZY_TRACE_H_

#include <algorithm>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ir/runtime.h"
#include "runtime/lazy/lazy_internal.h"

namespace ir {
namespace lazy {

/*!
 * \brief The pending DAG reachable from some values, in canonical (DFS post-) order. Built under
 * DagMutex; it holds its roots and leaves, so they outlive the run even if their holders let go.
 */
struct Trace {
  std::vector<ValuePtr> roots;
  std::vector<ValuePtr> leaves;
  /*! \brief Valid while DagMutex is held (another trace may compute and release them after). */
  std::vector<const Pending*> nodes;
  /*! \brief Per leaf: an assign root writes it in place (a variable of the graph, not a feed). */
  std::vector<bool> variable;
  /*! \brief Per node its hash and input refs, then the root refs, then the leaf signatures. */
  std::vector<uint64_t> topology;
  uint64_t key = 0;
  /*!
   * \brief A value of the DAG is being computed by another thread's trace: wait for it, then walk
   * again (one this thread's trace computes throws: a host callback needing its own result).
   */
  bool busy = false;
  /*!
   * \brief Pending values recorded in another Context than `context` that are not roots: they
   * are shared between threads, so they become roots (computed once, for every holder).
   */
  std::vector<ValuePtr> foreign;

  /*! \brief Walks the DAG from `requested` (its roots) for a materialization in Context `context`. */
  Trace(std::vector<ValuePtr> requested, uint64_t context);

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
  Graph ToGraph() const;

  /*!
   * \brief "sum_3 of leaves [4,3] float32, [3] float32": names the trace in errors. Under
   * DagMutex (a leaf's array may be replaced by a snapshot); the roots are still pending (claimed).
   */
  std::string Describe() const;

 private:
  static constexpr size_t kOnStack = static_cast<size_t>(-1);
  size_t IndexOf(const Pending* node) const {
    return static_cast<size_t>(std::find(nodes.begin(), nodes.end(), node) - nodes.begin());
  }
};

/*!
 * \brief A compiled trace: its topology (to confirm a hit), the Executor that runs it and the
 * store that holds its assigned leaves' buffers during a run (as the graph's variables: one store
 * per trace, so a trace run from a host callback of another binds its own).
 */
struct CachedTrace {
  uint64_t key = 0;
  std::vector<uint64_t> topology;
  std::unique_ptr<Executor> executor;
  std::shared_ptr<VariableStore> variables = std::make_shared<VariableStore>();
  std::vector<std::string> feed_names;
};

/*!
 * \brief A Context's state. run_mutex_ is held for a whole materialization (one trace at a time
 * per Context: its cache and Executors; recursive, as a host callback of a running trace may
 * materialize in the same Context); state_mutex_ briefly, for what recording touches (the live
 * arrays, the stats). Lock order: run_mutex_, DagMutex, state_mutex_.
 */
class Context::Impl {
 public:
  explicit Impl(SessionOptions options);

  /*!
   * \brief Computes `trace` and returns one array per root (undefined for an assignment). Entered
   * and left with `dag` held; released while compiling and running, under the buffer locks of
   * its leaves. An assigned leaf is not fed (a fed variable is copied): the store holds its very
   * buffer for the run, so the kernels write into it.
   */
  std::vector<NDArray> Run(const Trace& trace, DagLock& dag);

  /*!
   * \brief The pending values to compute: those of `requested`, then those of every live cell
   * but `skip` and the isolated ones (the cells' only: *live_start indexes them). Drops the
   * expired cells. Under DagMutex.
   */
  std::vector<ValuePtr> Roots(const std::vector<ValuePtr>& requested,
                              const std::unordered_set<const Array::Value*>& skip, size_t* live_start);

  /*! \brief True when `trace` is cached (a hit needs no check of the live roots: it ran before). */
  bool Cached(const Trace& trace) const;

  /*! \brief Tracks an op's outputs as live arrays and counts the op (TrackRecorded). */
  void Track(const std::vector<Array>& outputs, uint64_t ns);
  /*! \brief Adds `d`'s counters to the stats, under state_mutex_. */
  void AddStats(const Stats& d);
  Stats stats() const;
  void ResetStats();

  /*! \brief The store lets go of the assigned buffers (their arrays may be freed). */
  void ReleaseVariables(const Trace& trace, const CachedTrace& cached);

  /*! \brief Drops the cached trace of `key`, if any. */
  void Erase(uint64_t key);

  /*! \brief Evicts down to the cache limit; returns how many traces it evicted. */
  size_t Trim();

  SessionOptions options_;
  /*! \brief Where the traces run: a leaf elsewhere is assigned by a copy (the run would copy it). */
  Device device_;
  uint64_t id_;
  std::recursive_mutex run_mutex_;
  size_t cache_limit_ = 256;
  /*!
   * \brief Cached traces, most recently used first; index_ finds them by key (run_mutex_). Shared:
   * a run holds its trace, which a run from one of its host callbacks may evict.
   */
  std::list<std::shared_ptr<CachedTrace>> lru_;
  std::unordered_map<uint64_t, std::list<std::shared_ptr<CachedTrace>>::iterator> index_;

 private:
  std::shared_ptr<CachedTrace> Find(const Trace& trace);
  std::shared_ptr<CachedTrace> Insert(const Trace& trace, Graph graph, Stats* delta);

  mutable std::mutex state_mutex_;
  Stats stats_;
  std::vector<std::weak_ptr<Array::Cell>> live_;
  size_t live_compacted_ = 0;
  uint64_t executors_made_ = 0;
};

}  // namespace lazy
}  // namespace ir

#endif  // IR_RUNTIME_LAZY_LAZY_TRACE_H_
