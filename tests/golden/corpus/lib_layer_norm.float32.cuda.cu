/* ir device kernels 'layer_norm' for cuda, T = float32 */
typedef unsigned char uchar;
typedef unsigned int uint;
typedef unsigned long ulong;
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#define IR_KERNEL extern "C" __global__ __launch_bounds__(256)
#define IR_GLOBAL 
#define IR_FUNC __device__ inline
#define IR_SHARED __shared__
#define IR_BARRIER() __syncthreads()
#define IR_GROUP_SIZE 256
#define IR_LOCAL_ID ((long)threadIdx.x)
#define IR_ARRAY(T, x) T* x, const long x##_offset
#define IR_CONST_ARRAY(T, x) const T* x, const long x##_offset
#define IR_OFFSET(x) x += x##_offset
#define IR_THREAD_LOOP(i, n) for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)
#define IR_GROUP_LOOP(g, n) for (long g = blockIdx.x; g < (n); g += gridDim.x)
#define IR_LOCAL_LOOP(i, n) for (long i = threadIdx.x; i < (n); i += blockDim.x)
__device__ inline float ir_exp(float x) { return expf(x); }
__device__ inline double ir_exp(double x) { return exp(x); }
__device__ inline float ir_log(float x) { return logf(x); }
__device__ inline double ir_log(double x) { return log(x); }
__device__ inline float ir_sqrt(float x) { return sqrtf(x); }
__device__ inline double ir_sqrt(double x) { return sqrt(x); }
__device__ inline float ir_fabs(float x) { return fabsf(x); }
__device__ inline double ir_fabs(double x) { return fabs(x); }
__device__ inline float ir_floor(float x) { return floorf(x); }
__device__ inline double ir_floor(double x) { return floor(x); }
__device__ inline float ir_tanh(float x) { return tanhf(x); }
__device__ inline double ir_tanh(double x) { return tanh(x); }
__device__ inline float ir_pow(float x, float y) { return powf(x, y); }
__device__ inline double ir_pow(double x, double y) { return pow(x, y); }
__device__ inline float ir_fmax(float x, float y) { return fmaxf(x, y); }
__device__ inline double ir_fmax(double x, double y) { return fmax(x, y); }
__device__ inline float ir_fmin(float x, float y) { return fminf(x, y); }
__device__ inline double ir_fmin(double x, double y) { return fmin(x, y); }
typedef float T;


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
