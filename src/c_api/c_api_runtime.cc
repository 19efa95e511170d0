/*!
 * \file c_api_runtime.cc
 * \brief C API: NDArrays and sessions.
 */
#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>

#include "c_api/c_api_common.h"
#include "ir/runtime.h"
#include "ir/symbol.h"

using ir::DType;
using ir::NDArray;
using ir::Session;
using ir::capi::DTypeFromInt;
using ir::capi::ExposeStrings;
using ir::capi::ThreadReturnBuffer;

namespace ir {
namespace capi {

std::string NumericBooleans(const std::string& json) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < json.size()) out += json[++i];
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (json.compare(i, 4, "true") == 0) {
      out += '1';
      i += 3;
    } else if (json.compare(i, 5, "false") == 0) {
      out += '0';
      i += 4;
    } else {
      out += c;
    }
  }
  return out;
}

SessionOptions ParseSessionOptions(const char* json) {
  SessionOptions options;
  if (json == nullptr || std::string(json).find_first_not_of(" \t\r\n") == std::string::npos) return options;
  int fusion = options.fusion, is_train = options.is_train, profile = options.profile;
  int simplify = options.simplify, fast_math = options.fast_math, nsz = options.nsz;
  detail::WithJSONContext("session options", [&] {
    std::istringstream is(NumericBooleans(json));
    dmlc::JSONReader reader(&is);
    dmlc::JSONObjectReadHelper helper;
    helper.DeclareOptionalField("target", &options.target);
    helper.DeclareOptionalField("fusion", &fusion);
    helper.DeclareOptionalField("fmax", &options.fmax);
    helper.DeclareOptionalField("dump_dir", &options.dump_dir);
    helper.DeclareOptionalField("seed", &options.seed);
    helper.DeclareOptionalField("is_train", &is_train);
    helper.DeclareOptionalField("passes", &options.passes);
    helper.DeclareOptionalField("profile", &profile);
    helper.DeclareOptionalField("simplify", &simplify);
    helper.DeclareOptionalField("fast_math", &fast_math);
    helper.DeclareOptionalField("nsz", &nsz);
    helper.DeclareOptionalField("rule_sets", &options.rule_sets);
    helper.DeclareOptionalField("collective_bucket_bytes", &options.collective_bucket_bytes);
    helper.DeclareOptionalField("collective_first_bucket_bytes", &options.collective_first_bucket_bytes);
    helper.ReadAllFields(&reader);
  });
  IR_CHECK(options.collective_bucket_bytes >= -1 && options.collective_first_bucket_bytes >= 0)
      << "session options: collective_bucket_bytes must be >= 0 or -1 (auto) and collective_first_bucket_bytes >= 0, "
      << "got " << options.collective_bucket_bytes << " and " << options.collective_first_bucket_bytes;
  options.fusion = fusion != 0;
  options.is_train = is_train != 0;
  options.profile = profile != 0;
  options.simplify = simplify != 0;
  options.fast_math = fast_math != 0;
  options.nsz = nsz != 0;
  return options;
}

}  // namespace capi
}  // namespace ir

namespace {

NDArray* AsArray(IRNDArrayHandle handle) {
  IR_CHECK(handle != nullptr) << "null NDArray handle";
  return static_cast<NDArray*>(handle);
}

Session* AsSession(IRSessionHandle handle) {
  IR_CHECK(handle != nullptr) << "null session handle";
  return static_cast<Session*>(handle);
}

/*! \brief `text` as a JSON string literal. */
std::string JSONString(const std::string& text) {
  std::ostringstream os;
  dmlc::JSONWriter writer(&os);
  writer.WriteString(text);
  return os.str();
}

/*! \brief The profiled nodes, slowest first: [{"name": .., "op": .., "ms": ..}, ...]. */
std::string NodesJSON(std::vector<ir::NodeProfile> nodes) {
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const ir::NodeProfile& a, const ir::NodeProfile& b) { return a.ms > b.ms; });
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    os << (i ? ", " : "") << "{\"name\": " << JSONString(nodes[i].name) << ", \"op\": " << JSONString(nodes[i].op)
       << ", \"ms\": " << nodes[i].ms << "}";
  }
  os << "]";
  return os.str();
}

std::string StringsJSON(const std::vector<std::string>& names) {
  std::string text = "[";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + JSONString(names[i]);
  return text + "]";
}

std::string StatsJSON(const ir::RunStats& stats) {
  std::ostringstream os;
  os << "{\"bytes_allocated\": " << stats.bytes_allocated << ", \"bytes_without_reuse\": " << stats.bytes_without_reuse
     << ", \"memory_lower_bound_bytes\": " << stats.memory_lower_bound_bytes
     << ", \"kernels_launched\": " << stats.kernels_launched << ", \"host_fallbacks\": " << stats.host_fallbacks
     << ", \"pfor_fallbacks\": " << StringsJSON(stats.pfor_fallbacks)
     << ", \"rewrites\": " << StringsJSON(stats.rewrites) << ", \"bound\": " << (stats.bound ? "true" : "false")
     << ", \"bind_ms\": " << stats.bind_ms << ", \"run_ms\": " << stats.run_ms
     << ", \"nodes\": " << NodesJSON(stats.nodes) << "}";
  return os.str();
}

/*! \brief The distinct head nodes of a symbol, in output order. */
std::vector<ir::NodePtr> HeadNodes(const ir::Symbol& sym) {
  std::vector<ir::NodePtr> nodes;
  for (const ir::NodeEntry& e : sym.outputs) {
    if (std::find(nodes.begin(), nodes.end(), e.node) == nodes.end()) nodes.push_back(e.node);
  }
  return nodes;
}

/*! \brief The feeds by name; a name given twice is an error (it would silently keep one value). */
std::unordered_map<std::string, NDArray> CollectFeeds(uint32_t num_feeds, const char** names,
                                                      std::vector<NDArray> values) {
  std::unordered_map<std::string, NDArray> feeds;
  for (uint32_t i = 0; i < num_feeds; ++i) {
    for (uint32_t j = 0; j < i; ++j) {
      IR_CHECK(std::strcmp(names[i], names[j]) != 0)
          << "IRSessionRun: feed '" << names[i] << "' is given twice (feeds " << j << " and " << i << ")";
    }
    feeds.emplace(names[i], std::move(values[i]));
  }
  return feeds;
}

/*! \brief A CPU array over the caller's `data` (not copied, not owned): feed `name` of a borrowed run. */
NDArray BorrowedArray(const char* name, const int64_t* dims, int ndim, DType dtype, void* data) {
  ir::Shape shape(std::vector<int64_t>(dims, dims + ndim));
  for (int k = 0; k < ndim; ++k) IR_CHECK(dims[k] >= 0) << "feed '" << name << "': negative dimension in " << shape;
  IR_CHECK(shape.FitsInt64()) << "feed '" << name << "': the size of shape " << shape << " overflows";
  size_t bytes = static_cast<size_t>(shape.Bytes(dtype));
  IR_CHECK(bytes == 0 || data != nullptr) << "feed '" << name << "' of " << bytes << " bytes has NULL data";
  IR_CHECK(reinterpret_cast<uintptr_t>(data) % ir::DTypeSize(dtype) == 0)
      << "feed '" << name << "': data is not aligned to its element size " << ir::DTypeSize(dtype);
  static char empty[64];  // a zero-size feed still needs a valid pointer
  void* base = bytes == 0 ? static_cast<void*>(empty) : data;
  return NDArray::FromStorage(ir::Storage::Borrow(base, bytes, ir::Device::CPU()), 0, shape, dtype);
}

/*! \brief Runs `fetches` and `targets` with `feeds`; the outputs stay valid until the next call of this thread. */
void RunSession(Session* session, IRSymbolHandle fetches, IRSymbolHandle targets,
                const std::unordered_map<std::string, NDArray>& feeds, uint32_t* num_outputs,
                IRNDArrayHandle** outputs) {
  std::vector<ir::NodeEntry> fetch_entries;
  if (fetches != nullptr) fetch_entries = static_cast<ir::Symbol*>(fetches)->outputs;
  std::vector<ir::NodePtr> target_nodes;
  if (targets != nullptr) target_nodes = HeadNodes(*static_cast<ir::Symbol*>(targets));
  std::vector<NDArray> results = session->Run(fetch_entries, feeds, target_nodes);
  static thread_local std::vector<IRNDArrayHandle> handles;
  handles.clear();
  for (NDArray& r : results) handles.push_back(new NDArray(std::move(r)));
  *num_outputs = static_cast<uint32_t>(handles.size());
  *outputs = handles.data();
}

}  // namespace

int IRNDArrayCreate(const int64_t* shape, int ndim, int dtype, const void* data_or_null, IRNDArrayHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  IR_CHECK(ndim >= 0) << "IRNDArrayCreate: negative ndim " << ndim;
  IR_API_CHECK_NOT_NULL_IF(shape, ndim);
  std::vector<int64_t> dims(shape, shape + ndim);
  for (int64_t d : dims) IR_CHECK(d >= 0) << "IRNDArrayCreate: negative dimension in " << ir::Shape(dims);
  auto array = std::make_unique<NDArray>(ir::Shape(dims), DTypeFromInt(dtype));
  if (data_or_null != nullptr) {
    std::memcpy(array->data(), data_or_null, array->nbytes());
  } else {
    std::memset(array->data(), 0, array->nbytes());
  }
  *out = array.release();
  IR_API_END();
}

int IRNDArrayGetShape(IRNDArrayHandle array, int* ndim, const int64_t** shape) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(ndim);
  IR_API_CHECK_NOT_NULL(shape);
  const ir::Shape& s = AsArray(array)->shape();
  *ndim = s.ndim();
  *shape = s.dims().data();
  IR_API_END();
}

int IRNDArrayGetDType(IRNDArrayHandle array, int* dtype) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(dtype);
  *dtype = static_cast<int>(AsArray(array)->dtype());
  IR_API_END();
}

int IRNDArrayGetData(IRNDArrayHandle array, int* ndim, const int64_t** shape, int* dtype, const void** data) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(ndim);
  IR_API_CHECK_NOT_NULL(shape);
  IR_API_CHECK_NOT_NULL(dtype);
  IR_API_CHECK_NOT_NULL(data);
  const NDArray& a = *AsArray(array);
  *ndim = a.shape().ndim();
  *shape = a.shape().dims().data();
  *dtype = static_cast<int>(a.dtype());
  *data = a.device() == ir::Device::CPU() ? a.data() : nullptr;
  IR_API_END();
}

int IRNDArraySyncCopyToCPU(IRNDArrayHandle array, void* dst, size_t bytes) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL_IF(dst, bytes);
  const NDArray& a = *AsArray(array);
  IR_CHECK(bytes == a.nbytes()) << "IRNDArraySyncCopyToCPU: the array " << ir::DTypeName(a.dtype()) << a.shape()
                                << " has " << a.nbytes() << " bytes, the destination " << bytes;
  if (bytes == 0) return 0;
  NDArray host = a.device() == ir::Device::CPU() ? a : a.CopyTo(ir::Device::CPU());
  std::memcpy(dst, host.data(), bytes);
  IR_API_END();
}

int IRNDArrayFree(IRNDArrayHandle array) {
  IR_API_BEGIN();
  delete static_cast<NDArray*>(array);
  IR_API_END();
}

int IRSessionCreate(const char* options_json, IRSessionHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  *out = new Session(ir::capi::ParseSessionOptions(options_json));
  IR_API_END();
}

int IRSessionRun(IRSessionHandle session, IRSymbolHandle fetches, IRSymbolHandle targets, uint32_t num_feeds,
                 const char** feed_names, IRNDArrayHandle* feed_values, uint32_t* num_outputs,
                 IRNDArrayHandle** outputs) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_ARRAY(feed_names, num_feeds);
  IR_API_CHECK_ARRAY(feed_values, num_feeds);
  IR_API_CHECK_NOT_NULL(num_outputs);
  IR_API_CHECK_NOT_NULL(outputs);
  std::vector<NDArray> values;
  for (uint32_t i = 0; i < num_feeds; ++i) values.push_back(*AsArray(feed_values[i]));
  RunSession(AsSession(session), fetches, targets, CollectFeeds(num_feeds, feed_names, std::move(values)), num_outputs,
             outputs);
  IR_API_END();
}

int IRSessionRunBorrowed(IRSessionHandle session, IRSymbolHandle fetches, IRSymbolHandle targets, uint32_t num_feeds,
                         const char** feed_names, const int* feed_dtypes, const int* feed_ndims,
                         const int64_t* feed_shapes, void* const* feed_data, uint32_t* num_outputs,
                         IRNDArrayHandle** outputs) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_ARRAY(feed_names, num_feeds);
  IR_API_CHECK_NOT_NULL_IF(feed_dtypes, num_feeds);
  IR_API_CHECK_NOT_NULL_IF(feed_ndims, num_feeds);
  IR_API_CHECK_NOT_NULL_IF(feed_data, num_feeds);
  IR_API_CHECK_NOT_NULL(num_outputs);
  IR_API_CHECK_NOT_NULL(outputs);
  std::vector<NDArray> values;
  const int64_t* dims = feed_shapes;
  for (uint32_t i = 0; i < num_feeds; ++i) {
    IR_CHECK(feed_ndims[i] >= 0) << "IRSessionRunBorrowed: feed '" << feed_names[i] << "' has negative ndim "
                                 << feed_ndims[i];
    IR_API_CHECK_NOT_NULL_IF(feed_shapes, feed_ndims[i]);
    values.push_back(BorrowedArray(feed_names[i], dims, feed_ndims[i], DTypeFromInt(feed_dtypes[i]), feed_data[i]));
    dims += feed_ndims[i];
  }
  RunSession(AsSession(session), fetches, targets, CollectFeeds(num_feeds, feed_names, std::move(values)), num_outputs,
             outputs);
  IR_API_END();
}

int IRSessionGetVariable(IRSessionHandle session, const char* name, IRNDArrayHandle* out, int* found) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(out);
  IR_API_CHECK_NOT_NULL(found);
  const ir::VariableStore& store = AsSession(session)->variables();
  *found = store.Has(name) ? 1 : 0;
  *out = *found ? new NDArray(store.Read(name, ir::Device::CPU())) : nullptr;
  IR_API_END();
}

int IRSessionSetVariable(IRSessionHandle session, const char* name, IRNDArrayHandle value) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(value);
  const NDArray& v = *AsArray(value);
  AsSession(session)->variables().Set(name, v.CopyTo(v.device()));
  IR_API_END();
}

int IRSessionListVariables(IRSessionHandle session, uint32_t* out_size, const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(AsSession(session)->variables().Names(), &buf->strings, &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRSessionGetStatsJSON(IRSessionHandle session, const char** json) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_NOT_NULL(json);
  auto* buf = ThreadReturnBuffer();
  buf->str = StatsJSON(AsSession(session)->last_stats());
  *json = buf->str.c_str();
  IR_API_END();
}

int IRSessionGetLastGraph(IRSessionHandle session, IRGraphHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(session);
  IR_API_CHECK_NOT_NULL(out);
  *out = new ir::Graph(AsSession(session)->last_graph());
  IR_API_END();
}

int IRSessionFree(IRSessionHandle session) {
  IR_API_BEGIN();
  delete static_cast<Session*>(session);
  IR_API_END();
}
