#include "runtime/collective/engine.h"

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "runtime/collective/timeline.h"
#include "runtime/collective/transport_loader.h"

namespace ir {
namespace collective {
namespace detail {
namespace {

double TimeoutFromEnv() {
  const char* text = std::getenv("IR_COLLECTIVE_TIMEOUT");
  if (text == nullptr || text[0] == '\0') return 60;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  IR_CHECK(end != text && *end == '\0' && value > 0)
      << "IR_COLLECTIVE_TIMEOUT=\"" << text << "\": want a positive number of seconds";
  return value;
}

std::string SecondsText(double seconds) {
  std::ostringstream os;
  os << seconds;
  return os.str();
}

bool Summable(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kInt32 || dtype == DType::kInt64;
}

// Registered once, at the first Init: runs before the destructors of every static that existed then.
void ShutdownAtExit() {
  try {
    Engine::Get().Shutdown();
  } catch (...) {
    // At exit nobody can handle it; the group is ended by the launcher.
  }
}

}  // namespace

CollectiveInfo Work::Info() const {
  CollectiveInfo info;
  info.kind = kind;
  info.root = root;
  for (const Member& m : members) info.tensors.push_back(TensorInfo{m.name, m.host.dtype(), m.host.shape(), m.op});
  return info;
}

Engine& Engine::Get() {
  static Engine* engine = new Engine();
  return *engine;
}

void Engine::Init(const InitOptions& options) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (initialized_) return;
  IR_CHECK(!thread_.joinable()) << "collective::Init while a Shutdown is in progress";
  timeout_s_ = options.timeout_s > 0 ? options.timeout_s : TimeoutFromEnv();
  std::string name = ResolveTransportName(options.transport);
  started_ = stopping_ = false;
  start_error_.clear();
  broken_.clear();
  transport_usable_ = true;
  stats_ = EngineStats();
  thread_ = std::thread(&Engine::ThreadMain, this, name);
  thread_cv_.wait(lock, [&] { return started_ || !start_error_.empty(); });
  if (!start_error_.empty()) {
    lock.unlock();
    thread_.join();
    IR_CHECK(false) << start_error_;
  }
  initialized_ = true;
  static bool registered = false;
  if (!registered) registered = std::atexit(ShutdownAtExit) == 0;
  lock.unlock();
  try {
    TimelineOpen(options.timeline, group_.rank);
  } catch (...) {
    Shutdown();
    throw;
  }
}

void Engine::ThreadMain(std::string transport_name) {
  std::unique_ptr<Transport> transport;
  try {
    transport = CreateTransport(transport_name);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    start_error_ = e.what();
    thread_cv_.notify_all();
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  transport_ = std::move(transport);
  group_ = Group{transport_->rank(), transport_->size(), transport_->local_rank(), transport_->local_size(),
                 transport_->name()};
  started_ = true;
  thread_cv_.notify_all();
  for (;;) {
    thread_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) break;
    std::shared_ptr<Work> work = queue_.front();
    queue_.pop_front();
    lock.unlock();
    Execute(work);
    lock.lock();
  }
  // After a collective some rank never joined, MPI_Finalize could wait for it forever: the
  // transport is left alone and the process's exit (nonzero, from the error) ends the job.
  if (transport_usable_) {
    lock.unlock();
    transport_.reset();
  } else {
    abandoned_.push_back(std::move(transport_));  // Kept, never destroyed (the engine is never).
  }
}

void Engine::Shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!initialized_ || stopping_) return;  // Not started, or another thread is stopping it.
  stopping_ = true;
  // Buckets still missing members can never run now; queued collectives still do.
  while (!open_.empty()) {
    std::shared_ptr<Work> work = open_.begin()->second;
    open_.erase(open_.begin());
    work->state = Work::State::kFailed;
    work->error = "collective::Shutdown ran before every member of bucket [" + work->key + "] was submitted";
  }
  done_cv_.notify_all();
  thread_cv_.notify_all();
  lock.unlock();
  if (thread_.joinable()) thread_.join();
  TimelineClose();
  lock.lock();
  initialized_ = false;
  tickets_.clear();
  next_sequence_ = 1;
}

bool Engine::initialized() {
  std::lock_guard<std::mutex> lock(mutex_);
  return initialized_;
}

Engine::Group Engine::group() {
  std::lock_guard<std::mutex> lock(mutex_);
  IR_CHECK(initialized_) << "collective: Init has not run (call ir::collective::Init, hvd.init() in Python)";
  return group_;
}

void Engine::CheckUsable() {
  IR_CHECK(initialized_) << "collective: Init has not run (call ir::collective::Init, hvd.init() in Python)";
  if (!broken_.empty()) throw Error(broken_);
  IR_CHECK(!stopping_) << "collective: the engine is shutting down";
}

void Engine::Enqueue(const std::shared_ptr<Work>& work) {
  work->state = Work::State::kQueued;
  work->sequence = next_sequence_++;
  work->queued_us = Microseconds();
  queue_.push_back(work);
  thread_cv_.notify_all();
}

void Engine::BreakLocked(const std::string& error, bool transport_usable) {
  if (broken_.empty()) broken_ = error;
  transport_usable_ = transport_usable_ && transport_usable;
  auto fail = [&](const std::shared_ptr<Work>& work) {
    work->state = Work::State::kFailed;
    work->error = broken_;
  };
  for (auto& entry : open_) fail(entry.second);
  open_.clear();
  for (auto& work : queue_) fail(work);
  queue_.clear();
  done_cv_.notify_all();
}

void Engine::FailIncompleteLocked(const std::shared_ptr<Work>& work) {
  std::ostringstream missing, submitted;
  int num_missing = 0, num_submitted = 0;
  for (size_t i = 0; i < work->members.size(); ++i) {
    const Member& m = work->members[i];
    if (m.submitted) {
      submitted << (num_submitted++ ? ", " : "") << m.name;
    } else {
      missing << (num_missing++ ? ", " : "") << "#" << i;
    }
  }
  std::ostringstream os;
  os << "bucket [" << work->key << "] has waited " << SecondsText(timeout_s_)
     << " s for members never submitted on this rank: [" << missing.str() << "] of " << work->members.size()
     << " (submitted: [" << submitted.str() << "]); the other ranks wait for this bucket too";
  open_.erase(work->key);
  work->state = Work::State::kFailed;
  work->error = os.str();
  BreakLocked(os.str(), false);
}

int64_t Engine::Submit(const AllreduceRequest& request) {
  IR_CHECK(request.value.defined()) << "allreduce of " << request.name << ": the value is undefined";
  DType dtype = request.value.dtype();
  IR_CHECK(Summable(dtype)) << "allreduce of " << request.name << ": " << DTypeName(dtype)
                            << " tensors cannot be summed (float32, float64, int32, int64 can)";
  IR_CHECK(request.num_members >= 1 && request.index >= 0 && request.index < request.num_members)
      << "allreduce of " << request.name << ": member #" << request.index << " of a bucket of " << request.num_members;
  NDArray host = request.value.CopyTo(Device::CPU());
  std::lock_guard<std::mutex> lock(mutex_);
  CheckUsable();
  auto found = open_.find(request.bucket);
  if (found != open_.end()) {
    const Work& open = *found->second;
    IR_CHECK(static_cast<int>(open.members.size()) == request.num_members)
        << "bucket [" << request.bucket << "]: " << request.name << " says it has " << request.num_members
        << " members, an earlier member said " << open.members.size();
    IR_CHECK(!open.members[request.index].submitted)
        << "bucket [" << request.bucket << "]: member #" << request.index << " (" << request.name
        << ") was submitted twice before the bucket ran";
  } else {
    auto work = std::make_shared<Work>();
    work->key = request.bucket;
    work->members.resize(request.num_members);
    work->created_us = Microseconds();
    found = open_.emplace(request.bucket, work).first;
  }
  std::shared_ptr<Work> work = found->second;
  Member& member = work->members[request.index];
  member.name = request.name;
  member.op = request.op;
  member.host = host;
  member.submitted = true;
  int64_t ticket = next_ticket_++;
  tickets_[ticket] = {work, request.index};
  if (++work->submitted == request.num_members) {
    open_.erase(found);
    Enqueue(work);
  }
  return ticket;
}

void Engine::Wait(int64_t ticket, NDArray* out) {
  IR_CHECK(out != nullptr) << "collective::WaitAllreduce: out is null";
  std::unique_lock<std::mutex> lock(mutex_);
  auto found = tickets_.find(ticket);
  IR_CHECK(found != tickets_.end()) << "collective::WaitAllreduce: unknown ticket " << ticket
                                    << " (already waited for, or from before a Shutdown)";
  std::shared_ptr<Work> work = found->second.first;
  int index = found->second.second;
  tickets_.erase(found);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double, std::micro>(work->created_us + timeout_s_ * 1e6 - Microseconds());
  while (work->state == Work::State::kOpen || work->state == Work::State::kQueued) {
    if (work->state == Work::State::kQueued) {
      done_cv_.wait(lock);
    } else if (done_cv_.wait_until(lock, deadline) == std::cv_status::timeout && work->state == Work::State::kOpen) {
      FailIncompleteLocked(work);
    }
  }
  if (work->state == Work::State::kFailed) throw Error(work->error);
  NDArray result = work->members[index].host;
  lock.unlock();
  if (!out->defined()) {
    *out = result;
    return;
  }
  IR_CHECK(out->dtype() == result.dtype() && out->Size() == result.Size())
      << "collective::WaitAllreduce of " << work->members[index].name << ": the result is " << DTypeName(result.dtype())
      << result.shape() << ", out is " << DTypeName(out->dtype()) << out->shape();
  NDArray reshaped = result.Reshape(out->shape());
  if (!out->Overlaps(reshaped)) out->CopyFrom(reshaped);
}

std::shared_ptr<Work> Engine::RunSynchronous(Kind kind, const std::string& name, const NDArray& value, ReduceOp op,
                                             int root) {
  IR_CHECK(value.defined()) << KindName(kind) << " of " << name << ": the value is undefined";
  IR_CHECK(kind != Kind::kAllreduce || Summable(value.dtype()))
      << "allreduce of " << name << ": " << DTypeName(value.dtype())
      << " tensors cannot be summed (float32, float64, int32, int64 can)";
  auto work = std::make_shared<Work>();
  work->kind = kind;
  work->root = root;
  work->members.resize(1);
  work->members[0] = Member{name, op, value.CopyTo(Device::CPU()), true};
  work->submitted = 1;
  std::unique_lock<std::mutex> lock(mutex_);
  CheckUsable();
  IR_CHECK(kind != Kind::kBroadcast || (root >= 0 && root < group_.size))
      << "broadcast of " << name << " from rank " << root << " in a group of size " << group_.size;
  work->created_us = Microseconds();
  Enqueue(work);
  done_cv_.wait(lock, [&] { return work->state == Work::State::kDone || work->state == Work::State::kFailed; });
  if (work->state == Work::State::kFailed) throw Error(work->error);
  return work;
}

EngineStats Engine::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void Engine::ResetStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_ = EngineStats();
}

namespace {

/*! \brief The engine as core calls it (ir/collective.h: EngineInterface). */
class RegisteredEngine final : public EngineInterface {
 public:
  void Init(const InitOptions& options) override { Engine::Get().Init(options); }
  bool IsInitialized() override { return Engine::Get().initialized(); }
  void Shutdown() override { Engine::Get().Shutdown(); }
  int Rank() override { return Engine::Get().group().rank; }
  int Size() override { return Engine::Get().group().size; }
  int LocalRank() override { return Engine::Get().group().local_rank; }
  int LocalSize() override { return Engine::Get().group().local_size; }
  std::string TransportName() override { return Engine::Get().group().transport; }
  int64_t SubmitAllreduce(const AllreduceRequest& request) override { return Engine::Get().Submit(request); }
  void WaitAllreduce(int64_t ticket, NDArray* out) override { Engine::Get().Wait(ticket, out); }
  EngineStats Stats() override { return Engine::Get().stats(); }
  void ResetStats() override { Engine::Get().ResetStats(); }

  NDArray Allreduce(const std::string& name, const NDArray& value, ReduceOp op) override {
    auto work = Engine::Get().RunSynchronous(Kind::kAllreduce, name, value, op, 0);
    return work->members[0].host;
  }

  NDArray Allgather(const std::string& name, const NDArray& value) override {
    IR_CHECK(!value.defined() || value.shape().ndim() >= 1)
        << "allgather of " << name << ": a scalar has no first dimension to concatenate along";
    return Engine::Get().RunSynchronous(Kind::kAllgather, name, value, ReduceOp::kSum, 0)->result;
  }

  NDArray Broadcast(const std::string& name, const NDArray& value, int root) override {
    auto work = Engine::Get().RunSynchronous(Kind::kBroadcast, name, value, ReduceOp::kSum, root);
    return work->members[0].host;
  }

  void TimelineRecord(const std::string& name, const std::string& category, double begin_us, double end_us) override {
    detail::TimelineRecord(name, category, begin_us, end_us);
  }
  bool TimelineEnabled() override { return detail::TimelineEnabled(); }
  double Microseconds() override { return detail::Microseconds(); }
};

const bool kRegistered = [] {
  RegisterEngine(new RegisteredEngine());  // kept for the process, as the engine itself
  return true;
}();

}  // namespace
}  // namespace detail
}  // namespace collective
}  // namespace ir
