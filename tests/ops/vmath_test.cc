/*!
 * \file vmath_test.cc
 * \brief The float e^x, tanh and erf of include/ir/vmath.h (simd::Exp, Tanh, Erf) against double
 * libm: their error bounds over every 4099th float (about a million, every exponent and sign),
 * their special values exactly, and the same bits from every instruction set's vectorized loop.
 * bench/vmath_ulp.cc sweeps all 2^32 floats.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/simd.h"

namespace ir {
namespace test {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

float FromBits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

/*!
 * \brief The error of y in units in the last place of the float nearest `ref` (subnormals' ulp
 * below 2^-126); infinite when y is not the correctly rounded result of an infinite, NaN or
 * overflowing one, or a zero of the wrong sign.
 */
double UlpError(float y, double ref) {
  const double kMiss = std::numeric_limits<double>::infinity();
  if (std::isnan(ref)) return std::isnan(y) ? 0 : kMiss;
  float rounded = static_cast<float>(ref);
  if (std::isinf(rounded) || std::isinf(y)) return y == rounded ? 0 : kMiss;
  if (ref == 0 || y == 0) {
    if (y == 0 && ref == 0 && std::signbit(y) != std::signbit(ref)) return kMiss;
  }
  int e;
  std::frexp(std::fabs(ref), &e);
  double ulp = std::ldexp(1.0, std::max(e - 1, -126) - 23);
  return std::fabs(static_cast<double>(y) - ref) / ulp;
}

enum Fn { kExp, kTanh, kErf };

/*! \brief out[i] = fn(in[i]), in an `omp simd` loop compiled for the instruction set Dispatch picks. */
template <typename Run>
void Eval(Fn fn, const std::vector<float>& in, std::vector<float>* out, const Run& run) {
  out->resize(in.size());
  run(
      [](Fn fn, const float* x, float* y, int64_t n) IR_SIMD_BODY {
        if (fn == kExp) {
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) y[i] = op::simd::Exp(x[i]);
        } else if (fn == kTanh) {
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) y[i] = op::simd::Tanh(x[i]);
        } else {
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) y[i] = op::simd::Erf(x[i]);
        }
      },
      fn, in.data(), out->data(), static_cast<int64_t>(in.size()));
}

/*! \brief The outputs of every instruction set this CPU runs, baseline first. */
std::vector<std::pair<std::string, std::vector<float>>> EvalEveryIsa(Fn fn, const std::vector<float>& in) {
  std::vector<std::pair<std::string, std::vector<float>>> results;
  results.push_back({"baseline", {}});
  Eval(fn, in, &results.back().second, [](const auto& body, auto&&... args) { body(args...); });
#ifdef IR_SIMD_X86_CLONES
  if (__builtin_cpu_supports("avx2")) {
    results.push_back({"avx2", {}});
    Eval(fn, in, &results.back().second, [](const auto& body, auto&&... args) { op::simd::RunAvx2(body, args...); });
  }
  if (__builtin_cpu_supports("avx512f")) {
    results.push_back({"avx512", {}});
    Eval(fn, in, &results.back().second, [](const auto& body, auto&&... args) { op::simd::RunAvx512(body, args...); });
  }
#endif
  return results;
}

/*! \brief Every 4099th bit pattern and the edge cases of the three functions. */
std::vector<float> SweepInputs() {
  std::vector<float> in;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4099) in.push_back(FromBits(static_cast<uint32_t>(u)));
  const float edges[] = {
      0.f,   -0.f,       kInf,        -kInf,     kNaN,       -kNaN,  88.72283f, 88.72284f, 88.7229f,        89.f,
      1e30f, -87.33654f, -87.3366f,   -103.972f, -103.9721f, -104.f, -1e30f,    0.625f,    -0.625f,         0.6249999f,
      1.f,   -1.f,       0.99999994f, 3.92f,     4.f,        9.1f,   1e-45f,    -1e-45f,   1.17549435e-38f, 1e-20f};
  for (float e : edges) in.push_back(e);
  for (float e : edges) in.push_back(std::nextafter(e, 0.f));
  return in;
}

void CheckBound(Fn fn, double (*reference)(double), double bound, const char* name) {
  std::vector<float> in = SweepInputs();
  auto results = EvalEveryIsa(fn, in);
  const std::vector<float>& base = results[0].second;
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    double err = UlpError(base[i], reference(in[i]));
    if (!(err <= worst)) {
      worst = err;
      worst_x = in[i];
    }
  }
  EXPECT_LE(worst, bound) << name << ": " << worst << " ulp at x = " << std::hexfloat << worst_x << " ("
                          << std::defaultfloat << worst_x << ")";
  // The same bits from every instruction set (NaN payloads aside).
  for (size_t r = 1; r < results.size(); ++r) {
    int64_t differ = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const float a = base[i], b = results[r].second[i];
      if (!(std::isnan(a) && std::isnan(b)) && Bits(a) != Bits(b) && differ++ == 0) {
        ADD_FAILURE() << name << " " << results[r].first << " differs from baseline at x = " << std::hexfloat << in[i]
                      << ": " << b << " against " << a;
      }
    }
    EXPECT_EQ(differ, 0) << name << " " << results[r].first;
  }
}

TEST(VmathTest, ExpIsWithinOneUlp) {
  CheckBound(
      kExp, [](double x) { return std::exp(x); }, 1.0, "exp");
}
TEST(VmathTest, TanhIsWithinTwoUlp) {
  CheckBound(
      kTanh, [](double x) { return std::tanh(x); }, 2.0, "tanh");
}
TEST(VmathTest, ErfIsWithinTwoUlp) {
  CheckBound(
      kErf, [](double x) { return std::erf(x); }, 2.0, "erf");
}

TEST(VmathTest, SpecialValues) {
  using op::simd::Erf;
  using op::simd::Exp;
  using op::simd::Tanh;
  EXPECT_TRUE(std::isnan(Exp(kNaN)));
  EXPECT_TRUE(std::isnan(Tanh(kNaN)));
  EXPECT_TRUE(std::isnan(Erf(kNaN)));
  EXPECT_EQ(Exp(kInf), kInf);
  EXPECT_EQ(Bits(Exp(-kInf)), Bits(0.f));
  EXPECT_EQ(Exp(0.f), 1.f);
  EXPECT_EQ(Exp(-0.f), 1.f);
  // Overflow just above ln(FLT_MAX) = 88.7228391, the largest finite result just below.
  EXPECT_EQ(Exp(88.7229f), kInf);
  EXPECT_TRUE(std::isfinite(Exp(88.72283f)));
  // Gradual underflow: subnormal results, then +0.
  EXPECT_GT(Exp(-100.f), 0.f);
  EXPECT_LT(Exp(-100.f), std::numeric_limits<float>::min());
  EXPECT_EQ(Exp(-103.9f), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(Bits(Exp(-103.98f)), Bits(0.f));
  EXPECT_EQ(Bits(Exp(-104.f)), Bits(0.f));
  EXPECT_EQ(Bits(Tanh(-0.f)), Bits(-0.f));
  EXPECT_EQ(Bits(Erf(-0.f)), Bits(-0.f));
  EXPECT_EQ(Tanh(kInf), 1.f);
  EXPECT_EQ(Tanh(-kInf), -1.f);
  EXPECT_EQ(Tanh(20.f), 1.f);
  EXPECT_EQ(Erf(kInf), 1.f);
  EXPECT_EQ(Erf(-kInf), -1.f);
  EXPECT_EQ(Erf(5.f), 1.f);
  EXPECT_EQ(Tanh(1e-30f), 1e-30f);
  EXPECT_EQ(Tanh(-1e-45f), -1e-45f);
  EXPECT_EQ(Erf(1e-45f), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(op::simd::Sigmoid(-kInf), 0.f);
  EXPECT_EQ(op::simd::Sigmoid(kInf), 1.f);
}

}  // namespace
}  // namespace test
}  // namespace ir
