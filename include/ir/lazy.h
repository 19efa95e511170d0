/*!
 * \file lazy.h
 * \brief Lazy arrays (issue 15, items 1 and 2): imperative array code whose operations record
 * nodes instead of running, and run fused when a value is needed. tinyflow calls them its eager
 * mode (docs/ARCHITECTURE.md, "Lazy arrays and eager mode", says why the two names).
 *
 * An Array is a leaf (a materialized NDArray) or the pending output of an op applied to other
 * Arrays. Recording (Apply and the operators below) allocates the pending node and computes its
 * structural hash once, from the op, its sorted attributes, the output index and the inputs'
 * hashes; a leaf hashes as its shape and dtype only, never its data. Recording checks only the
 * op's name. ShapeOf/DTypeOf infer without computing (the ops' FInferShape/FInferType, each
 * node once: results are kept in the node), and name the invalid node and its input shapes.
 *
 * Materialization (Eval, Materialize, Assign, AssignAll, a data-dependent ShapeOf) is a barrier
 * with the semantics of XLA/PyTorch lazy tensors: the requested arrays AND every pending array
 * still held by a user handle (the Context tracks Apply's outputs weakly) are computed in one
 * trace. So a loss the user holds is computed with the optimizer update that follows (no second
 * forward), and after the barrier no pending node reads a variable's old value (Assign writes in
 * place, no snapshot). Pending arrays nobody holds are never computed; a held array whose
 * inference fails is left out (it throws when requested itself). The trace's roots are ordered
 * by recording order and its leaves numbered in DFS order from them, and it is looked up in the
 * Context's cache under the roots' hashes and the leaves' shapes and dtypes (the hit is confirmed
 * against the trace's topology). A miss builds an ir::Graph (leaf i -> placeholder "p<i>",
 * pending node -> op node "<op>_<i>") and an Executor for it, whose first run applies the
 * SessionOptions pipeline (InferShape, InferType, Simplify, Fusion, CodeGen, RTCGen, PlanMemory).
 * A hit runs the cached Executor: no pass runs, its bound plan and compiled kernels are reused.
 * The whole DAG is one graph, so fusion sees it all: sum(a * b) is one kernel, matmul(a + b, c)
 * two. Scalars (Array(0.1f), Array::Scalar(v, dtype)) are 0-d leaves, i.e. parameters of the
 * trace: a changing learning rate does not miss the cache. Random ops (random_normal...) draw
 * new values on each run of a cached trace (the run number enters their seed, not the key). The
 * cache keeps the 256 most recently used traces (Context::set_cache_limit; Stats::evictions).
 *
 * Environment: IR_LAZY_DUMP_DIR=<dir> writes each compiled trace's graph after the pipeline to
 * <dir>/trace-<n>.txt; <dir> must be owned by the user and writable by no one else.
 *
 * Assignment (Assign, AssignAll, +=, -=, *=) runs inside the trace: a target that is a
 * materialized leaf on the Context's device, whose pending value has its shape and dtype, becomes
 * a variable of the graph bound to that very buffer (through the Context's VariableStore, for
 * the run only) and the trace gets assign(variable, value) nodes, rooted by a no_op token
 * (fetching an assign would copy the variable). Fusion fuses each assign with the math of its
 * value, so an Adam update of m, v and w is one kernel that reads each array once and writes
 * m, v, w in place (plus the token): 7 memory passes, not 13. The graph's OrderMutations puts
 * every read of the old value (a held loss computed in the same trace) before the write. The
 * value handle then shares the target's buffer (as tf.Variable.assign returns the variable).
 * A target is assigned by a copy after the trace instead when it does not qualify: undefined,
 * pending, another device, its buffer shared with another leaf of the trace or another target,
 * its old value still read by something outside the trace (a held value of an earlier
 * assignment, a node kept by a tape, another thread's pending array: it gets a snapshot), or a
 * tape records.
 * 0-d inputs do not count toward F_max (docs/ARCHITECTURE.md, Fusion): scalar parameters do not
 * split a kernel. A defined target keeps its shape and dtype (ir::Error naming both otherwise).
 *
 * Threads (TF eager's contract; tests/threads/lazy_threads_test.cc):
 *  - Per thread: the current Context (a default one per thread; Scope), the gradient tapes (a tape
 *    differentiates what its thread records and materializes) and the tape cache.
 *  - Shared: Arrays, their copies and values may be used and released on any thread. A pending
 *    value is computed once: a trace that needs a value another thread's trace is computing waits
 *    for it, and a pending value recorded in another Context becomes a root of the trace that
 *    needs it (so its holders all see one value, one random draw). A failed trace is not kept
 *    anywhere: its error belongs to the values that depend on the failing op (the live arrays of
 *    a failed trace are computed when requested from then on). A Context may serve several
 *    threads: they record concurrently and their traces run one at a time (cache, Executors,
 *    live arrays and stats are locked); per-thread Contexts run in parallel.
 *  - Atomic: each assignment is atomic per target. An update (+=, -=, *=, AssignAll with
 *    Update::kAdd...) reads and writes its target with no other assignment to it in between, on
 *    any thread (TF's assign_add). A trace holds its leaves' buffers' read locks while it runs,
 *    an in-place or copying assignment the target's write lock: a read through an op, or
 *    ReadValue, sees the old or the new value, whole. `a.Assign(a + 1)` is a read then a write
 *    (the read when recorded), as in TF: threads doing it concurrently may lose updates; += not.
 *  - Re-entrant: a host callback (tf.py_func) of a running trace may record, materialize and
 *    assign on its thread and Context (its nested traces leave the outer trace's values to it);
 *    reading the outer trace's own result throws ir::Error.
 *  - The caller must not: use one GradientTape from two threads at once; free a Context while a
 *    thread uses it; read the NDArray of Eval()/ToNDArray() while another thread assigns the
 *    array (it is the buffer itself; ReadValue copies it under the lock); write into an NDArray
 *    given to Array(NDArray) while a trace may read it.
 * Locks (src/runtime/lazy/lazy_sync.cc), in order: assignment stripes (per target), a Context's run
 * lock, buffer stripes, the DAG lock (walks, inference, write-backs: brief), a Context's state lock.
 *
 * Not done yet (follow-ups of issue 15):
 *  - The no_op token that roots a trace's assignments is a kernel launch of its own (a scalar
 *    store): kernels_launched counts it.
 *  - Temporaries still alive during AssignAll (`w -= lr * g` holds `lr * g`) are live arrays:
 *    the barrier computes them as outputs (an extra write each), although they read no variable.
 *  - A cache hit trusts the 64-bit hashes of op and attributes (the topology is compared exactly).
 *  - One process-wide DAG lock orders the walks, inference and write-backs of every thread's
 *    traces: held briefly, never while a trace compiles or runs, and recording does not take it,
 *    but many threads materializing small traces contend on it.
 */
#ifndef IR_LAZY_H_
#define IR_LAZY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ndarray.h"
#include "ir/runtime.h"

namespace ir {
class Op;
namespace lazy {

/*! \brief What a Context did since it was created or last reset. */
struct Stats {
  /*! \brief Kernels the materializations launched (RunStats::kernels_launched summed). */
  size_t kernels_launched = 0;
  /*! \brief Traces that ran the pass pipeline (an Executor bound a plan). */
  size_t traces_compiled = 0;
  /*! \brief Materializations that found their trace in the cache. */
  size_t cache_hits = 0;
  /*! \brief Materializations that had to build a graph and an Executor. */
  size_t cache_misses = 0;
  /*!
   * \brief Time spent recording operations (Apply), in nanoseconds: estimated from every 16th op a thread
   * records in the Context (its first one included), each timed op counted 16 times, so the clock is not read per op.
   */
  uint64_t record_ns = 0;
  /*! \brief Time spent materializing (lookup, compile on a miss, run), in nanoseconds. */
  uint64_t execute_ns = 0;
  /*! \brief Operations recorded. */
  size_t ops_recorded = 0;
  /*! \brief Cached traces dropped (least recently used first) to stay within the cache limit. */
  size_t evictions = 0;
  /*! \brief GradientTape::Gradient calls that replayed a cached backward program (lazy_tape.h). */
  size_t tape_cache_hits = 0;
  /*! \brief GradientTape::Gradient calls that derived the backward program with ir::Gradients. */
  size_t tape_cache_misses = 0;
};

/*!
 * \brief Where traces compile and run: the SessionOptions (target, fusion...), the trace cache
 * and the stats. Each thread has a default Context; a Scope makes another one current. A Context
 * may serve several threads at once (they record concurrently; their traces run one at a time).
 */
class Context {
 public:
  explicit Context(SessionOptions options = SessionOptions());
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /*! \brief The calling thread's current Context (its default one unless a Scope is active). */
  static Context& Current();

  /*! \brief Makes `context` current on this thread for the Scope's lifetime. */
  class Scope {
   public:
    explicit Scope(Context* context);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Context* previous_;
  };

  const SessionOptions& options() const;
  /*! \brief A copy of the stats (other threads may be adding to them). */
  Stats stats() const;
  void ResetStats();
  /*! \brief Number of cached traces. */
  size_t cache_size() const;
  /*! \brief Most traces kept (default 256); past it the least recently used one is evicted. */
  size_t cache_limit() const;
  void set_cache_limit(size_t limit);

  class Impl;
  /*! \brief The cache and executors (src/runtime/lazy/lazy.cc). */
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/*!
 * \brief A lazy array: a handle shared by its copies (like a NumPy array or a tf.Variable, so
 * `Array b = a; a += x;` changes b too). Operations on it record pending nodes.
 */
class Array {
 public:
  /*! \brief An undefined array (defined() is false); Assign gives it a value. */
  Array() = default;
  /*! \brief A leaf holding `value` (not copied: Assign writes into it). */
  Array(NDArray value);  // NOLINT(runtime/explicit): arrays convert to lazy arrays implicitly
  /*! \brief A 0-d float32 leaf: a parameter of the trace, not part of its key. */
  Array(float scalar);  // NOLINT(runtime/explicit)
  /*! \brief A 0-d leaf of any dtype holding `value` (converted): a parameter of the trace. */
  static Array Scalar(double value, DType dtype);

  bool defined() const { return cell_ != nullptr; }
  /*! \brief True while the value is a recorded, not yet computed expression. */
  bool is_pending() const;
  /*!
   * \brief Materializes (with the current Context) and returns the value. The NDArray shares the
   * array's buffer: a later in-place assignment changes it, and reading it while another thread
   * assigns the array is a race (ReadValue copies a whole value).
   */
  NDArray Eval() const;
  NDArray ToNDArray() const { return Eval(); }
  /*!
   * \brief Makes this array's value `value` (AssignAll of one), written into the old buffer
   * (holders of that NDArray see the change). A defined array keeps its shape and dtype: a value
   * of another one throws ir::Error naming both (an undefined array takes the value's). Pending
   * expressions recorded before the assignment keep reading the old value.
   */
  Array& Assign(const Array& value);
  /*! \brief Atomic updates (AssignAll with Update::kAdd...): `rhs` broadcasts to this shape. */
  Array& operator+=(const Array& rhs);
  Array& operator-=(const Array& rhs);
  Array& operator*=(const Array& rhs);

  struct Value;
  /*! \brief The shared state of this handle (for lazy.cc). */
  struct Cell;
  const std::shared_ptr<Cell>& cell() const { return cell_; }
  explicit Array(std::shared_ptr<Cell> cell) : cell_(std::move(cell)) {}

 private:
  std::shared_ptr<Cell> cell_;
};

/*!
 * \brief Records `op` applied to `inputs` with string attributes `attrs` (as on graph nodes);
 * returns its `num_outputs` pending outputs. Throws only for an unknown op name.
 */
std::vector<Array> ApplyN(const std::string& op, const std::vector<Array>& inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs);
/*! \brief ApplyN of an op already looked up (a caller that records it often holds the Op*). */
std::vector<Array> ApplyN(const Op* op, const std::vector<Array>& inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs);
/*! \brief ApplyN of an op already looked up on `num_inputs` arrays held elsewhere (no copy of them). */
std::vector<Array> ApplyN(const Op* op, const Array* const* inputs, size_t num_inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs);
/*! \brief ApplyN for an op with one output. */
Array Apply(const std::string& op, const std::vector<Array>& inputs,
            const std::map<std::string, std::string>& attrs = {});

/*!
 * \brief Computes every pending array of `arrays`, and every other pending array a handle still
 * holds, in one trace (one graph: shared subexpressions once, fused together) with the current
 * Context; they become leaves. Throws ir::Error naming the node and the trace when the graph is
 * invalid (shapes, types).
 */
void Materialize(const std::vector<Array>& arrays);

/*!
 * \brief The shape and dtype of `array`'s value. A pending array's are inferred from the
 * recorded ops without computing anything (materialized only where the op cannot tell, e.g. a
 * data-dependent shape); an invalid expression throws ir::Error naming the node and its inputs.
 */
Shape ShapeOf(const Array& array);
DType DTypeOf(const Array& array);

/*! \brief How an assignment combines a target's current value with the given one. */
enum class Update {
  kAssign,    // target = value
  kAdd,       // target = target + value
  kSubtract,  // target = target - value
  kMultiply,  // target = target * value
};

/*!
 * \brief targets[i].Assign(values[i]) for every i (or, for an update, targets[i] op values[i]), in
 * one trace that writes the targets in place (an optimizer's update of all its variables is one
 * trace and, fused, one kernel). An update reads its target while no other assignment to it
 * runs, on any thread (atomic, as TF's assign_add). A defined target keeps its shape and dtype:
 * otherwise ir::Error, naming both, and no target is written. For Update::kAssign, values[i]
 * then holds targets[i]'s new value (its buffer, when written in place).
 */
void AssignAll(const std::vector<Array>& targets, const std::vector<Array>& values, Update update = Update::kAssign);

/*!
 * \brief A copy of `array`'s value (materialized first), taken while no assignment writes it:
 * a whole value even while other threads assign the array.
 */
NDArray ReadValue(const Array& array);

Array operator+(const Array& lhs, const Array& rhs);
Array operator-(const Array& lhs, const Array& rhs);
Array operator*(const Array& lhs, const Array& rhs);
Array operator/(const Array& lhs, const Array& rhs);
Array operator-(const Array& x);
Array exp(const Array& x);
Array log(const Array& x);
Array relu(const Array& x);
/*! \brief Sum over `axes` (empty: every axis). */
Array sum(const Array& x, const std::vector<int>& axes = {}, bool keepdims = false);
/*! \brief Mean over `axes` (empty: every axis). */
Array mean(const Array& x, const std::vector<int>& axes = {}, bool keepdims = false);
Array matmul(const Array& a, const Array& b, bool transpose_a = false, bool transpose_b = false);

}  // namespace lazy
}  // namespace ir

#endif  // IR_LAZY_H_
