/* ir device kernels 'random' for cuda, T = float32 */
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


/* Philox4x32-10 of counter (index, draw) under key into w[4], as random::WordsAt. */
IR_FUNC void random_philox(const ulong key, const ulong index, const ulong draw, uint* w) {
  uint c0 = (uint)index, c1 = (uint)(index >> 32), c2 = (uint)draw, c3 = (uint)(draw >> 32);
  uint k0 = (uint)key, k1 = (uint)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
    c0 = (uint)(p1 >> 32) ^ c1 ^ k0;
    c1 = (uint)p1;
    c2 = (uint)(p0 >> 32) ^ c3 ^ k1;
    c3 = (uint)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

/* The integer behind random::UniformAt<T>: 24 random bits for float elements, 53 for double. */
IR_FUNC ulong random_uniform_bits(const ulong key, const ulong index) {
  uint w[4];
  random_philox(key, index, 0, w);
  return sizeof(T) == sizeof(double) ? (((ulong)w[0] << 21) ^ (w[1] >> 11)) : (ulong)(w[0] >> 8);
}

/* random::UnitDouble */
IR_FUNC double random_unit(const uint high, const uint low) {
  return (double)(((ulong)high << 21) ^ (low >> 11)) * (1.0 / 9007199254740992.0);
}

/* The standard normal of element index, draw `draw` (random::NormalAt). */
IR_FUNC double random_normal_at(const ulong key, const ulong index, const ulong draw) {
  uint w[4];
  random_philox(key, index / 2, draw, w);
  const double u1 = 1.0 - random_unit(w[0], w[1]), u2 = random_unit(w[2], w[3]);
  const double radius = sqrt(-2.0 * log(u1)), angle = 6.283185307179586476925 * u2;
  return index % 2 == 0 ? radius * cos(angle) : radius * sin(angle);
}

/* lo + u * (hi - lo) with u the element's uniform in [0, 1), kept below hi as the CPU does. */
IR_KERNEL void random_uniform(IR_ARRAY(T, out), const long n, const ulong key, const T lo, const T hi,
                              const T below_hi) {
  IR_OFFSET(out);
  const T width = hi - lo, unit = sizeof(T) == sizeof(double) ? (T)(1.0 / 9007199254740992.0) : (T)(1.0 / 16777216.0);
  IR_THREAD_LOOP(i, n) {
    const T v = lo + (T)random_uniform_bits(key, (ulong)i) * unit * width;
    out[i] = v < hi || !(hi > lo) ? v : below_hi;
  }
}

/* mean + stddev * z with z the element's standard normal, redrawn while |z| > 2 when truncated. */
IR_KERNEL void random_normal(IR_ARRAY(T, out), const long n, const ulong key, const double mean, const double stddev,
                             const long truncated) {
  IR_OFFSET(out);
  IR_THREAD_LOOP(i, n) {
    double z = random_normal_at(key, (ulong)i, 0);
    for (ulong draw = 1; truncated && fabs(z) > 2.0; ++draw) z = random_normal_at(key, (ulong)i, draw);
    out[i] = (T)(mean + stddev * z);
  }
}

/* mask = scale where the element's uniform bits are below keep_bits (u < keep_prob), else 0; y = x * mask. */
IR_KERNEL void random_dropout(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), IR_ARRAY(T, mask), const long n, const ulong key,
                              const ulong keep_bits, const T scale, const long active) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_OFFSET(mask);
  IR_THREAD_LOOP(i, n) {
    const T m = !active ? (T)1 : random_uniform_bits(key, (ulong)i) < keep_bits ? scale : (T)0;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}
