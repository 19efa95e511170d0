/*!
 * \file lazy_threads_test.cc
 * \brief Lazy arrays on several threads, as TF eager code runs them (the contract is in
 * include/ir/lazy.h): threads on their own arrays, one Context shared, a variable updated and read
 * by all (atomic updates, whole reads), pending arrays and handles crossing threads, tapes.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <deque>
#include <mutex>
#include <utility>

#include "ir/lazy.h"
#include "ir/lazy_tape.h"
#include "test_util.h"
#include "threads/thread_test_util.h"

namespace ir {
namespace {

using lazy::Array;
using threads_test::RunThreads;

constexpr int kThreads = 4;

NDArray Filled(const Shape& shape, float value) {
  NDArray out(shape, DType::kFloat32);
  std::fill(out.data<float>(), out.data<float>() + out.Size(), value);
  return out;
}

/*! \brief Throws (failing the thread) with `what` unless `ok`. */
void Expect(bool ok, const std::string& what) {
  if (!ok) throw Error(what);
}

/*! \brief The one value all elements of `a` have; throws naming `what` when they differ. */
float Uniform(const NDArray& a, const std::string& what) {
  std::vector<float> values = a.ToVector<float>();
  for (float v : values) {
    if (v != values.at(0)) throw Error(StrCat(what, ": a torn value (", values[0], " and ", v, ")"));
  }
  return values.at(0);
}

/*! \brief Each thread's sums of its own arrays: three shapes, so misses and hits interleave. */
void OwnArraysStep(int t, int i) {
  int64_t n = 8 + i % 3;
  Array x(Filled({n}, static_cast<float>(t)));
  Array y = lazy::sum(x * 2.0f + 1.0f);
  Array held = lazy::relu(x - 1.0f);  // held: computed in y's trace
  float got = y.Eval().ToVector<float>()[0];
  Expect(got == static_cast<float>(n) * (2.0f * t + 1), StrCat("thread ", t, " step ", i, ": sum ", got));
  Expect(Uniform(held.Eval(), "relu") == std::max(0.0f, t - 1.0f), StrCat("thread ", t, ": relu"));
  Array w(Filled({16}, 0));
  w += static_cast<float>(t);  // in place: w is this thread's
  Expect(Uniform(w.Eval(), "w") == static_cast<float>(t), StrCat("thread ", t, ": w"));
}

TEST(LazyThreadsTest, ThreadsOnTheirOwnArraysGetTheirOwnResults) {
  std::vector<std::string> failures = RunThreads(kThreads, 20, OwnArraysStep);
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
}

TEST(LazyThreadsTest, OneContextServesSeveralThreads) {
  lazy::Context shared;
  std::vector<std::string> failures = RunThreads(kThreads, 20, [&](int t, int i) {
    lazy::Context::Scope scope(&shared);  // each thread's live arrays join the others' traces
    OwnArraysStep(t, i);
  });
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
  lazy::Stats stats = shared.stats();
  EXPECT_GE(stats.ops_recorded, 20u * kThreads * 5);
  EXPECT_GT(stats.cache_hits, 0u);
}

TEST(LazyThreadsTest, UpdatesOfASharedVariableAreAtomicAndReadsSeeWholeValues) {
  const Shape shape{256};
  Array v(Filled(shape, 0));
  std::vector<int> done;
  std::vector<std::string> failures = RunThreads(
      kThreads, 30,
      [&](int t, int i) {
        if (i % 2) {
          v += 1.0f;  // TF's assign_add: read and write with no other assignment between
        } else {
          lazy::AssignAll({v}, {Array(Filled(shape, 1))}, lazy::Update::kAdd);
        }
        float seen = Uniform(lazy::ReadValue(v), StrCat("thread ", t, " read ", i));
        Expect(seen >= 1 && seen == std::floor(seen), StrCat("thread ", t, ": read ", seen));
        Uniform((v * 2.0f).Eval(), StrCat("thread ", t, " 2*v"));
      },
      &done);
  ASSERT_TRUE(failures.empty()) << Join(failures, "\n");
  int updates = 0;
  for (int n : done) updates += n;
  EXPECT_EQ(Uniform(v.Eval(), "v"), static_cast<float>(updates));  // none lost
}

TEST(LazyThreadsTest, ReadersSeeWholeValuesWhileAWriterAssigns) {
  const int64_t n = 1 << 14;
  Array v(Filled({n}, 0));
  std::vector<std::string> failures = RunThreads(kThreads, 30, [&](int t, int i) {
    if (t == 0) {  // the writer: by a copy (a leaf value), then in place (a pending one)
      auto k = static_cast<float>(i + 1);
      v.Assign(i % 2 ? Array(Filled({n}, k)) : Array(Filled({n}, k)) * 1.0f);
      return;
    }
    float total = lazy::sum(v).Eval().ToVector<float>()[0];  // a trace reading v
    Expect(std::fmod(total, static_cast<float>(n)) == 0, StrCat("thread ", t, ": sum ", total, " of a torn value"));
    Uniform(lazy::ReadValue(v), StrCat("thread ", t, " ReadValue"));
    Uniform((v + 0.0f).Eval(), StrCat("thread ", t, " v + 0"));
  });
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
}

TEST(LazyThreadsTest, APendingArraySharedByThreadsIsComputedOnce) {
  for (int round = 0; round < 4; ++round) {
    // Recorded here, computed by whichever thread needs it first: all see the same draw.
    Array r = lazy::Apply("random_uniform", {}, {{"shape", "[256]"}});
    Array doubled = r * 2.0f;
    std::vector<std::vector<float>> seen(kThreads), twice(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Array mine = r * 2.0f;
        seen[t] = (t % 2 ? r.Eval() : lazy::ReadValue(r)).ToVector<float>();
        twice[t] = mine.Eval().ToVector<float>();
      });
    }
    for (std::thread& thread : threads) thread.join();
    std::vector<float> expected = seen[0];
    for (float& x : expected) x *= 2;
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(seen[t], seen[0]) << "thread " << t;
      EXPECT_EQ(twice[t], expected) << "thread " << t;
    }
    EXPECT_EQ(doubled.Eval().ToVector<float>(), expected);
  }
}

TEST(LazyThreadsTest, ArraysMadeOnOneThreadAreReadAndReleasedOnAnother) {
  std::mutex mutex;
  std::deque<std::pair<Array, float>> handed;  // a pending array and its value
  std::vector<std::string> failures = RunThreads(kThreads, 50, [&](int t, int i) {
    if (t % 2 == 0) {  // producers: record, hand over, compute their own work meanwhile
      Array x(Filled({32}, static_cast<float>(t)));
      Array p = lazy::exp(x * 0.0f) + static_cast<float>(i);
      {
        std::lock_guard<std::mutex> lock(mutex);
        handed.emplace_back(p, 1.0f + i);
        handed.emplace_back(Array(Filled({4}, 1)) * 3.0f, 3.0f);
      }
      Expect(lazy::sum(x).Eval().ToVector<float>()[0] == 32.0f * t, StrCat("producer ", t, ": sum"));
      return;
    }
    std::pair<Array, float> item;  // consumers: read one, release another unread
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (handed.size() < 2) return;
      item = std::move(handed.front());
      handed.pop_front();
      if (i % 2) handed.pop_front();
    }
    Expect(Uniform(item.first.Eval(), "handed") == item.second, StrCat("consumer ", t, ": value"));
  });
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
}

TEST(LazyThreadsTest, GradientTapesOnThreadsDifferentiateTheirThreadsOps) {
  std::vector<std::string> failures = RunThreads(kThreads, 20, [](int t, int i) {
    Array w(Filled({4}, 0.5f * static_cast<float>(t + 1)));
    Array x(Filled({4}, static_cast<float>(i % 5)));
    lazy::GradientTape tape;
    tape.Watch(w);
    Array loss = lazy::sum(w * w * x);
    loss.Eval();  // read inside the tape: still differentiable
    std::vector<Array> grads = tape.Gradient({loss}, {w});
    float expected = 2 * 0.5f * static_cast<float>(t + 1) * static_cast<float>(i % 5);  // d/dw sum(w^2 x) = 2wx
    Expect(Uniform(grads.at(0).Eval(), "grad") == expected, StrCat("thread ", t, " step ", i, ": gradient"));
    w -= grads[0] * 0.1f;
    float updated = Uniform(w.Eval(), "w"), want = 0.5f * static_cast<float>(t + 1) - 0.1f * expected;
    Expect(std::fabs(updated - want) <= 1e-5f, StrCat("thread ", t, ": w ", updated, ", expected ", want));
  });
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
}

}  // namespace
}  // namespace ir
