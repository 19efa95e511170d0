/*!
 * \file runtime.h
 * \brief Executing graphs: Executor (one bound graph) and Session (TF1-style runs).
 *
 * Binding runs a pass pipeline over the graph with the shapes of the current feeds
 * (InferShape, InferType, the optimization passes of the target, PlanMemory); running walks
 * the nodes in topological order and calls, per node, the kernel RTCGen generated for it
 * (graph attribute "kernels") or else the op's FCompute for the target device.
 */
#ifndef IR_RUNTIME_H_
#define IR_RUNTIME_H_

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir/op_kernel.h"

namespace ir {

/*! \brief How a session compiles and runs graphs. */
struct SessionOptions {
  /*! \brief "cpu", "opencl" or "cuda" (optionally ":<id>"). */
  std::string target = "cpu";
  /*! \brief Apply the fusion passes (when registered) before running. */
  bool fusion = true;
  /*! \brief Bound on unique array inputs (0-d ones not counted) per fused kernel; -1 = the target's default. */
  int fmax = -1;
  /*! \brief When set, IR is dumped after every pass into this directory. */
  std::string dump_dir;
  /*! \brief Graph-level random seed; op-level "seed" attributes combine with it. */
  uint64_t seed = 0;
  /*! \brief Training mode (dropout active, batch norm with batch statistics). */
  bool is_train = true;
  /*! \brief Pass names to run instead of the default pipeline (empty = default). */
  std::vector<std::string> passes;
  /*!
   * \brief Record each node's kernel time in RunStats::nodes (off: no clock is read). On an
   * accelerator each node then waits for its device work, so times are the node's own.
   */
  bool profile = false;
  /*!
   * \brief Apply the Simplify pass (the rewrite rules, docs/REWRITE_RULES.md) before fusion: the
   * one switch for rewrites. Gradients are built without rules, so off means none runs anywhere.
   */
  bool simplify = true;
  /*! \brief Also apply the nsz and fast_math rules, which change special values (x - x -> 0 for x = NaN). */
  bool fast_math = false;
  /*! \brief Also apply the nsz rules: bit for bit but for the sign of zero (x + 0 -> x). */
  bool nsz = false;
  /*! \brief Rule sets Simplify applies (empty: every registered set). */
  std::vector<std::string> rule_sets;
  /*!
   * \brief Allreduce buckets (tensor fusion, as DDP's): the allreduce nodes of a graph are packed, in the
   * order their inputs are produced, into buckets of at most this many bytes (the first bucket:
   * collective_first_bucket_bytes), each started as soon as its last member is computed and waited for
   * only where its results are used. 0: every allreduce runs alone, synchronously. -1 (auto): 25 MB as
   * DDP's default, but at most a quarter of the graph's allreduce bytes (and at least the first bucket's
   * size), so the backward pass of a small model overlaps several buckets instead of waiting for one.
   */
  int64_t collective_bucket_bytes = -1;
  int64_t collective_first_bucket_bytes = 1 << 20;
};

/*! \brief One node of a profiled run (SessionOptions::profile). */
struct NodeProfile {
  /*! \brief The node's name in the bound graph. */
  std::string name;
  /*! \brief Its op; for a fused node "_fused[<kind>](<member ops>)", e.g. "_fused[map](exp,multiply)". */
  std::string op;
  /*! \brief Wall time of its kernel (ms). */
  double ms = 0;
};

/*! \brief What one run did. */
struct RunStats {
  /*! \brief Bytes of intermediate storage the run's memory plan allocated. */
  size_t bytes_allocated = 0;
  /*! \brief Bytes the plan would need without any reuse (every entry its own buffer). */
  size_t bytes_without_reuse = 0;
  /*!
   * \brief The most bytes of intermediate values live at once in the execution order (in-place
   * reuse the ops allow counted once): no plan of this graph and order needs less.
   */
  size_t memory_lower_bound_bytes = 0;
  /*! \brief Kernels launched (fused kernels and op kernels). */
  size_t kernels_launched = 0;
  /*! \brief Op nodes run by their CPU kernel on host copies (no kernel for the target). */
  size_t host_fallbacks = 0;
  /*!
   * \brief Nodes of pfor bodies the Vectorize pass could not vectorize, run as loops over the
   * iterations, as "name (op)" (graph attribute "vectorize.fallbacks"; bodies included).
   */
  std::vector<std::string> pfor_fallbacks;
  /*! \brief Rewrites the Simplify pass made, "rule @ node" (graph attribute "simplify.fired"). */
  std::vector<std::string> rewrites;
  /*! \brief True when this run had to bind (run the pass pipeline) first. */
  bool bound = false;
  double bind_ms = 0;
  double run_ms = 0;
  /*! \brief Per node run, in execution order, when SessionOptions::profile is set (else empty). */
  std::vector<NodeProfile> nodes;
};

/*!
 * \brief Persistent values of variables, by name, shared by the executors of a session.
 *
 * Thread-safe. Besides guarding its map, the store is the lock that orders runs: a run whose
 * graph updates a variable (an op mutates one of its inputs: assign, assign_add, optimizer
 * updates) holds LockForUpdate() for the whole run, any other run holds LockForRead(). So the
 * updates of one run are atomic with respect to every other run sharing the store: no run
 * sees another's updates half-applied, and no update is lost; runs that only read variables
 * run concurrently.
 */
class VariableStore {
 public:
  bool Has(const std::string& name) const;
  /*!
   * \brief The array holding `name` (not a copy: runs update it in place; see Read).
   * Throws "variable 'x' is not initialized" when absent.
   */
  NDArray Get(const std::string& name) const;
  /*! \brief A copy of `name` on `device`, taken while no run updates variables. */
  NDArray Read(const std::string& name, Device device) const;
  void Set(const std::string& name, NDArray value);
  std::vector<std::string> Names() const;
  /*! \brief Held by a run that reads but does not update variables (shared with other readers). */
  std::shared_lock<std::shared_mutex> LockForRead() const;
  /*! \brief Held by a run that updates variables (excludes every other run on the store). */
  std::unique_lock<std::shared_mutex> LockForUpdate() const;

 private:
  mutable std::mutex values_mutex_;
  std::map<std::string, NDArray> values_;
  mutable std::shared_mutex runs_mutex_;
};

/*!
 * \brief A graph bound for execution. Outputs of the graph are the fetched values;
 * variables not fed are read from (and written to) the VariableStore.
 *
 * Run may be called from several threads at once: runs share the bound plan of their input
 * shapes but each uses its own intermediate buffers, and they lock the VariableStore as it
 * describes (runs that update variables are serialized with every other run on the store).
 */
class Executor {
 public:
  Executor(Graph graph, SessionOptions options, std::shared_ptr<VariableStore> variables);
  ~Executor();
  /*!
   * \brief Runs the graph with `feeds` (by variable name) and returns one array per graph
   * output. Binds again when feed shapes differ from the last bind (plans are cached).
   * Throws ir::Error for a missing feed, a feed of the wrong shape or dtype, or an
   * uninitialized variable, naming it.
   */
  std::vector<NDArray> Run(const std::unordered_map<std::string, NDArray>& feeds);
  /*!
   * \brief Run, numbered by the caller: random ops draw from (their seed, `run_number`). A Session
   * numbers its runs across all its executors, so two fetch lists do not replay one stream.
   */
  std::vector<NDArray> Run(const std::unordered_map<std::string, NDArray>& feeds, uint64_t run_number);
  /*! \brief The stats of the most recently finished run (of any thread). */
  RunStats last_stats() const;
  /*! \brief The graph after the pass pipeline of the plan the last finished run used. */
  const Graph& bound_graph() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/*!
 * \brief TF1-style session: runs any subgraph (fetches + targets) of the nodes it is given,
 * caching one Executor per distinct set of fetches and targets; variables persist.
 *
 * Thread-safe like tf.Session: Run may be called concurrently and each call gets its own
 * results (see Executor and VariableStore for what runs updating variables are guaranteed).
 */
class Session {
 public:
  explicit Session(SessionOptions options = SessionOptions());
  ~Session();
  /*!
   * \brief Computes `fetches` and runs `targets` (nodes run for their effect, e.g. a train op).
   * Returns one array per fetch. A feed names a placeholder, or a single-output op node whose
   * value it then replaces in this run (as TensorFlow feeds any tensor).
   */
  std::vector<NDArray> Run(const std::vector<NodeEntry>& fetches,
                           const std::unordered_map<std::string, NDArray>& feeds = {},
                           const std::vector<NodePtr>& targets = {});
  VariableStore& variables();
  /*! \brief The stats of the most recently finished run (of any thread). */
  RunStats last_stats() const;
  const SessionOptions& options() const;
  /*! \brief The bound graph of the most recently finished run (for inspection: kernels, shapes...). */
  const Graph& last_graph() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ir

#endif  // IR_RUNTIME_H_
