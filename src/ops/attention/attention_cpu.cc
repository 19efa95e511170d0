/*!
 * \file attention_cpu.cc
 * \brief The CPU kernels of fused_attention, fused_attention_grad and _fused_attention_dv
 * (semantics: attention.cc's file comment): FlashAttention's tiles over per-thread scratch, and
 * the dense path (attention_cpu.h) for the slices the tiled path cannot prove right.
 */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/attention/attention_cpu.h"

namespace ir {
namespace op {
namespace attention {

namespace {

/*! \brief Per-thread buffers of the tiled kernels: tiles of scores, never the T x S matrix. */
template <typename T>
struct Scratch {
  std::vector<T> qs, kt, vt, sc, dp, acc, acc2, m, l, dense;
  void Resize(const Problem& g) {
    qs.resize(kTileQ * g.d);
    kt.resize(g.d * kTileK);
    vt.resize(g.e * kTileK);
    sc.resize(kTileQ * kTileK);
    dp.resize(kTileQ * kTileK);
    acc.resize(std::max(kTileQ, kTileK) * std::max(g.d, g.e));
    acc2.resize(kTileK * std::max(g.d, g.e));
    m.resize(kTileQ);
    l.resize(kTileQ);
  }
};

/*! \brief mt[d * kTileK + j] = m[(j0 + j) * depth + d] for j < n, 0 for n <= j < kTileK: a key tile transposed. */
template <typename T>
void TransposeTile(const T* m, int64_t j0, int64_t n, int64_t depth, T* mt) {
  for (int64_t d = 0; d < depth; ++d) {
    T* row = mt + d * kTileK;
    for (int64_t j = 0; j < n; ++j) row[j] = m[(j0 + j) * depth + d];
    for (int64_t j = n; j < kTileK; ++j) row[j] = 0;
  }
}

/*! \brief sc[r * kTileK + j] = x[r] . tile column j for r < rows: x [rows, depth], tile transposed [depth, kTileK]. */
template <typename T>
void TileProducts(const T* x, int64_t rows, int64_t depth, const T* tile, T* sc) {
  std::fill(sc, sc + rows * kTileK, T(0));
  MicroGemm(rows, depth, x, depth, int64_t{1}, tile, kTileK, sc, kTileK, kTileK);
}

/*! \brief q rows [i0, i0 + rows) of slice b times scale, into qs. */
template <typename T>
void ScaledRows(const Problem& g, const T* q, int64_t b, int64_t i0, int64_t rows, T* qs) {
  const T scale = static_cast<T>(g.scale);
  const T* src = q + (b * g.t + i0) * g.d;
  for (int64_t x = 0; x < rows * g.d; ++x) qs[x] = src[x] * scale;
}

/*!
 * \brief Forward rows [i0, i1) of slice b: online softmax over key tiles (a tiled slice). `kt`:
 * the slice's key tiles transposed ([S / kTileK][D][kTileK], TransposedKeys).
 */
template <typename T>
void TiledForward(const Problem& g, int64_t b, int64_t i0, int64_t i1, const T* q, const T* kt, const T* v, T* o,
                  T* lse, Scratch<T>* w) {
  const int64_t rows = i1 - i0;
  const T* vb = v + b * g.s * g.e;
  ScaledRows(g, q, b, i0, rows, w->qs.data());
  for (int64_t r = 0; r < rows; ++r) {
    w->m[r] = -std::numeric_limits<T>::infinity();
    w->l[r] = 0;
  }
  T* acc = w->acc.data();
  std::fill(acc, acc + rows * g.e, T(0));
  const int64_t keys = g.Limit(i1 - 1);
  for (int64_t j0 = 0; j0 < keys; j0 += kTileK) {
    const int64_t n = std::min(kTileK, keys - j0);
    T* sc = w->sc.data();
    TileProducts(w->qs.data(), rows, g.d, kt + j0 * g.d, sc);
    for (int64_t r = 0; r < rows; ++r) {
      T* p = sc + r * kTileK;
      const int64_t jn = std::max<int64_t>(0, std::min(n, g.Limit(i0 + r) - j0));
      if (jn > 0) {
        const T mn = std::max(w->m[r], RowMax(p, jn));
        const T alpha = std::exp(w->m[r] - mn);
        w->l[r] = w->l[r] * alpha + ExpShifted(p, mn, p, jn);
        w->m[r] = mn;
        if (alpha != T(1)) {
          for (int64_t e = 0; e < g.e; ++e) acc[r * g.e + e] *= alpha;
        }
      }
      std::fill(p + jn, p + kTileK, T(0));
    }
    MicroGemm(rows, n, sc, kTileK, int64_t{1}, vb + j0 * g.e, g.e, acc, g.e, g.e);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = b * g.t + i0 + r;
    const T inv = T(1) / w->l[r];
    for (int64_t e = 0; e < g.e; ++e) o[row * g.e + e] = acc[r * g.e + e] * inv;
    lse[row] = w->m[r] + std::log(w->l[r]);
  }
}

/*!
 * \brief For query rows [i0, i0 + rows) of slice b against the key tile [j0, j0 + n) (k, v
 * transposed in w->kt, w->vt): P = exp(S - lse) into w->sc and, when `dp` (v is given),
 * dS = P * (dP - delta) into w->dp; both 0 at keys a row does not attend.
 */
template <typename T>
void TileGrads(const Problem& g, int64_t b, int64_t i0, int64_t rows, int64_t j0, int64_t n, const T* q, const T* dout,
               const T* lse, const T* delta, bool dp, Scratch<T>* w) {
  ScaledRows(g, q, b, i0, rows, w->qs.data());
  T* sc = w->sc.data();
  T* ds = w->dp.data();
  TileProducts(w->qs.data(), rows, g.d, w->kt.data(), sc);
  if (dp) TileProducts(dout + (b * g.t + i0) * g.e, rows, g.e, w->vt.data(), ds);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = b * g.t + i0 + r;
    const int64_t jn = std::max<int64_t>(0, std::min(n, g.Limit(i0 + r) - j0));
    T* p = sc + r * kTileK;
    if (dp) {
      ScoreGrad(p, lse[row], ds + r * kTileK, delta[row], ds + r * kTileK, jn);
      std::fill(ds + r * kTileK + jn, ds + (r + 1) * kTileK, T(0));
    } else {
      ExpShifted(p, lse[row], p, jn);
    }
    std::fill(p + jn, p + kTileK, T(0));
  }
}

/*!
 * \brief dk (when v is given) and dv of the key tile [j0, j0 + n) of a tiled slice b, over the
 * query rows that attend it, in blocks of kTileQ.
 */
template <typename T>
void TiledBackwardKeys(const Problem& g, int64_t b, int64_t j0, const T* dout, const T* q, const T* k, const T* v,
                       const T* lse, const T* delta, T* dk, T* dv, Scratch<T>* w) {
  const int64_t n = std::min(kTileK, g.s - j0);
  TransposeTile(k + b * g.s * g.d, j0, n, g.d, w->kt.data());
  if (v != nullptr) TransposeTile(v + b * g.s * g.e, j0, n, g.e, w->vt.data());
  T* dk_acc = w->acc.data();
  T* dv_acc = w->acc2.data();
  std::fill(dk_acc, dk_acc + n * g.d, T(0));
  std::fill(dv_acc, dv_acc + n * g.e, T(0));
  const int64_t first = g.causal ? std::max<int64_t>(0, j0 - g.offset) : 0;
  for (int64_t i0 = first; i0 < g.t; i0 += kTileQ) {
    const int64_t rows = std::min(kTileQ, g.t - i0);
    TileGrads(g, b, i0, rows, j0, n, q, dout, lse, delta, v != nullptr, w);
    // dv += P^T dO, dk += dS^T q (scaled below): the tile's key rows as the micro-kernel's rows.
    if (g.with_dv || v == nullptr) {
      MicroGemm(n, rows, w->sc.data(), int64_t{1}, kTileK, dout + (b * g.t + i0) * g.e, g.e, dv_acc, g.e, g.e);
    }
    if (v != nullptr) {
      MicroGemm(n, rows, w->dp.data(), int64_t{1}, kTileK, q + (b * g.t + i0) * g.d, g.d, dk_acc, g.d, g.d);
    }
  }
  const T scale = static_cast<T>(g.scale);
  if (dk != nullptr) {
    T* out = dk + (b * g.s + j0) * g.d;
    for (int64_t x = 0; x < n * g.d; ++x) out[x] = dk_acc[x] * scale;
  }
  std::copy(dv_acc, dv_acc + n * g.e, dv + (b * g.s + j0) * g.e);
}

/*! \brief dq of rows [i0, i1) of a tiled slice b. */
template <typename T>
void TiledBackwardQueries(const Problem& g, int64_t b, int64_t i0, int64_t i1, const T* dout, const T* q, const T* k,
                          const T* v, const T* lse, const T* delta, T* dq, Scratch<T>* w) {
  const int64_t rows = i1 - i0;
  const T* kb = k + b * g.s * g.d;
  T* acc = w->acc.data();
  std::fill(acc, acc + rows * g.d, T(0));
  const int64_t keys = g.Limit(i1 - 1);
  for (int64_t j0 = 0; j0 < keys; j0 += kTileK) {
    const int64_t n = std::min(kTileK, keys - j0);
    TransposeTile(kb, j0, n, g.d, w->kt.data());
    TransposeTile(v + b * g.s * g.e, j0, n, g.e, w->vt.data());
    TileGrads(g, b, i0, rows, j0, n, q, dout, lse, delta, true, w);
    MicroGemm(rows, n, w->dp.data(), kTileK, int64_t{1}, kb + j0 * g.d, g.d, acc, g.d, g.d);
  }
  const T scale = static_cast<T>(g.scale);
  T* out = dq + (b * g.t + i0) * g.d;
  for (int64_t x = 0; x < rows * g.d; ++x) out[x] = acc[x] * scale;
}

/*!
 * \brief dq, dk and dv of a tiled slice b in one pass over its key tiles (FlashAttention-2's
 * backward): each (query tile, key tile) pair's P and dS are computed once, giving dv and dk of
 * the key tile and adding dS k to the query tile's dq (the slice's own, so no other thread
 * writes it). dq is scaled at the end.
 */
template <typename T>
void TiledBackwardSlice(const Problem& g, int64_t b, const T* dout, const T* q, const T* k, const T* v, const T* lse,
                        const T* delta, T* dq, T* dk, T* dv, Scratch<T>* w) {
  const T* kb = k + b * g.s * g.d;
  T* dqb = dq + b * g.t * g.d;
  T* dk_acc = w->acc.data();
  T* dv_acc = w->acc2.data();
  for (int64_t j0 = 0; j0 < g.s; j0 += kTileK) {
    const int64_t n = std::min(kTileK, g.s - j0);
    TransposeTile(kb, j0, n, g.d, w->kt.data());
    TransposeTile(v + b * g.s * g.e, j0, n, g.e, w->vt.data());
    std::fill(dk_acc, dk_acc + n * g.d, T(0));
    std::fill(dv_acc, dv_acc + n * g.e, T(0));
    const int64_t first = g.causal ? std::max<int64_t>(0, j0 - g.offset) : 0;
    for (int64_t i0 = first; i0 < g.t; i0 += kTileQ) {
      const int64_t rows = std::min(kTileQ, g.t - i0);
      TileGrads(g, b, i0, rows, j0, n, q, dout, lse, delta, true, w);
      if (g.with_dv) {
        MicroGemm(n, rows, w->sc.data(), int64_t{1}, kTileK, dout + (b * g.t + i0) * g.e, g.e, dv_acc, g.e, g.e);
      }
      MicroGemm(n, rows, w->dp.data(), int64_t{1}, kTileK, q + (b * g.t + i0) * g.d, g.d, dk_acc, g.d, g.d);
      MicroGemm(rows, n, w->dp.data(), kTileK, int64_t{1}, kb + j0 * g.d, g.d, dqb + i0 * g.d, g.d, g.d);
    }
    const T scale = static_cast<T>(g.scale);
    T* out = dk + (b * g.s + j0) * g.d;
    for (int64_t x = 0; x < n * g.d; ++x) out[x] = dk_acc[x] * scale;
    std::copy(dv_acc, dv_acc + n * g.e, dv + (b * g.s + j0) * g.e);
  }
  const T scale = static_cast<T>(g.scale);
  for (int64_t x = 0; x < g.t * g.d; ++x) dqb[x] *= scale;
}

// ---------------------------------------------------------------- FCompute

/*!
 * \brief Every key tile of the tiled slices transposed once ([batch][S / kTileK][D][kTileK],
 * TransposeTile's layout), which each query tile of the forward pass reads (the size of k).
 */
template <typename T>
std::vector<T> TransposedKeys(const Problem& g, const T* k, const std::vector<char>& tiled) {
  const int64_t key_tiles = (g.s + kTileK - 1) / kTileK;
  std::vector<T> kt(g.batch * key_tiles * kTileK * g.d);
  ParallelFor(
      g.batch * key_tiles,
      [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / key_tiles, j0 = task % key_tiles * kTileK;
          if (!tiled[b]) continue;
          TransposeTile(k + b * g.s * g.d, j0, std::min(kTileK, g.s - j0), g.d, kt.data() + task * kTileK * g.d);
        }
      },
      8);
  return kt;
}

template <typename T>
void ForwardKernel(const Problem& g, const T* q, const T* k, const T* v, T* o, T* lse) {
  if (g.batch == 0 || g.t == 0) return;
  if (g.s == 0) {  // softmax over no keys times an empty v: zeros, as the unfused matmul gives
    std::fill(o, o + g.batch * g.t * g.e, T(0));
    std::fill(lse, lse + g.batch * g.t, -std::numeric_limits<T>::infinity());
    return;
  }
  const std::vector<char> tiled = TiledSlices<T>(g, q, k, v, nullptr);
  const std::vector<T> kt = TransposedKeys(g, k, tiled);
  const int64_t key_tiles = (g.s + kTileK - 1) / kTileK;
  const int64_t tiles = (g.t + kTileQ - 1) / kTileQ;
  ParallelFor(
      g.batch * tiles,
      [&](int64_t begin, int64_t end) {
        Scratch<T> w;
        w.Resize(g);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / tiles, i0 = task % tiles * kTileQ, i1 = std::min(g.t, i0 + kTileQ);
          if (tiled[b]) {
            TiledForward(g, b, i0, i1, q, kt.data() + b * key_tiles * kTileK * g.d, v, o, lse, &w);
          } else {
            DenseForward(g, b, i0, i1, q, k, v, o, lse, &w.dense);
          }
        }
      },
      1);
}

/*!
 * \brief dq, dk, dv (or, with v null, dv alone: dq and dk null, o and lse unread, lse
 * recomputed) of fused_attention.
 */
template <typename T>
void BackwardKernel(const Problem& g, const T* dout, const T* q, const T* k, const T* v, const T* o, const T* lse,
                    T* dq, T* dk, T* dv) {
  if (dq != nullptr) std::fill(dq, dq + g.batch * g.t * g.d, T(0));
  if (dk != nullptr) std::fill(dk, dk + g.batch * g.s * g.d, T(0));
  std::fill(dv, dv + g.batch * g.s * g.e, T(0));
  if (g.batch == 0 || g.t == 0 || g.s == 0) return;
  std::vector<T> own_lse, delta;
  if (v == nullptr) {  // the log-sum-exps: the forward kernel without values (E = 0)
    Problem lse_only = g;
    lse_only.e = 0;
    own_lse.resize(g.batch * g.t);
    std::vector<T> none(1), out(1);
    ForwardKernel<T>(lse_only, q, k, none.data(), out.data(), own_lse.data());
    lse = own_lse.data();
  }
  const std::vector<char> tiled = TiledSlices<T>(g, q, k, v, dout);
  if (v != nullptr) {
    // D_i = rowsum(dO * O): sum_j P_ij dP_ij over the reals.
    delta.resize(g.batch * g.t);
    ParallelFor(
        g.batch * g.t,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) delta[r] = Dot(dout + r * g.e, o + r * g.e, g.e);
        },
        256);
  }
  if (v != nullptr && g.batch >= NumThreads()) {  // a slice per task: one pass over its tiles
    ParallelFor(
        g.batch,
        [&](int64_t begin, int64_t end) {
          Scratch<T> w;
          w.Resize(g);
          for (int64_t b = begin; b < end; ++b) {
            if (tiled[b]) {
              TiledBackwardSlice(g, b, dout, q, k, v, lse, delta.data(), dq, dk, dv, &w);
            } else {
              DenseBackward(g, b, dout, q, k, v, dq, dk, dv);
            }
          }
        },
        1);
    return;
  }
  const int64_t key_tiles = (g.s + kTileK - 1) / kTileK;
  ParallelFor(
      g.batch * key_tiles,
      [&](int64_t begin, int64_t end) {
        Scratch<T> w;
        w.Resize(g);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / key_tiles, kt = task % key_tiles;
          if (tiled[b]) {
            TiledBackwardKeys(g, b, kt * kTileK, dout, q, k, v, lse, delta.data(), dk, dv, &w);
          } else if (kt == 0) {
            DenseBackward(g, b, dout, q, k, v, dq, dk, dv);
          }
        }
      },
      1);
  if (dq == nullptr) return;
  const int64_t query_tiles = (g.t + kTileQ - 1) / kTileQ;
  ParallelFor(
      g.batch * query_tiles,
      [&](int64_t begin, int64_t end) {
        Scratch<T> w;
        w.Resize(g);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / query_tiles, i0 = task % query_tiles * kTileQ;
          if (!tiled[b]) continue;
          TiledBackwardQueries(g, b, i0, std::min(g.t, i0 + kTileQ), dout, q, k, v, lse, delta.data(), dq, &w);
        }
      },
      1);
}

}  // namespace

void ForwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  const Problem g = MakeProblem(attrs, in[0].shape(), in[2].shape());
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    ForwardKernel<T>(g, in[0].data<T>(), in[1].data<T>(), in[2].data<T>(), out[0].data<T>(), out[1].data<T>());
  });
}

void BackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const Problem g = MakeProblem(attrs, in[1].shape(), in[3].shape());
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    BackwardKernel<T>(g, in[0].data<T>(), in[1].data<T>(), in[2].data<T>(), in[3].data<T>(), in[4].data<T>(),
                      in[5].data<T>(), out[0].data<T>(), out[1].data<T>(), out[2].data<T>());
    if (!g.with_dv) std::fill(out[2].data<T>(), out[2].data<T>() + out[2].Size(), T(0));  // dense slices computed it
  });
}

/*! \brief _fused_attention_dv (do, q, k) -> dv: v's gradient alone, which needs no v. */
void DvCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<NDArray>& out) {
  const Problem g = MakeProblem(attrs, in[1].shape(), out[0].shape());
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    BackwardKernel<T>(g, in[0].data<T>(), in[1].data<T>(), in[2].data<T>(), nullptr, nullptr, nullptr, nullptr, nullptr,
                      out[0].data<T>());
  });
}

}  // namespace attention
}  // namespace op
}  // namespace ir
