/*!
 * \file lazy_internal.h
 * \brief What the lazy-array sources share (lazy.cc records and materializes, lazy_tape.cc
 * differentiates, the C API wraps): pending nodes, values, the hash mixing.
 */
#ifndef IR_RUNTIME_LAZY_LAZY_INTERNAL_H_
#define IR_RUNTIME_LAZY_LAZY_INTERNAL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/lazy.h"
#include "ir/op.h"

namespace ir {
namespace lazy {

inline uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

/*! \brief Folds `value` into `seed` (splitmix64 finalizer: every bit of both affects the result). */
inline uint64_t Mix(uint64_t seed, uint64_t value) {
  uint64_t z = seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/*! \brief A leaf's hash: its shape and dtype, never its data (new data hits the same trace). */
inline uint64_t LeafHash(const NDArray& value) {
  uint64_t h = Mix(0x6c656166, static_cast<uint64_t>(value.dtype()));
  for (int64_t dim : value.shape().dims()) h = Mix(h, static_cast<uint64_t>(dim));
  return Mix(h, value.shape().dims().size());
}

/*! \brief An op applied to input values, not yet computed; shared by its output values. */
struct Pending {
  const Op* op = nullptr;
  std::map<std::string, std::string> attrs;
  std::vector<std::shared_ptr<Array::Value>> inputs;
  /*! \brief Hash of op, attributes and input hashes, computed when recorded. */
  uint64_t hash = 0;
  uint32_t num_outputs = 1;
  /*! \brief Recording order on this thread: traces order their roots by it (a stable key). */
  uint64_t seq = 0;
  /*! \brief The Context that recorded it (Context::Impl::id): another Context computes it as a root. */
  uint64_t context = 0;
  /*!
   * \brief Output shapes and dtypes once inferred (ShapeOf, lazy_infer.cc): empty before, so
   * a query infers only the nodes recorded since the last one. Unknown where the op cannot tell.
   */
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  /*! \brief Why inference failed (the ir::Error text), kept so that a query fails fast again. */
  std::string infer_error;
  /*!
   * \brief Set when a trace that computed its outputs as live arrays failed: they are computed only
   * when requested, so that the error stays with the values that depend on the failed op.
   */
  bool isolated = false;
  ~Pending();
};

/*! \brief One value: materialized (data) or output `index` of a pending node. */
struct Array::Value {
  NDArray data;
  std::shared_ptr<Pending> node;
  uint32_t index = 0;
  /*! \brief Structural hash, kept when the value materializes (so traces reading it stay keyed). */
  uint64_t hash = 0;
  /*!
   * \brief The node that computed `data`, kept when the value materialized while a tape was
   * recording (ActiveTapes() > 0), so the tape can still differentiate through it.
   */
  std::shared_ptr<Pending> origin;
  /*!
   * \brief The thread whose trace is computing it, if any: another thread's trace that needs it
   * waits (it is computed once). A trace of the same thread (run by a host callback of the first)
   * leaves it out of its live arrays, and fails if it needs it (the callback's own result).
   */
  std::thread::id claimed_by;
};

using ValuePtr = std::shared_ptr<Array::Value>;

/*!
 * \brief What the copies of an Array share: the current value (Assign replaces it). Copies may
 * live on several threads (a tf.Variable shared by them), so the value is loaded and stored
 * atomically: a reader gets the old or the new value, never a torn pointer.
 */
struct Array::Cell {
  explicit Cell(ValuePtr initial = nullptr) : value_(std::move(initial)) {}
  ValuePtr value() const { return std::atomic_load(&value_); }
  void set_value(ValuePtr value) { std::atomic_store(&value_, std::move(value)); }

 private:
  ValuePtr value_;
};

/*! \brief The current value of a defined `array` (throws naming `what` for an undefined one). */
ValuePtr ValueOf(const Array& array, const char* what = "lazy::Array");
/*! \brief The data of a materialized `array` (read under DagMutex; undefined while pending). */
NDArray DataOf(const Array& array);

// ---- threads (lazy_sync.cc; the contract is in include/ir/lazy.h) ----

/*!
 * \brief The lock of the pending DAG: Value's data, node, origin and claimed_by, Pending's
 * inference results and isolated flag are read and written under it (walks, write-backs,
 * inference, assignment decisions). Held briefly, never while a trace runs; recursive because
 * releasing a value under it may release pending nodes, whose destructor takes it.
 */
std::recursive_mutex& DagMutex();
using DagLock = std::unique_lock<std::recursive_mutex>;

/*! \brief Wakes the traces waiting for a value in flight (call after clearing in_flight). */
void NotifyValuesDone();
/*! \brief Waits, `lock` (of DagMutex) released meanwhile, until some trace in flight finishes. */
void WaitForValuesInFlight(DagLock& lock);

/*!
 * \brief Reader/writer locks over buffers (by storage, in stripes): a trace holds its leaves'
 * shared and its in-place targets' exclusive for its run, a copy assignment its target's
 * exclusive, so a reader sees a whole value. Acquired in stripe order (no deadlock), never
 * while DagMutex is held by the acquiring thread. Re-entrant on a thread (a trace run by a host
 * callback of a running trace): a stripe it holds is not taken again, and stays held as it was
 * (so such a nested write into a stripe the outer trace reads is not exclusive of other threads).
 */
class BufferLocks {
 public:
  /*! \brief Locks `read` shared and `written` exclusively (a storage in both: exclusively). */
  BufferLocks(const std::vector<NDArray>& read, const std::vector<NDArray>& written);
  ~BufferLocks();
  BufferLocks(const BufferLocks&) = delete;
  BufferLocks& operator=(const BufferLocks&) = delete;

 private:
  std::vector<std::pair<size_t, bool>> held_;  // stripe, exclusive
};

/*!
 * \brief Serializes assignments to the same arrays (by cell, in stripes): held for a whole
 * AssignAll, so an update (+=) reads and writes its target atomically. Taken first, before
 * any other lazy lock.
 */
class AssignLocks {
 public:
  explicit AssignLocks(const std::vector<Array>& targets);
  ~AssignLocks();
  AssignLocks(const AssignLocks&) = delete;
  AssignLocks& operator=(const AssignLocks&) = delete;

 private:
  std::vector<size_t> held_;
};

/*! \brief Number of gradient tapes recording on this thread (lazy_tape.cc counts them). */
inline int& ActiveTapes() {
  thread_local int active = 0;
  return active;
}

/*!
 * \brief Counts one recorded op that took `ns` in `context`'s stats and tracks its `outputs` there
 * until they expire (Materialize computes the live ones). Any thread may record in a Context.
 */
void TrackRecorded(Context& context, const std::vector<Array>& outputs, uint64_t ns);
/*! \brief Adds every counter of `delta` to `context`'s stats, under its lock. */
void AddStats(Context& context, const Stats& delta);
/*! \brief The id of `context` that its recordings carry (Pending::context). */
uint64_t ContextId(Context& context);

/*! \brief The next recording sequence number of this thread (Pending::seq). */
uint64_t NextRecordSeq();

/*!
 * \brief Infers the shapes and dtypes of `value`'s pending node and of the nodes it depends on
 * that were not inferred yet; false (the error kept in Pending::infer_error) if one is invalid.
 * The caller holds DagMutex.
 */
bool InferPending(const Array::Value& value);

/*!
 * \brief Records a pending node of `op` in `context` (hash, recording order); its output values
 * are the caller's.
 */
std::shared_ptr<Pending> RecordNode(Context& context, const Op* op, std::vector<ValuePtr> inputs,
                                    const std::map<std::string, std::string>& attrs, uint32_t num_outputs);

/*!
 * \brief ApplyN of an op already looked up, on its input values (the C API's IRLazyApply and the tape's
 * replay hold the Op*: no lookup by name per op). Counts the op and its time in the current Context.
 */
std::vector<Array> RecordOp(const Op* op, std::vector<ValuePtr> inputs, const std::map<std::string, std::string>& attrs,
                            uint32_t num_outputs);

/*!
 * \brief Materializes `requested` and every live pending array but those in `skip`, running in
 * the same trace `assigns` (outputs of pending assign(leaf, value) nodes): the fused kernels
 * write each leaf's buffer in place, after every read of its old value. Returns false, having
 * run nothing, when an assigned leaf cannot be written in place (lazy_trace.cc CanWriteInPlace).
 * Takes the current Context's run lock and DagMutex itself (the caller holds neither).
 */
bool MaterializeAssigning(const std::vector<ValuePtr>& requested, const std::vector<ValuePtr>& assigns,
                          const std::unordered_set<const Array::Value*>& skip);

// ---- tape (lazy_tape.cc): declarations below this line belong to the tape ----

/*! \brief A value the tape's backward program reads: a region value or an earlier step's output. */
struct TapeRef {
  enum Kind : uint8_t { kSource, kConstant, kRegion, kBackward };
  Kind kind = kSource;
  /*! \brief Source or constant number, region node (canonical order) or backward step. */
  uint32_t node = 0;
  /*! \brief Output index (0 for sources and constants). */
  uint32_t index = 0;
};

/*!
 * \brief The forward region of a gradient request, walked from the targets back to the sources
 * without building graph nodes (lazy_tape_cache.cc). Pending nodes some source flows into are
 * the region's nodes, in canonical DFS post-order; every other value they read is a constant.
 * `encoding` (node hashes, input refs, sources, constants, roots, heads, reached sources) is
 * what the backward program depends on: equal encodings give the same program.
 */
class TapeRegion {
 public:
  /*! \brief Walks from `targets`; `sources` may repeat; `heads` are not walked (as graph mode's). */
  TapeRegion(const std::vector<ValuePtr>& sources, const std::vector<ValuePtr>& targets,
             const std::vector<ValuePtr>& heads);

  /*! \brief The value `ref` stands for; an output of a region node no walk met is a new value. */
  ValuePtr ValueOf(const TapeRef& ref);
  /*! \brief The number in `xs` of source value `value`, or xs.size() if it is not reached. */
  size_t ReachedIndex(const Array::Value* value) const;

  /*! \brief Distinct source values, then values read as constants, then region nodes. */
  std::vector<ValuePtr> sources, constants;
  std::vector<std::shared_ptr<Pending>> nodes;
  std::vector<std::vector<TapeRef>> inputs;
  std::vector<TapeRef> roots, heads;
  /*! \brief The sources some target depends on (the xs of the gradient), by source number. */
  std::vector<uint32_t> xs;
  std::vector<uint64_t> encoding;
  uint64_t key = 0;

 private:
  void Walk(const std::vector<ValuePtr>& targets);
  void Build(const std::shared_ptr<Pending>& pending);
  TapeRef RefOf(const ValuePtr& value);
  void Encode();

  std::unordered_map<const Array::Value*, uint32_t> source_index_, constant_index_;
  std::unordered_map<const Pending*, uint32_t> built_;
  std::vector<bool> reached_;
  /*! \brief Per region node, its output values met by the walk (null where none). */
  std::vector<std::vector<ValuePtr>> outputs_;
};

/*! \brief The backward pass of a region, replayable on any region of the same encoding. */
struct TapeProgram {
  struct Step {
    const Op* op = nullptr;
    std::map<std::string, std::string> attrs;
    uint32_t num_outputs = 1;
    std::vector<TapeRef> inputs;
  };
  std::vector<Step> steps;
  /*! \brief The gradient of each of the region's xs. */
  std::vector<TapeRef> results;
  /*! \brief Per x: no gradient reached it (only through ops that pass none): the tape answers None. */
  std::vector<bool> unreached;
};

/*! \brief The backward program of `region` from ir::Gradients (lazy_tape.cc: the cache's miss). */
TapeProgram DeriveTapeProgram(const TapeRegion& region);

/*! \brief `region`'s program from this thread's tape cache, derived and kept on a miss (Stats count). */
std::shared_ptr<const TapeProgram> TapeProgramFor(const TapeRegion& region);

/*! \brief Records `program`'s steps with ApplyN on `region`'s values: the gradients of its xs. */
std::vector<Array> ReplayTapeProgram(const TapeProgram& program, TapeRegion* region);

}  // namespace lazy
}  // namespace ir

#endif  // IR_RUNTIME_LAZY_LAZY_INTERNAL_H_
