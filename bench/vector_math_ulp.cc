/*!
 * \file vector_math_ulp.cc
 * \brief ir-vector-math-ulp: the error of libmvec's expf, tanhf and erff (the vector variants the
 * kernels' `omp simd` loops call) over all 2^32 floats against double libm: the exhaustive form of
 * tests/ops/vector_math_test.cc's sweep.
 *
 * Usage: ir-vector-math-ulp [STEP]   (every STEP-th bit pattern; default 1: all of them)
 * Prints, per function, the largest error in ulp and where, and how many results are not the
 * correctly rounded float. Compiled for the host (-march=native: the vector width GCC prefers
 * there, as for the generated CPU kernels).
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

extern "C" {
#pragma omp declare simd notinbranch
float expf(float) noexcept;
#pragma omp declare simd notinbranch
float tanhf(float) noexcept;
#pragma omp declare simd notinbranch
float erff(float) noexcept;
}

namespace {

/*! \brief |y - ref| in ulp of the float nearest ref; infinite for a wrong Inf, NaN or zero sign. */
double UlpError(float y, double ref) {
  const double kMiss = std::numeric_limits<double>::infinity();
  if (std::isnan(ref)) return std::isnan(y) ? 0 : kMiss;
  float rounded = static_cast<float>(ref);
  if (std::isinf(rounded) || std::isinf(y)) return y == rounded ? 0 : kMiss;
  if (y == 0 && ref == 0 && std::signbit(y) != std::signbit(ref)) return kMiss;
  int e;
  std::frexp(std::fabs(ref), &e);
  return std::fabs(static_cast<double>(y) - ref) / std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

struct Stats {
  double worst = 0;
  float at = 0;
  uint64_t not_rounded = 0;
  void Add(float x, float y, double ref) {
    double err = UlpError(y, ref);
    if (!(err <= worst)) {
      worst = err;
      at = x;
    }
    if (!(std::isnan(y) && std::isnan(ref)) && y != static_cast<float>(ref)) ++not_rounded;
  }
  void Merge(const Stats& o) {
    if (!(o.worst <= worst)) {
      worst = o.worst;
      at = o.at;
    }
    not_rounded += o.not_rounded;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t step = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  if (step == 0) return std::fprintf(stderr, "usage: ir-vector-math-ulp [STEP > 0]\n"), 2;
  constexpr int64_t kBlock = 1 << 16;
  const uint64_t count = ((uint64_t{1} << 32) + step - 1) / step;
  const int64_t blocks = static_cast<int64_t>((count + kBlock - 1) / kBlock);
  Stats total[3];
  const char* names[3] = {"exp", "tanh", "erf"};
#pragma omp parallel
  {
    Stats local[3];
    std::vector<float> x(kBlock), y0(kBlock), y1(kBlock), y2(kBlock);
#pragma omp for schedule(dynamic, 16)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t n = std::min<int64_t>(kBlock, static_cast<int64_t>(count) - b * kBlock);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u = static_cast<uint32_t>((static_cast<uint64_t>(b * kBlock + i)) * step);
        std::memcpy(&x[i], &u, sizeof(u));
      }
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        y0[i] = expf(x[i]);
        y1[i] = tanhf(x[i]);
        y2[i] = erff(x[i]);
      }
      for (int64_t i = 0; i < n; ++i) {
        const double d = x[i];
        local[0].Add(x[i], y0[i], std::exp(d));
        local[1].Add(x[i], y1[i], std::tanh(d));
        local[2].Add(x[i], y2[i], std::erf(d));
      }
    }
#pragma omp critical
    for (int f = 0; f < 3; ++f) total[f].Merge(local[f]);
  }
  std::printf("%llu floats (every %llu-th bit pattern), libmvec against double libm:\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(step));
  for (int f = 0; f < 3; ++f) {
    std::printf("  %-4s max %.3f ulp at %a (%.9g); %llu results not correctly rounded (%.3f%%)\n", names[f],
                total[f].worst, total[f].at, total[f].at, static_cast<unsigned long long>(total[f].not_rounded),
                100.0 * static_cast<double>(total[f].not_rounded) / static_cast<double>(count));
  }
  return 0;
}
