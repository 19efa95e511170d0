/* ir device kernels 'reduce_strided' for cuda, T = float64 */
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
