/* ir device kernels 'extract_image_patches' for opencl, T = float32 */
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

/* col[n, oy, ox, (i, j, c)] = x[n, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw, c], 0 in the padding. */
IR_KERNEL void extract_image_patches(IR_CONST_ARRAY(T, x), IR_ARRAY(T, col), const nn_window g) {
  IR_OFFSET(x);
  IR_OFFSET(col);
  const long k = g.kh * g.kw * g.c;
  IR_THREAD_LOOP(e, g.n * g.oh * g.ow * k) {
    const long c = e % g.c, j = e / g.c % g.kw, i = e / (g.c * g.kw) % g.kh, p = e / k;
    const long ox = p % g.ow, oy = p / g.ow % g.oh, n = p / (g.ow * g.oh);
    const long ih = oy * g.sh - g.pad_top + i * g.dh, iw = ox * g.sw - g.pad_left + j * g.dw;
    col[e] = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w ? x[nn_at(g, 1, n, c, ih, iw)] : (T)0;
  }
}

/* dx[n, ih, iw, c] = the sum of the col entries that extract_image_patches read from x[n, ih, iw, c]. */
IR_KERNEL void extract_image_patches_grad(IR_CONST_ARRAY(T, col), IR_ARRAY(T, dx), const nn_window g) {
  IR_OFFSET(col);
  IR_OFFSET(dx);
  const long k = g.kh * g.kw * g.c;
  IR_THREAD_LOOP(e, g.n * g.h * g.w * g.c) {
    long n, c, ih, iw;
    nn_coords(e, g.c, g.h, g.w, 1, &n, &c, &ih, &iw);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ty = ih + g.pad_top - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long tx = iw + g.pad_left - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        acc += col[((n * g.oh + ty / g.sh) * g.ow + tx / g.sw) * k + (i * g.kw + j) * g.c + c];
      }
    }
    dx[e] = acc;
  }
}
