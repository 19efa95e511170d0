/* ir device kernels 'matrix' for opencl, T = int32 */
#pragma OPENCL FP_CONTRACT OFF
#define IR_KERNEL __kernel
#define IR_GLOBAL __global
#define IR_FUNC inline
#define IR_SHARED __local
#define IR_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define IR_GROUP_SIZE 128
#define IR_LOCAL_ID ((long)get_local_id(0))
#define IR_ARRAY(T, x) __global T* x, const long x##_offset
#define IR_CONST_ARRAY(T, x) __global const T* x, const long x##_offset
#define IR_OFFSET(x) x += x##_offset
#define IR_THREAD_LOOP(i, n) for (long i = get_global_id(0); i < (n); i += get_global_size(0))
#define IR_GROUP_LOOP(g, n) for (long g = get_group_id(0); g < (n); g += get_num_groups(0))
#define IR_LOCAL_LOOP(i, n) for (long i = get_local_id(0); i < (n); i += get_local_size(0))
#define ir_exp exp
#define ir_log log
#define ir_sqrt sqrt
#define ir_fabs fabs
#define ir_floor floor
#define ir_tanh tanh
#define ir_pow pow
#define ir_fmax fmax
#define ir_fmin fmin
typedef int T;


typedef struct {
  long ndim;
  long extent[8];
  long stride[8];
} walk_t;

/* Element offset of row-major index i over the walk's extents. */
IR_FUNC long walk_offset(const walk_t w, long i) {
  long offset = 0;
  for (long d = w.ndim - 1; d >= 0; --d) {
    offset += i % w.extent[d] * w.stride[d];
    i /= w.extent[d];
  }
  return offset;
}

/* A tile of C is MM_T x MM_T: each work-item of a group computes MM_PER of its elements
 * (those at IR_LOCAL_ID + q * IR_GROUP_SIZE); K is walked MM_T at a time through shared memory. */
#define MM_T 16
#define MM_PER ((MM_T * MM_T + IR_GROUP_SIZE - 1) / IR_GROUP_SIZE)

typedef struct {
  long m, n, k, ta, tb, tiles_m, tiles_n, batches;
  walk_t a_batch, b_batch;
} matmul_geometry;

/* C[batch] = op(A[batch]) op(B[batch]), C of [batches, m, n]; the batch walks give each C
 * matrix's A and B matrix offsets (stride 0 where an operand broadcasts). */
IR_KERNEL void matmul_tiled(IR_CONST_ARRAY(T, a), IR_CONST_ARRAY(T, b), IR_ARRAY(T, c), const matmul_geometry g) {
  IR_SHARED T a_tile[MM_T][MM_T + 1];
  IR_SHARED T b_tile[MM_T][MM_T + 1];
  IR_OFFSET(a);
  IR_OFFSET(b);
  IR_OFFSET(c);
  IR_GROUP_LOOP(t, g.batches * g.tiles_m * g.tiles_n) {
    const long batch = t / (g.tiles_m * g.tiles_n), tile = t % (g.tiles_m * g.tiles_n);
    const long row0 = tile / g.tiles_n * MM_T, col0 = tile % g.tiles_n * MM_T;
    const long oa = walk_offset(g.a_batch, batch), ob = walk_offset(g.b_batch, batch);
    T acc[MM_PER];
    for (long q = 0; q < MM_PER; ++q) acc[q] = (T)0;
    for (long k0 = 0; k0 < g.k; k0 += MM_T) {
      IR_LOCAL_LOOP(e, MM_T * MM_T) {
        const long i = e / MM_T, j = e % MM_T, r = row0 + i, ka = k0 + j, kb = k0 + i, col = col0 + j;
        a_tile[i][j] = r < g.m && ka < g.k ? a[oa + (g.ta ? ka * g.m + r : r * g.k + ka)] : (T)0;
        b_tile[i][j] = kb < g.k && col < g.n ? b[ob + (g.tb ? col * g.k + kb : kb * g.n + col)] : (T)0;
      }
      IR_BARRIER();
      for (long q = 0; q < MM_PER; ++q) {
        const long e = IR_LOCAL_ID + q * IR_GROUP_SIZE, i = e / MM_T, j = e % MM_T;
        if (e < MM_T * MM_T) {
          for (long p = 0; p < MM_T; ++p) acc[q] += a_tile[i][p] * b_tile[p][j];
        }
      }
      IR_BARRIER();
    }
    for (long q = 0; q < MM_PER; ++q) {
      const long e = IR_LOCAL_ID + q * IR_GROUP_SIZE, row = row0 + e / MM_T, col = col0 + e % MM_T;
      if (e < MM_T * MM_T && row < g.m && col < g.n) c[(batch * g.m + row) * g.n + col] = acc[q];
    }
  }
}

/* y[i] = x[i] + bias[channel of i], x viewed as [outer, channels, inner]. */
IR_KERNEL void bias_add(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, bias), IR_ARRAY(T, y), const long channels,
                        const long inner, const long n) {
  IR_OFFSET(x);
  IR_OFFSET(bias);
  IR_OFFSET(y);
  IR_THREAD_LOOP(i, n) y[i] = x[i] + bias[i / inner % channels];
}
