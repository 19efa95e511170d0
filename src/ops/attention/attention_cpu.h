/*!
 * \file attention_cpu.h
 * \brief The building blocks of the CPU kernels (attention_cpu.cc, its only includer): the tile
 * sizes, the check that a slice may take the tiled path, vector loops, the dense reference path
 * (the unfused graph's formulas over all keys) and the micro-GEMM of the tiled products.
 */
#ifndef IR_OPS_ATTENTION_ATTENTION_CPU_H_
#define IR_OPS_ATTENTION_ATTENTION_CPU_H_

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/attention/attention.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace attention {
// Internal linkage, as in one file: attention_cpu.cc is the only includer, and the kernels' helpers
// (called once, most of them) are inlined as static functions are.
namespace {

constexpr int64_t kTileQ = 32;
constexpr int64_t kTileK = 64;

/*! \brief The largest |x[i]| of n values, and whether all are finite (a NaN or Inf counts as Inf). */
template <typename T>
bool MaxAbs(const T* x, int64_t n, double* out) {
  const T m = simd::Dispatch(
      [](const T* x, int64_t n) IR_SIMD_BODY {
        T m = 0;
#pragma omp simd reduction(max : m)
        for (int64_t i = 0; i < n; ++i) {
          const T a = std::fabs(x[i]);
          m = a != a ? std::numeric_limits<T>::infinity() : (a > m ? a : m);
        }
        return m;
      },
      x, n);
  if (!(m <= std::numeric_limits<T>::max())) return false;
  *out = static_cast<double>(m);
  return true;
}

/*!
 * \brief Whether slice b may run the tiled kernel: every value of q, k, v (and `extra`, e.g.
 * dO [T, E]: nullptr for none; v nullptr: not read) finite, scores bounded, and masked keys' exp
 * provably 0 (see the file comment).
 */
template <typename T>
bool TiledOk(const Problem& g, int64_t b, const T* q, const T* k, const T* v, const T* extra) {
  double mq = 0, mk = 0, mv = 1, mx = 0;
  if (!MaxAbs(q + b * g.t * g.d, g.t * g.d, &mq) || !MaxAbs(k + b * g.s * g.d, g.s * g.d, &mk) ||
      (v != nullptr && !MaxAbs(v + b * g.s * g.e, g.s * g.e, &mv))) {
    return false;
  }
  if (extra != nullptr && !MaxAbs(extra + b * g.t * g.e, g.t * g.e, &mx)) return false;
  const double bound = std::fabs(g.scale) * static_cast<double>(g.d) * mq * mk;
  if (!(bound < 1e30) || !(static_cast<double>(g.s) * mv * std::max(mx, 1.0) < 1e30)) return false;
  if (extra != nullptr && !(static_cast<double>(g.e) * mx * mv < 1e30)) return false;
  if (g.causal) {
    if (g.offset < 0) return false;  // rows without keys: the unfused graph spreads them over the masked ones
    if (!(2 * bound + 4096 < -g.mask_value)) return false;
  }
  return true;
}

/*! \brief The per-slice TiledOk of every slice. */
template <typename T>
std::vector<char> TiledSlices(const Problem& g, const T* q, const T* k, const T* v, const T* extra) {
  std::vector<char> ok(g.batch);
  ParallelFor(
      g.batch,
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) ok[b] = TiledOk(g, b, q, k, v, extra);
      },
      1);
  return ok;
}

// ---------------------------------------------------------------- vector loops

/*! \brief y[j] += a * x[j] for j < n. */
template <typename T>
void Axpy(T a, const T* x, T* y, int64_t n) {
  simd::Dispatch(
      [](T a, const T* x, T* y, int64_t n) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) y[j] += a * x[j];
      },
      a, x, y, n);
}

/*! \brief sum_j x[j] * y[j] for j < n. */
template <typename T>
T Dot(const T* x, const T* y, int64_t n) {
  return simd::Dispatch(
      [](const T* x, const T* y, int64_t n) IR_SIMD_BODY {
        T s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; ++j) s += x[j] * y[j];
        return s;
      },
      x, y, n);
}

/*! \brief p[j] = exp(s[j] - m) for j < n; returns their sum. */
template <typename T>
T ExpShifted(const T* s, T m, T* p, int64_t n) {
  return simd::Dispatch(
      [](const T* s, T m, T* p, int64_t n) IR_SIMD_BODY {
        T sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; ++j) {
          p[j] = std::exp(s[j] - m);
          sum += p[j];
        }
        return sum;
      },
      s, m, p, n);
}

/*! \brief ds[j] = p[j] * (dp[j] - delta), p[j] = exp(s[j] - lse) first (s becomes p). */
template <typename T>
void ScoreGrad(T* s, T lse, const T* dp, T delta, T* ds, int64_t n) {
  simd::Dispatch(
      [](T* s, T lse, const T* dp, T delta, T* ds, int64_t n) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          s[j] = std::exp(s[j] - lse);
          ds[j] = s[j] * (dp[j] - delta);
        }
      },
      s, lse, dp, delta, ds, n);
}

/*! \brief The largest of x[0, n), n > 0 (a NaN may or may not win: its row becomes NaN anyway). */
template <typename T>
T RowMax(const T* x, int64_t n) {
  return simd::LaneReduce(x, n, [](T a, T b) { return b > a ? b : a; });
}

// ---------------------------------------------------------------- the dense reference path

/*! \brief The unfused graph's score of key j for a raw score (q.k) * scale, masked or not. */
template <typename T>
T MaskedScore(const Problem& g, T raw, bool masked) {
  if (!masked) return raw;
  switch (g.mask_form) {
    case kAdd:
      return raw + static_cast<T>(g.mask_value);
    case kMultiply:
      return raw * T(0) + static_cast<T>(g.mask_value);
    default:
      return static_cast<T>(g.mask_value);
  }
}

/*!
 * \brief sc[j] = the unfused graph's scores of row i of slice b over all S keys; then the row's
 * softmax into sc; returns the row's log-sum-exp.
 */
template <typename T>
T DenseProbs(const Problem& g, const T* qi, const T* kb, int64_t i, T* sc) {
  const int64_t limit = g.Limit(i);
  for (int64_t j = 0; j < g.s; ++j) {
    sc[j] = MaskedScore(g, Dot(qi, kb + j * g.d, g.d) * static_cast<T>(g.scale), j >= limit);
  }
  const T m = RowMax(sc, g.s);
  const T sum = ExpShifted(sc, m, sc, g.s);
  const T inv = T(1) / sum;
  for (int64_t j = 0; j < g.s; ++j) sc[j] *= inv;
  return m + std::log(sum);
}

/*! \brief Forward rows [i0, i1) of slice b by the dense path (S > 0). */
template <typename T>
void DenseForward(const Problem& g, int64_t b, int64_t i0, int64_t i1, const T* q, const T* k, const T* v, T* o, T* lse,
                  std::vector<T>* scratch) {
  scratch->resize(g.s);
  T* sc = scratch->data();
  const T* kb = k + b * g.s * g.d;
  const T* vb = v + b * g.s * g.e;
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t row = b * g.t + i;
    lse[row] = DenseProbs(g, q + row * g.d, kb, i, sc);
    T* oi = o + row * g.e;
    std::fill(oi, oi + g.e, T(0));
    for (int64_t j = 0; j < g.s; ++j) Axpy(sc[j], vb + j * g.e, oi, g.e);
  }
}

/*!
 * \brief dq, dk, dv of slice b by the dense path, as the unfused graph's gradient computes them
 * (v null: dv alone; dq, dk null).
 */
template <typename T>
void DenseBackward(const Problem& g, int64_t b, const T* dout, const T* q, const T* k, const T* v, T* dq, T* dk,
                   T* dv) {
  std::vector<T> p(g.s), dp(g.s);
  const T* kb = k + b * g.s * g.d;
  T* dvb = dv + b * g.s * g.e;
  const T scale = static_cast<T>(g.scale);
  for (int64_t i = 0; i < g.t; ++i) {
    const int64_t row = b * g.t + i;
    const T* qi = q + row * g.d;
    const T* doi = dout + row * g.e;
    DenseProbs(g, qi, kb, i, p.data());
    for (int64_t j = 0; j < g.s; ++j) Axpy(p[j], doi, dvb + j * g.e, g.e);
    if (v == nullptr) continue;
    const T* vb = v + b * g.s * g.e;
    T* dkb = dk + b * g.s * g.d;
    T dsum = 0;
    for (int64_t j = 0; j < g.s; ++j) {
      dp[j] = Dot(doi, vb + j * g.e, g.e);
      dsum += dp[j] * p[j];
    }
    const int64_t limit = g.Limit(i);
    T* dqi = dq + row * g.d;
    for (int64_t j = 0; j < g.s; ++j) {
      T ds = p[j] * (dp[j] - dsum);
      if (j >= limit) ds = g.mask_form == kSelect ? T(0) : g.mask_form == kMultiply ? ds * T(0) : ds;
      const T gs = ds * scale;
      Axpy(gs, kb + j * g.d, dqi, g.d);
      Axpy(gs, qi, dkb + j * g.d, g.d);
    }
  }
}

// ---------------------------------------------------------------- the tiled kernels

/*! \brief 16 floats as one vector (GCC's vector extension: one AVX-512 register, two AVX ones...). */
typedef float Floats16 __attribute__((vector_size(64)));

/*! \brief Vectors v0..v3 (Floats16) from the 64 floats at p, and back. */
#define IR_ATTENTION_LOAD4(v, p)                    \
  do {                                              \
    std::memcpy(&v##0, (p), sizeof(Floats16));      \
    std::memcpy(&v##1, (p) + 16, sizeof(Floats16)); \
    std::memcpy(&v##2, (p) + 32, sizeof(Floats16)); \
    std::memcpy(&v##3, (p) + 48, sizeof(Floats16)); \
  } while (0)
#define IR_ATTENTION_STORE4(v, p)                   \
  do {                                              \
    std::memcpy((p), &v##0, sizeof(Floats16));      \
    std::memcpy((p) + 16, &v##1, sizeof(Floats16)); \
    std::memcpy((p) + 32, &v##2, sizeof(Floats16)); \
    std::memcpy((p) + 48, &v##3, sizeof(Floats16)); \
  } while (0)

/*! \brief 8 floats as one vector (one AVX register). */
typedef float Floats8 __attribute__((vector_size(32)));

/*!
 * \brief MicroGemm's float product where vectors are 8 floats wide (AVX2, and the baseline): four
 * rows of 16 columns at a time in 8 accumulators, which with the two b vectors and a broadcast fit
 * AVX's 16 registers (the 4 x 64 block of the AVX-512 kernel needs 32 of them: it spilled, and was
 * 8x slower than this on an AVX2 machine). The same sums in the same order as the wide kernel.
 */
inline void MicroGemmNarrow(int64_t rows, int64_t depth, const float* a, int64_t ars, int64_t aks, const float* b,
                            int64_t ldb, float* c, int64_t ldc, int64_t width) {
  simd::Dispatch(
      [](int64_t rows, int64_t depth, const float* a, int64_t ars, int64_t aks, const float* b, int64_t ldb, float* c,
         int64_t ldc, int64_t width) IR_SIMD_BODY {
        constexpr int64_t kW = 16;
        for (int64_t j0 = 0; j0 < width; j0 += kW) {
          const int64_t w = std::min(kW, width - j0);
          int64_t r = 0;
          if (w == kW) {
            for (; r + 4 <= rows; r += 4) {
              float* cr = c + r * ldc + j0;
              Floats8 c00, c01, c10, c11, c20, c21, c30, c31;
              std::memcpy(&c00, cr, sizeof(Floats8));
              std::memcpy(&c01, cr + 8, sizeof(Floats8));
              std::memcpy(&c10, cr + ldc, sizeof(Floats8));
              std::memcpy(&c11, cr + ldc + 8, sizeof(Floats8));
              std::memcpy(&c20, cr + 2 * ldc, sizeof(Floats8));
              std::memcpy(&c21, cr + 2 * ldc + 8, sizeof(Floats8));
              std::memcpy(&c30, cr + 3 * ldc, sizeof(Floats8));
              std::memcpy(&c31, cr + 3 * ldc + 8, sizeof(Floats8));
              const float* ar = a + r * ars;
              for (int64_t k = 0; k < depth; ++k) {
                const float* br = b + k * ldb + j0;
                Floats8 b0, b1;
                std::memcpy(&b0, br, sizeof(b0));
                std::memcpy(&b1, br + 8, sizeof(b1));
                const float a0 = ar[k * aks], a1 = ar[ars + k * aks], a2 = ar[2 * ars + k * aks],
                            a3 = ar[3 * ars + k * aks];
                c00 += b0 * a0;
                c01 += b1 * a0;
                c10 += b0 * a1;
                c11 += b1 * a1;
                c20 += b0 * a2;
                c21 += b1 * a2;
                c30 += b0 * a3;
                c31 += b1 * a3;
              }
              std::memcpy(cr, &c00, sizeof(Floats8));
              std::memcpy(cr + 8, &c01, sizeof(Floats8));
              std::memcpy(cr + ldc, &c10, sizeof(Floats8));
              std::memcpy(cr + ldc + 8, &c11, sizeof(Floats8));
              std::memcpy(cr + 2 * ldc, &c20, sizeof(Floats8));
              std::memcpy(cr + 2 * ldc + 8, &c21, sizeof(Floats8));
              std::memcpy(cr + 3 * ldc, &c30, sizeof(Floats8));
              std::memcpy(cr + 3 * ldc + 8, &c31, sizeof(Floats8));
            }
          }
          for (; r < rows; ++r) {
            float* cr = c + r * ldc + j0;
            for (int64_t k = 0; k < depth; ++k) {
              const float ak = a[r * ars + k * aks];
              const float* br = b + k * ldb + j0;
#pragma omp simd
              for (int64_t j = 0; j < w; ++j) cr[j] += ak * br[j];
            }
          }
        }
      },
      rows, depth, a, ars, aks, b, ldb, c, ldc, width);
}

/*!
 * \brief c[r * ldc + j] += sum_k a[r * ars + k * aks] * b[k * ldb + j] for r < rows, j < width: the
 * micro-kernel of every product of the tiled kernels. Four rows of 64 columns at a time are kept
 * in vector registers (AVX-512: 16 of them), each b row loaded once for the four; float on a CPU
 * without AVX-512 (or capped below it, IR_MAX_CPU_ISA) takes MicroGemmNarrow's 4 x 16 blocks.
 */
template <typename T>
void MicroGemm(int64_t rows, int64_t depth, const T* a, int64_t ars, int64_t aks, const T* b, int64_t ldb, T* c,
               int64_t ldc, int64_t width) {
  if constexpr (std::is_same<T, float>::value) {
    if (MaxCpuIsa() != CpuIsa::kAvx512) return MicroGemmNarrow(rows, depth, a, ars, aks, b, ldb, c, ldc, width);
  }
  simd::Dispatch(
      [](int64_t rows, int64_t depth, const T* a, int64_t ars, int64_t aks, const T* b, int64_t ldb, T* c, int64_t ldc,
         int64_t width) IR_SIMD_BODY {
        constexpr int64_t kW = 64;
        for (int64_t j0 = 0; j0 < width; j0 += kW) {
          const int64_t w = std::min(kW, width - j0);
          int64_t r = 0;
          if constexpr (std::is_same<T, float>::value) {
            // float: the 4 x 64 accumulators as 16 named 16-lane vectors, which the compiler
            // keeps in registers (as arrays they spilled to the stack).
            if (w == kW) {
              for (; r + 4 <= rows; r += 4) {
                float* cr = c + r * ldc + j0;
                Floats16 c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33;
                IR_ATTENTION_LOAD4(c0, cr);
                IR_ATTENTION_LOAD4(c1, cr + ldc);
                IR_ATTENTION_LOAD4(c2, cr + 2 * ldc);
                IR_ATTENTION_LOAD4(c3, cr + 3 * ldc);
                const float* ar = a + r * ars;
                for (int64_t k = 0; k < depth; ++k) {
                  const float* br = b + k * ldb + j0;
                  Floats16 b0, b1, b2, b3;
                  std::memcpy(&b0, br, sizeof(b0));
                  std::memcpy(&b1, br + 16, sizeof(b1));
                  std::memcpy(&b2, br + 32, sizeof(b2));
                  std::memcpy(&b3, br + 48, sizeof(b3));
                  const float a0 = ar[k * aks], a1 = ar[ars + k * aks], a2 = ar[2 * ars + k * aks],
                              a3 = ar[3 * ars + k * aks];
                  c00 += b0 * a0;
                  c01 += b1 * a0;
                  c02 += b2 * a0;
                  c03 += b3 * a0;
                  c10 += b0 * a1;
                  c11 += b1 * a1;
                  c12 += b2 * a1;
                  c13 += b3 * a1;
                  c20 += b0 * a2;
                  c21 += b1 * a2;
                  c22 += b2 * a2;
                  c23 += b3 * a2;
                  c30 += b0 * a3;
                  c31 += b1 * a3;
                  c32 += b2 * a3;
                  c33 += b3 * a3;
                }
                IR_ATTENTION_STORE4(c0, cr);
                IR_ATTENTION_STORE4(c1, cr + ldc);
                IR_ATTENTION_STORE4(c2, cr + 2 * ldc);
                IR_ATTENTION_STORE4(c3, cr + 3 * ldc);
              }
            }
          }
          if (w == kW) {
            for (; r + 4 <= rows; r += 4) {
              T c0[kW], c1[kW], c2[kW], c3[kW];
              T* cr = c + r * ldc + j0;
              for (int64_t j = 0; j < kW; ++j) {
                c0[j] = cr[j];
                c1[j] = cr[ldc + j];
                c2[j] = cr[2 * ldc + j];
                c3[j] = cr[3 * ldc + j];
              }
              const T* ar = a + r * ars;
              for (int64_t k = 0; k < depth; ++k) {
                const T* br = b + k * ldb + j0;
                const T a0 = ar[k * aks], a1 = ar[ars + k * aks], a2 = ar[2 * ars + k * aks],
                        a3 = ar[3 * ars + k * aks];
#pragma omp simd
                for (int64_t j = 0; j < kW; ++j) {
                  c0[j] += a0 * br[j];
                  c1[j] += a1 * br[j];
                  c2[j] += a2 * br[j];
                  c3[j] += a3 * br[j];
                }
              }
              for (int64_t j = 0; j < kW; ++j) {
                cr[j] = c0[j];
                cr[ldc + j] = c1[j];
                cr[2 * ldc + j] = c2[j];
                cr[3 * ldc + j] = c3[j];
              }
            }
          }
          for (; r < rows; ++r) {
            T* cr = c + r * ldc + j0;
            for (int64_t k = 0; k < depth; ++k) {
              const T ak = a[r * ars + k * aks];
              const T* br = b + k * ldb + j0;
#pragma omp simd
              for (int64_t j = 0; j < w; ++j) cr[j] += ak * br[j];
            }
          }
        }
      },
      rows, depth, a, ars, aks, b, ldb, c, ldc, width);
}

}  // namespace
}  // namespace attention
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_ATTENTION_ATTENTION_CPU_H_
