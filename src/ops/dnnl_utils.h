/*!
 * \file dnnl_utils.h
 * \brief oneDNN plumbing shared by the ops that run through it (matmul, convolution, pooling):
 * the CPU engine, a stream per thread, memory descriptors for our dtypes, and a bounded,
 * thread-safe cache of primitives so repeated runs of one shape do not create them again.
 *
 * Every cached primitive uses a user-provided scratchpad (DefaultAttr), so several threads
 * may execute one primitive at the same time: Execute gives each call its own scratchpad.
 */
#ifndef IR_OPS_DNNL_UTILS_H_
#define IR_OPS_DNNL_UTILS_H_

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/base.h"
#include "ir/ndarray.h"

namespace ir {
namespace op {
namespace dnnl_utils {

/*! \brief The CPU engine, created on first use. */
const dnnl::engine& Engine();
/*! \brief This thread's stream on Engine() (created once per thread; streams are not shared). */
dnnl::stream& Stream();

/*! \brief True when oneDNN computes in `dtype` (float32 only: oneDNN 2.6 has no f64 type). */
bool Supports(DType dtype);
/*! \brief oneDNN's data type for `dtype`; throws ir::Error when !Supports(dtype). */
dnnl::memory::data_type DataType(DType dtype);
/*! \brief Descriptor of `dims` with explicit element strides. */
dnnl::memory::desc Desc(const std::vector<int64_t>& dims, DType dtype, const std::vector<int64_t>& strides);
/*! \brief Dense row-major descriptor of `dims`. */
dnnl::memory::desc Desc(const std::vector<int64_t>& dims, DType dtype);
/*! \brief A memory object over `data` (no copy; the caller keeps the data alive). */
dnnl::memory Memory(const dnnl::memory::desc& desc, const void* data);

/*! \brief Attributes every cached primitive is created with (user scratchpad). */
dnnl::primitive_attr DefaultAttr();

/*! \brief A primitive and the scratchpad it needs to run. */
struct CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad;
};

/*! \brief Builds a CachedPrimitive from a primitive descriptor created with DefaultAttr(). */
template <typename Primitive, typename PrimitiveDesc>
CachedPrimitive MakeCached(const PrimitiveDesc& pd) {
  return CachedPrimitive{Primitive(pd), pd.scratchpad_desc()};
}

/*! \brief Cache keys: an op name followed by every number the primitive depends on. */
class PrimitiveKey {
 public:
  explicit PrimitiveKey(const std::string& op) : key_(op) {}
  PrimitiveKey& Add(int64_t value);
  PrimitiveKey& Add(const std::vector<int64_t>& values);
  const std::string& str() const { return key_; }

 private:
  std::string key_;
};

/*! \brief A bounded, thread-safe LRU cache of primitives by key. */
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity) : capacity_(capacity) {}
  /*!
   * \brief The primitive cached under `key`, or `create()`'s result, cached. Creation runs
   * outside the lock; two threads missing at once may both create (the first one is kept).
   */
  CachedPrimitive GetOrCreate(const PrimitiveKey& key, const std::function<CachedPrimitive()>& create);
  /*! \brief Number of primitives created by GetOrCreate so far (for tests and statistics). */
  size_t num_created() const;
  size_t size() const;
  /*! \brief The process-wide cache the ops share. */
  static PrimitiveCache& Global();

 private:
  using Entry = std::pair<std::string, CachedPrimitive>;
  mutable std::mutex mutex_;
  size_t capacity_;
  size_t num_created_ = 0;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

/*!
 * \brief Runs `prim` on this thread's stream with its own scratchpad and waits for it.
 * oneDNN errors become ir::Error prefixed with `what`.
 */
void Execute(const std::string& what, const CachedPrimitive& prim, std::unordered_map<int, dnnl::memory> args);

/*! \brief Runs `fn`, turning a dnnl::error into ir::Error prefixed with `what`. */
template <typename F>
auto Guard(const std::string& what, const F& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dnnl::error& err) {
    throw Error(StrCat(what, ": oneDNN failed: ", err.what()));
  }
}

}  // namespace dnnl_utils
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_DNNL_UTILS_H_
