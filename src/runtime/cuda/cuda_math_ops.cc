/*!
 * \file cuda_math_ops.cc
 * \brief matmul (shared-memory tiles, batched with broadcast batch dimensions), softmax,
 * log_softmax and the two softmax cross-entropies on CUDA.
 *
 * Softmax-like kernels give each row (an [outer, n, inner] slice) one thread that makes the
 * CPU kernel's three passes (max, sum of exponentials, write). A sparse label outside
 * [0, classes), which the CPU kernel reports as an error, gives a NaN loss and backprop row.
 */
#include "runtime/cuda/cuda_ops.h"

namespace ir {
namespace cuda {
namespace {

constexpr int kMaxBatchDims = 6;

const char* kMatmulBody = R"(
#define IR_TILE 16
struct ir_batch {
  long long ndim;
  long long dims[6];
  long long a_strides[6];
  long long b_strides[6];
};

/* c[i] = op(a[i]) * op(b[i]) for every batch i; each block computes 16x16 tiles of c. */
extern "C" __global__ void __launch_bounds__(256) matmul_tiled(const T* a, const T* b, T* c, long long M, long long N,
                                                               long long K, int ta, int tb, ir_batch batch,
                                                               long long batches) {
  __shared__ T as[IR_TILE][IR_TILE + 1];
  __shared__ T bs[IR_TILE][IR_TILE + 1];
  const int tx = threadIdx.x % IR_TILE, ty = threadIdx.x / IR_TILE;
  const long long tiles_m = (M + IR_TILE - 1) / IR_TILE, tiles_n = (N + IR_TILE - 1) / IR_TILE;
  IR_BLOCK_LOOP(t, batches * tiles_m * tiles_n) {
    const long long bi = t / (tiles_m * tiles_n);
    const long long row0 = (t / tiles_n) % tiles_m * IR_TILE, col0 = t % tiles_n * IR_TILE;
    long long rest = bi, oa = 0, ob = 0;
    for (int d = (int)batch.ndim - 1; d >= 0; --d) {
      const long long k = rest % batch.dims[d];
      rest /= batch.dims[d];
      oa += k * batch.a_strides[d];
      ob += k * batch.b_strides[d];
    }
    const T* A = a + oa;
    const T* B = b + ob;
    T acc = 0;
    for (long long k0 = 0; k0 < K; k0 += IR_TILE) {
      const long long ar = row0 + ty, ak = k0 + tx, bk = k0 + ty, bc = col0 + tx;
      as[ty][tx] = (ar < M && ak < K) ? A[ta ? ak * M + ar : ar * K + ak] : (T)0;
      bs[ty][tx] = (bk < K && bc < N) ? B[tb ? bc * K + bk : bk * N + bc] : (T)0;
      __syncthreads();
      for (int k = 0; k < IR_TILE; ++k) acc += as[ty][k] * bs[k][tx];
      __syncthreads();
    }
    if (row0 + ty < M && col0 + tx < N) c[bi * M * N + (row0 + ty) * N + col0 + tx] = acc;
  }
}
)";

const char* kSoftmaxBody = R"(
extern "C" __global__ void __launch_bounds__(256) softmax(const T* x, T* y, long long outer, long long n,
                                                          long long inner, int log_softmax) {
  IR_THREAD_LOOP(g, outer * inner) {
    const long long base = (g / inner) * n * inner + g % inner;
    T m = x[base];
    for (long long i = 1; i < n; ++i) m = x[base + i * inner] > m ? x[base + i * inner] : m;
    T s = 0;
    for (long long i = 0; i < n; ++i) s += ir_exp(x[base + i * inner] - m);
    const T shift = m + ir_log(s), inv = (T)1 / s;
    for (long long i = 0; i < n; ++i) {
      const long long at = base + i * inner;
      y[at] = log_softmax ? x[at] - shift : ir_exp(x[at] - m) * inv;
    }
  }
}

/* loss = sum_j p_j (lse - x_j), backprop = softmax(x) - p; p one-hot at labels[r], else probs. */
template <typename L>
__device__ void ir_cross_entropy(const T* x, const T* probs, const L* labels, T* loss, T* backprop, long long rows,
                                 long long n) {
  IR_THREAD_LOOP(r, rows) {
    const T* row = x + r * n;
    T* bp = backprop + r * n;
    const long long label = labels ? (long long)labels[r] : -1;
    if (labels && (label < 0 || label >= n)) {
      loss[r] = (T)NAN;
      for (long long j = 0; j < n; ++j) bp[j] = (T)NAN;
      continue;
    }
    T m = row[0];
    for (long long j = 1; j < n; ++j) m = row[j] > m ? row[j] : m;
    T s = 0;
    for (long long j = 0; j < n; ++j) s += ir_exp(row[j] - m);
    const T lse = m + ir_log(s);
    T total = 0;
    for (long long j = 0; j < n; ++j) {
      const T p = labels ? (T)(j == label) : probs[r * n + j];
      total += p * (lse - row[j]);
      bp[j] = ir_exp(row[j] - lse) - p;
    }
    loss[r] = total;
  }
}

extern "C" __global__ void __launch_bounds__(256) softmax_cross_entropy(const T* x, const T* probs, T* loss,
                                                                        T* backprop, long long rows, long long n) {
  ir_cross_entropy<int>(x, probs, (const int*)0, loss, backprop, rows, n);
}
extern "C" __global__ void __launch_bounds__(256) sparse_cross_entropy_i32(const T* x, const int* labels, T* loss,
                                                                           T* backprop, long long rows, long long n) {
  ir_cross_entropy<int>(x, (const T*)0, labels, loss, backprop, rows, n);
}
extern "C" __global__ void __launch_bounds__(256) sparse_cross_entropy_i64(const T* x, const long long* labels,
                                                                           T* loss, T* backprop, long long rows,
                                                                           long long n) {
  ir_cross_entropy<long long>(x, (const T*)0, labels, loss, backprop, rows, n);
}
)";

const KernelFamily kMatmulFamily{
    "matmul", kMatmulBody, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}};
const KernelFamily kSoftmaxFamily{"softmax", kSoftmaxBody, {DType::kFloat32, DType::kFloat64}};
const bool registered = RegisterFamily(&kMatmulFamily) && RegisterFamily(&kSoftmaxFamily);

/*! \brief The kernels' ir_batch: batch extents of c and the element strides of a and b along them. */
struct BatchArgs {
  long long ndim = 0;
  long long dims[kMaxBatchDims] = {0};
  long long a_strides[kMaxBatchDims] = {0};
  long long b_strides[kMaxBatchDims] = {0};
};

/*! \brief Stride of output batch dim `d` (of `nb`) in operand `s` (matrices of `matrix` elements); 0 where it
 * broadcasts. */
std::vector<int64_t> BatchStrides(const Shape& s, int nb, int64_t matrix) {
  int ns = s.ndim() - 2;
  std::vector<int64_t> strides(nb, 0);
  int64_t stride = matrix;
  for (int d = ns - 1; d >= 0; --d) {
    if (s[d] != 1) strides[d + nb - ns] = stride;
    stride *= s[d];
  }
  return strides;
}

void MatmulCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  const Shape &a = in[0].shape(), &b = in[1].shape(), &c = out[0].shape();
  bool ta = ParamBool(attrs, "transpose_a"), tb = ParamBool(attrs, "transpose_b");
  int64_t m = c[c.ndim() - 2], n = c[c.ndim() - 1], k = a[ta ? a.ndim() - 2 : a.ndim() - 1];
  int nb = c.ndim() - 2;
  std::vector<int64_t> sa = BatchStrides(a, nb, m * k), sb = BatchStrides(b, nb, k * n);
  BatchArgs batch;
  int64_t batches = 1;
  for (int d = 0; d < nb; ++d) {
    batches *= c[d];
    if (c[d] == 1) continue;
    if (batch.ndim == kMaxBatchDims) return RunCPUKernel(ctx, attrs, in, out);
    batch.dims[batch.ndim] = c[d];
    batch.a_strides[batch.ndim] = sa[d];
    batch.b_strides[batch.ndim] = sb[d];
    ++batch.ndim;
  }
  KernelArgs args;
  args.AddArray(in[0]).AddArray(in[1]).AddArray(out[0]);
  args.Add<long long>(m).Add<long long>(n).Add<long long>(k).Add(ta ? 1 : 0).Add(tb ? 1 : 0).Add(batch);
  args.Add<long long>(batches);
  int64_t tiles = batches * ((m + 15) / 16) * ((n + 15) / 16);
  LaunchFamily(kMatmulFamily, out[0].dtype(), "matmul_tiled", &args, std::min(tiles, kMaxBlocks), ctx);
}

template <bool kLog>
void SoftmaxCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int axis = op::NormalizeAxis(attrs, static_cast<int>(ParamInt(attrs, "axis")), shape.ndim());
  int64_t outer = shape.ProdDims(0, axis), n = shape[axis], inner = shape.ProdDims(axis + 1, shape.ndim());
  KernelArgs args;
  args.AddArray(in[0]).AddArray(out[0]).Add<long long>(outer).Add<long long>(n).Add<long long>(inner);
  args.Add(kLog ? 1 : 0);
  LaunchFamily(kSoftmaxFamily, out[0].dtype(), "softmax", &args, n > 0 ? BlocksFor(outer * inner) : 0, ctx);
}

template <bool kSparse>
void CrossEntropyCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  int64_t rows = in[0].shape()[0], classes = in[0].shape()[1];
  KernelArgs args;
  args.AddArray(in[0]).AddArray(in[1]).AddArray(out[0]).AddArray(out[1]).Add<long long>(rows).Add<long long>(classes);
  const char* kernel = !kSparse                         ? "softmax_cross_entropy"
                       : in[1].dtype() == DType::kInt32 ? "sparse_cross_entropy_i32"
                                                        : "sparse_cross_entropy_i64";
  LaunchFamily(kSoftmaxFamily, in[0].dtype(), kernel, &args, classes > 0 ? BlocksFor(rows) : 0, ctx);
}

}  // namespace

IR_REGISTER_OP(matmul).set_attr<FCompute>("FCompute<cuda>", MatmulCompute);
IR_REGISTER_OP(softmax).set_attr<FCompute>("FCompute<cuda>", SoftmaxCompute<false>);
IR_REGISTER_OP(log_softmax).set_attr<FCompute>("FCompute<cuda>", SoftmaxCompute<true>);
IR_REGISTER_OP(softmax_cross_entropy_with_logits).set_attr<FCompute>("FCompute<cuda>", CrossEntropyCompute<false>);
IR_REGISTER_OP(sparse_softmax_cross_entropy_with_logits)
    .set_attr<FCompute>("FCompute<cuda>", CrossEntropyCompute<true>);

}  // namespace cuda
}  // namespace ir
