/*!
 * \file lazy_internal.h
 * \brief What the lazy-array sources share (lazy.cc records and materializes, lazy_tape.cc
 * differentiates, the C API wraps): pending nodes, values, the hash mixing.
 */
#ifndef IR_RUNTIME_LAZY_INTERNAL_H_
#define IR_RUNTIME_LAZY_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
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
  /*!
   * \brief Output shapes and dtypes once inferred (ShapeOf, lazy_infer.cc): empty before, so
   * a query infers only the nodes recorded since the last one. Unknown where the op cannot tell.
   */
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  /*! \brief Why inference failed (the ir::Error text), kept so that a query fails fast again. */
  std::string infer_error;
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
};

/*! \brief What the copies of an Array share: the current value (Assign replaces it). */
struct Array::Cell {
  std::shared_ptr<Value> value;
};

using ValuePtr = std::shared_ptr<Array::Value>;

/*! \brief Number of gradient tapes recording on this thread (lazy_tape.cc counts them). */
inline int& ActiveTapes() {
  thread_local int active = 0;
  return active;
}

/*! \brief Tracks `cell` (an output of Apply) in `context` until it expires: Materialize computes it. */
void TrackLive(Context& context, const std::shared_ptr<Array::Cell>& cell);

/*! \brief The next recording sequence number of this thread (Pending::seq). */
uint64_t NextRecordSeq();

/*!
 * \brief Infers the shapes and dtypes of `value`'s pending node and of the nodes it depends on
 * that were not inferred yet; false (the error kept in Pending::infer_error) if one is invalid.
 */
bool InferPending(const Array::Value& value);

// ---- tape (lazy_tape.cc): declarations below this line belong to the tape ----

}  // namespace lazy
}  // namespace ir

#endif  // IR_RUNTIME_LAZY_INTERNAL_H_
