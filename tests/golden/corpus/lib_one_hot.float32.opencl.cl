/* ir device kernels 'one_hot' for opencl, T = float32 */
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
typedef float T;


/* out[i] = on where i's position along depth equals its index, else off; out viewed as
 * [outer, depth, inner], indices as [outer, inner]. */
IR_KERNEL void one_hot_i32(IR_CONST_ARRAY(int, indices), IR_ARRAY(T, out), const long depth, const long inner,
                           const long n, const T on, const T off) {
  IR_OFFSET(indices);
  IR_OFFSET(out);
  IR_THREAD_LOOP(i, n) out[i] = (long)indices[i / (inner * depth) * inner + i % inner] == i / inner % depth ? on : off;
}

IR_KERNEL void one_hot_i64(IR_CONST_ARRAY(long, indices), IR_ARRAY(T, out), const long depth, const long inner,
                           const long n, const T on, const T off) {
  IR_OFFSET(indices);
  IR_OFFSET(out);
  IR_THREAD_LOOP(i, n) out[i] = indices[i / (inner * depth) * inner + i % inner] == i / inner % depth ? on : off;
}
