/* ir device kernels 'layer_norm' for opencl, T = float64 */
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


/* One work-item per row: mean, variance (two passes), y, mean and rstd. */
IR_KERNEL void layer_norm(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, gamma), IR_CONST_ARRAY(T, beta), IR_ARRAY(T, y),
                          IR_ARRAY(T, mean), IR_ARRAY(T, rstd), const long rows, const long cols, const T eps) {
  IR_OFFSET(x);
  IR_OFFSET(gamma);
  IR_OFFSET(beta);
  IR_OFFSET(y);
  IR_OFFSET(mean);
  IR_OFFSET(rstd);
  IR_THREAD_LOOP(r, rows) {
    IR_GLOBAL const T* xr = x + r * cols;
    T sum = (T)0, sq = (T)0;
    for (long c = 0; c < cols; ++c) sum += xr[c];
    const T m = sum / (T)cols; /* NaN for empty rows, as the mean op */
    for (long c = 0; c < cols; ++c) sq += (xr[c] - m) * (xr[c] - m);
    const T inv = (T)1 / ir_sqrt(sq / (T)cols + eps);
    for (long c = 0; c < cols; ++c) y[r * cols + c] = (xr[c] - m) * inv * gamma[c] + beta[c];
    mean[r] = m;
    rstd[r] = inv;
  }
}

/* Work-items [0, rows) give the rows of dx, [rows, rows + cols) the columns of dgamma and dbeta;
   dmean and drstd are read when stat (the gradients of the mean and rstd outputs). */
IR_KERNEL void layer_norm_grad(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, gamma),
                               IR_CONST_ARRAY(T, mean), IR_CONST_ARRAY(T, rstd), IR_CONST_ARRAY(T, dmean),
                               IR_CONST_ARRAY(T, drstd), IR_ARRAY(T, dx), IR_ARRAY(T, dgamma), IR_ARRAY(T, dbeta),
                               const long rows, const long cols, const long stat) {
  IR_OFFSET(dy);
  IR_OFFSET(x);
  IR_OFFSET(gamma);
  IR_OFFSET(mean);
  IR_OFFSET(rstd);
  IR_OFFSET(dmean);
  IR_OFFSET(drstd);
  IR_OFFSET(dx);
  IR_OFFSET(dgamma);
  IR_OFFSET(dbeta);
  IR_THREAD_LOOP(e, rows + cols) {
    if (e < rows) {
      const long base = e * cols;
      const T m = mean[e], inv = rstd[e];
      T sg = (T)0, sgx = (T)0;
      for (long c = 0; c < cols; ++c) {
        const T g = dy[base + c] * gamma[c];
        sg += g;
        sgx += g * (x[base + c] - m) * inv;
      }
      const T n = cols > 0 ? (T)cols : (T)1;
      const T mg = sg / n, mgx = sgx / n;
      const T em = stat ? dmean[e] / n : (T)0, er = stat ? -drstd[e] * inv * inv / n : (T)0;
      for (long c = 0; c < cols; ++c) {
        const T xh = (x[base + c] - m) * inv;
        dx[base + c] = inv * (dy[base + c] * gamma[c] - mg - xh * mgx) + em + er * xh;
      }
    } else {
      const long c = e - rows;
      T dg = (T)0, db = (T)0;
      for (long r = 0; r < rows; ++r) {
        const T d = dy[r * cols + c];
        dg += d * (x[r * cols + c] - mean[r]) * rstd[r];
        db += d;
      }
      dgamma[c] = dg;
      dbeta[c] = db;
    }
  }
}
