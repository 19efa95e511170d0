/* ir device kernels 'conv2d' for opencl, T = float64 */
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

/* y[n, o, oy, ox] = sum over (i, j, c) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw]
   w[i, j, c, o]. */
IR_KERNEL void conv2d_forward(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, w), IR_ARRAY(T, y), const nn_window g) {
  IR_OFFSET(x);
  IR_OFFSET(w);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, g.n * g.oc * g.oh * g.ow) {
    long n, o, oy, ox;
    nn_coords(e, g.oc, g.oh, g.ow, g.nhwc, &n, &o, &oy, &ox);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ih = oy * g.sh - g.pad_top + i * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long iw = ox * g.sw - g.pad_left + j * g.dw;
        if (iw < 0 || iw >= g.w) continue;
        const long xp = nn_at(g, 1, n, 0, ih, iw), wp = (i * g.kw + j) * g.c * g.oc + o;
        for (long c = 0; c < g.c; ++c) acc += x[xp + c * g.xs[1]] * w[wp + c * g.oc];
      }
    }
    y[nn_at(g, 0, n, o, oy, ox)] = acc;
  }
}

/* dx[n, c, ih, iw] = sum over the (i, j, o) whose window position lands on (ih, iw) of
   dy[n, o, oy, ox] w[i, j, c, o]. */
IR_KERNEL void conv2d_backprop_input(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(T, w), IR_ARRAY(T, dx), const nn_window g) {
  IR_OFFSET(dy);
  IR_OFFSET(w);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, g.n * g.c * g.h * g.w) {
    long n, c, ih, iw;
    nn_coords(e, g.c, g.h, g.w, g.nhwc, &n, &c, &ih, &iw);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ty = ih + g.pad_top - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long tx = iw + g.pad_left - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const long dyp = nn_at(g, 0, n, 0, ty / g.sh, tx / g.sw), wp = ((i * g.kw + j) * g.c + c) * g.oc;
        for (long o = 0; o < g.oc; ++o) acc += dy[dyp + o * g.ys[1]] * w[wp + o];
      }
    }
    dx[nn_at(g, 1, n, c, ih, iw)] = acc;
  }
}

/* dw[i, j, c, o] = sum over (n, oy, ox) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw]
   dy[n, o, oy, ox]: one group per weight element, each work-item summing a strided part, then a tree in shared memory. */
IR_KERNEL void conv2d_backprop_filter(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dw),
                                      const nn_window g) {
  IR_SHARED T partial[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dw);
  IR_GROUP_LOOP(e, g.kh * g.kw * g.c * g.oc) {
    const long o = e % g.oc, c = e / g.oc % g.c, j = e / (g.oc * g.c) % g.kw, i = e / (g.oc * g.c * g.kw);
    T acc = (T)0;
    IR_LOCAL_LOOP(t, g.n * g.oh * g.ow) {
      const long n = t / (g.oh * g.ow), oy = t / g.ow % g.oh, ox = t % g.ow;
      const long ih = oy * g.sh - g.pad_top + i * g.dh, iw = ox * g.sw - g.pad_left + j * g.dw;
      if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) {
        acc += x[nn_at(g, 1, n, c, ih, iw)] * dy[nn_at(g, 0, n, o, oy, ox)];
      }
    }
    NN_GROUP_REDUCE(partial, acc, NN_ADD);
    if (IR_LOCAL_ID == 0) dw[e] = acc;
  }
}

/* The same sum with one work-item per weight element, serially over (n, oy, ox): for filters with
   enough elements to keep the device busy (neighbouring work-items read the same x, neighbouring dy). */
IR_KERNEL void conv2d_backprop_filter_serial(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dw),
                                             const nn_window g) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dw);
  IR_THREAD_LOOP(e, g.kh * g.kw * g.c * g.oc) {
    const long o = e % g.oc, c = e / g.oc % g.c, j = e / (g.oc * g.c) % g.kw, i = e / (g.oc * g.c * g.kw);
    T acc = (T)0;
    for (long n = 0; n < g.n; ++n) {
      for (long oy = 0; oy < g.oh; ++oy) {
        const long ih = oy * g.sh - g.pad_top + i * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        for (long ox = 0; ox < g.ow; ++ox) {
          const long iw = ox * g.sw - g.pad_left + j * g.dw;
          if (iw >= 0 && iw < g.w) acc += x[nn_at(g, 1, n, c, ih, iw)] * dy[nn_at(g, 0, n, o, oy, ox)];
        }
      }
    }
    dw[e] = acc;
  }
}
