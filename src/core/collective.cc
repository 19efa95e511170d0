/*!
 * \file collective.cc
 * \brief The collectives of ir/collective.h, run by the engine src/runtime/collective registers:
 * ops, the executor and the C API call these, never that layer.
 */
#include "ir/collective.h"

namespace ir {
namespace collective {
namespace {

// Set once, at static initialization; only read afterwards.
EngineInterface*& Registered() {
  static EngineInterface* engine = nullptr;
  return engine;
}

EngineInterface& Get() {
  EngineInterface* engine = Registered();
  IR_CHECK(engine != nullptr) << "no collective engine is registered (src/runtime/collective registers it)";
  return *engine;
}

}  // namespace

void RegisterEngine(EngineInterface* engine) {
  IR_CHECK(engine != nullptr) << "RegisterEngine: the engine is null";
  IR_CHECK(Registered() == nullptr) << "a collective engine is registered already";
  Registered() = engine;
}

void Init(const InitOptions& options) { Get().Init(options); }
bool IsInitialized() { return Registered() != nullptr && Registered()->IsInitialized(); }
void Shutdown() { Get().Shutdown(); }
int Rank() { return Get().Rank(); }
int Size() { return Get().Size(); }
int LocalRank() { return Get().LocalRank(); }
int LocalSize() { return Get().LocalSize(); }
std::string TransportName() { return Get().TransportName(); }
int64_t SubmitAllreduce(const AllreduceRequest& request) { return Get().SubmitAllreduce(request); }
void WaitAllreduce(int64_t ticket, NDArray* out) { Get().WaitAllreduce(ticket, out); }
NDArray Allreduce(const std::string& name, const NDArray& value, ReduceOp op) {
  return Get().Allreduce(name, value, op);
}
NDArray Allgather(const std::string& name, const NDArray& value) { return Get().Allgather(name, value); }
NDArray Broadcast(const std::string& name, const NDArray& value, int root) {
  return Get().Broadcast(name, value, root);
}
EngineStats Stats() { return Get().Stats(); }
void ResetStats() { Get().ResetStats(); }

void TimelineRecord(const std::string& name, const std::string& category, double begin_us, double end_us) {
  if (Registered() != nullptr) Registered()->TimelineRecord(name, category, begin_us, end_us);
}
bool TimelineEnabled() { return Registered() != nullptr && Registered()->TimelineEnabled(); }
double Microseconds() { return Get().Microseconds(); }

}  // namespace collective
}  // namespace ir
