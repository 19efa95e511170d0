/* ir device kernels 'softmax' for cuda, T = float64 */
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
typedef double T;


#define NN_ADD(a, b) ((a) + (b))
#define NN_MAX(a, b) ((a) > (b) ? (a) : (b))
#define NN_GROUP_REDUCE(s, v, OP)                                                       \
  s[IR_LOCAL_ID] = v;                                                                  \
  IR_BARRIER();                                                                        \
  for (long half_ = IR_GROUP_SIZE / 2; half_ > 0; half_ /= 2) {                        \
    if (IR_LOCAL_ID < half_) s[IR_LOCAL_ID] = OP(s[IR_LOCAL_ID], s[IR_LOCAL_ID + half_]); \
    IR_BARRIER();                                                                      \
  }                                                                                    \
  v = s[0];                                                                            \
  IR_BARRIER();

/* softmax (log_softmax when use_log) of the contiguous rows of x [rows, n]: one group per row. y may be x. */
IR_KERNEL void softmax_rows(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const long rows, const long n, const long use_log) {
  IR_SHARED T s[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_GROUP_LOOP(r, rows) {
    IR_GLOBAL const T* xr = x + r * n;
    IR_GLOBAL T* yr = y + r * n;
    T m = xr[0];
    IR_LOCAL_LOOP(j, n) m = NN_MAX(m, xr[j]);
    NN_GROUP_REDUCE(s, m, NN_MAX);
    T sum = (T)0;
    IR_LOCAL_LOOP(j, n) sum += ir_exp(xr[j] - m);
    NN_GROUP_REDUCE(s, sum, NN_ADD);
    /* Each work-item rewrites only the elements it read: safe in place. */
    if (use_log) {
      const T log_s = ir_log(sum);
      IR_LOCAL_LOOP(j, n) yr[j] = (xr[j] - m) - log_s;
    } else {
      const T inv = (T)1 / sum;
      IR_LOCAL_LOOP(j, n) yr[j] = ir_exp(xr[j] - m) * inv;
    }
  }
}

/* The same along the middle axis of x [outer, n, inner], inner > 1: one work-item per (outer, inner). */
IR_KERNEL void softmax_columns(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const long outer, const long n, const long inner,
                               const long use_log) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, outer * inner) {
    const long base = e / inner * n * inner + e % inner;
    T m = x[base];
    for (long j = 1; j < n; ++j) m = NN_MAX(m, x[base + j * inner]);
    T sum = (T)0;
    for (long j = 0; j < n; ++j) sum += ir_exp(x[base + j * inner] - m);
    const T log_s = ir_log(sum), inv = (T)1 / sum;
    for (long j = 0; j < n; ++j) {
      const long at = base + j * inner;
      y[at] = use_log ? (x[at] - m) - log_s : ir_exp(x[at] - m) * inv;
    }
  }
}

/*
 * Row r of logits x [rows, classes], one group per row: with p the label distribution (probs,
 * or one-hot of the int32 or int64 label, the other arrays null), loss = -sum_j p_j log_softmax_j
 * and backprop = softmax - p (softmax * sum(p) - p when general). A label outside [0, classes) makes the row NaN: the CPU's error
 * would need a round trip to the host.
 */
IR_KERNEL void softmax_cross_entropy(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, probs), IR_CONST_ARRAY(int, labels32),
                                     IR_CONST_ARRAY(long, labels64), IR_ARRAY(T, loss), IR_ARRAY(T, backprop),
                                     const long rows, const long classes, const long general, const T nan) {
  IR_SHARED T s[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(probs);
  IR_OFFSET(labels32);
  IR_OFFSET(labels64);
  IR_OFFSET(loss);
  IR_OFFSET(backprop);
  IR_GROUP_LOOP(r, rows) {
    IR_GLOBAL const T* xr = x + r * classes;
    IR_GLOBAL T* bp = backprop + r * classes;
    const long label = labels32 ? (long)labels32[r] : labels64 ? labels64[r] : -1;
    if (!probs && (label < 0 || label >= classes)) {
      IR_LOCAL_LOOP(j, classes) bp[j] = nan;
      if (IR_LOCAL_ID == 0) loss[r] = nan;
      continue;
    }
    T m = xr[0];
    IR_LOCAL_LOOP(j, classes) m = NN_MAX(m, xr[j]);
    NN_GROUP_REDUCE(s, m, NN_MAX);
    T sum = (T)0;
    IR_LOCAL_LOOP(j, classes) sum += ir_exp(xr[j] - m);
    NN_GROUP_REDUCE(s, sum, NN_ADD);
    const T log_s = ir_log(sum);
    T mass = (T)0;
    if (general) {
      IR_LOCAL_LOOP(j, classes) mass += probs[r * classes + j];
      NN_GROUP_REDUCE(s, mass, NN_ADD);
    } else {
      mass = (T)1;
    }
    T total = (T)0;
    IR_LOCAL_LOOP(j, classes) {
      const T p = probs ? probs[r * classes + j] : (T)(j == label);
      const T log_softmax = (xr[j] - m) - log_s;
      total -= p * log_softmax;
      bp[j] = ir_exp(log_softmax) * mass - p;
    }
    NN_GROUP_REDUCE(s, total, NN_ADD);
    if (IR_LOCAL_ID == 0) loss[r] = total;
  }
}
