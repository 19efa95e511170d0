/*!
 * \file pool_kernels.h
 * \brief CPU pooling loops for NHWC: a window cell is C contiguous channels, so every loop runs
 * over channels innermost and vectorizes. Forward passes split output rows across threads;
 * backward passes split images (windows may overlap, so one thread owns an image's dx).
 * Max pooling keeps TensorFlow's rule: the first maximum of a window wins (`>`: a NaN in the
 * first cell stays, a later NaN never replaces a number), recomputed from x for the gradient.
 */
#ifndef IR_OPS_POOL_POOL_KERNELS_H_
#define IR_OPS_POOL_POOL_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/nn_common.h"
#include "ops/op_common.h"
#include "ops/simd.h"

// Vectors of 64 bytes pass only between the inline helpers below: no ABI is at stake.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ir {
namespace op {
namespace pool {

/*! \brief The cells of one window inside the input: rows [h0, h1), columns [w0, w1). */
struct Cells {
  int64_t h0, h1, w0, w1;
  int64_t Count() const { return (h1 - h0) * (w1 - w0); }
};

/*! \brief The window of output cell (oh, ow), clipped to the input. */
inline Cells WindowAt(const nn::Geometry& g, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.sh - g.pad_top, w0 = ow * g.sw - g.pad_left;
  return {std::max<int64_t>(h0, 0), std::min(h0 + g.kh, g.h), std::max<int64_t>(w0, 0), std::min(w0 + g.kw, g.w)};
}

/*! \brief A cell number within a window, as wide as T (so its vectors have T's lanes). */
template <typename T>
using IndexOf = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;

/*! \brief 64 bytes of T (one AVX-512 register, two AVX2 or four SSE registers) and the matching indices. */
template <typename T>
struct Wide {
  typedef T Value __attribute__((vector_size(64)));
  typedef IndexOf<T> Index __attribute__((vector_size(64)));
};

/*! \brief Lane types: one channel (scalars) or a block of 64 bytes of channels (vectors). */
template <typename T, bool kWide>
struct Lanes {
  using Value = T;
  using Index = IndexOf<T>;
  static constexpr int64_t kCount = 1;
};
template <typename T>
struct Lanes<T, true> {
  using Value = typename Wide<T>::Value;
  using Index = typename Wide<T>::Index;
  static constexpr int64_t kCount = 64 / sizeof(T);
};

/*! \brief Unaligned load and store of lanes (always inlined: no vector crosses a call). */
template <typename V, typename T>
__attribute__((always_inline)) inline V Load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V, typename T>
__attribute__((always_inline)) inline void Store(T* p, const V& v) {
  std::memcpy(p, &v, sizeof(V));
}

/*! \brief Calls f(c0, Lanes) for channel blocks covering [0, c): vectors while they fit, then scalars. */
template <typename T, typename F>
inline void ForEachChannelBlock(int64_t c, const F& f) {
  int64_t c0 = 0;
  for (; c0 + Lanes<T, true>::kCount <= c; c0 += Lanes<T, true>::kCount) f(c0, Lanes<T, true>());
  for (; c0 < c; ++c0) f(c0, Lanes<T, false>());
}

/*! \brief y = the first maximum over the window's cells of one block of channels (row: w * c elements). */
template <typename L, typename T>
inline void MaxBlock(const T* x, int64_t row, int64_t c, const Cells& s, T* y) {
  using V = typename L::Value;
  V best = Load<V>(x + s.h0 * row + s.w0 * c);
  for (int64_t h = s.h0; h < s.h1; ++h) {
    for (int64_t w = s.w0; w < s.w1; ++w) {
      const V v = Load<V>(x + h * row + w * c);
      best = v > best ? v : best;
    }
  }
  Store(y, best);
}

/*! \brief y = the mean of the window's cells (summed in row-major order, then divided). */
template <typename L, typename T>
inline void AvgBlock(const T* x, int64_t row, int64_t c, const Cells& s, T* y) {
  using V = typename L::Value;
  V sum = V{};
  for (int64_t h = s.h0; h < s.h1; ++h) {
    for (int64_t w = s.w0; w < s.w1; ++w) sum += Load<V>(x + h * row + w * c);
  }
  Store(y, sum / static_cast<T>(s.Count()));
}

/*!
 * \brief dx[cell] += dy at each channel's first maximum of the window: one pass finds the
 * argmax (as a cell number), a second adds dy where it matches (and 0 elsewhere).
 */
template <typename L, typename T>
inline void MaxGradBlock(const T* x, const T* dy, int64_t row, int64_t c, const Cells& s, T* dx) {
  using V = typename L::Value;
  using I = typename L::Index;
  V best = Load<V>(x + s.h0 * row + s.w0 * c);
  I arg = I{}, k = I{};
  for (int64_t h = s.h0; h < s.h1; ++h) {
    for (int64_t w = s.w0; w < s.w1; ++w, k += 1) {
      const V v = Load<V>(x + h * row + w * c);
      const auto greater = v > best;
      best = greater ? v : best;
      arg = greater ? k : arg;
    }
  }
  const V d = Load<V>(dy);
  k = I{};
  for (int64_t h = s.h0; h < s.h1; ++h) {
    for (int64_t w = s.w0; w < s.w1; ++w, k += 1) {
      T* q = dx + h * row + w * c;
      Store(q, Load<V>(q) + (arg == k ? d : V{}));
    }
  }
}

/*! \brief dx[cell] += dy / (cells in the window) for every cell of the window. */
template <typename L, typename T>
inline void AvgGradBlock(const T* dy, int64_t row, int64_t c, const Cells& s, T* dx) {
  using V = typename L::Value;
  const V share = Load<V>(dy) / static_cast<T>(s.Count());
  for (int64_t h = s.h0; h < s.h1; ++h) {
    for (int64_t w = s.w0; w < s.w1; ++w) {
      T* q = dx + h * row + w * c;
      Store(q, Load<V>(q) + share);
    }
  }
}

/*! \brief Output row oh of image x (NHWC) pooled into y (g.ow * g.c values). */
template <bool kMax, typename T>
void PoolRow(const nn::Geometry& g, const T* x, int64_t oh, T* y) {
  simd::Dispatch(
      [](const nn::Geometry& g, const T* x, int64_t oh, T* y) IR_SIMD_BODY {
        const int64_t row = g.w * g.c;
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Cells s = WindowAt(g, oh, ow);
          ForEachChannelBlock<T>(g.c, [&](int64_t c0, auto lanes) {
            using L = decltype(lanes);
            if (kMax) {
              MaxBlock<L>(x + c0, row, g.c, s, y + ow * g.c + c0);
            } else {
              AvgBlock<L>(x + c0, row, g.c, s, y + ow * g.c + c0);
            }
          });
        }
      },
      g, x, oh, y);
}

/*! \brief dx of one image (NHWC) from its dy (and its x for max pooling). */
template <bool kMax, typename T>
void PoolGradImage(const nn::Geometry& g, const T* x, const T* dy, T* dx) {
  simd::Dispatch(
      [](const nn::Geometry& g, const T* x, const T* dy, T* dx) IR_SIMD_BODY {
        const int64_t row = g.w * g.c;
        std::fill(dx, dx + g.h * row, T(0));
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const Cells s = WindowAt(g, oh, ow);
            const T* d = dy + (oh * g.ow + ow) * g.c;
            ForEachChannelBlock<T>(g.c, [&](int64_t c0, auto lanes) {
              using L = decltype(lanes);
              if (kMax) {
                MaxGradBlock<L>(x + c0, d + c0, row, g.c, s, dx + c0);
              } else {
                AvgGradBlock<L>(d + c0, row, g.c, s, dx + c0);
              }
            });
          }
        }
      },
      g, x, dy, dx);
}

/*! \brief Max (kMax) or average pooling of NHWC x into y, output rows split across threads. */
template <bool kMax, typename T>
void PoolNHWC(const nn::Geometry& g, const T* x, T* y) {
  const int64_t image = g.h * g.w * g.c, work = g.ow * g.kh * g.kw * g.c;
  ParallelFor(
      g.n * g.oh,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t n = r / g.oh, oh = r % g.oh;
          PoolRow<kMax>(g, x + n * image, oh, y + r * g.ow * g.c);
        }
      },
      std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(work, 1)));
}

/*! \brief dx of max (kMax, from x) or average pooling (x unused) in NHWC, images split across threads. */
template <bool kMax, typename T>
void PoolGradNHWC(const nn::Geometry& g, const T* x, const T* dy, T* dx) {
  const int64_t image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.c;
  ParallelFor(
      g.n,
      [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) PoolGradImage<kMax>(g, x + n * image, dy + n * out_image, dx + n * image);
      },
      std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(image + out_image * g.kh * g.kw, 1)));
}

}  // namespace pool
}  // namespace op
}  // namespace ir

#pragma GCC diagnostic pop

#endif  // IR_OPS_POOL_POOL_KERNELS_H_
