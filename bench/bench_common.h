/*!
 * \file bench_common.h
 * \brief What the C++ benchmarks share: a clock, medians of repeated calls, deterministic data.
 */
#ifndef IR_BENCH_BENCH_COMMON_H_
#define IR_BENCH_BENCH_COMMON_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "ir/ndarray.h"

namespace ir {
namespace bench {

inline double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/*! \brief Median ms of `reps` calls of f after one warm-up call (binds, compiles, touches memory). */
inline double TimeMs(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    double start = NowMs();
    f();
    times.push_back(NowMs() - start);
  }
  return Median(times);
}

/*! \brief float32 values uniform in [lo, hi) from a linear congruential generator seeded by `seed`. */
inline NDArray Random(const Shape& shape, unsigned seed, float lo, float hi) {
  NDArray a(shape, DType::kFloat32);
  float* p = a.data<float>();
  unsigned state = seed * 2654435761u + 1;
  for (int64_t i = 0; i < a.Size(); ++i) {
    state = state * 1664525u + 1013904223u;
    p[i] = lo + (hi - lo) * static_cast<float>(state >> 8) / static_cast<float>(1 << 24);
  }
  return a;
}

}  // namespace bench
}  // namespace ir

#endif  // IR_BENCH_BENCH_COMMON_H_
