/* ir device kernels 'strided_gather' for opencl, T = int32 */
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

/* dst[i] = src[offset of i in walk] (divided by divisor when it exceeds 1), dst contiguous. */
IR_KERNEL void strided_gather(IR_CONST_ARRAY(T, src), IR_ARRAY(T, dst), const walk_t walk, const long n,
                              const long divisor) {
  IR_OFFSET(src);
  IR_OFFSET(dst);
  IR_THREAD_LOOP(i, n) {
    const T v = src[walk_offset(walk, i)];
    dst[i] = divisor > 1 ? (T)(v / (T)divisor) : v;
  }
}
