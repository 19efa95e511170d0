/*!
 * \file c_api_collective.cc
 * \brief C API: the process group of a data-parallel job (ir/collective.h), for tinyflow.horovod.
 */
#include <dmlc/json.h>

#include <mutex>
#include <sstream>

#include "c_api/c_api_common.h"
#include "core/json_util.h"
#include "ir/collective.h"

namespace {

namespace collective = ir::collective;

ir::NDArray* AsArray(IRNDArrayHandle handle) {
  IR_CHECK(handle != nullptr) << "null NDArray handle";
  return static_cast<ir::NDArray*>(handle);
}

/*! \brief A new handle of `result`, copied when it is `value`'s storage (one process: collectives are identities). */
IRNDArrayHandle NewResult(const ir::NDArray& result, const ir::NDArray& value) {
  if (result.storage() != value.storage()) return new ir::NDArray(result);
  ir::NDArray copy(result.shape(), result.dtype(), result.device());
  copy.CopyFrom(result);
  return new ir::NDArray(copy);
}

collective::InitOptions ParseInitOptions(const char* json) {
  collective::InitOptions options;
  if (json == nullptr || std::string(json).find_first_not_of(" \t\r\n") == std::string::npos) return options;
  ir::detail::WithJSONContext("collective options", [&] {
    std::istringstream is(json);
    dmlc::JSONReader reader(&is);
    dmlc::JSONObjectReadHelper helper;
    helper.DeclareOptionalField("transport", &options.transport);
    helper.DeclareOptionalField("timeout_s", &options.timeout_s);
    helper.DeclareOptionalField("timeline", &options.timeline);
    helper.ReadAllFields(&reader);
  });
  return options;
}

}  // namespace

int IRCollectiveInit(const char* options_json) {
  IR_API_BEGIN();
  collective::Init(ParseInitOptions(options_json));
  IR_API_END();
}

int IRCollectiveShutdown(void) {
  IR_API_BEGIN();
  collective::Shutdown();
  IR_API_END();
}

int IRCollectiveIsInitialized(int* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  *out = collective::IsInitialized() ? 1 : 0;
  IR_API_END();
}

int IRCollectiveGetInfo(int* rank, int* size, int* local_rank, int* local_size, const char** transport) {
  IR_API_BEGIN();
  if (rank != nullptr) *rank = collective::Rank();
  if (size != nullptr) *size = collective::Size();
  if (local_rank != nullptr) *local_rank = collective::LocalRank();
  if (local_size != nullptr) *local_size = collective::LocalSize();
  if (transport != nullptr) {
    static const std::string* name = nullptr;  // lives until the process ends
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    std::string now = collective::TransportName();
    if (name == nullptr || *name != now) name = new std::string(now);
    *transport = name->c_str();
  }
  IR_API_END();
}

int IRCollectiveAllreduce(const char* name, IRNDArrayHandle value, int op, IRNDArrayHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(value);
  IR_API_CHECK_NOT_NULL(out);
  IR_CHECK(op == 0 || op == 1) << "IRCollectiveAllreduce: op must be 0 (sum) or 1 (average), got " << op;
  *out =
      NewResult(collective::Allreduce(name, *AsArray(value), static_cast<collective::ReduceOp>(op)), *AsArray(value));
  IR_API_END();
}

int IRCollectiveAllgather(const char* name, IRNDArrayHandle value, IRNDArrayHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(value);
  IR_API_CHECK_NOT_NULL(out);
  *out = NewResult(collective::Allgather(name, *AsArray(value)), *AsArray(value));
  IR_API_END();
}

int IRCollectiveBroadcast(const char* name, IRNDArrayHandle value, int root, IRNDArrayHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(value);
  IR_API_CHECK_NOT_NULL(out);
  *out = NewResult(collective::Broadcast(name, *AsArray(value), root), *AsArray(value));
  IR_API_END();
}

int IRCollectiveGetStatsJSON(int reset, const char** json) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(json);
  collective::EngineStats stats = collective::Stats();
  if (reset) collective::ResetStats();
  std::ostringstream os;
  os << "{\"collectives\": " << stats.collectives << ", \"tensors\": " << stats.tensors
     << ", \"bytes\": " << stats.bytes << ", \"transport_ms\": " << stats.transport_ms << "}";
  auto* buf = ir::capi::ThreadReturnBuffer();
  buf->str = os.str();
  *json = buf->str.c_str();
  IR_API_END();
}
