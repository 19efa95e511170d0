/*!
 * \file reduce_kernels.h
 * \brief CPU kernels of the reductions: sum/mean/max/min/prod over any set of axes, the
 * broadcast back over reduced axes (their gradient), and argmax/argmin.
 *
 * A reduction first merges adjacent axes that are both reduced or both kept (dropping
 * size-1 axes), which leaves outer kept/reduced dims and one contiguous inner dim:
 * - inner reduced: each output reduces contiguous runs (vectorized over kLanes lanes);
 * - inner kept: each output row accumulates input rows (vectorized across the row).
 *
 * Accuracy: float32 sums are accumulated in float32 by pairwise summation (as NumPy does),
 * so the error grows with log(n) rather than n while leaves keep the full float32 vector
 * width (accumulating in double would halve it). The pairwise tree depends only on the
 * shape: its top levels run in parallel when there are fewer outputs than threads, and
 * results are the same bits for any number of threads.
 */
#ifndef IR_OPS_REDUCE_REDUCE_KERNELS_H_
#define IR_OPS_REDUCE_REDUCE_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/op_common.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace reduce {

/*!
 * \brief Elements per pairwise leaf when the inner dim is reduced: 32 per lane, enough that
 * a leaf's setup and final lane sum do not outweigh its loop.
 */
constexpr int64_t kLeafElements = 1024;
/*! \brief Rows per pairwise leaf when the inner dim is kept. */
constexpr int64_t kLeafRows = 16;
/*! \brief Columns of one task when the inner dim is kept (bounds the pairwise stack buffers). */
constexpr int64_t kTile = 256;
/*!
 * \brief Independent accumulators of a contiguous run: the compiler vectorizes them, and 32
 * float lanes are 4 AVX2 registers (or 2 AVX-512), enough chains to hide the add's latency.
 */
constexpr int kLanes = 32;

/*! \brief A reduction's input as merged dims: outer kept and reduced dims, one contiguous inner dim. */
struct ReduceLayout {
  std::vector<int64_t> kept_extent, kept_stride;
  std::vector<int64_t> reduced_extent, reduced_stride;
  int64_t inner = 1;
  bool inner_reduced = false;
  int64_t num_kept = 1;     // product of kept_extent
  int64_t num_reduced = 1;  // product of reduced_extent
};

/*!
 * \brief The dims of `shape` as (extent, reduced) pairs, outermost first: extents of 1 dropped and
 * neighbours both reduced or both kept merged (the CPU and device reductions walk these).
 */
std::vector<std::pair<int64_t, bool>> MergeReducedDims(const Shape& shape, const std::vector<bool>& reduced);

/*! \brief Merges the dims of `shape` (known, no zero extents) by whether they are `reduced`. */
ReduceLayout MakeReduceLayout(const Shape& shape, const std::vector<bool>& reduced);

/*! \brief Input offset of row-major index `index` (< product of `extent`) with element `stride`s. */
inline int64_t Offset(int64_t index, const std::vector<int64_t>& extent, const std::vector<int64_t>& stride) {
  if (extent.empty()) return 0;
  int64_t offset = 0;
  for (size_t d = extent.size() - 1; d > 0; --d) {
    offset += (index % extent[d]) * stride[d];
    index /= extent[d];
  }
  return offset + index * stride[0];
}

// ---------------------------------------------------------------- reducers

// A reducer: Identity (the value of an empty reduction), Combine, and kDivideByCount (mean).
struct SumReducer {
  static constexpr bool kDivideByCount = false;
  template <typename T>
  static T Identity() {
    return T(0);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a + b;
  }
};
struct MeanReducer : SumReducer {
  static constexpr bool kDivideByCount = true;
};
struct ProdReducer {
  static constexpr bool kDivideByCount = false;
  template <typename T>
  static T Identity() {
    return T(1);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a * b;
  }
};
// `a > b ? a : b` compiles to maxps/maxpd; NaN inputs give an unspecified element, as in Eigen.
struct MaxReducer {
  static constexpr bool kDivideByCount = false;
  template <typename T>
  static T Identity() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a > b ? a : b;
  }
};
struct MinReducer {
  static constexpr bool kDivideByCount = false;
  template <typename T>
  static T Identity() {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a < b ? a : b;
  }
};

/*! \brief acc / count for a mean; an empty integer mean is 0 (a float one is NaN). */
template <typename T>
T DivideByCount(T acc, int64_t count) {
  if (std::is_integral<T>::value && count == 0) return T(0);
  return acc / static_cast<T>(count);
}

// ---------------------------------------------------------------- pairwise trees

/*!
 * \brief Reduces items [begin, end) into acc[0, width): leaves of at most `leaf` items go to
 * leaf_fn(begin, end, acc); larger ranges split in halves whose results combine.
 */
template <typename R, typename T, typename Leaf>
void PairwiseReduce(int64_t begin, int64_t end, int64_t leaf, int64_t width, T* acc, const Leaf& leaf_fn) {
  if (end - begin <= leaf) {
    leaf_fn(begin, end, acc);
    return;
  }
  int64_t mid = begin + (end - begin) / 2;
  PairwiseReduce<R>(begin, mid, leaf, width, acc, leaf_fn);
  T right[kTile];
  PairwiseReduce<R>(mid, end, leaf, width, right, leaf_fn);
  for (int64_t j = 0; j < width; ++j) acc[j] = R::Combine(acc[j], right[j]);
}

/*! \brief The boundaries of the `parts` nodes at one depth of PairwiseReduce's tree over [begin, end). */
inline void SplitPairwise(int64_t begin, int64_t end, int64_t parts, std::vector<int64_t>* bounds) {
  if (parts == 1) {
    bounds->push_back(end);
    return;
  }
  int64_t mid = begin + (end - begin) / 2;
  SplitPairwise(begin, mid, parts / 2, bounds);
  SplitPairwise(mid, end, parts / 2, bounds);
}

/*!
 * \brief PairwiseReduce over [0, n) with the nodes of one depth of the tree computed in
 * parallel and combined in the tree's order: the same bits as the serial call.
 */
template <typename R, typename T, typename Leaf>
void ParallelPairwiseReduce(int64_t n, int64_t leaf, int64_t width, T* acc, const Leaf& leaf_fn) {
  int64_t parts = 1;
  // Every node at the chosen depth is longer than a leaf, so the serial tree splits it too.
  while (parts * 2 <= 4 * NumThreads() && n / (parts * 2) > std::max<int64_t>(leaf, kLeafElements)) parts *= 2;
  if (parts == 1) {
    PairwiseReduce<R>(0, n, leaf, width, acc, leaf_fn);
    return;
  }
  std::vector<int64_t> bounds = {0};
  SplitPairwise(0, n, parts, &bounds);
  std::vector<T> partial(parts * width);
  ParallelFor(
      parts,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p)
          PairwiseReduce<R>(bounds[p], bounds[p + 1], leaf, width, &partial[p * width], leaf_fn);
      },
      1);
  for (int64_t step = 1; step < parts; step *= 2) {
    for (int64_t p = 0; p + step < parts; p += 2 * step) {
      for (int64_t j = 0; j < width; ++j)
        partial[p * width + j] = R::Combine(partial[p * width + j], partial[(p + step) * width + j]);
    }
  }
  std::copy(partial.begin(), partial.begin() + width, acc);
}

// ---------------------------------------------------------------- reduction kernels

/*! \brief Reduces elements [begin, end) of one output's run sequence (inner dim reduced). */
template <typename R, typename T>
T ReduceRuns(const T* base, const ReduceLayout& layout, int64_t begin, int64_t end) {
  return simd::Dispatch(
      [](const T* base, const ReduceLayout& layout, int64_t begin, int64_t end) IR_SIMD_BODY {
        T lane[kLanes];
        for (T& l : lane) l = R::template Identity<T>();
        while (begin < end) {
          int64_t row = begin / layout.inner, col = begin % layout.inner;
          int64_t len = std::min(layout.inner - col, end - begin);
          const T* p = base + Offset(row, layout.reduced_extent, layout.reduced_stride) + col;
          int64_t i = 0;
          for (; i + kLanes <= len; i += kLanes) {
            for (int l = 0; l < kLanes; ++l) lane[l] = R::Combine(lane[l], p[i + l]);
          }
          for (; i < len; ++i) lane[0] = R::Combine(lane[0], p[i]);
          begin += len;
        }
        for (int w = kLanes / 2; w > 0; w /= 2) {
          for (int l = 0; l < w; ++l) lane[l] = R::Combine(lane[l], lane[l + w]);
        }
        return lane[0];
      },
      base, layout, begin, end);
}

/*! \brief out[o] = reduction of output o's runs (inner dim reduced). */
template <typename R, typename T>
void ReduceInnerReduced(const T* in, const ReduceLayout& layout, T* out) {
  int64_t n = layout.num_reduced * layout.inner;
  auto reduce_one = [&](int64_t o, bool parallel) {
    const T* base = in + Offset(o, layout.kept_extent, layout.kept_stride);
    auto leaf = [&](int64_t b, int64_t e, T* acc) { acc[0] = ReduceRuns<R>(base, layout, b, e); };
    if (parallel) {
      ParallelPairwiseReduce<R>(n, kLeafElements, 1, &out[o], leaf);
    } else {
      PairwiseReduce<R>(0, n, kLeafElements, 1, &out[o], leaf);
    }
  };
  if (layout.num_kept >= NumThreads()) {
    ParallelFor(
        layout.num_kept,
        [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) reduce_one(o, false);
        },
        std::max<int64_t>(1, (1 << 15) / n));
  } else {
    for (int64_t o = 0; o < layout.num_kept; ++o) reduce_one(o, true);
  }
}

/*! \brief out[o, j] = reduction over reduced rows r of in[o, r, j] (inner dim kept). */
template <typename R, typename T>
void ReduceInnerKept(const T* in, const ReduceLayout& layout, T* out) {
  int64_t tiles = (layout.inner + kTile - 1) / kTile, units = layout.num_kept * tiles;
  auto reduce_tile = [&](int64_t unit, bool parallel) {
    int64_t o = unit / tiles, j0 = unit % tiles * kTile, width = std::min(kTile, layout.inner - j0);
    const T* base = in + Offset(o, layout.kept_extent, layout.kept_stride) + j0;
    auto leaf = [&](int64_t b, int64_t e, T* acc) {
      const T* row = base + Offset(b, layout.reduced_extent, layout.reduced_stride);
      std::copy(row, row + width, acc);
      for (int64_t r = b + 1; r < e; ++r) {
        row = base + Offset(r, layout.reduced_extent, layout.reduced_stride);
        for (int64_t j = 0; j < width; ++j) acc[j] = R::Combine(acc[j], row[j]);
      }
    };
    T* dst = out + o * layout.inner + j0;
    if (parallel) {
      ParallelPairwiseReduce<R>(layout.num_reduced, kLeafRows, width, dst, leaf);
    } else {
      PairwiseReduce<R>(0, layout.num_reduced, kLeafRows, width, dst, leaf);
    }
  };
  if (units >= NumThreads()) {
    ParallelFor(
        units,
        [&](int64_t b, int64_t e) {
          for (int64_t u = b; u < e; ++u) reduce_tile(u, false);
        },
        std::max<int64_t>(1, (1 << 15) / (layout.num_reduced * kTile)));
  } else {
    for (int64_t u = 0; u < units; ++u) reduce_tile(u, true);
  }
}

/*!
 * \brief out = R-reduction of `in` (shape `shape`) over the axes flagged in `reduced`, divided
 * by the number of reduced elements for a mean. `out` holds the kept elements in order.
 */
template <typename R, typename T>
void Reduce(const T* in, const Shape& shape, const std::vector<bool>& reduced, T* out) {
  int64_t out_size = 1, count = 1;
  for (int d = 0; d < shape.ndim(); ++d) (reduced[d] ? count : out_size) *= shape[d];
  if (out_size == 0) return;
  if (count == 0) {
    T empty = R::template Identity<T>();
    std::fill(out, out + out_size, R::kDivideByCount ? DivideByCount(empty, 0) : empty);
    return;
  }
  ReduceLayout layout = MakeReduceLayout(shape, reduced);
  if (layout.inner_reduced) {
    ReduceInnerReduced<R>(in, layout, out);
  } else {
    ReduceInnerKept<R>(in, layout, out);
  }
  if (R::kDivideByCount) {
    ParallelFor(out_size, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = DivideByCount(out[i], count);
    });
  }
}

/*!
 * \brief out (shape `shape`) = og broadcast back over the axes flagged in `reduced`, divided
 * by the number of reduced elements when `normalize` (the gradient of mean).
 */
template <typename T>
void BroadcastReduced(const T* og, const Shape& shape, const std::vector<bool>& reduced, bool normalize, T* out) {
  int64_t count = 1;
  for (int d = 0; d < shape.ndim(); ++d) count *= reduced[d] ? shape[d] : 1;
  if (shape.Size() == 0) return;
  ReduceLayout layout = MakeReduceLayout(shape, reduced);
  T scale = normalize ? T(count) : T(1);
  int64_t rows = layout.num_reduced, inner = layout.inner;
  ParallelFor(
      layout.num_kept * rows,
      [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
          int64_t o = u / rows, r = u % rows;
          T* dst = out + Offset(o, layout.kept_extent, layout.kept_stride) +
                   Offset(r, layout.reduced_extent, layout.reduced_stride);
          if (layout.inner_reduced) {
            T value = og[o] / scale;
            std::fill(dst, dst + inner, value);
          } else {
            const T* src = og + o * inner;
            for (int64_t j = 0; j < inner; ++j) dst[j] = src[j] / scale;
          }
        }
      },
      std::max<int64_t>(1, (1 << 15) / inner));
}

/*!
 * \brief out[o, j] = index along the middle axis of the first max (kMax) or min of in[o, :, j],
 * for `in` viewed as [outer, n, inner] with n > 0.
 */
template <bool kMax, typename T>
void ArgReduce(const T* in, int64_t outer, int64_t n, int64_t inner, int64_t* out) {
  auto better = [](T a, T b) { return kMax ? a > b : a < b; };
  if (inner == 1) {
    ParallelFor(
        outer,
        [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            const T* row = in + o * n;
            int64_t best = 0;
            for (int64_t i = 1; i < n; ++i) best = better(row[i], row[best]) ? i : best;
            out[o] = best;
          }
        },
        std::max<int64_t>(1, (1 << 15) / n));
    return;
  }
  int64_t tiles = (inner + kTile - 1) / kTile;
  ParallelFor(
      outer * tiles,
      [&](int64_t b, int64_t e) {
        T best[kTile];
        for (int64_t u = b; u < e; ++u) {
          int64_t o = u / tiles, j0 = u % tiles * kTile, width = std::min(kTile, inner - j0);
          const T* base = in + o * n * inner + j0;
          int64_t* idx = out + o * inner + j0;
          std::copy(base, base + width, best);
          std::fill(idx, idx + width, int64_t{0});
          for (int64_t i = 1; i < n; ++i) {
            const T* row = base + i * inner;
            for (int64_t j = 0; j < width; ++j) {  // branch-free, so it vectorizes
              bool take = better(row[j], best[j]);
              best[j] = take ? row[j] : best[j];
              idx[j] = take ? i : idx[j];
            }
          }
        }
      },
      std::max<int64_t>(1, (1 << 15) / (n * std::min(inner, kTile))));
}

}  // namespace reduce
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_REDUCE_REDUCE_KERNELS_H_
