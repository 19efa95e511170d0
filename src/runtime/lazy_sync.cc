/*!
 * \file lazy_sync.cc
 * \brief The locks that make lazy arrays safe to share between threads (the contract is in
 * include/ir/lazy.h): the pending DAG's lock and its waits, buffer and assignment stripes.
 */
#include <algorithm>
#include <condition_variable>
#include <functional>

#include "runtime/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief Stripes of the buffer and assignment locks: distinct arrays rarely share one. */
constexpr size_t kStripes = 64;

std::condition_variable_any& ValuesDone() {
  static std::condition_variable_any done;
  return done;
}

/*!
 * \brief A reader/writer lock that prefers writers: a variable read in a loop by some threads
 * must not starve the thread that assigns it (glibc's rwlock, behind std::shared_mutex, prefers
 * readers). Deadlock-free with the stripes taken in order: a waiter only waits for higher stripes.
 */
class WriterFirstLock {
 public:
  void lock() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++writers_waiting_;
    changed_.wait(lock, [&] { return !writing_ && readers_ == 0; });
    --writers_waiting_;
    writing_ = true;
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
    }
    changed_.notify_all();
  }
  void lock_shared() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !writing_ && writers_waiting_ == 0; });
    ++readers_;
  }
  void unlock_shared() {
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --readers_ == 0;
    }
    if (last) changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int readers_ = 0;
  int writers_waiting_ = 0;
  bool writing_ = false;
};

WriterFirstLock* BufferStripes() {
  static WriterFirstLock stripes[kStripes];
  return stripes;
}

std::mutex* AssignStripes() {
  static std::mutex stripes[kStripes];
  return stripes;
}

size_t StripeOf(const void* key) { return std::hash<const void*>()(key) % kStripes; }

}  // namespace

std::recursive_mutex& DagMutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

void NotifyValuesDone() { ValuesDone().notify_all(); }

void WaitForValuesInFlight(DagLock& lock) { ValuesDone().wait(lock); }

BufferLocks::BufferLocks(const std::vector<NDArray>& read, const std::vector<NDArray>& written) {
  std::vector<std::pair<size_t, bool>> wanted;
  for (const NDArray& array : read) {
    if (array.defined()) wanted.emplace_back(StripeOf(array.storage().get()), false);
  }
  for (const NDArray& array : written) {
    if (array.defined()) wanted.emplace_back(StripeOf(array.storage().get()), true);
  }
  // In stripe order, each once, exclusive where any array of it is written.
  std::sort(wanted.begin(), wanted.end());
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (i + 1 < wanted.size() && wanted[i + 1].first == wanted[i].first) continue;  // the last is exclusive if any
    held_.push_back(wanted[i]);
  }
  WriterFirstLock* stripes = BufferStripes();
  for (const auto& [stripe, exclusive] : held_) {
    if (exclusive) {
      stripes[stripe].lock();
    } else {
      stripes[stripe].lock_shared();
    }
  }
}

BufferLocks::~BufferLocks() {
  WriterFirstLock* stripes = BufferStripes();
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    if (it->second) {
      stripes[it->first].unlock();
    } else {
      stripes[it->first].unlock_shared();
    }
  }
}

AssignLocks::AssignLocks(const std::vector<Array>& targets) {
  for (const Array& target : targets) {
    if (target.defined()) held_.push_back(StripeOf(target.cell().get()));
  }
  std::sort(held_.begin(), held_.end());
  held_.erase(std::unique(held_.begin(), held_.end()), held_.end());
  for (size_t stripe : held_) AssignStripes()[stripe].lock();
}

AssignLocks::~AssignLocks() {
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) AssignStripes()[*it].unlock();
}

}  // namespace lazy
}  // namespace ir
