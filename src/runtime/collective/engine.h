/*!
 * \file engine.h
 * \brief The collective engine's state: buckets being filled, the FIFO of collectives ready
 * to run, and the one thread that makes every transport call (engine.cc: submission, waits,
 * start and stop; execute.cc: running one collective on the thread).
 */
#ifndef IR_RUNTIME_COLLECTIVE_ENGINE_H_
#define IR_RUNTIME_COLLECTIVE_ENGINE_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ir/collective.h"
#include "runtime/collective/agreement.h"

namespace ir {
namespace collective {
namespace detail {

/*! \brief One tensor of a collective: its host copy, which holds the result once it ran. */
struct Member {
  std::string name;
  ReduceOp op = ReduceOp::kSum;
  NDArray host;
  bool submitted = false;
};

/*! \brief One collective: a bucket of allreduce members, or one allgather / broadcast. */
struct Work {
  enum class State { kOpen, kQueued, kDone, kFailed };
  Kind kind = Kind::kAllreduce;
  /*! \brief The bucket's key ("" for synchronous collectives). */
  std::string key;
  int root = 0;
  std::vector<Member> members;
  int submitted = 0;
  State state = State::kOpen;
  /*! \brief Collective number on this rank (1, 2, ...), given when queued. */
  int64_t sequence = 0;
  double created_us = 0, queued_us = 0;
  std::string error;
  /*! \brief An allgather's output (the members hold the other kinds' results). */
  NDArray result;

  /*! \brief The agreement's view of it. */
  CollectiveInfo Info() const;
};

/*! \brief The process's engine (one, leaked: it outlives static destructors at exit). */
class Engine {
 public:
  static Engine& Get();

  void Init(const InitOptions& options);
  void Shutdown();
  bool initialized();
  /*! \brief The group as the transport reported it at Init; throws when Init has not run. */
  struct Group {
    int rank, size, local_rank, local_size;
    std::string transport;
  };
  Group group();

  int64_t Submit(const AllreduceRequest& request);
  void Wait(int64_t ticket, NDArray* out);
  /*! \brief Queues a one-member collective and waits for it; returns the finished work. */
  std::shared_ptr<Work> RunSynchronous(Kind kind, const std::string& name, const NDArray& value, ReduceOp op, int root);

  EngineStats stats();
  void ResetStats();

 private:
  Engine() = default;
  void CheckUsable();
  void Enqueue(const std::shared_ptr<Work>& work);
  /*! \brief Marks the group unusable: every open or queued collective fails with `error`. */
  void BreakLocked(const std::string& error, bool transport_usable);
  void FailIncompleteLocked(const std::shared_ptr<Work>& work);
  void ThreadMain(std::string transport_name);

  // execute.cc: on the engine's thread, without the lock held except where noted.
  void Execute(const std::shared_ptr<Work>& work);
  /*! \brief "" when every rank submitted the same collective, else the error; `joined`: whether all took part. */
  std::string Agree(Work& work, bool* joined);
  void Allreduce(Work& work);
  void Allgather(Work& work);
  void Broadcast(Work& work);
  /*! \brief The names of every tensor submitted on this rank and not yet run (takes the lock). */
  std::string PendingNames();
  /*! \brief Times a transport call into the stats and the timeline. */
  template <typename F>
  void Transfer(const Work& work, F&& call);
  void Phase(const Work& work, const char* phase, double begin_us);

  std::mutex mutex_;
  std::condition_variable thread_cv_;
  std::condition_variable done_cv_;
  std::thread thread_;
  /*! \brief Created, used and destroyed on the engine's thread only. */
  std::unique_ptr<Transport> transport_;
  /*! \brief Transports of broken groups: destroying one could finalize MPI and wait forever. */
  std::vector<std::unique_ptr<Transport>> abandoned_;
  bool initialized_ = false, started_ = false, stopping_ = false;
  std::string start_error_;
  /*! \brief Why the group is unusable ("" while it is fine), and whether MPI may still finalize. */
  std::string broken_;
  bool transport_usable_ = true;
  std::deque<std::shared_ptr<Work>> queue_;
  std::map<std::string, std::shared_ptr<Work>> open_;
  std::map<int64_t, std::pair<std::shared_ptr<Work>, int>> tickets_;
  int64_t next_ticket_ = 1, next_sequence_ = 1;
  double timeout_s_ = 60;
  Group group_{0, 1, 0, 1, ""};
  EngineStats stats_;
  /*! \brief The fusion buffer, reused from bucket to bucket (engine thread only). */
  std::vector<char> fusion_;
};

}  // namespace detail
}  // namespace collective
}  // namespace ir

#endif  // IR_RUNTIME_COLLECTIVE_ENGINE_H_
