/*!
 * \file attention.cc
 * \brief fused_attention and fused_attention_grad: softmax(Q K^T * scale + causal mask) V in one
 * kernel, FlashAttention's tiling on the CPU (online softmax over key tiles: the T x S score
 * matrix is never stored, only one tile of it per thread), and its backward pass, which
 * recomputes each tile's scores from q, k and the per-row log-sum-exp the forward pass keeps
 * (FlashAttention-2: D_i = rowsum(dO * O), dS = P * (dP - D)).
 *
 * Shapes: q [..., T, D], k [..., S, D], v [..., S, E] with the same leading (batch) dims;
 * o [..., T, E], lse [..., T].
 *
 * Causal: query row i attends keys j <= i + (S - T) (the last query row sees every key; with
 * T == S, TensorFlow's matrix_band_part(ones, -1, 0) lower triangle). The other keys are
 * "masked": the unfused graphs this op replaces (attention_rules.cc) give them the score
 * `mask_value` (a large negative constant such as -1e9) by one of three formulas, `mask_form`:
 * select (tf.where(mask, s, mask_value)), add (s + (1 - mask) * mask_value) or multiply
 * (s * mask + (1 - mask) * mask_value), whose exp is exactly 0 in float32 after the row maximum
 * is subtracted. The tiled kernel skips them.
 *
 * Special values: the tiled kernel runs a (batch) slice only when it provably computes what the
 * unfused graph does up to rounding: every value of q, k, v (and dO) finite, the scores bounded
 * (|scale| * D * max|q| * max|k| < 1e30), and, when causal, T <= S and the masked scores at least
 * 4096 below every unmasked one. Any other slice runs the dense reference path, row by row over
 * all S keys with the unfused graph's formulas (masked scores by `mask_form`, 0 * NaN products
 * included), so NaN and Inf propagate as they do unfused. The device kernels use those dense
 * formulas always (one work-item per query or key row; scores recomputed, never stored).
 */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/nn_common.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

/*! \brief How the unfused graph gave masked keys their score (see the file comment). */
enum MaskForm { kSelect = 0, kAdd = 1, kMultiply = 2 };

struct AttentionParam : public dmlc::Parameter<AttentionParam> {
  double scale;
  bool causal;
  double mask_value;
  int mask_form;
  bool with_dv;
  DMLC_DECLARE_PARAMETER(AttentionParam) {
    DMLC_DECLARE_FIELD(scale).set_default(1.0).describe("Factor of the scores q k^T.");
    DMLC_DECLARE_FIELD(causal).set_default(false).describe(
        "Query row i attends only keys j <= i + (S - T) (the lower triangle when T == S).");
    DMLC_DECLARE_FIELD(mask_value).set_default(-1e9).describe("The score of a masked key (causal only).");
    DMLC_DECLARE_FIELD(mask_form)
        .set_default(kSelect)
        .add_enum("select", kSelect)
        .add_enum("add", kAdd)
        .add_enum("multiply", kMultiply)
        .describe(
            "How a masked score is formed from the raw score s (special values only): select: mask_value; "
            "add: s + mask_value; multiply: s * 0 + mask_value.");
    DMLC_DECLARE_FIELD(with_dv).set_default(true).describe(
        "fused_attention_grad: compute dv (false: dv is 0; the attention rules' replacement, whose v gradient "
        "_fused_attention_dv computes).");
  }
};
DMLC_REGISTER_PARAMETER(AttentionParam);

void ParseAttention(NodeAttrs* attrs) {
  ParamParser<AttentionParam>(attrs);
  const AttentionParam& p = dmlc::get<AttentionParam>(attrs->parsed);
  IR_CHECK(std::isfinite(p.scale)) << NodeDesc(*attrs) << ": scale " << p.scale << " must be finite";
  IR_CHECK(std::isfinite(p.mask_value)) << NodeDesc(*attrs) << ": mask_value " << p.mask_value << " must be finite";
}

// ---------------------------------------------------------------- shapes

std::string Shapes(const std::vector<Shape>& in, int n) {
  static const char* names[] = {"q", "k", "v", "o", "lse", "do"};
  std::string s;
  for (int i = 0; i < n; ++i) s += StrCat(i ? ", " : "", names[i], " ", in[i].ToString());
  return s;
}

/*!
 * \brief Checks q [..., T, D], k [..., S, D], v [..., S, E] (in[0..2]) and returns o's shape
 * [..., T, E] and lse's [..., T] when the ranks are known.
 */
bool AttentionShapes(const NodeAttrs& attrs, std::vector<Shape>* in, Shape* o, Shape* lse) {
  Shape& q = (*in)[0];
  Shape& k = (*in)[1];
  Shape& v = (*in)[2];
  for (const Shape* s : {&q, &k, &v}) {
    IR_CHECK(!s->rank_known() || s->ndim() >= 2)
        << NodeDesc(attrs) << ": q, k and v must have rank >= 2 ([..., T, D], [..., S, D], [..., S, E]); got "
        << Shapes(*in, 3);
  }
  if (!q.rank_known() || !k.rank_known() || !v.rank_known()) return false;
  IR_CHECK(q.ndim() == k.ndim() && q.ndim() == v.ndim())
      << NodeDesc(attrs) << ": q, k and v must have the same rank; got " << Shapes(*in, 3);
  const int nd = q.ndim();
  auto merge = [&](int64_t a, int64_t b, const char* what) {
    IR_CHECK(a < 0 || b < 0 || a == b) << NodeDesc(attrs) << ": " << what << " differ (" << a << " vs " << b
                                       << "); got " << Shapes(*in, 3);
    return std::max(a, b);
  };
  std::vector<int64_t> batch(nd - 2);
  for (int i = 0; i < nd - 2; ++i) batch[i] = merge(merge(q[i], k[i], "batch dims"), v[i], "batch dims");
  int64_t d = merge(q[nd - 1], k[nd - 1], "the depths of q and k (last dims)");
  int64_t s = merge(k[nd - 2], v[nd - 2], "the key counts of k and v (dims -2)");
  std::vector<int64_t> qd = batch, kd = batch, vd = batch, od = batch, ld = batch;
  qd.insert(qd.end(), {q[nd - 2], d});
  kd.insert(kd.end(), {s, d});
  vd.insert(vd.end(), {s, v[nd - 1]});
  od.insert(od.end(), {q[nd - 2], v[nd - 1]});
  ld.push_back(q[nd - 2]);
  AssignShape(attrs, "input 0 (q)", &q, Shape(qd));
  AssignShape(attrs, "input 1 (k)", &k, Shape(kd));
  AssignShape(attrs, "input 2 (v)", &v, Shape(vd));
  AssignShape(attrs, "output 0 (o)", o, Shape(od));
  AssignShape(attrs, "output 1 (lse)", lse, Shape(ld));
  return true;
}

bool ForwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if (!AttentionShapes(attrs, in, &(*out)[0], &(*out)[1])) return false;
  return AllKnown(*in, *out);
}

/*! \brief fused_attention_grad (do, q, k, v, o, lse) -> (dq, dk, dv). */
bool BackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> qkv{(*in)[1], (*in)[2], (*in)[3]};
  Shape o = (*in)[4], lse = (*in)[5];
  IR_CHECK(!(*in)[0].rank_known() || !o.rank_known() || (*in)[0].ndim() == o.ndim())
      << NodeDesc(attrs) << ": do " << (*in)[0].ToString() << " and o " << o.ToString() << " differ in rank";
  if (!AttentionShapes(attrs, &qkv, &o, &lse)) return false;
  AssignShape(attrs, "input 0 (do)", &(*in)[0], o);
  AssignShape(attrs, "input 4 (o)", &(*in)[4], o);
  AssignShape(attrs, "input 5 (lse)", &(*in)[5], lse);
  for (int i = 0; i < 3; ++i) {
    (*in)[i + 1] = qkv[i];
    AssignShape(attrs, StrCat("output ", i), &(*out)[i], qkv[i]);
  }
  return AllKnown(*in, *out);
}

/*! \brief Every input and output has one float dtype; a mismatch names them all. */
bool AttentionType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = DType::kUnknown;
  std::string all;
  for (size_t i = 0; i < in->size(); ++i) {
    all += StrCat(i ? ", " : "", "input ", i, " ", DTypeName((*in)[i]));
  }
  for (DType t : *in) {
    IR_CHECK(t == DType::kUnknown || dtype == DType::kUnknown || t == dtype)
        << NodeDesc(attrs) << ": every input must have one dtype; got " << all;
    if (t != DType::kUnknown) dtype = t;
  }
  for (size_t i = 0; i < out->size(); ++i) AssignType(attrs, StrCat("output ", i), &dtype, (*out)[i]);
  CheckDType(attrs, "q", dtype, FloatTypes());
  for (DType& t : *in) t = dtype;
  for (DType& t : *out) t = dtype;
  return AllKnown(*in, *out);
}

// ---------------------------------------------------------------- the problem

/*! \brief The sizes of one call: `batch` slices of q [T, D], k [S, D], v [S, E]. */
struct Problem {
  int64_t batch, t, s, d, e;
  double scale;
  bool causal;
  double mask_value;
  int mask_form;
  /*! \brief fused_attention_grad: whether dv is wanted (else its product is skipped and dv is 0). */
  bool with_dv;
  /*! \brief Causal: row i attends keys j < i + 1 + offset (offset = S - T). */
  int64_t offset;
  /*! \brief The keys row i attends: [0, Limit(i)). */
  int64_t Limit(int64_t i) const { return causal ? std::min(s, std::max<int64_t>(0, i + 1 + offset)) : s; }
};

Problem MakeProblem(const NodeAttrs& attrs, const Shape& q, const Shape& v) {
  const AttentionParam& p = dmlc::get<AttentionParam>(attrs.parsed);
  const int nd = q.ndim();
  Problem g;
  g.batch = q.ProdDims(0, nd - 2);
  g.t = q[nd - 2];
  g.d = q[nd - 1];
  g.s = v[nd - 2];
  g.e = v[nd - 1];
  g.scale = p.scale;
  g.causal = p.causal;
  g.mask_value = p.mask_value;
  g.mask_form = p.mask_form;
  g.with_dv = p.with_dv;
  g.offset = g.s - g.t;
  return g;
}

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

/*!
 * \brief c[r * ldc + j] += sum_k a[r * ars + k * aks] * b[k * ldb + j] for r < rows, j < width: the
 * micro-kernel of every product of the tiled kernels. Four rows of 64 columns at a time are kept
 * in vector registers (AVX-512: 16 of them), each b row loaded once for the four.
 */
template <typename T>
void MicroGemm(int64_t rows, int64_t depth, const T* a, int64_t ars, int64_t aks, const T* b, int64_t ldb, T* c,
               int64_t ldc, int64_t width) {
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

// ---------------------------------------------------------------- gradient

std::vector<NodeEntry> ForwardGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  IR_CHECK(nn::IsZeroGradient(og[1])) << NodeDesc(n->attrs)
                                      << ": the gradient through output 1 (lse) is not supported; only o's";
  NodeEntry grad = GradNode("fused_attention_grad", n, "grad",
                            {og[0], In(n, 0), In(n, 1), In(n, 2), Out(n, 0), Out(n, 1)}, n->attrs.dict);
  return {NodeEntry{grad.node, 0}, NodeEntry{grad.node, 1}, NodeEntry{grad.node, 2}};
}

// ---------------------------------------------------------------- device kernels

/*
 * The dense formulas (the file comment), one work-item per row: scores are recomputed in each
 * pass over the keys, never stored. Row r of the batch * T rows is (b, i) = (r / t, r % t). The
 * backward kernels take p from each row's maximum and sum (attention_stats), not from lse.
 */
const char kAttentionC[] = R"(
/* The unfused graph's score of key j for row i (q row qi, k slice kb). */
IR_FUNC T att_score(IR_GLOBAL const T* qi, IR_GLOBAL const T* kj, const long d, const long i, const long j,
                    const long limit_off, const long causal, const long form, const T scale, const T mask_value) {
  T s = (T)0;
  for (long x = 0; x < d; ++x) s += qi[x] * kj[x];
  s = s * scale;
  if (causal && j >= i + 1 + limit_off) {
    s = form == 1 ? s + mask_value : form == 2 ? s * (T)0 + mask_value : mask_value;
  }
  return s;
}

IR_KERNEL void attention_forward(IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k), IR_CONST_ARRAY(T, v), IR_ARRAY(T, o),
                                 IR_ARRAY(T, lse), const long rows, const long t, const long s, const long d,
                                 const long e, const long limit_off, const long causal, const long form,
                                 const T scale, const T mask_value) {
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(v);
  IR_OFFSET(o);
  IR_OFFSET(lse);
  IR_THREAD_LOOP(r, rows) {
    const long b = r / t, i = r % t;
    IR_GLOBAL const T* qi = q + r * d;
    IR_GLOBAL const T* kb = k + b * s * d;
    IR_GLOBAL const T* vb = v + b * s * e;
    IR_GLOBAL T* oi = o + r * e;
    T m = att_score(qi, kb, d, i, 0, limit_off, causal, form, scale, mask_value);
    for (long j = 1; j < s; ++j) {
      const T x = att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value);
      m = x > m ? x : m;
    }
    T sum = (T)0;
    for (long j = 0; j < s; ++j) sum += ir_exp(att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value) - m);
    const T inv = (T)1 / sum;
    for (long x = 0; x < e; ++x) oi[x] = (T)0;
    for (long j = 0; j < s; ++j) {
      const T p = ir_exp(att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value) - m) * inv;
      for (long x = 0; x < e; ++x) oi[x] += p * vb[j * e + x];
    }
    lse[r] = m + ir_log(sum);
  }
}

/*
 * Row r's score maximum and the reciprocal of its sum of exp(score - max), for the backward
 * kernels' p = exp(score - max) * inv: exp(score - lse) would lose p where lse is large (a row
 * attending no key, whose scores are all near mask_value: lse = -1e9 + log(S) is -1e9 in float32).
 */
IR_KERNEL void attention_stats(IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k), IR_ARRAY(T, rmax), IR_ARRAY(T, rinv),
                               const long rows, const long t, const long s, const long d, const long e,
                               const long limit_off, const long causal, const long form, const T scale,
                               const T mask_value) {
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(rmax);
  IR_OFFSET(rinv);
  IR_THREAD_LOOP(r, rows) {
    const long b = r / t, i = r % t;
    IR_GLOBAL const T* qi = q + r * d;
    IR_GLOBAL const T* kb = k + b * s * d;
    T m = att_score(qi, kb, d, i, 0, limit_off, causal, form, scale, mask_value);
    for (long j = 1; j < s; ++j) {
      const T x = att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value);
      m = x > m ? x : m;
    }
    T sum = (T)0;
    for (long j = 0; j < s; ++j) sum += ir_exp(att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value) - m);
    rmax[r] = m;
    rinv[r] = (T)1 / sum;
  }
}

/* The gradient of score (i, j) given p = exp(score - max_i) / sum_i, dp = dO_i . v_j, delta = dO_i . O_i. */
IR_FUNC T att_dscore(const T p, const T dp, const T delta, const long i, const long j, const long limit_off,
                     const long causal, const long form, const T scale) {
  T ds = p * (dp - delta);
  if (causal && j >= i + 1 + limit_off) ds = form == 0 ? (T)0 : form == 2 ? ds * (T)0 : ds;
  return ds * scale;
}

/* dq (keys_mode 0: one work-item per query row of the batch * t) or dk and dv (keys_mode 1: one per key row). */
IR_KERNEL void attention_backward(IR_CONST_ARRAY(T, dout), IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k),
                                  IR_CONST_ARRAY(T, v), IR_CONST_ARRAY(T, o), IR_CONST_ARRAY(T, rmax),
                                  IR_CONST_ARRAY(T, rinv), IR_ARRAY(T, dq),
                                  IR_ARRAY(T, dk), IR_ARRAY(T, dv), const long total, const long keys_mode,
                                  const long t, const long s, const long d, const long e, const long limit_off,
                                  const long causal, const long form, const T scale, const T mask_value) {
  IR_OFFSET(dout);
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(v);
  IR_OFFSET(o);
  IR_OFFSET(rmax);
  IR_OFFSET(rinv);
  IR_OFFSET(dq);
  IR_OFFSET(dk);
  IR_OFFSET(dv);
  IR_THREAD_LOOP(r, total) {
    if (!keys_mode) {
      const long b = r / t, i = r % t;
      IR_GLOBAL const T* qi = q + r * d;
      IR_GLOBAL const T* doi = dout + r * e;
      IR_GLOBAL const T* oi = o + r * e;
      IR_GLOBAL T* dqi = dq + r * d;
      T delta = (T)0;
      for (long x = 0; x < e; ++x) delta += doi[x] * oi[x];
      for (long x = 0; x < d; ++x) dqi[x] = (T)0;
      for (long j = 0; j < s; ++j) {
        IR_GLOBAL const T* kj = k + (b * s + j) * d;
        IR_GLOBAL const T* vj = v + (b * s + j) * e;
        const T p = ir_exp(att_score(qi, kj, d, i, j, limit_off, causal, form, scale, mask_value) - rmax[r]) * rinv[r];
        T dp = (T)0;
        for (long x = 0; x < e; ++x) dp += doi[x] * vj[x];
        const T g = att_dscore(p, dp, delta, i, j, limit_off, causal, form, scale);
        for (long x = 0; x < d; ++x) dqi[x] += g * kj[x];
      }
    } else {
      const long b = r / s, j = r % s;
      IR_GLOBAL const T* kj = k + r * d;
      IR_GLOBAL const T* vj = v + r * e;
      IR_GLOBAL T* dkj = dk + r * d;
      IR_GLOBAL T* dvj = dv + r * e;
      for (long x = 0; x < d; ++x) dkj[x] = (T)0;
      for (long x = 0; x < e; ++x) dvj[x] = (T)0;
      for (long i = 0; i < t; ++i) {
        const long row = b * t + i;
        IR_GLOBAL const T* qi = q + row * d;
        IR_GLOBAL const T* doi = dout + row * e;
        IR_GLOBAL const T* oi = o + row * e;
        T delta = (T)0, dp = (T)0;
        for (long x = 0; x < e; ++x) {
          delta += doi[x] * oi[x];
          dp += doi[x] * vj[x];
        }
        const T p = ir_exp(att_score(qi, kj, d, i, j, limit_off, causal, form, scale, mask_value) - rmax[row]) * rinv[row];
        const T g = att_dscore(p, dp, delta, i, j, limit_off, causal, form, scale);
        for (long x = 0; x < d; ++x) dkj[x] += g * qi[x];
        for (long x = 0; x < e; ++x) dvj[x] += p * doi[x];
      }
    }
  }
}

/* _fused_attention_dv: dv_j = sum_i p_ij dO_i, one work-item per key row of the batch * s (rows by attention_stats). */
IR_KERNEL void attention_dv(IR_CONST_ARRAY(T, dout), IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k),
                            IR_CONST_ARRAY(T, rmax), IR_CONST_ARRAY(T, rinv), IR_ARRAY(T, dv), const long total, const long t, const long s, const long d, const long e,
                            const long limit_off, const long causal, const long form, const T scale,
                            const T mask_value) {
  IR_OFFSET(dout);
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(rmax);
  IR_OFFSET(rinv);
  IR_OFFSET(dv);
  IR_THREAD_LOOP(r, total) {
    const long b = r / s, j = r % s;
    IR_GLOBAL const T* kj = k + r * d;
    IR_GLOBAL T* dvj = dv + r * e;
    for (long x = 0; x < e; ++x) dvj[x] = (T)0;
    for (long i = 0; i < t; ++i) {
      const long row = b * t + i;
      const T p = ir_exp(att_score(q + row * d, kj, d, i, j, limit_off, causal, form, scale, mask_value) - rmax[row]) * rinv[row];
      for (long x = 0; x < e; ++x) dvj[x] += p * dout[row * e + x];
    }
  }
}
)";

const DeviceKernelSource& kAttentionSource =
    RegisterDeviceKernelSource({"attention", kAttentionC, {DType::kFloat32, DType::kFloat64}});

/*! \brief Whether the device takes the dtype (float64 only where it has it); else the node runs on the host. */
bool OnDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
              const std::vector<NDArray>& out) {
  DType dtype = out[0].dtype();
  bool ok = dtype == DType::kFloat32 || (dtype == DType::kFloat64 && dev.SupportsFloat64());
  if (!ok) dev.RunOnHost(attrs, in, out);
  return ok;
}

/*! \brief The launch arguments every kernel ends with. */
void ProblemArgs(const Problem& g, DType dtype, DeviceArgs* args) {
  args->Value(g.t).Value(g.s).Value(g.d).Value(g.e).Value(g.offset).Value(int64_t{g.causal});
  args->Value(int64_t{g.mask_form}).Scalar(dtype, g.scale).Scalar(dtype, g.mask_value);
}

void ForwardDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out)) return;
  const Problem g = MakeProblem(attrs, in[0].shape(), in[2].shape());
  if (g.batch == 0 || g.t == 0) return;
  if (g.s == 0) {
    dev.Fill(out[0], 0);
    dev.Fill(out[1], -std::numeric_limits<double>::infinity());
    return;
  }
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(in[2]).Array(out[0]).Array(out[1]).Value(g.batch * g.t);
  ProblemArgs(g, in[0].dtype(), &args);
  dev.Launch(kAttentionSource, in[0].dtype(), "attention_forward", args, DeviceLaunch::Threads(g.batch * g.t));
}

/*! \brief The rows' score maxima and reciprocal sums (attention_stats) into new device arrays. */
void RowStats(DeviceKernelContext& dev, const Problem& g, DType dtype, const NDArray& q, const NDArray& k,
              NDArray* rmax, NDArray* rinv) {
  *rmax = NDArray(Shape{g.batch * g.t}, dtype, dev.op_context().device);
  *rinv = NDArray(Shape{g.batch * g.t}, dtype, dev.op_context().device);
  DeviceArgs args;
  args.Array(q).Array(k).Array(*rmax).Array(*rinv).Value(g.batch * g.t);
  ProblemArgs(g, dtype, &args);
  dev.Launch(kAttentionSource, dtype, "attention_stats", args, DeviceLaunch::Threads(g.batch * g.t));
}

void BackwardDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out)) return;
  const Problem g = MakeProblem(attrs, in[1].shape(), in[3].shape());
  if (g.batch == 0) return;
  if (g.t == 0 || g.s == 0) {
    for (const NDArray& x : out) {
      if (x.Size() > 0) dev.Fill(x, 0);
    }
    return;
  }
  const DType dtype = in[0].dtype();
  NDArray rmax, rinv;
  RowStats(dev, g, dtype, in[1], in[2], &rmax, &rinv);
  for (int64_t keys_mode = 0; keys_mode < 2; ++keys_mode) {
    const int64_t total = g.batch * (keys_mode ? g.s : g.t);
    DeviceArgs args;
    for (int i = 0; i < 5; ++i) args.Array(in[i]);
    args.Array(rmax).Array(rinv).Array(out[0]).Array(out[1]).Array(out[2]).Value(total).Value(keys_mode);
    ProblemArgs(g, dtype, &args);
    dev.Launch(kAttentionSource, dtype, "attention_backward", args, DeviceLaunch::Threads(total));
  }
  if (!g.with_dv) dev.Fill(out[2], 0);
}

/*! \brief _fused_attention_dv on a device: the rows' statistics (attention_stats), then attention_dv. */
void DvDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
              const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out)) return;
  const Problem g = MakeProblem(attrs, in[1].shape(), out[0].shape());
  if (g.batch == 0 || g.s == 0 || g.e == 0) return;
  if (g.t == 0) {
    dev.Fill(out[0], 0);
    return;
  }
  const DType dtype = in[0].dtype();
  NDArray rmax, rinv;
  RowStats(dev, g, dtype, in[1], in[2], &rmax, &rinv);
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(in[2]).Array(rmax).Array(rinv).Array(out[0]).Value(g.batch * g.s);
  ProblemArgs(g, dtype, &args);
  dev.Launch(kAttentionSource, dtype, "attention_dv", args, DeviceLaunch::Threads(g.batch * g.s));
}

/*! \brief _fused_attention_dv (do [..., T, E], q [..., T, D], k [..., S, D]) -> dv [..., S, E]. */
bool DvShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape &g = (*in)[0], &q = (*in)[1], &k = (*in)[2];
  if (!g.rank_known() || !q.rank_known() || !k.rank_known()) return false;
  IR_CHECK(g.ndim() >= 2 && g.ndim() == q.ndim() && q.ndim() == k.ndim())
      << NodeDesc(attrs) << ": do, q and k must have one rank >= 2; got do " << g.ToString() << ", q " << q.ToString()
      << ", k " << k.ToString();
  const int nd = q.ndim();
  std::vector<int64_t> dv(k.dims().begin(), k.dims().end() - 1);
  dv.push_back(g[nd - 1]);
  AssignShape(attrs, "output 0 (dv)", &(*out)[0], Shape(dv));
  return AllKnown(*in, *out);
}

}  // namespace

IR_REGISTER_OP(fused_attention)
    .describe(
        "softmax(q k^T * scale [+ causal mask]) v over the last two axes of q [..., T, D], k [..., S, D], "
        "v [..., S, E] (equal leading dims) in one tiled kernel that never stores the T x S scores (FlashAttention). "
        "Outputs o [..., T, E] and the rows' log-sum-exp lse [..., T], which the gradient reads. causal: row i "
        "attends keys j <= i + S - T.")
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_input_names({"q", "k", "v"})
    .set_param<AttentionParam>()
    .set_attr_parser(ParseAttention)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"o", "lse"};
                                })
    .set_attr<FInferShape>("FInferShape", ForwardShape)
    .set_attr<FInferType>("FInferType", AttentionType)
    .set_attr<FCompute>("FCompute", ForwardCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", ForwardDevice)
    .set_attr<FGradient>("FGradient", ForwardGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(fused_attention_grad)
    .describe(
        "Gradient of fused_attention: (do, q, k, v, o, lse) -> (dq, dk, dv), recomputing each tile's scores from "
        "q, k and lse (FlashAttention-2: D = rowsum(do * o), dS = P * (dP - D)).")
    .set_num_inputs(6)
    .set_num_outputs(3)
    .set_input_names({"do", "q", "k", "v", "o", "lse"})
    .set_param<AttentionParam>()
    .set_attr_parser(ParseAttention)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"dq", "dk", "dv"};
                                })
    .set_attr<FInferShape>("FInferShape", BackwardShape)
    .set_attr<FInferType>("FInferType", AttentionType)
    .set_attr<FCompute>("FCompute", BackwardCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", BackwardDevice)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(_fused_attention_dv)
    .describe(
        "v's gradient alone of fused_attention(q, k, v): (do, q, k) -> dv = P^T do, recomputing P (and the rows' "
        "log-sum-exps) from q and k. The attention rules build it for the gradient tf.gradients writes for v, "
        "which reads no v; the other two gradients come from fused_attention_grad.")
    .set_num_inputs(3)
    .set_input_names({"do", "q", "k"})
    .set_param<AttentionParam>()
    .set_attr_parser(ParseAttention)
    .set_attr<FInferShape>("FInferShape", DvShape)
    .set_attr<FInferType>("FInferType", AttentionType)
    .set_attr<FCompute>("FCompute", DvCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", DvDevice)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
