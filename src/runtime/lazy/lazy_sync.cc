/*!
 * \file lazy_sync.cc
 * \brief The locks that make lazy arrays safe to share between threads (the contract is in
 * include/ir/lazy.h): the pending DAG's lock and its waits, buffer and assignment stripes.
 */
#include <algorithm>
#include <condition_variable>
#include <functional>

#include "runtime/lazy/lazy_internal.h"

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

/*! \brief How many times this thread holds each buffer stripe (BufferLocks re-enter their own). */
struct HeldStripes {
  uint32_t shared[kStripes] = {};
  uint32_t exclusive[kStripes] = {};
};

HeldStripes& Held() {
  thread_local HeldStripes held;
  return held;
}

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
  HeldStripes& held = Held();
  for (const auto& [stripe, exclusive] : held_) {
    // Re-entered (a trace run by a host callback of this thread's running trace): the stripe is
    // not taken again, and held as the outer trace holds it (a shared one cannot be upgraded:
    // waiting for the outer trace's own read lock would never end).
    if (held.exclusive[stripe] > 0) {
      ++held.exclusive[stripe];
    } else if (held.shared[stripe] > 0) {
      ++held.shared[stripe];
    } else if (exclusive) {
      stripes[stripe].lock();
      ++held.exclusive[stripe];
    } else {
      stripes[stripe].lock_shared();
      ++held.shared[stripe];
    }
  }
}

BufferLocks::~BufferLocks() {
  WriterFirstLock* stripes = BufferStripes();
  HeldStripes& held = Held();
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    size_t stripe = it->first;
    uint32_t* count = held.exclusive[stripe] > 0 ? &held.exclusive[stripe] : &held.shared[stripe];
    if (--*count > 0 || held.exclusive[stripe] + held.shared[stripe] > 0) continue;
    if (count == &held.exclusive[stripe]) {
      stripes[stripe].unlock();
    } else {
      stripes[stripe].unlock_shared();
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
