/*!
 * \file dnnl_utils.cc
 * \brief The oneDNN engine, per-thread streams, descriptors and the primitive cache.
 */
#include "ops/dnnl_utils.h"

#include <algorithm>
#include <cstdlib>

#include "ir/cpu_isa.h"

namespace ir {
namespace op {
namespace dnnl_utils {
namespace {

/*!
 * \brief IR_MAX_CPU_ISA caps oneDNN's kernels as well (before its first primitive), unless
 * oneDNN's own ONEDNN_MAX_CPU_ISA (or the older DNNL_MAX_CPU_ISA) says what to use.
 */
void CapOneDnnIsa() {
  if (std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr || std::getenv("DNNL_MAX_CPU_ISA") != nullptr) return;
  try {
    if (MaxCpuIsa() == CpuIsa::kAvx2) dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
    if (MaxCpuIsa() == CpuIsa::kBaseline) dnnl::set_max_cpu_isa(dnnl::cpu_isa::sse41);  // oneDNN's lowest
  } catch (const dnnl::error&) {
    // Too late (a primitive exists already) or not supported by this build: oneDNN picks itself.
  }
}

}  // namespace

const dnnl::engine& Engine() {
  // Leaked on purpose, like the cache: streams and primitives may outlive static destructors.
  static const dnnl::engine* engine = Guard("oneDNN engine", [] {
    CapOneDnnIsa();
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  });
  return *engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream = Guard("oneDNN stream", [] { return dnnl::stream(Engine()); });
  return stream;
}

bool Supports(DType dtype) { return dtype == DType::kFloat32; }

dnnl::memory::data_type DataType(DType dtype) {
  IR_CHECK(Supports(dtype)) << "oneDNN does not compute in " << DTypeName(dtype);
  return dnnl::memory::data_type::f32;
}

dnnl::memory::desc Desc(const std::vector<int64_t>& dims, DType dtype, const std::vector<int64_t>& strides) {
  return Guard("oneDNN memory descriptor", [&] {
    return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), DataType(dtype),
                              dnnl::memory::dims(strides.begin(), strides.end()));
  });
}

dnnl::memory::desc Desc(const std::vector<int64_t>& dims, DType dtype) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(dims[d], 1);
  }
  return Desc(dims, dtype, strides);
}

dnnl::memory Memory(const dnnl::memory::desc& desc, const void* data) {
  // oneDNN takes non-const handles; inputs are only read.
  return Guard("oneDNN memory", [&] { return dnnl::memory(desc, Engine(), const_cast<void*>(data)); });
}

dnnl::primitive_attr DefaultAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

PrimitiveKey& PrimitiveKey::Add(int64_t value) {
  key_ += ',';
  key_ += std::to_string(value);
  return *this;
}

PrimitiveKey& PrimitiveKey::Add(const std::vector<int64_t>& values) {
  key_ += ",[";
  for (int64_t v : values) Add(v);
  key_ += ']';
  return *this;
}

CachedPrimitive PrimitiveCache::GetOrCreate(const PrimitiveKey& key, const std::function<CachedPrimitive()>& create) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key.str());
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  CachedPrimitive created = create();
  std::lock_guard<std::mutex> lock(mutex_);
  ++num_created_;
  auto it = index_.find(key.str());
  if (it != index_.end()) return it->second->second;
  lru_.emplace_front(key.str(), created);
  index_[key.str()] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return created;
}

size_t PrimitiveCache::num_created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return num_created_;
}

size_t PrimitiveCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

PrimitiveCache& PrimitiveCache::Global() {
  // Leaked on purpose: primitives must not be destroyed after oneDNN's own static state.
  static PrimitiveCache* cache = new PrimitiveCache(256);
  return *cache;
}

void Execute(const std::string& what, const CachedPrimitive& prim, std::unordered_map<int, dnnl::memory> args) {
  Guard(what, [&] {
    if (prim.scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(prim.scratchpad, Engine());
    dnnl::stream& stream = Stream();
    prim.primitive.execute(stream, args);
    stream.wait();
  });
}

}  // namespace dnnl_utils
}  // namespace op
}  // namespace ir
