// Threads sharing one Session, as a TF session is shared in real programs: every run gets its
// own results, and variable updates are atomic with respect to other runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Filled;
using runtime_test::Op;
using runtime_test::UnfusedOptions;
using runtime_test::Var;
using runtime_test::Variable;

constexpr int kThreads = 8;
// In the lean sanitizer builds (IR_SANITIZED_TEST: every access of the test ops' loops checked)
// smaller arrays keep each case to seconds; the runs overlap the same way.
#ifdef IR_SANITIZED_TEST
constexpr int64_t kElements = 1 << 12;
#else
constexpr int64_t kElements = 1 << 18;
#endif

/*! \brief Runs `body(thread)` on kThreads threads at once; failures are collected as text. */
template <typename Body>
std::vector<std::string> RunThreads(Body body) {
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        body(t);
      } catch (const std::exception& err) {
        failures[t] = err.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  failures.erase(std::remove(failures.begin(), failures.end(), std::string()), failures.end());
  return failures;
}

/*! \brief "" when every element of `a` is `expected`, else a description of the first mismatch. */
std::string Mismatch(const NDArray& a, float expected, const std::string& what) {
  std::vector<float> values = a.ToVector<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != expected) return StrCat(what, "[", i, "] = ", values[i], ", expected ", expected);
  }
  return "";
}

TEST(SessionConcurrencyTest, ThreadsSharingASessionEachGetTheirOwnResults) {
  Session sess(UnfusedOptions());
  NodeEntry x = Var("x");
  // Intermediates live in the plan's memory pool: runs sharing that pool would mix values.
  NodeEntry sum = Op("runtime_test_add", "sum", {x, Op("runtime_test_scale", "twice", {x})});
  NodeEntry six = Op("runtime_test_scale", "six", {sum});
  NodeEntry twelve = Op("runtime_test_scale", "twelve", {six});
  std::vector<std::string> failures = RunThreads([&](int t) {
    for (int i = 0; i < 24; ++i) {
      float value = static_cast<float>(t * 1000 + i);
      // Two fetch sets and two shapes, as every thread: runs of one plan overlap, and executors
      // and plans are created concurrently.
      Shape shape{kElements + (i % 2) * 17};
      bool both = i % 3 == 0;
      std::vector<NDArray> out = sess.Run(both ? std::vector<NodeEntry>{six, twelve} : std::vector<NodeEntry>{six},
                                          {{"x", Filled(shape, value)}});
      std::string bad = Mismatch(out.at(0), 6 * value, StrCat("thread ", t, " run ", i, ": six"));
      if (bad.empty() && both) bad = Mismatch(out.at(1), 12 * value, StrCat("thread ", t, " run ", i, ": twelve"));
      if (!bad.empty()) throw Error(bad);
      if (out[0].shape() != shape) throw Error(StrCat("thread ", t, " run ", i, ": shape ", out[0].shape()));
    }
  });
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
}

TEST(SessionConcurrencyTest, ThreadsSharingACompiledSessionGetTheirOwnResults) {
  Session sess((SessionOptions()));  // the whole pipeline: fused kernels generated and compiled
  NodeEntry x = Var("x"), b = Var("b");
  NodeEntry h = Op("relu", "h", {Op("add", "xb", {Op("multiply", "xx", {x, x}), b})});
  NodeEntry total = Op("sum", "total", {h});
  std::vector<std::string> failures = RunThreads([&](int t) {
    for (int i = 0; i < 12; ++i) {
      auto value = static_cast<float>(t % 4 + i % 3);
      Shape shape{64, 8 + i % 2};  // two plans, bound and compiled while other threads run
      std::vector<NDArray> out = sess.Run({h, total}, {{"x", Filled(shape, value)}, {"b", Filled(shape, 1)}});
      std::string bad = Mismatch(out.at(0), value * value + 1, StrCat("thread ", t, " run ", i, ": h"));
      if (bad.empty()) bad = Mismatch(out.at(1), static_cast<float>(shape.Size()) * (value * value + 1), "total");
      if (!bad.empty()) throw Error(bad);
    }
  });
  EXPECT_TRUE(failures.empty()) << Join(failures, "\n");
}

TEST(SessionConcurrencyTest, ConcurrentAssignAddsAreAtomicAndNoneIsLost) {
  Session sess(UnfusedOptions());
  NodeEntry w = Variable("W");
  const Shape shape{kElements};
  sess.Run({}, {{"zero", Filled(shape, 0)}}, {Op("assign", "init", {w, Var("zero")}).node});
  NodeEntry step = Op("assign_add", "step", {w, Var("delta")});
  NodeEntry read = Op("runtime_test_scale", "read", {w});
  constexpr int kSteps = 24;
  std::vector<std::vector<float>> seen(kThreads);
  std::vector<std::string> failures = RunThreads([&](int t) {
    for (int i = 0; i < kSteps; ++i) {
      // assign_add's output is the variable after this run's update: all elements agree.
      NDArray after = sess.Run({step}, {{"delta", Filled(shape, 1)}})[0];
      float count = after.ToVector<float>()[0];
      seen[t].push_back(count);
      // A reader never sees a half-applied update.
      NDArray doubled = sess.Run({read})[0];
      float first = doubled.ToVector<float>()[0];
      std::string bad = Mismatch(after, count, StrCat("thread ", t, " step ", i, ": W"));
      if (bad.empty()) bad = Mismatch(doubled, first, StrCat("thread ", t, " read ", i, ": 2*W"));
      if (!bad.empty()) throw Error(bad);
    }
  });
  ASSERT_TRUE(failures.empty()) << Join(failures, "\n");
  EXPECT_EQ(sess.variables().Get("W").ToVector<float>(), std::vector<float>(shape[0], kThreads * kSteps));
  // Each update saw every earlier one: the values after the updates are exactly 1..N.
  std::vector<float> all;
  for (const auto& values : seen) all.insert(all.end(), values.begin(), values.end());
  std::sort(all.begin(), all.end());
  for (size_t k = 0; k < all.size(); ++k) ASSERT_EQ(all[k], static_cast<float>(k + 1)) << "update " << k;
}

}  // namespace
}  // namespace ir
