/*!
 * \file kernels_matmul.cc
 * \brief OpenCL kernels of matmul (tiled, transpose flags, batch dimensions broadcast as in
 * NumPy) and bias_add (NHWC and NCHW; bias_add_grad is a reduction, in kernels_reduce.cc).
 */
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

constexpr int64_t kTile = 16;

const char kMatmulKernels[] = R"CL(
/*
 * C[b] = op(A[b]) op(B[b]) for C of [batch, M, N]: a work-group of 16 x 16 work-items per 16 x 16
 * tile of C, stepping through K a 16 x 16 tile of A and of B at a time in local memory. The batch
 * walks give each C matrix's A and B matrix offsets (stride 0 where an operand broadcasts).
 */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void matmul(__global const T* A, const long a_offset, __global const T* B, const long b_offset,
            __global T* C, const long c_offset, const long M, const long N, const long K,
            const int ta, const int tb, const ir_strided a_batch, const ir_strided b_batch) {
  __local T a_tile[16][16];
  __local T b_tile[16][17];
  const int lid = get_local_id(0), ty = lid / 16, tx = lid % 16;
  const long tiles_m = (M + 15) / 16, tiles_n = (N + 15) / 16;
  const long group = get_group_id(0), batch = group / (tiles_m * tiles_n), tile = group % (tiles_m * tiles_n);
  const long row0 = tile / tiles_n * 16, col0 = tile % tiles_n * 16;
  const __global T* a = A + a_offset + ir_offset(a_batch, batch);
  const __global T* b = B + b_offset + ir_offset(b_batch, batch);
  T acc = (T)0;
  for (long k0 = 0; k0 < K; k0 += 16) {
    const long ar = row0 + ty, ak = k0 + tx, bk = k0 + ty, bc = col0 + tx;
    a_tile[ty][tx] = ar < M && ak < K ? (ta ? a[ak * M + ar] : a[ar * K + ak]) : (T)0;
    b_tile[ty][tx] = bk < K && bc < N ? (tb ? b[bc * K + bk] : b[bk * N + bc]) : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < 16; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long row = row0 + ty, col = col0 + tx;
  if (row < M && col < N) C[c_offset + (batch * M + row) * N + col] = acc;
}

/* y[i] = x[i] + bias[i / inner % channels]. */
__kernel void bias_add(__global const T* x, const long x_offset, __global const T* bias, const long bias_offset,
                       __global T* y, const long y_offset, const long channels, const long inner, const long n) {
  x += x_offset;
  bias += bias_offset;
  y += y_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + bias[i / inner % channels];
}
)CL";

OpenCLLibrarySource matmul_source("matmul", LibraryTypes::kNumeric, kMatmulKernels);

/*! \brief Batch walks of A and B over C's batch dimensions (NumPy broadcasting of all but the last two). */
void BatchWalks(const Shape& a, const Shape& b, const Shape& c, int64_t m, int64_t n, int64_t k, StridedWalk* wa,
                StridedWalk* wb, const NodeAttrs& attrs) {
  int nc = c.ndim() - 2;
  std::vector<int64_t> extents(c.dims().begin(), c.dims().begin() + nc), sa(nc, 0), sb(nc, 0);
  auto fill = [nc](const Shape& s, int64_t matrix, std::vector<int64_t>* strides) {
    int ns = s.ndim() - 2;
    int64_t stride = matrix;
    for (int i = ns - 1; i >= 0; --i) {
      (*strides)[nc - ns + i] = s[i] == 1 ? 0 : stride;
      stride *= s[i];
    }
  };
  fill(a, m * k, &sa);
  fill(b, k * n, &sb);
  *wa = MakeWalk(extents, sa, op::NodeDesc(attrs));
  *wb = MakeWalk(extents, sb, op::NodeDesc(attrs));
}

void MatmulCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  CheckArrays({in[0], in[1], out[0]}, attrs);
  const Shape& a = in[0].shape();
  const Shape& b = in[1].shape();
  const Shape& c = out[0].shape();
  bool ta = AttrBool(attrs, "transpose_a", false), tb = AttrBool(attrs, "transpose_b", false);
  int64_t m = c[c.ndim() - 2], n = c[c.ndim() - 1], k = ta ? a[a.ndim() - 2] : a[a.ndim() - 1];
  if (c.Size() == 0) return;
  StridedWalk wa, wb;
  BatchWalks(a, b, c, m, n, k, &wa, &wb, attrs);
  int64_t batch = c.Size() / (m * n);
  KernelArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]).Value(cl_long{m}).Value(cl_long{n}).Value(cl_long{k});
  args.Value(cl_int{ta}).Value(cl_int{tb}).Value(wa).Value(wb);
  int64_t tiles = ((m + kTile - 1) / kTile) * ((n + kTile - 1) / kTile);
  RunKernel(ctx, out[0].dtype(), "matmul", args, batch * tiles * kTile * kTile, kTile * kTile);
}

void BiasAddCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  CheckArrays({in[0], in[1], out[0]}, attrs);
  const Shape& x = in[0].shape();
  int axis =
      op::nn::ParseLayout(attrs, AttrString(attrs, "data_format", "NHWC")) == op::nn::Layout::kNHWC ? x.ndim() - 1 : 1;
  int64_t n = x.Size();
  KernelArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]).Value(cl_long{x[axis]}).Value(cl_long{x.ProdDims(axis + 1, x.ndim())});
  args.Value(cl_long{n});
  RunKernel(ctx, out[0].dtype(), "bias_add", args, n);
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(matmul).set_attr<FCompute>(kKey, MatmulCompute);
IR_REGISTER_OP(bias_add).set_attr<FCompute>(kKey, BiasAddCompute);

}  // namespace opencl
}  // namespace ir
