// Runs one collective on the engine's thread: the agreement, then the data (allreduce buckets
// fused per dtype into one buffer), then the waiters are signalled.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "runtime/collective/engine.h"
#include "runtime/collective/timeline.h"

namespace ir {
namespace collective {
namespace detail {
namespace {

// x / n elementwise, in place (the average of an allreduce). Integers divide truncating.
template <typename T>
void DivideBy(void* data, int64_t count, int n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(n));
}

void Average(void* data, int64_t count, DType dtype, int n) {
  switch (dtype) {
    case DType::kFloat32:
      return DivideBy<float>(data, count, n);
    case DType::kFloat64:
      return DivideBy<double>(data, count, n);
    case DType::kInt32:
      return DivideBy<int32_t>(data, count, n);
    case DType::kInt64:
      return DivideBy<int64_t>(data, count, n);
    default:
      IR_CHECK(false) << "average of " << DTypeName(dtype) << " tensors";
  }
}

}  // namespace

void Engine::Phase(const Work& work, const char* phase, double begin_us) {
  if (TimelineEnabled()) TimelineRecord(work.Info().Names(), phase, begin_us, Microseconds());
}

template <typename F>
void Engine::Transfer(const Work& work, F&& call) {
  double begin = Microseconds();
  call();
  double end = Microseconds();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.transport_ms += (end - begin) / 1000.0;
  }
  if (TimelineEnabled()) TimelineRecord(work.Info().Names(), "transport", begin, end);
}

std::string Engine::PendingNames() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream os;
  int n = 0;
  for (const auto& work : queue_) {
    for (const Member& m : work->members) os << (n++ ? ", " : "") << m.name;
  }
  for (const auto& entry : open_) {
    for (const Member& m : entry.second->members) {
      if (m.submitted) os << (n++ ? ", " : "") << m.name << " (bucket incomplete)";
    }
  }
  return "[" + os.str() + "]";
}

std::string Engine::Agree(Work& work, bool* joined) {
  double begin = Microseconds();
  CollectiveInfo info = work.Info();
  AgreementRecord mine = MakeRecord(work.sequence, info);
  std::vector<AgreementRecord> all(static_cast<size_t>(group_.size));
  *joined = transport_->AllgatherWithin(&mine, sizeof(mine), all.data(), timeout_s_);
  Phase(work, "agreement", begin);
  if (!*joined) {
    std::ostringstream os;
    os << "rank " << group_.rank << " waited " << timeout_s_ << " s for the other ranks to submit collective #"
       << work.sequence << " (" << info.Names() << "); a rank that never submits it, or submits collectives "
       << "in another order, stalls the group; pending on this rank: " << PendingNames();
    return os.str();
  }
  for (AgreementRecord& r : all) {
    r.names[sizeof(r.names) - 1] = '\0';
    r.details[sizeof(r.details) - 1] = '\0';
  }
  return CheckAgreement(all);
}

void Engine::Allreduce(Work& work) {
  // One fusion buffer per dtype among the bucket's members (usually one).
  std::vector<DType> dtypes;
  for (const Member& m : work.members) {
    if (std::find(dtypes.begin(), dtypes.end(), m.host.dtype()) == dtypes.end()) dtypes.push_back(m.host.dtype());
  }
  for (DType dtype : dtypes) {
    size_t element = DTypeSize(dtype), total = 0;
    std::vector<Member*> members;
    for (Member& m : work.members) {
      if (m.host.dtype() != dtype) continue;
      members.push_back(&m);
      total += m.host.nbytes();
    }
    int64_t count = static_cast<int64_t>(total / element);
    char* buffer = nullptr;
    double begin = Microseconds();
    if (members.size() == 1) {
      buffer = static_cast<char*>(members[0]->host.data());  // One member: reduced in place.
    } else {
      if (fusion_.size() < total) fusion_.resize(total);
      buffer = fusion_.data();
      size_t offset = 0;
      for (Member* m : members) {
        std::memcpy(buffer + offset, m->host.data(), m->host.nbytes());
        offset += m->host.nbytes();
      }
      Phase(work, "pack", begin);
    }
    Transfer(work, [&] { transport_->AllreduceSum(buffer, count, dtype); });
    begin = Microseconds();
    size_t offset = 0;
    for (Member* m : members) {
      if (members.size() > 1) std::memcpy(m->host.data(), buffer + offset, m->host.nbytes());
      if (m->op == ReduceOp::kAverage) Average(m->host.data(), m->host.Size(), dtype, group_.size);
      offset += m->host.nbytes();
    }
    Phase(work, "unpack", begin);
  }
}

void Engine::Allgather(Work& work) {
  const NDArray& in = work.members[0].host;
  std::vector<int64_t> first(static_cast<size_t>(group_.size));
  int64_t mine = in.shape()[0];
  Transfer(work,
           [&] { transport_->Allgatherv(&mine, first.data(), std::vector<int64_t>(first.size(), sizeof(int64_t))); });
  int64_t row_bytes = static_cast<int64_t>(DTypeSize(in.dtype())) * in.shape().ProdDims(1, in.shape().ndim());
  std::vector<int64_t> bytes(first.size());
  std::vector<int64_t> dims = in.shape().dims();
  dims[0] = 0;
  for (size_t r = 0; r < first.size(); ++r) {
    bytes[r] = first[r] * row_bytes;
    dims[0] += first[r];
  }
  work.result = NDArray(Shape(dims), in.dtype());
  Transfer(work, [&] { transport_->Allgatherv(in.data(), work.result.data(), bytes); });
}

void Engine::Broadcast(Work& work) {
  NDArray& data = work.members[0].host;
  Transfer(work, [&] { transport_->Broadcast(data.data(), static_cast<int64_t>(data.nbytes()), work.root); });
}

void Engine::Execute(const std::shared_ptr<Work>& work) {
  Phase(*work, "queue", work->queued_us);
  std::string error;
  bool joined = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error = broken_;
  }
  try {
    if (error.empty()) error = Agree(*work, &joined);
    if (error.empty()) {
      if (work->kind == Kind::kAllreduce) Allreduce(*work);
      if (work->kind == Kind::kAllgather) Allgather(*work);
      if (work->kind == Kind::kBroadcast) Broadcast(*work);
    }
  } catch (const std::exception& e) {
    error = work->Info().Names() + " failed in the " + group_.transport + " transport: " + e.what();
    joined = false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (error.empty()) {
    work->state = Work::State::kDone;
    stats_.collectives += 1;
    for (const Member& m : work->members) {
      stats_.tensors += 1;
      stats_.bytes += static_cast<int64_t>(m.host.nbytes());
    }
  } else {
    work->state = Work::State::kFailed;
    work->error = error;
    // A mismatch was seen alike by every rank (MPI may still finalize); a rank that never
    // joined, or a transport error, leaves requests in flight that cannot be withdrawn.
    BreakLocked(error, joined);
  }
  done_cv_.notify_all();
}

}  // namespace detail
}  // namespace collective
}  // namespace ir
