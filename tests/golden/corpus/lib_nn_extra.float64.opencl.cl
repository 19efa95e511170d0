/* ir device kernels 'nn_extra' for opencl, T = float64 */
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

typedef struct {
  long nd, offset, rest, nb, m;
  long xs[8], ys[8], before[8], after[8], block[8];
} nx_dims;

/* depthwise_conv2d: y[n, c*m+j, oy, ox] = sum over taps of x[n, c, iy, ix] * w[ky, kx, c, j]. */
IR_KERNEL void depthwise_forward(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, w), IR_ARRAY(T, y), const nn_window g,
                                 const long m) {
  IR_OFFSET(x);
  IR_OFFSET(w);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, g.n * g.oc * g.oh * g.ow) {
    long n, oc, oy, ox;
    nn_coords(e, g.oc, g.oh, g.ow, g.nhwc, &n, &oc, &oy, &ox);
    const long c = oc / m, j = oc % m;
    T acc = (T)0;
    for (long ky = 0; ky < g.kh; ++ky) {
      const long iy = oy * g.sh - g.pad_top + ky * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (long kx = 0; kx < g.kw; ++kx) {
        const long ix = ox * g.sw - g.pad_left + kx * g.dw;
        if (ix >= 0 && ix < g.w) acc += x[nn_at(g, 1, n, c, iy, ix)] * w[((ky * g.kw + kx) * g.c + c) * m + j];
      }
    }
    y[nn_at(g, 0, n, oc, oy, ox)] = acc;
  }
}

/* dx[n, c, iy, ix]: the taps of every output cell whose window covers (iy, ix). */
IR_KERNEL void depthwise_backward_data(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(T, w), IR_ARRAY(T, dx), const nn_window g,
                                       const long m) {
  IR_OFFSET(dy);
  IR_OFFSET(w);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, g.n * g.c * g.h * g.w) {
    long n, c, iy, ix;
    nn_coords(e, g.c, g.h, g.w, g.nhwc, &n, &c, &iy, &ix);
    T acc = (T)0;
    for (long ky = 0; ky < g.kh; ++ky) {
      const long ty = iy + g.pad_top - ky * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long kx = 0; kx < g.kw; ++kx) {
        const long tx = ix + g.pad_left - kx * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        for (long j = 0; j < m; ++j) {
          acc += dy[nn_at(g, 0, n, c * m + j, ty / g.sh, tx / g.sw)] * w[((ky * g.kw + kx) * g.c + c) * m + j];
        }
      }
    }
    dx[nn_at(g, 1, n, c, iy, ix)] = acc;
  }
}

/* dw[ky, kx, c, j] = sum over batch and output cells of x at the tap times dy. */
IR_KERNEL void depthwise_backward_filter(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dw),
                                         const nn_window g, const long m) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(dw);
  IR_THREAD_LOOP(e, g.kh * g.kw * g.c * m) {
    const long j = e % m, c = e / m % g.c, kx = e / (m * g.c) % g.kw, ky = e / (m * g.c * g.kw);
    T acc = (T)0;
    for (long n = 0; n < g.n; ++n) {
      for (long oy = 0; oy < g.oh; ++oy) {
        const long iy = oy * g.sh - g.pad_top + ky * g.dh;
        if (iy < 0 || iy >= g.h) continue;
        for (long ox = 0; ox < g.ow; ++ox) {
          const long ix = ox * g.sw - g.pad_left + kx * g.dw;
          if (ix >= 0 && ix < g.w) acc += x[nn_at(g, 1, n, c, iy, ix)] * dy[nn_at(g, 0, n, c * m + j, oy, ox)];
        }
      }
    }
    dw[e] = acc;
  }
}

/* bias + alpha * the sum of squares of row[k] for |k - i| <= r. */
IR_FUNC T nx_lrn_scale(IR_GLOBAL const T* row, const long i, const long depth, const long r, const T bias,
                       const T alpha) {
  T sum = (T)0;
  for (long k = i - r < 0 ? 0 : i - r; k <= i + r && k < depth; ++k) sum += row[k] * row[k];
  return bias + alpha * sum;
}

/* lrn (grad 0; dy unread) or lrn_grad over rows of `depth`, as the CPU kernel. */
IR_KERNEL void lrn(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, dy), IR_ARRAY(T, out), const long n, const long depth,
                   const long r, const T bias, const T alpha, const T beta, const long grad) {
  IR_OFFSET(x);
  IR_OFFSET(dy);
  IR_OFFSET(out);
  IR_THREAD_LOOP(e, n) {
    const long base = e - e % depth, j = e % depth;
    IR_GLOBAL const T* row = x + base;
    const T s = nx_lrn_scale(row, j, depth, r, bias, alpha);
    if (!grad) {
      out[e] = row[j] * ir_pow(s, -beta);
    } else {
      T sum = (T)0;
      for (long i = j - r < 0 ? 0 : j - r; i <= j + r && i < depth; ++i) {
        sum += dy[base + i] * row[i] * ir_pow(nx_lrn_scale(row, i, depth, r, bias, alpha), -beta - (T)1);
      }
      out[e] = dy[e] * ir_pow(s, -beta) - (T)2 * alpha * beta * row[j] * sum;
    }
  }
}

/* top_k: element i of a row goes to slot (its rank) when that is below k. */
IR_KERNEL void top_k(IR_CONST_ARRAY(T, x), IR_ARRAY(T, values), IR_ARRAY(int, indices), const long n, const long cols,
                     const long k) {
  IR_OFFSET(x);
  IR_OFFSET(values);
  IR_OFFSET(indices);
  IR_THREAD_LOOP(e, n) {
    const long i = e % cols, row = e / cols;
    IR_GLOBAL const T* p = x + row * cols;
    long rank = 0;
    for (long j = 0; j < cols && rank < k; ++j) rank += p[j] > p[i] || (!(p[i] > p[j]) && j < i);
    if (rank < k) {
      values[row * k + rank] = p[i];
      indices[row * k + rank] = (int)i;
    }
  }
}

/* top_k_grad: dx[row, i] = the dy entries of the row whose index is i. */
IR_KERNEL void top_k_grad(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(int, indices), IR_ARRAY(T, dx), const long n,
                          const long cols, const long k) {
  IR_OFFSET(dy);
  IR_OFFSET(indices);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, n) {
    const long i = e % cols, row = e / cols;
    T acc = (T)0;
    for (long j = 0; j < k; ++j) acc += indices[row * k + j] == i ? dy[row * k + j] : (T)0;
    dx[e] = acc;
  }
}

/* in_top_k: fewer than k predictions of the row exceed the target's (false out of range or not finite). */
IR_KERNEL void in_top_k(IR_CONST_ARRAY(T, p), IR_CONST_ARRAY(int, t32), IR_CONST_ARRAY(long, t64), IR_ARRAY(uchar, out),
                        const long rows, const long cols, const long k, const long wide) {
  IR_OFFSET(p);
  IR_OFFSET(t32);
  IR_OFFSET(t64);
  IR_OFFSET(out);
  IR_THREAD_LOOP(r, rows) {
    const long target = wide ? t64[r] : (long)t32[r];
    IR_GLOBAL const T* row = p + r * cols;
    long more = 0;
    const int ok = target >= 0 && target < cols && row[target] - row[target] == (T)0;
    for (long c = 0; ok && c < cols && more < k; ++c) more += row[c] > row[target];
    out[r] = (uchar)(ok && more < k);
  }
}

/* mirror_pad: y[i] = x at the position y's element i mirrors (xs input dims, ys padded dims). */
IR_KERNEL void mirror_pad(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const nx_dims p, const long n) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, n) {
    long rest = e, src = 0, stride = 1;
    for (long d = p.nd - 1; d >= 0; --d) {
      long c = rest % p.ys[d] - p.before[d];
      rest /= p.ys[d];
      if (c < 0) c = -c - p.offset;
      if (c >= p.xs[d]) c = 2 * p.xs[d] - 2 + p.offset - c;
      src += c * stride;
      stride *= p.xs[d];
    }
    y[e] = x[src];
  }
}

/* mirror_pad_grad: dx[i] sums dy over the padded positions mirroring i, per dimension up to three
   (the position itself, its mirror in the padding before, its mirror in the padding after). */
IR_KERNEL void mirror_pad_grad(IR_CONST_ARRAY(T, dy), IR_ARRAY(T, dx), const nx_dims p, const long n) {
  IR_OFFSET(dy);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, n) {
    long cand[8][3], count[8], pick[8];
    long rest = e;
    for (long d = p.nd - 1; d >= 0; --d) {
      const long c = rest % p.xs[d], lo = p.before[d] - c - p.offset, hi = 2 * p.xs[d] - 2 + p.offset - c;
      rest /= p.xs[d];
      count[d] = 0;
      cand[d][count[d]++] = c + p.before[d];
      if (lo >= 0 && lo < p.before[d]) cand[d][count[d]++] = lo;
      if (hi >= p.xs[d] && hi < p.xs[d] + p.after[d]) cand[d][count[d]++] = hi + p.before[d];
      pick[d] = 0;
    }
    T acc = (T)0;
    for (;;) {
      long at = 0;
      for (long d = 0; d < p.nd; ++d) at = at * p.ys[d] + cand[d][pick[d]];
      acc += dy[at];
      long d = p.nd - 1;
      while (d >= 0 && ++pick[d] == count[d]) pick[d--] = 0;
      if (d < 0) break;
    }
    dx[e] = acc;
  }
}

/* The batch side [nb * prod(block), blocked (bs)..., rest] against the space side [nb, spatial (xs)..., rest]:
   to_space 0 fills batch (space_to_batch_nd, zero in the padding), 1 fills space (batch_to_space_nd). */
IR_KERNEL void space_batch(IR_ARRAY(T, space), IR_ARRAY(T, batch), const nx_dims p, const long n, const long to_space) {
  IR_OFFSET(space);
  IR_OFFSET(batch);
  IR_THREAD_LOOP(e, n) {
    const long r = e % p.rest;
    long rest = e / p.rest, pos[8], off = 0, inside = 1, at = 0;
    if (!to_space) {
      long o[8];
      for (long d = p.m - 1; d >= 0; --d) {
        o[d] = rest % p.ys[d];
        rest /= p.ys[d];
      }
      long blk = rest / p.nb;
      at = rest % p.nb;
      for (long d = p.m - 1; d >= 0; --d) {
        pos[d] = o[d] * p.block[d] + blk % p.block[d] - p.before[d];
        blk /= p.block[d];
        inside = inside && pos[d] >= 0 && pos[d] < p.xs[d];
      }
      for (long d = 0; d < p.m; ++d) at = at * p.xs[d] + pos[d];
      batch[e] = inside ? space[at * p.rest + r] : (T)0;
    } else {
      for (long d = p.m - 1; d >= 0; --d) {
        pos[d] = rest % p.xs[d] + p.before[d];
        rest /= p.xs[d];
      }
      for (long d = 0; d < p.m; ++d) off = off * p.block[d] + pos[d] % p.block[d];
      at = off * p.nb + rest;
      for (long d = 0; d < p.m; ++d) at = at * p.ys[d] + pos[d] / p.block[d];
      space[e] = batch[at * p.rest + r];
    }
  }
}
