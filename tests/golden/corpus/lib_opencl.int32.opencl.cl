/* ir: hand-written OpenCL kernels for element type int32 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define IR_HAS_FP64 1
#define T int
#define T_LOWEST INT_MIN
#define T_HIGHEST INT_MAX
#define IR_T_FLOAT 0
#define IR_T_NUMERIC 1
#define IR_T_IS_DOUBLE 0
#define IR_UNIT_SCALE (1.0f / 16777216.0f)

/* Separate multiplies and adds, as the CPU kernels compute them. */
#pragma OPENCL FP_CONTRACT OFF

typedef struct { long ndim; long extent[8]; long stride[8]; } ir_strided;

/* The geometry of a convolution or pooling window (see WindowArg). */
typedef struct {
  long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  long xs[4];
  long ys[4];
} ir_window;

/* Offset of element i (row-major over w.extent) of a strided walk. */
inline long ir_offset(const ir_strided w, long i) {
  long offset = 0;
  for (int d = (int)w.ndim - 1; d >= 0; --d) {
    offset += (i % w.extent[d]) * w.stride[d];
    i /= w.extent[d];
  }
  return offset;
}

/* ---- array ---- */

/* dst[i] = src[offset of i in walk] for i < n. */
__kernel void strided_copy(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                           const ir_strided walk, const long n) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)];
}

/* out[(o * depth + d) * inner + k] = indices[o * inner + k] == d ? on : off. */
#define IR_ONE_HOT(NAME, I)                                                                          \
  __kernel void NAME(__global const I* indices, const long indices_offset, __global T* out,          \
                     const long out_offset, const long depth, const long inner, const T on,          \
                     const T off, const long n) {                                                    \
    indices += indices_offset;                                                                       \
    out += out_offset;                                                                               \
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {                                \
      const long k = i % inner, d = i / inner % depth, o = i / (inner * depth);                      \
      out[i] = (long)indices[o * inner + k] == d ? on : off;                                         \
    }                                                                                                \
  }
IR_ONE_HOT(one_hot_i32, int)
IR_ONE_HOT(one_hot_i64, long)

/* ---- matmul ---- */

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

/* ---- reduce ---- */

#define IR_SUM(a, b) ((a) + (b))
#define IR_PROD(a, b) ((a) * (b))
#define IR_MAX(a, b) ((b) > (a) ? (b) : (a))
#define IR_MIN(a, b) ((b) < (a) ? (b) : (a))

/* acc / count, as the CPU's mean: an empty integer mean is 0. */
inline T ir_mean(const T acc, const long count) {
#if IR_T_FLOAT
  return acc / (T)count;
#else
  return count == 0 ? (T)0 : acc / (T)count;
#endif
}

#define IR_DEFINE_REDUCE(NAME, INIT, COMBINE)                                                         \
  __kernel void NAME(__global const T* x, const long x_offset, __global T* y, const long y_offset,   \
                     const ir_strided kept, const ir_strided red, const long num_kept,               \
                     const long num_red, const int mean) {                                           \
    x += x_offset;                                                                                   \
    y += y_offset;                                                                                   \
    const long e = red.ndim > 0 ? red.extent[red.ndim - 1] : 1;                                      \
    const long s = red.ndim > 0 ? red.stride[red.ndim - 1] : 0;                                      \
    const long rows = e > 0 ? num_red / e : 0;                                                       \
    ir_strided outer = red;                                                                          \
    outer.ndim = red.ndim > 0 ? red.ndim - 1 : 0;                                                    \
    for (long o = get_global_id(0); o < num_kept; o += get_global_size(0)) {                         \
      const long base = ir_offset(kept, o);                                                          \
      T acc = INIT;                                                                                  \
      for (long r = 0; r < rows; ++r) {                                                              \
        const __global T* row = x + base + ir_offset(outer, r);                                      \
        for (long j0 = 0; j0 < e; j0 += 256) {                                                       \
          const long j1 = j0 + 256 < e ? j0 + 256 : e;                                               \
          T block = INIT;                                                                            \
          for (long j = j0; j < j1; ++j) block = COMBINE(block, row[j * s]);                         \
          acc = COMBINE(acc, block);                                                                 \
        }                                                                                            \
      }                                                                                              \
      y[o] = mean ? ir_mean(acc, num_red) : acc;                                                     \
    }                                                                                                \
  }                                                                                                  \
  __kernel __attribute__((reqd_work_group_size(64, 1, 1))) void NAME##_group(                      \
      __global const T* x, const long x_offset, __global T* y, const long y_offset,                  \
      const ir_strided kept, const ir_strided red, const long num_kept, const long num_red,          \
      const int mean) {                                                                              \
    __local T partial[64];                                                                           \
    x += x_offset;                                                                                   \
    y += y_offset;                                                                                   \
    const int lid = get_local_id(0);                                                                 \
    for (long o = get_group_id(0); o < num_kept; o += get_num_groups(0)) {                           \
      const long base = ir_offset(kept, o);                                                          \
      T acc = INIT;                                                                                  \
      for (long r = lid; r < num_red; r += 64) acc = COMBINE(acc, x[base + ir_offset(red, r)]);      \
      partial[lid] = acc;                                                                            \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
      for (int step = 32; step > 0; step >>= 1) {                                                    \
        if (lid < step) partial[lid] = COMBINE(partial[lid], partial[lid + step]);                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      }                                                                                              \
      if (lid == 0) y[o] = mean ? ir_mean(partial[0], num_red) : partial[0];                         \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    }                                                                                                \
  }

IR_DEFINE_REDUCE(reduce_sum, (T)0, IR_SUM)
IR_DEFINE_REDUCE(reduce_prod, (T)1, IR_PROD)
IR_DEFINE_REDUCE(reduce_max, T_LOWEST, IR_MAX)
IR_DEFINE_REDUCE(reduce_min, T_HIGHEST, IR_MIN)

/* dst[i] = src[offset of i in walk] / divisor: a reduction's result spread back over its axes. */
__kernel void broadcast_divide(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                               const ir_strided walk, const long n, const T divisor) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)] / divisor;
}

/* out[o * inner + j] = index of the first extremum of x[o, :, j] (x viewed as [outer, n, inner]). */
#define IR_DEFINE_ARG_REDUCE(NAME, BETTER)                                                           \
  __kernel void NAME(__global const T* x, const long x_offset, __global long* out, const long out_offset, \
                     const long outer, const long n, const long inner) {                            \
    x += x_offset;                                                                                   \
    out += out_offset;                                                                               \
    for (long o = get_global_id(0); o < outer * inner; o += get_global_size(0)) {                    \
      const __global T* base = x + o / inner * n * inner + o % inner;                                \
      T best = base[0];                                                                              \
      long index = 0;                                                                                \
      for (long i = 1; i < n; ++i) {                                                                 \
        const T v = base[i * inner];                                                                 \
        if (v BETTER best) {                                                                         \
          best = v;                                                                                  \
          index = i;                                                                                 \
        }                                                                                            \
      }                                                                                              \
      out[o] = index;                                                                                \
    }                                                                                                \
  }
IR_DEFINE_ARG_REDUCE(argmax, >)
IR_DEFINE_ARG_REDUCE(argmin, <)

/* ---- state ---- */

__kernel void assign_add(__global T* ref, const long ref_offset, __global const T* value, const long value_offset,
                         const long n) {
  ref += ref_offset;
  value += value_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) ref[i] = ref[i] + value[i];
}

__kernel void assign_sub(__global T* ref, const long ref_offset, __global const T* value, const long value_offset,
                         const long n) {
  ref += ref_offset;
  value += value_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) ref[i] = ref[i] - value[i];
}
