/* ir device kernels 'scan' for cuda, T = float32 */
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
