/*!
 * \file lazy_tape.h
 * \brief A gradient tape over lazy arrays (issue 15 item 3): tf.GradientTape for eager mode.
 *
 * Lazy arrays already record the IR of every operation, so the tape records nothing of its own:
 * while it can still answer (from its creation until its destruction, or until the gradient of a
 * non-persistent tape), materialized values keep the node that computed them
 * (Array::Value::origin), so a loss read on the host inside the tape stays differentiable, and so
 * does a value recorded in the tape but computed after Stop (a materialization also computes the
 * live pending arrays). A persistent tape held forever keeps those nodes alive: free it. Gradient walks from the
 * targets back to the watched sources through pending nodes and those origins, builds an
 * ir::Graph of that region, differentiates it with ir::Gradients (include/ir/autodiff.h) and turns
 * the gradient graph back into lazy arrays: forward nodes map to the existing values (pending
 * ones are shared, materialized ones reused without recomputing), backward nodes are recorded
 * with ApplyN. The gradients are pending: the forward pass, the backward pass and an optimizer's
 * AssignAll run as one fused, hash-cached trace.
 *
 * A training loop asks the same gradient every step, so the backward pass is derived once: the
 * walk encodes the region (each node's op, hash and input references in canonical DFS order,
 * the sources' and constants' hashes, the roots, heads and reached sources) and a per-thread LRU
 * cache keeps, under that encoding (a hit is confirmed against all of it, not only its 64-bit
 * key), the backward program: each backward op with its attributes and input references. A
 * hit builds no ir::Node and runs no ir::Gradients; it replays the program with ApplyN, so the
 * recorded nodes and their hashes are those of a miss (Stats::tape_cache_hits, _misses). Like
 * the trace cache, a hit trusts the 64-bit hash of each node's op and attributes.
 */
#ifndef IR_LAZY_TAPE_H_
#define IR_LAZY_TAPE_H_

#include <memory>
#include <utility>
#include <vector>

#include "ir/lazy.h"

namespace ir {
namespace lazy {

/*! \brief Records from construction until Stop() (or destruction); gradients may be asked after. */
class GradientTape {
 public:
  /*! \brief persistent: Gradient may be called more than once (TF's persistent=True). */
  explicit GradientTape(bool persistent = false);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  /*! \brief Differentiates with respect to `array`: its value now and its value when asked. */
  void Watch(const Array& array);
  /*! \brief Stops recording (leaving TF's `with` block); gradients can still be asked. */
  void Stop();
  bool recording() const { return recording_; }

  /*!
   * \brief Pending gradients of sum_i sum(targets[i] * heads[i]) (heads empty: ones) with respect
   * to each source; an undefined Array for a source that is not watched or that no target
   * depends on (TF's None). A non-persistent tape answers once; a second call throws ir::Error.
   */
  std::vector<Array> Gradient(const std::vector<Array>& targets, const std::vector<Array>& sources,
                              const std::vector<Array>& heads = {});

  /*! \brief Backward programs cached on this thread. */
  static size_t CacheSize();
  /*! \brief Most programs this thread keeps (default 64; 0 disables the cache). */
  static size_t CacheLimit();
  static void SetCacheLimit(size_t limit);

 private:
  /*! \brief Stops counting in ActiveTapes(): no gradient can be asked any more. */
  void Release();

  bool persistent_;
  bool recording_ = true;
  /*! \brief Counted in ActiveTapes(): a gradient can still be asked. */
  bool answerable_ = true;
  /*! \brief Each watched array's shared state and its value when watched. */
  std::vector<std::pair<std::shared_ptr<Array::Cell>, std::shared_ptr<Array::Value>>> watched_;
};

}  // namespace lazy
}  // namespace ir

#endif  // IR_LAZY_TAPE_H_
