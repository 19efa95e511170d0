/*!
 * \file simd.h
 * \brief What the vectorized CPU kernels of the op library share: the vector variants of the
 * libm functions, per-CPU clones of hot loops, and the loops of elementwise maps.
 *
 * libir is built for any x86-64 (no -march=native), and without -ffast-math (NaN and Inf keep
 * their IEEE meaning). Loops still vectorize: the files of the kernels are compiled with
 * -fno-math-errno -fno-trapping-math (CMakeLists.txt), every loop here is `#pragma omp simd`,
 * and glibc's libmvec supplies expf, tanhf, erff, logf... for 4, 8 or 16 lanes once the functions are
 * declared `declare simd` (glibc's math.h declares them so only under -ffast-math). Their error
 * bounds, per instruction set, are tests/ops/vector_math_test.cc's (issue 32 measured an own
 * branch-free polynomial, 0.99 / 1.3 / 1.5 ulp and the same bits on every ISA, against these:
 * 1.4-3x the time per element, so libmvec it is). Dispatch
 * compiles a loop for AVX-512, AVX2 and baseline x86-64 and runs the one of MaxCpuIsa() (the
 * CPU's best, or less under IR_MAX_CPU_ISA: include/ir/cpu_isa.h), so that an AVX-512 machine
 * can run (and test) the AVX2 code an AVX2 machine runs.
 */
#ifndef IR_OPS_SIMD_H_
#define IR_OPS_SIMD_H_

#include <cmath>
#include <cstdint>
#include <utility>

#include "ir/cpu_isa.h"

#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
// The functions libmvec (glibc >= 2.35) has vector variants of, for every x86-64 ISA level.
extern "C" {
#pragma omp declare simd notinbranch
float expf(float) noexcept;
#pragma omp declare simd notinbranch
double exp(double) noexcept;
#pragma omp declare simd notinbranch
float logf(float) noexcept;
#pragma omp declare simd notinbranch
double log(double) noexcept;
#pragma omp declare simd notinbranch
float log1pf(float) noexcept;
#pragma omp declare simd notinbranch
double log1p(double) noexcept;
#pragma omp declare simd notinbranch
float expm1f(float) noexcept;
#pragma omp declare simd notinbranch
double expm1(double) noexcept;
#pragma omp declare simd notinbranch
float tanhf(float) noexcept;
#pragma omp declare simd notinbranch
double tanh(double) noexcept;
#pragma omp declare simd notinbranch
float sinf(float) noexcept;
#pragma omp declare simd notinbranch
double sin(double) noexcept;
#pragma omp declare simd notinbranch
float cosf(float) noexcept;
#pragma omp declare simd notinbranch
double cos(double) noexcept;
#pragma omp declare simd notinbranch
float powf(float, float) noexcept;
#pragma omp declare simd notinbranch
double pow(double, double) noexcept;
#pragma omp declare simd notinbranch
float erff(float) noexcept;
#pragma omp declare simd notinbranch
double erf(double) noexcept;
}
#define IR_SIMD_X86_CLONES 1
#endif

/*!
 * \brief Marks the lambda a Dispatch runs, `[](args) IR_SIMD_BODY { ... }`: inlined into each
 * instruction set's copy, it is compiled (vectorized, its libm calls given their vector
 * variants) for that instruction set. It takes what it works on as parameters, not captures:
 * GCC does not vectorize an `omp simd reduction` whose loop reads a closure's members.
 */
#define IR_SIMD_BODY __attribute__((always_inline))

namespace ir {
namespace op {
namespace simd {

/*! \brief e^x (libmvec's variant in `omp simd` loops, as in the generated kernels). */
template <typename T>
inline __attribute__((always_inline)) T Exp(T x) {
  return std::exp(x);
}
/*! \brief tanh x (libmvec's variant in `omp simd` loops). */
template <typename T>
inline __attribute__((always_inline)) T Tanh(T x) {
  return std::tanh(x);
}
/*! \brief erf x (libmvec's variant in `omp simd` loops). */
template <typename T>
inline __attribute__((always_inline)) T Erf(T x) {
  return std::erf(x);
}
/*! \brief 1 / (1 + e^-x), as the fused kernels print it. */
template <typename T>
inline __attribute__((always_inline)) T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}

#ifdef IR_SIMD_X86_CLONES
/*! \brief `body(args...)` compiled for AVX-512 (F). */
template <typename Body, typename... Args>
__attribute__((target("avx512f"))) auto RunAvx512(const Body& body, Args&&... args) {
  return body(std::forward<Args>(args)...);
}
/*!
 * \brief `body(args...)` compiled for AVX2 with FMA (every AVX2 CPU has it; MaxCpuIsa checks): a * b + c
 * contracts into one fused multiply-add as the AVX-512 copy's does, so both copies round alike and the
 * products run at twice the rate (without it, GCC emitted vmulps + vaddps).
 */
template <typename Body, typename... Args>
__attribute__((target("avx2,fma"))) auto RunAvx2(const Body& body, Args&&... args) {
  return body(std::forward<Args>(args)...);
}
#endif

/*!
 * \brief `body(args...)` (an IR_SIMD_BODY lambda: a hot loop) compiled for the instruction set
 * of MaxCpuIsa(): AVX-512, AVX2 or baseline x86-64, the copies GCC's target_clones would make,
 * picked by the CPU and IR_MAX_CPU_ISA instead of the CPU alone.
 */
template <typename Body, typename... Args>
auto Dispatch(const Body& body, Args&&... args) {
#ifdef IR_SIMD_X86_CLONES
  switch (MaxCpuIsa()) {
    case CpuIsa::kAvx512:
      return RunAvx512(body, std::forward<Args>(args)...);
    case CpuIsa::kAvx2:
      return RunAvx2(body, std::forward<Args>(args)...);
    default:
      break;
  }
#endif
  return body(std::forward<Args>(args)...);
}

/*! \brief y[i] = F::Map(x0[i], x1[i], ...) for i < n; y may alias an x. */
template <typename F, typename R, typename... T>
void Map(int64_t n, R* y, const T*... x) {
  Dispatch(
      [](int64_t n, R* y, const T*... x) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) y[i] = F::Map(x[i]...);
      },
      n, y, x...);
}

/*! \brief y[i] = F::Map(a[i], b) for i < n: a vector and a scalar operand. */
template <typename F, typename R, typename T>
void MapVectorScalar(int64_t n, R* y, const T* a, T b) {
  Dispatch(
      [](int64_t n, R* y, const T* a, T b) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) y[i] = F::Map(a[i], b);
      },
      n, y, a, b);
}

/*! \brief y[i] = F::Map(a, b[i]) for i < n: a scalar and a vector operand. */
template <typename F, typename R, typename T>
void MapScalarVector(int64_t n, R* y, T a, const T* b) {
  Dispatch(
      [](int64_t n, R* y, T a, const T* b) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) y[i] = F::Map(a, b[i]);
      },
      n, y, a, b);
}

/*!
 * \brief x[0] combined with x[1], ..., x[n - 1] (n > 0) by an associative `combine`, in
 * independent lanes that vectorize (an `omp simd` reduction of max does not: NaN).
 */
template <typename T, typename Combine>
T LaneReduce(const T* x, int64_t n, const Combine& combine) {
  return Dispatch(
      [](const T* x, int64_t n, const Combine& combine) IR_SIMD_BODY {
        constexpr int kLanes = 32;
        T lane[kLanes];
        for (int l = 0; l < kLanes; ++l) lane[l] = x[0];
        int64_t j = 0;
        for (; j + kLanes <= n; j += kLanes) {
          for (int l = 0; l < kLanes; ++l) lane[l] = combine(lane[l], x[j + l]);
        }
        for (; j < n; ++j) lane[0] = combine(lane[0], x[j]);
        for (int l = 1; l < kLanes; ++l) lane[0] = combine(lane[0], lane[l]);
        return lane[0];
      },
      x, n, combine);
}

/*!
 * \brief y[i] = F::Map(a[i * sa], b[i * sb]) for i < n where each step is 0 (a broadcast
 * scalar) or 1 (contiguous), picking the loop without strides.
 */
template <typename F, typename R, typename T>
void MapSpan(int64_t n, R* y, const T* a, int64_t sa, const T* b, int64_t sb) {
  if (sa != 0 && sb != 0) {
    Map<F>(n, y, a, b);
  } else if (sa != 0) {
    MapVectorScalar<F>(n, y, a, b[0]);
  } else if (sb != 0) {
    MapScalarVector<F>(n, y, a[0], b);
  } else {
    const R value = F::Map(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = value;
  }
}

}  // namespace simd
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_SIMD_H_
