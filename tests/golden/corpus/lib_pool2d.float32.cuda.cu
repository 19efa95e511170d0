/* ir device kernels 'pool2d' for cuda, T = float32 */
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


typedef struct {
  long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  long xs[4], ys[4];
  long nhwc;
} nn_window;

/* (batch, channel, row, column) of the memory-order index i of a [*, C, H, W] activation. */
IR_FUNC void nn_coords(long i, const long C, const long H, const long W, const long nhwc, long* n, long* c, long* y,
                       long* x) {
  if (nhwc) {
    *c = i % C; i /= C; *x = i % W; i /= W; *y = i % H; *n = i / H;
  } else {
    *x = i % W; i /= W; *y = i % H; i /= H; *c = i % C; *n = i / C;
  }
}

/* Offset of (n, c, y, x) in the input (in != 0) or the output of window g. */
IR_FUNC long nn_at(const nn_window g, const int in, const long n, const long c, const long y, const long x) {
  return in ? n * g.xs[0] + c * g.xs[1] + y * g.xs[2] + x * g.xs[3]
            : n * g.ys[0] + c * g.ys[1] + y * g.ys[2] + x * g.ys[3];
}

/* The window of output cell (oy, ox) clipped to the input: rows [*h0, *h1), columns [*w0, *w1). */
IR_FUNC void nn_window_cells(const nn_window g, const long oy, const long ox, long* h0, long* h1, long* w0, long* w1) {
  const long top = oy * g.sh - g.pad_top, left = ox * g.sw - g.pad_left;
  *h0 = top > 0 ? top : 0;
  *h1 = top + g.kh < g.h ? top + g.kh : g.h;
  *w0 = left > 0 ? left : 0;
  *w1 = left + g.kw < g.w ? left + g.kw : g.w;
}

/* Offset (within the plane) of the first maximum of window (oy, ox), in row-major order as the CPU. */
IR_FUNC long nn_window_argmax(IR_GLOBAL const T* plane, const nn_window g, const long oy, const long ox) {
  long h0, h1, w0, w1;
  nn_window_cells(g, oy, ox, &h0, &h1, &w0, &w1);
  long best = h0 * g.xs[2] + w0 * g.xs[3];
  for (long h = h0; h < h1; ++h) {
    for (long w = w0; w < w1; ++w) {
      const long at = h * g.xs[2] + w * g.xs[3];
      if (plane[at] > plane[best]) best = at;
    }
  }
  return best;
}

/* Number of real cells of window (oy, ox), as T. */
IR_FUNC T nn_window_count(const nn_window g, const long oy, const long ox) {
  long h0, h1, w0, w1;
  nn_window_cells(g, oy, ox, &h0, &h1, &w0, &w1);
  return (T)((h1 - h0) * (w1 - w0));
}

/* Pooling of every output cell: the average (avg != 0) or the maximum of its window. */
IR_KERNEL void pool2d_forward(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const nn_window g, const long avg) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, g.n * g.c * g.oh * g.ow) {
    long n, c, oy, ox;
    nn_coords(e, g.c, g.oh, g.ow, g.nhwc, &n, &c, &oy, &ox);
    IR_GLOBAL const T* plane = x + nn_at(g, 1, n, c, 0, 0);
    T value;
    if (avg) {
      long h0, h1, w0, w1;
      nn_window_cells(g, oy, ox, &h0, &h1, &w0, &w1);
      T sum = (T)0;
      for (long h = h0; h < h1; ++h) {
        for (long w = w0; w < w1; ++w) sum += plane[h * g.xs[2] + w * g.xs[3]];
      }
      value = sum / nn_window_count(g, oy, ox);
    } else {
      value = plane[nn_window_argmax(plane, g, oy, ox)];
    }
    y[nn_at(g, 0, n, c, oy, ox)] = value;
  }
}

/* dx[n, c, ih, iw]: the sum over the output cells whose window covers (ih, iw) of dy shared evenly
   (avg != 0), or of dy where (ih, iw) is the window's first maximum in x (x is not read for avg). */
IR_KERNEL void pool2d_backward(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dx), const nn_window g,
                               const long avg) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, g.n * g.c * g.h * g.w) {
    long n, c, ih, iw;
    nn_coords(e, g.c, g.h, g.w, g.nhwc, &n, &c, &ih, &iw);
    const long self = ih * g.xs[2] + iw * g.xs[3];
    /* The output rows oy with oy*sh - pad_top <= ih < oy*sh - pad_top + kh, and likewise the columns. */
    const long lo_y = ih + g.pad_top - g.kh + 1, lo_x = iw + g.pad_left - g.kw + 1;
    const long oy0 = lo_y <= 0 ? 0 : (lo_y + g.sh - 1) / g.sh, ox0 = lo_x <= 0 ? 0 : (lo_x + g.sw - 1) / g.sw;
    const long last_y = (ih + g.pad_top) / g.sh, last_x = (iw + g.pad_left) / g.sw;
    const long oy1 = last_y < g.oh ? last_y + 1 : g.oh, ox1 = last_x < g.ow ? last_x + 1 : g.ow;
    T acc = (T)0;
    for (long oy = oy0; oy < oy1; ++oy) {
      for (long ox = ox0; ox < ox1; ++ox) {
        const T d = dy[nn_at(g, 0, n, c, oy, ox)];
        if (avg) {
          acc += d / nn_window_count(g, oy, ox);
        } else if (nn_window_argmax(x + nn_at(g, 1, n, c, 0, 0), g, oy, ox) == self) {
          acc += d;
        }
      }
    }
    dx[nn_at(g, 1, n, c, ih, iw)] = acc;
  }
}
