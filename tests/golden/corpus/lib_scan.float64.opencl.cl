/* ir device kernels 'scan' for opencl, T = float64 */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
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
typedef double T;


/* One work-item per line of x viewed as [outer, n, inner]; exclusive and reverse are 0 or 1. */
#define IR_SCAN(NAME, INIT, OP)                                                                      \
  IR_KERNEL void NAME(IR_CONST_ARRAY(T, x), IR_ARRAY(T, out), const long n, const long inner,        \
                      const long lines, const long exclusive, const long reverse) {                  \
    IR_OFFSET(x);                                                                                    \
    IR_OFFSET(out);                                                                                  \
    IR_THREAD_LOOP(l, lines) {                                                                       \
      long base = l / inner * n * inner + l % inner;                                                 \
      T acc = INIT;                                                                                  \
      for (long j = 0; j < n; ++j) {                                                                 \
        long at = base + (reverse ? n - 1 - j : j) * inner;                                          \
        T v = x[at];                                                                                 \
        if (exclusive) out[at] = acc;                                                                \
        acc = acc OP v;                                                                              \
        if (!exclusive) out[at] = acc;                                                               \
      }                                                                                              \
    }                                                                                                \
  }
IR_SCAN(cumsum, (T)0, +)
IR_SCAN(cumprod, (T)1, *)
