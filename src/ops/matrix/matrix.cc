/*!
 * \file matrix.cc
 * \brief matmul (batched, with broadcast batch dims), bias_add and bias_add_grad.
 *
 * float32 matmul runs through oneDNN with primitives cached by shape and flags. oneDNN 2.6
 * has no f64 type, so float64 and the integer types use a cache-blocked loop whose inner
 * loop runs along a contiguous row of B and C (vectorizable).
 */
#include <algorithm>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/vectorize.h"
#include "ops/dnnl_post_ops.h"
#include "ops/dnnl_utils.h"
#include "ops/matrix/matrix.h"
#include "ops/reduce/reduce_kernels.h"

namespace ir {
namespace op {

DMLC_REGISTER_PARAMETER(MatmulParam);
DMLC_REGISTER_PARAMETER(BiasParam);

namespace {

// ---------------------------------------------------------------- matmul shapes

/*! \brief Axes of M and K in a, and of K and N in b, by the transpose flags. */
struct MatmulAxes {
  int a_m, a_k, b_k, b_n;
};

MatmulAxes AxesOf(int rank_a, int rank_b, const MatmulParam& p) {
  return {p.transpose_a ? rank_a - 1 : rank_a - 2, p.transpose_a ? rank_a - 2 : rank_a - 1,
          p.transpose_b ? rank_b - 1 : rank_b - 2, p.transpose_b ? rank_b - 2 : rank_b - 1};
}

std::string OperandsDesc(const Shape& a, const Shape& b, const MatmulParam& p) {
  return StrCat("(a ", a, ", b ", b, p.transpose_a ? ", transpose_a" : "", p.transpose_b ? ", transpose_b" : "", ")");
}

/*! \brief NumPy broadcast of the batch dims (all but the last two) of a and b. */
std::vector<int64_t> BatchDims(const NodeAttrs& attrs, const Shape& a, const Shape& b, const MatmulParam& p) {
  int na = a.ndim() - 2, nb = b.ndim() - 2, n = std::max(na, nb);
  std::vector<int64_t> dims(n);
  for (int i = 0; i < n; ++i) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == 1 || db == 1) {
      dims[i] = da == 1 ? db : da;
    } else if (da < 0 || db < 0) {
      dims[i] = std::max(da, db);  // the known extent, if any (the other must match it)
    } else {
      IR_CHECK(da == db) << NodeDesc(attrs) << ": batch dimensions do not broadcast together " << OperandsDesc(a, b, p);
      dims[i] = da;
    }
  }
  return dims;
}

bool MatmulShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const MatmulParam& p = dmlc::get<MatmulParam>(attrs.parsed);
  Shape& a = (*in)[0];
  Shape& b = (*in)[1];
  for (const Shape* s : {&a, &b}) {
    IR_CHECK(!s->rank_known() || s->ndim() >= 2)
        << NodeDesc(attrs) << ": operands must have rank >= 2 " << OperandsDesc(a, b, p);
  }
  if (!a.rank_known() || !b.rank_known()) return false;
  MatmulAxes ax = AxesOf(a.ndim(), b.ndim(), p);
  int64_t ka = a[ax.a_k], kb = b[ax.b_k];
  IR_CHECK(ka < 0 || kb < 0 || ka == kb) << NodeDesc(attrs) << ": inner dimensions " << ka << " and " << kb
                                         << " do not match " << OperandsDesc(a, b, p);
  std::vector<int64_t> dims = BatchDims(attrs, a, b, p);
  dims.push_back(a[ax.a_m]);
  dims.push_back(b[ax.b_n]);
  Shape& y = (*out)[0];
  AssignShape(attrs, "output 0", &y, Shape(dims));
  Shape refined_a = a, refined_b = b;
  refined_a[ax.a_k] = refined_b[ax.b_k] = std::max(ka, kb);
  refined_a[ax.a_m] = y[y.ndim() - 2];
  refined_b[ax.b_n] = y[y.ndim() - 1];
  // A batch dim equals the result's where the other operand lacks it or broadcasts it.
  for (int i = 0, nbatch = y.ndim() - 2; i < nbatch; ++i) {
    int ia = i - (nbatch - (a.ndim() - 2)), ib = i - (nbatch - (b.ndim() - 2));
    if (ia >= 0 && (ib < 0 || b[ib] == 1)) refined_a[ia] = y[i];
    if (ib >= 0 && (ia < 0 || a[ia] == 1)) refined_b[ib] = y[i];
  }
  AssignShape(attrs, "input 0", &a, refined_a);
  AssignShape(attrs, "input 1", &b, refined_b);
  return AllKnown(*in, *out);
}

bool NumericType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*out)[0], NumericTypes());
  return known;
}

}  // namespace

// ---------------------------------------------------------------- matmul kernels

MatmulProblem MakeProblem(const Shape& a, const Shape& b, const MatmulParam& p) {
  MatmulAxes ax = AxesOf(a.ndim(), b.ndim(), p);
  MatmulProblem g;
  g.m = a[ax.a_m];
  g.n = b[ax.b_n];
  g.k = a[ax.a_k];
  g.ta = p.transpose_a;
  g.tb = p.transpose_b;
  int na = a.ndim() - 2, nb = b.ndim() - 2, nbatch = std::max(na, nb), last_kind = -1;
  for (int i = 0; i < nbatch; ++i) {
    int ia = i - (nbatch - na), ib = i - (nbatch - nb);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == 1 && db == 1) continue;
    int kind = da == db ? 0 : da == 1 ? 1 : 2;
    if (kind == last_kind) {
      g.batch_a.back() *= da;
      g.batch_b.back() *= db;
      g.batch_c.back() *= da == 1 ? db : da;
    } else {
      g.batch_a.push_back(da);
      g.batch_b.push_back(db);
      g.batch_c.push_back(da == 1 ? db : da);
    }
    last_kind = kind;
  }
  return g;
}

namespace {

/*! \brief Row-major strides of `dims` for matrices of `matrix` elements, then the matrix strides. */
std::vector<int64_t> OperandStrides(const std::vector<int64_t>& dims, int64_t matrix, int64_t rows, int64_t cols,
                                    bool transposed) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = matrix;
  for (size_t d = dims.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  strides.push_back(transposed ? 1 : cols);
  strides.push_back(transposed ? rows : 1);
  return strides;
}

std::vector<int64_t> Concat(std::vector<int64_t> dims, std::initializer_list<int64_t> more) {
  dims.insert(dims.end(), more);
  return dims;
}

/*! \brief C = op(A) op(B) with oneDNN, then `post`'s epilogue (if given) folded into the primitive. */
void DnnlMatmul(const MatmulProblem& g, const float* a, const float* b, float* c,
                const dnnl_utils::PostOps* post = nullptr) {
  using namespace dnnl_utils;
  std::vector<int64_t> dims_a = Concat(g.batch_a, {g.m, g.k}), dims_b = Concat(g.batch_b, {g.k, g.n});
  dnnl::memory::desc desc_a = Desc(dims_a, DType::kFloat32, OperandStrides(g.batch_a, g.m * g.k, g.m, g.k, g.ta));
  dnnl::memory::desc desc_b = Desc(dims_b, DType::kFloat32, OperandStrides(g.batch_b, g.k * g.n, g.k, g.n, g.tb));
  dnnl::memory::desc desc_c = Desc(Concat(g.batch_c, {g.m, g.n}), DType::kFloat32);
  PrimitiveKey key = PrimitiveKey(post ? "matmul_f32_post" : "matmul_f32").Add(dims_a).Add(dims_b).Add(g.ta).Add(g.tb);
  if (post) post->AddTo(&key);
  CachedPrimitive prim = PrimitiveCache::Global().GetOrCreate(key, [&] {
    return Guard("matmul", [&] {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(desc_a, desc_b, desc_c), post ? post->Attr() : DefaultAttr(),
                                      Engine());
      return MakeCached<dnnl::matmul>(pd);
    });
  });
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, Memory(desc_a, a)}, {DNNL_ARG_WEIGHTS, Memory(desc_b, b)}, {DNNL_ARG_DST, Memory(desc_c, c)}};
  if (post) post->AddArgs(&args);
  Execute("matmul", prim, std::move(args));
}

/*! \brief Index of the operand matrix (over `dims`, 1 = broadcast) used by each C matrix. */
std::vector<int64_t> BatchSources(const std::vector<int64_t>& dims, const std::vector<int64_t>& batch_c) {
  int64_t count = 1;
  for (int64_t d : batch_c) count *= d;
  std::vector<int64_t> sources(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, index = 0, stride = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (dims[d] != 1) index += rest % batch_c[d] * stride;
      rest /= batch_c[d];
      stride *= dims[d];
    }
    sources[i] = index;
  }
  return sources;
}

constexpr int64_t kRowBlock = 16, kColBlock = 512, kDepthBlock = 128;

/*! \brief Cache-blocked C = op(A) op(B); B is first packed to [k, n] rows when transposed. */
template <typename T>
void BlockedMatmul(const MatmulProblem& g, const T* a, const T* b, T* c) {
  const int64_t m = g.m, n = g.n, k = g.k;
  std::vector<T> packed;
  if (g.tb) {
    int64_t matrices = 1;
    for (int64_t d : g.batch_b) matrices *= d;
    packed.resize(matrices * k * n);
    for (int64_t s = 0; s < matrices; ++s) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t p = 0; p < k; ++p) packed[s * k * n + p * n + j] = b[s * k * n + j * k + p];
      }
    }
    b = packed.data();
  }
  std::vector<int64_t> src_a = BatchSources(g.batch_a, g.batch_c), src_b = BatchSources(g.batch_b, g.batch_c);
  int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  ParallelFor(
      static_cast<int64_t>(src_a.size()) * row_blocks,
      [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          int64_t batch = u / row_blocks, i0 = u % row_blocks * kRowBlock, i1 = std::min(m, i0 + kRowBlock);
          const T* A = a + src_a[batch] * m * k;
          const T* B = b + src_b[batch] * k * n;
          T* C = c + batch * m * n;
          std::fill(C + i0 * n, C + i1 * n, T(0));
          for (int64_t j0 = 0; j0 < n; j0 += kColBlock) {
            int64_t width = std::min(kColBlock, n - j0);
            for (int64_t p0 = 0; p0 < k; p0 += kDepthBlock) {
              int64_t p1 = std::min(k, p0 + kDepthBlock);
              for (int64_t i = i0; i < i1; ++i) {
                T* crow = C + i * n + j0;
                for (int64_t p = p0; p < p1; ++p) {
                  T aip = g.ta ? A[p * m + i] : A[i * k + p];
                  const T* brow = B + p * n + j0;
                  for (int64_t j = 0; j < width; ++j) crow[j] += aip * brow[j];
                }
              }
            }
          }
        }
      },
      std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, kRowBlock * n * k)));
}

void MatmulCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  MatmulProblem g = MakeProblem(in[0].shape(), in[1].shape(), dmlc::get<MatmulParam>(attrs.parsed));
  const NDArray& c = out[0];
  if (c.Size() == 0) return;
  IR_NUMERIC_SWITCH(c.dtype(), T, {
    if (g.k == 0) {
      std::fill(c.data<T>(), c.data<T>() + c.Size(), T(0));
    } else if (std::is_same<T, float>::value && g.batch_c.size() + 2 <= DNNL_MAX_NDIMS) {
      DnnlMatmul(g, in[0].data<float>(), in[1].data<float>(), c.data<float>());
    } else {
      BlockedMatmul<T>(g, in[0].data<T>(), in[1].data<T>(), c.data<T>());
    }
  });
}

/*!
 * \brief matmul with an eltwise-only epilogue as oneDNN post-ops (float32); false when the
 * epilogue is no post-op chain or reads an array. oneDNN 2.6's matmul applies binary post-ops
 * slower than its plain matmul plus our in-place generated epilogue (measured at batch 64, 2
 * cores: + bias over [64, 256] / [64, 512] outputs 2.4 / 8 us more, over [64, 10] even): a bias
 * or residual runs as the generated kernel. (conv2d keeps binary post-ops: they beat it there.)
 */
bool MatmulEpilogue(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const ast::Expr& epilogue,
                    const std::vector<NDArray>& extra, const NDArray& out) {
  MatmulProblem g = MakeProblem(in[0].shape(), in[1].shape(), dmlc::get<MatmulParam>(attrs.parsed));
  int nd = out.shape().ndim();
  if (out.dtype() != DType::kFloat32 || out.Size() == 0 || g.k == 0 || static_cast<int>(g.batch_c.size()) + 2 != nd ||
      nd > DNNL_MAX_NDIMS) {
    return false;
  }
  std::vector<int> order(nd);
  std::iota(order.begin(), order.end(), 0);
  dnnl_utils::PostOps post;
  if (!post.Translate(epilogue, extra, out.shape(), order) || post.HasBinary()) return false;
  DnnlMatmul(g, in[0].data<float>(), in[1].data<float>(), out.data<float>(), &post);
  return true;
}

/*! \brief dA = dY op(B)^T and dB = op(A)^T dY by the transpose flags, summed over broadcast batch dims. */
std::vector<NodeEntry> MatmulGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const MatmulParam& p = dmlc::get<MatmulParam>(n->attrs.parsed);
  NodeEntry a = In(n, 0), b = In(n, 1), dy = og[0];
  auto mm = [&](const char* suffix, const NodeEntry& x, const NodeEntry& y, bool tx, bool ty) {
    return GradNode("matmul", n, suffix, {x, y}, {{"transpose_a", tx ? "1" : "0"}, {"transpose_b", ty ? "1" : "0"}});
  };
  NodeEntry da, db;
  if (!p.transpose_a) {
    da = p.transpose_b ? mm("da", dy, b, false, false) : mm("da", dy, b, false, true);
  } else {
    da = p.transpose_b ? mm("da", b, dy, true, true) : mm("da", b, dy, false, true);
  }
  if (!p.transpose_b) {
    db = p.transpose_a ? mm("db", a, dy, false, false) : mm("db", a, dy, true, false);
  } else {
    db = p.transpose_a ? mm("db", dy, a, true, true) : mm("db", dy, a, true, false);
  }
  return {GradNode("collapse_sum_like", n, "da_sum", {da, a}), GradNode("collapse_sum_like", n, "db_sum", {db, b})};
}

}  // namespace

// ---------------------------------------------------------------- bias_add

int ChannelAxis(const NodeAttrs& attrs, int ndim) {
  const std::string& format = dmlc::get<BiasParam>(attrs.parsed).data_format;
  IR_CHECK(format == "NHWC" || format == "NCHW")
      << NodeDesc(attrs) << ": data_format must be NHWC or NCHW, got '" << format << "'";
  int axis = format == "NHWC" ? ndim - 1 : 1;
  IR_CHECK(axis >= 0 && axis < ndim) << NodeDesc(attrs) << ": data_format " << format
                                     << " needs rank >= " << (format == "NHWC" ? 1 : 2) << ", got rank " << ndim;
  return axis;
}

std::vector<int> BiasGradAxes(const NodeAttrs& attrs, int ndim) {
  std::vector<int> axes;
  for (int d = 0, c = ChannelAxis(attrs, ndim); d < ndim; ++d) {
    if (d != c) axes.push_back(d);
  }
  return axes;
}

ChannelView ViewAroundChannels(const NodeAttrs& attrs, const Shape& x) {
  int c = ChannelAxis(attrs, x.ndim());
  return {x.ProdDims(0, c), x[c], x.ProdDims(c + 1, x.ndim())};
}

namespace {

/*! \brief x[..c..] and a [C] vector (bias or bias_add_grad's result) agree on C. */
void MatchChannels(const NodeAttrs& attrs, Shape* x, const std::string& x_name, Shape* vec,
                   const std::string& vec_name) {
  AssignShape(attrs, vec_name, vec, Shape::UnknownDims(1));
  if (!x->rank_known()) return;
  int c = ChannelAxis(attrs, x->ndim());
  int64_t from_x = (*x)[c], from_vec = (*vec)[0];
  IR_CHECK(from_x < 0 || from_vec < 0 || from_x == from_vec)
      << NodeDesc(attrs) << ": " << vec_name << " " << *vec << " does not match the " << from_x << " channels of "
      << x_name << " " << *x << " (data_format " << dmlc::get<BiasParam>(attrs.parsed).data_format << ")";
  (*x)[c] = (*vec)[0] = std::max(from_x, from_vec);
}

bool BiasAddShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 0", &(*in)[0], (*out)[0]);
  if ((*in)[0].rank_known()) ChannelAxis(attrs, (*in)[0].ndim());
  MatchChannels(attrs, &(*in)[0], "x", &(*in)[1], "bias");
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[0]);
  return AllKnown(*in, *out);
}

bool BiasAddGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  MatchChannels(attrs, &(*in)[0], "dy", &(*out)[0], "output 0");
  return AllKnown(*in, *out);
}

template <typename T>
void BiasAddKernel(const T* x, const T* bias, const ChannelView& v, T* y) {
  if (v.inner == 1) {
    ParallelFor(
        v.outer,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            for (int64_t c = 0; c < v.channels; ++c) y[r * v.channels + c] = x[r * v.channels + c] + bias[c];
          }
        },
        std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, v.channels)));
    return;
  }
  ParallelFor(
      v.outer * v.channels,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          T value = bias[r % v.channels];
          for (int64_t j = 0; j < v.inner; ++j) y[r * v.inner + j] = x[r * v.inner + j] + value;
        }
      },
      std::max<int64_t>(1, (1 << 15) / v.inner));
}

void BiasAddCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  ChannelView v = ViewAroundChannels(attrs, in[0].shape());
  IR_NUMERIC_SWITCH(out[0].dtype(), T, BiasAddKernel(in[0].data<T>(), in[1].data<T>(), v, out[0].data<T>()));
}

void BiasAddGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                        const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  std::vector<bool> reduced(shape.ndim(), true);
  reduced[ChannelAxis(attrs, shape.ndim())] = false;
  IR_NUMERIC_SWITCH(out[0].dtype(), T,
                    reduce::Reduce<reduce::SumReducer>(in[0].data<T>(), shape, reduced, out[0].data<T>()));
}

std::map<std::string, std::string> SameFormat(const NodePtr& n) {
  return {{"data_format", dmlc::get<BiasParam>(n->attrs.parsed).data_format}};
}

// ---------------------------------------------------------------- FVectorize

NodeEntry Reshape(PforContext& ctx, const NodeEntry& e, const std::vector<int64_t>& dims) {
  return ctx.Make("reshape", {e}, {{"shape", StrCat(IntList(dims))}});
}

/*! \brief Stacked input i with 1s inserted after n up to per-iteration rank `rank`, so that n leads the batch axes. */
NodeEntry PadAfterN(PforContext& ctx, size_t i, int rank) {
  const Shape& s = ctx.in_shape(i);
  if (s.ndim() == rank) return ctx.input(i).entry;
  std::vector<int64_t> dims{ctx.n()};
  dims.resize(1 + rank - s.ndim(), 1);
  dims.insert(dims.end(), s.dims().begin(), s.dims().end());
  return Reshape(ctx, ctx.input(i).entry, dims);
}

/*!
 * \brief A stacked a (not transposed) times an unstacked matrix b: one GEMM over all the rows of
 * every iteration (per-example forward and input gradients). Otherwise a batched matmul whose
 * leading batch axis is n (stacked operands padded to the same rank; unstacked ones broadcast).
 */
std::vector<PforValue> MatmulVectorize(PforContext& ctx) {
  const MatmulParam& p = dmlc::get<MatmulParam>(ctx.attrs().parsed);
  const Shape &a = ctx.in_shape(0), &b = ctx.in_shape(1);
  if (ctx.stacked(0) && !ctx.stacked(1) && !p.transpose_a && b.ndim() == 2) {
    NodeEntry rows = Reshape(ctx, ctx.input(0).entry, {ctx.n() * a.ProdDims(0, a.ndim() - 1), a[a.ndim() - 1]});
    NodeEntry product = ctx.CopyNode({rows, ctx.input(1).entry}, ctx.attrs().dict);
    return {PforValue{ctx.SplitLeading(product, ctx.out_shape(0)), true}};
  }
  if (a.ndim() == 2 && b.ndim() == 2 && a[p.transpose_a ? 0 : 1] == 1) {
    // Contracting an extent of 1 (the weight gradient of one example): an outer product, which
    // a broadcast multiply writes at memory speed instead of n tiny GEMMs.
    const int64_t m = a[p.transpose_a ? 1 : 0], q = b[p.transpose_b ? 0 : 1];
    auto shaped = [&](size_t i, std::vector<int64_t> dims) {
      if (ctx.stacked(i)) dims.insert(dims.begin(), ctx.n());
      return Reshape(ctx, ctx.input(i).entry, dims);
    };
    return {PforValue{ctx.Make("multiply", {shaped(0, {m, 1}), shaped(1, {1, q})}), true}};
  }
  const int rank = std::max(a.ndim(), b.ndim());
  NodeEntry x = ctx.stacked(0) ? PadAfterN(ctx, 0, rank) : ctx.input(0).entry;
  NodeEntry y = ctx.stacked(1) ? PadAfterN(ctx, 1, rank) : ctx.input(1).entry;
  return {PforValue{ctx.CopyNode({x, y}, ctx.attrs().dict), true}};
}

/*!
 * \brief A stacked bias is added with NumPy broadcasting, shaped [n, 1.., C, 1..] along x's
 * channel axis; an unstacked one stays a bias_add (NCHW: with n merged into x's batch axis).
 */
std::vector<PforValue> BiasAddVectorize(PforContext& ctx) {
  const Shape& x = ctx.in_shape(0);
  const int channel = ChannelAxis(ctx.attrs(), x.ndim());
  if (ctx.stacked(1)) {
    std::vector<int64_t> dims(1 + x.ndim(), 1);
    dims[0] = ctx.n();
    dims[1 + channel] = x[channel];
    return {PforValue{ctx.Make("add", {ctx.input(0).entry, Reshape(ctx, ctx.input(1).entry, dims)}), true}};
  }
  if (ChannelAxis(ctx.attrs(), x.ndim() + 1) == channel + 1) {  // NHWC: the channels stay last
    return {PforValue{ctx.CopyNode({ctx.input(0).entry, ctx.input(1).entry}, ctx.attrs().dict), true}};
  }
  NodeEntry merged = ctx.MergeLeading(ctx.input(0).entry, x);
  return {PforValue{ctx.SplitLeading(ctx.CopyNode({merged, ctx.input(1).entry}, ctx.attrs().dict), x), true}};
}

/*! \brief Per-iteration sums over every axis but the channel axis. */
std::vector<PforValue> BiasAddGradVectorize(PforContext& ctx) {
  std::vector<int64_t> axes;
  for (int d : BiasGradAxes(ctx.attrs(), ctx.in_shape(0).ndim())) axes.push_back(d + 1);
  if (axes.empty()) return {ctx.input(0)};
  return {PforValue{ctx.Make("sum", {ctx.input(0).entry}, {{"axis", StrCat(IntList(axes))}}), true}};
}

}  // namespace

IR_REGISTER_OP(matmul)
    .describe(
        "Matrix product of the last two dimensions of a and b (optionally transposed); the "
        "batch dimensions before them broadcast as in NumPy.")
    .set_num_inputs(2)
    .set_input_names({"a", "b"})
    .set_param<MatmulParam>()
    .set_attr<FInferShape>("FInferShape", MatmulShape)
    .set_attr<FInferType>("FInferType", NumericType)
    .set_attr<FCompute>("FCompute", MatmulCompute)
    .set_attr<FComputeEpilogue>("FComputeEpilogue", MatmulEpilogue)
    .set_attr<FDeviceKernel>("FDeviceKernel", MatmulDevice)
    .set_attr<FGradient>("FGradient", MatmulGradient)
    .set_attr<TOpPattern>("TOpPattern", kOutEWiseFusable)
    .set_attr<FVectorize>("FVectorize", MatmulVectorize);

IR_REGISTER_OP(bias_add)
    .describe("x + bias, with bias (a vector) added along the channel axis given by data_format.")
    .set_num_inputs(2)
    .set_input_names({"x", "bias"})
    .set_param<BiasParam>()
    .set_attr<FInferShape>("FInferShape", BiasAddShape)
    .set_attr<FInferType>("FInferType", NumericType)
    .set_attr<FCompute>("FCompute", BiasAddCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", BiasAddDevice)
    // NumPy broadcasting aligns bias with the last axis: only NHWC can be generated.
    .set_attr<FCodeGen>("FCodeGen",
                        [](const NodeAttrs& attrs, const std::vector<ast::Expr>& in) -> std::vector<ast::Expr> {
                          if (dmlc::get<BiasParam>(attrs.parsed).data_format != "NHWC") return {};
                          if (in[0]->dtype == DType::kBool || in[0]->dtype != in[1]->dtype) return {};
                          return {in[0] + in[1]};
                        })
    .set_attr<FGradient>(
        "FGradient",
        [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          return std::vector<NodeEntry>{og[0], GradNode("bias_add_grad", n, "dbias", {og[0]}, SameFormat(n))};
        })
    .set_attr<FInplaceOption>("FInplaceOption",
                              [](const NodeAttrs&) {
                                return std::vector<std::pair<int, int>>{{0, 0}};
                              })
    .set_attr<TOpPattern>("TOpPattern", kBroadcast)
    .set_attr<FVectorize>("FVectorize", BiasAddVectorize);

IR_REGISTER_OP(bias_add_grad)
    .describe("dy summed over every axis but the channel axis given by data_format (the gradient of bias_add's bias).")
    .set_num_inputs(1)
    .set_input_names({"dy"})
    .set_param<BiasParam>()
    .set_attr<FInferShape>("FInferShape", BiasAddGradShape)
    .set_attr<FInferType>("FInferType", NumericType)
    .set_attr<FCompute>("FCompute", BiasAddGradCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", BiasAddGradDevice)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           NodeEntry zeros = GradNode("zeros_like", n, "zeros", {In(n, 0)});
                           return std::vector<NodeEntry>{GradNode("bias_add", n, "ddy", {zeros, og[0]}, SameFormat(n))};
                         })
    .set_attr<TOpPattern>("TOpPattern", kCommReduce)
    .set_attr<TReduceKind>("TReduceKind", "sum")
    .set_attr<FReduceAxes>("FReduceAxes", BiasGradAxes)
    .set_attr<FVectorize>("FVectorize", BiasAddGradVectorize);

}  // namespace op
}  // namespace ir
