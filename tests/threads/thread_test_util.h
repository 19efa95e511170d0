/*!
 * \file thread_test_util.h
 * \brief What the thread stress tests share: run a body on N threads for a time budget, failures
 * collected as text (a failing thread must not abort the others mid-way).
 *
 * IR_STRESS_SECONDS (default 0.2) is how long each case keeps its threads busy after a minimum
 * number of iterations: the ThreadSanitizer job (scripts/test.sh) runs each case a few seconds.
 */
#ifndef IR_TESTS_THREADS_THREAD_TEST_UTIL_H_
#define IR_TESTS_THREADS_THREAD_TEST_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace ir {
namespace threads_test {

inline double StressSeconds() {
  const char* text = std::getenv("IR_STRESS_SECONDS");
  return text && *text ? std::atof(text) : 0.2;
}

/*!
 * \brief Runs body(thread, iteration) on `threads` threads, each for at least `min_iterations`
 * iterations and until StressSeconds() have passed; returns the failures' messages. *done (if
 * given) gets each thread's number of completed iterations.
 */
template <typename Body>
std::vector<std::string> RunThreads(int threads, int min_iterations, Body body, std::vector<int>* done = nullptr) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(StressSeconds());
  std::vector<std::string> failures(threads);
  std::vector<int> counts(threads, 0);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      try {
        for (int i = 0; i < min_iterations || std::chrono::steady_clock::now() < deadline; ++i) {
          body(t, i);
          counts[t] = i + 1;
        }
      } catch (const std::exception& err) {
        failures[t] = err.what();
      }
    });
  }
  for (std::thread& thread : running) thread.join();
  if (done) *done = counts;
  failures.erase(std::remove(failures.begin(), failures.end(), std::string()), failures.end());
  return failures;
}

}  // namespace threads_test
}  // namespace ir

#endif  // IR_TESTS_THREADS_THREAD_TEST_UTIL_H_
