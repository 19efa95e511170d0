/* ir device kernels 'reduce_strided' for opencl, T = int64 */
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
typedef long T;


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

/* kind: 0 sum, 1 prod, 2 max, 3 min (a mean is a sum with divide set). */
IR_FUNC T reduce_combine(const long kind, const T a, const T b) {
  if (kind == 1) return a * b;
  if (kind == 2) return b > a ? b : a;
  if (kind == 3) return b < a ? b : a;
  return a + b;
}

/* One work-item per output o: the innermost reduced run in blocks of 256, each block's total
 * combined into the result. */
IR_KERNEL void reduce_strided(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const walk_t kept, const walk_t red,
                              const long num_kept, const long num_red, const long kind, const long divide,
                              const T init) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  const long e = red.ndim > 0 ? red.extent[red.ndim - 1] : 1;
  const long s = red.ndim > 0 ? red.stride[red.ndim - 1] : 0;
  const long rows = e > 0 ? num_red / e : 0;
  walk_t outer = red;
  outer.ndim = red.ndim > 0 ? red.ndim - 1 : 0;
  IR_THREAD_LOOP(o, num_kept) {
    const long base = walk_offset(kept, o);
    T acc = init;
    for (long r = 0; r < rows; ++r) {
      const long row = base + walk_offset(outer, r);
      for (long j0 = 0; j0 < e; j0 += 256) {
        const long j1 = j0 + 256 < e ? j0 + 256 : e;
        T block = init;
        for (long j = j0; j < j1; ++j) block = reduce_combine(kind, block, x[row + j * s]);
        acc = reduce_combine(kind, acc, block);
      }
    }
    y[o] = divide ? (T)(acc / (T)num_red) : acc;
  }
}

/* One group per output o: each work-item combines every IR_GROUP_SIZE-th element, then a tree. */
IR_KERNEL void reduce_strided_group(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const walk_t kept, const walk_t red,
                                    const long num_kept, const long num_red, const long kind, const long divide,
                                    const T init) {
  IR_SHARED T partial[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(y);
  const long lid = IR_LOCAL_ID;
  IR_GROUP_LOOP(o, num_kept) {
    const long base = walk_offset(kept, o);
    T acc = init;
    IR_LOCAL_LOOP(r, num_red) acc = reduce_combine(kind, acc, x[base + walk_offset(red, r)]);
    partial[lid] = acc;
    IR_BARRIER();
    for (long step = IR_GROUP_SIZE / 2; step > 0; step >>= 1) {
      if (lid < step) partial[lid] = reduce_combine(kind, partial[lid], partial[lid + step]);
      IR_BARRIER();
    }
    if (lid == 0) y[o] = divide ? (T)(partial[0] / (T)num_red) : partial[0];
    IR_BARRIER();
  }
}
