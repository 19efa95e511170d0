/* ir: hand-written OpenCL kernels for element type float64 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define IR_HAS_FP64 1
#define T double
#define T_LOWEST (-(double)INFINITY)
#define T_HIGHEST ((double)INFINITY)
#define IR_T_FLOAT 1
#define IR_T_NUMERIC 1
#define IR_T_IS_DOUBLE 1
#define IR_UNIT_SCALE (1.0 / 9007199254740992.0)

/* Separate multiplies and adds, as the CPU kernels compute them. */
#pragma OPENCL FP_CONTRACT OFF

typedef struct { long ndim; long extent[8]; long stride[8]; } ir_strided;

/* The geometry of a convolution or pooling window (see WindowArg). */
typedef struct {
  long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  long xs[4];
  long ys[4];
} ir_window;

/* Offset of element i (row-major over w.extent) of a strided walk. */
inline long ir_offset(const ir_strided w, long i) {
  long offset = 0;
  for (int d = (int)w.ndim - 1; d >= 0; --d) {
    offset += (i % w.extent[d]) * w.stride[d];
    i /= w.extent[d];
  }
  return offset;
}

/* ---- array ---- */

/* dst[i] = src[offset of i in walk] for i < n. */
__kernel void strided_copy(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                           const ir_strided walk, const long n) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)];
}

/* out[(o * depth + d) * inner + k] = indices[o * inner + k] == d ? on : off. */
#define IR_ONE_HOT(NAME, I)                                                                          \
  __kernel void NAME(__global const I* indices, const long indices_offset, __global T* out,          \
                     const long out_offset, const long depth, const long inner, const T on,          \
                     const T off, const long n) {                                                    \
    indices += indices_offset;                                                                       \
    out += out_offset;                                                                               \
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {                                \
      const long k = i % inner, d = i / inner % depth, o = i / (inner * depth);                      \
      out[i] = (long)indices[o * inner + k] == d ? on : off;                                         \
    }                                                                                                \
  }
IR_ONE_HOT(one_hot_i32, int)
IR_ONE_HOT(one_hot_i64, long)

/* ---- conv ---- */

inline long ir_at(const long s[4], const long n, const long c, const long h, const long w) {
  return n * s[0] + c * s[1] + h * s[2] + w * s[3];
}

/* y[n, o, oy, ox] = sum over (i, j, c) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw] w[i, j, c, o]. */
__kernel void conv2d(__global const T* x, const long x_offset, __global const T* w, const long w_offset,
                     __global T* y, const long y_offset, const ir_window g) {
  x += x_offset;
  w += w_offset;
  y += y_offset;
  const long total = g.n * g.oc * g.oh * g.ow;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long ox = idx % g.ow, oy = idx / g.ow % g.oh, o = idx / (g.ow * g.oh) % g.oc, n = idx / (g.ow * g.oh * g.oc);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ih = oy * g.sh - g.pad_top + i * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long iw = ox * g.sw - g.pad_left + j * g.dw;
        if (iw < 0 || iw >= g.w) continue;
        const __global T* wp = w + (i * g.kw + j) * g.c * g.oc + o;
        const __global T* xp = x + ir_at(g.xs, n, 0, ih, iw);
        for (long c = 0; c < g.c; ++c) acc += xp[c * g.xs[1]] * wp[c * g.oc];
      }
    }
    y[ir_at(g.ys, n, o, oy, ox)] = acc;
  }
}

/* dx[n, c, ih, iw] = sum over the (i, j, o) whose window position lands on (ih, iw) of
   dy[n, o, oy, ox] w[i, j, c, o]. */
__kernel void conv2d_backprop_input(__global const T* dy, const long dy_offset, __global const T* w,
                                    const long w_offset, __global T* dx, const long dx_offset, const ir_window g) {
  dy += dy_offset;
  w += w_offset;
  dx += dx_offset;
  const long total = g.n * g.c * g.h * g.w;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long iw = idx % g.w, ih = idx / g.w % g.h, c = idx / (g.w * g.h) % g.c, n = idx / (g.w * g.h * g.c);
    T acc = (T)0;
    for (long i = 0; i < g.kh; ++i) {
      const long ty = ih + g.pad_top - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (long j = 0; j < g.kw; ++j) {
        const long tx = iw + g.pad_left - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const __global T* wp = w + ((i * g.kw + j) * g.c + c) * g.oc;
        const __global T* dyp = dy + ir_at(g.ys, n, 0, ty / g.sh, tx / g.sw);
        for (long o = 0; o < g.oc; ++o) acc += dyp[o * g.ys[1]] * wp[o];
      }
    }
    dx[ir_at(g.xs, n, c, ih, iw)] = acc;
  }
}

/* dw[i, j, c, o] = sum over (n, oy, ox) of x[n, c, oy*sh - pad_top + i*dh, ox*sw - pad_left + j*dw]
   dy[n, o, oy, ox]. */
__kernel void conv2d_backprop_filter(__global const T* x, const long x_offset, __global const T* dy,
                                     const long dy_offset, __global T* dw, const long dw_offset, const ir_window g) {
  x += x_offset;
  dy += dy_offset;
  dw += dw_offset;
  const long total = g.kh * g.kw * g.c * g.oc;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long o = idx % g.oc, c = idx / g.oc % g.c, j = idx / (g.oc * g.c) % g.kw, i = idx / (g.oc * g.c * g.kw);
    T acc = (T)0;
    for (long n = 0; n < g.n; ++n) {
      for (long oy = 0; oy < g.oh; ++oy) {
        const long ih = oy * g.sh - g.pad_top + i * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        for (long ox = 0; ox < g.ow; ++ox) {
          const long iw = ox * g.sw - g.pad_left + j * g.dw;
          if (iw < 0 || iw >= g.w) continue;
          acc += x[ir_at(g.xs, n, c, ih, iw)] * dy[ir_at(g.ys, n, o, oy, ox)];
        }
      }
    }
    dw[idx] = acc;
  }
}

/* ---- matmul ---- */

/*
 * C[b] = op(A[b]) op(B[b]) for C of [batch, M, N]: a work-group of 16 x 16 work-items per 16 x 16
 * tile of C, stepping through K a 16 x 16 tile of A and of B at a time in local memory. The batch
 * walks give each C matrix's A and B matrix offsets (stride 0 where an operand broadcasts).
 */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void matmul(__global const T* A, const long a_offset, __global const T* B, const long b_offset,
            __global T* C, const long c_offset, const long M, const long N, const long K,
            const int ta, const int tb, const ir_strided a_batch, const ir_strided b_batch) {
  __local T a_tile[16][16];
  __local T b_tile[16][17];
  const int lid = get_local_id(0), ty = lid / 16, tx = lid % 16;
  const long tiles_m = (M + 15) / 16, tiles_n = (N + 15) / 16;
  const long group = get_group_id(0), batch = group / (tiles_m * tiles_n), tile = group % (tiles_m * tiles_n);
  const long row0 = tile / tiles_n * 16, col0 = tile % tiles_n * 16;
  const __global T* a = A + a_offset + ir_offset(a_batch, batch);
  const __global T* b = B + b_offset + ir_offset(b_batch, batch);
  T acc = (T)0;
  for (long k0 = 0; k0 < K; k0 += 16) {
    const long ar = row0 + ty, ak = k0 + tx, bk = k0 + ty, bc = col0 + tx;
    a_tile[ty][tx] = ar < M && ak < K ? (ta ? a[ak * M + ar] : a[ar * K + ak]) : (T)0;
    b_tile[ty][tx] = bk < K && bc < N ? (tb ? b[bc * K + bk] : b[bk * N + bc]) : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < 16; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long row = row0 + ty, col = col0 + tx;
  if (row < M && col < N) C[c_offset + (batch * M + row) * N + col] = acc;
}

/* y[i] = x[i] + bias[i / inner % channels]. */
__kernel void bias_add(__global const T* x, const long x_offset, __global const T* bias, const long bias_offset,
                       __global T* y, const long y_offset, const long channels, const long inner, const long n) {
  x += x_offset;
  bias += bias_offset;
  y += y_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + bias[i / inner % channels];
}

/* ---- pool ---- */

/* The window of output cell (oy, ox) clipped to the input: rows [*h0, *h1), columns [*w0, *w1). */
inline void ir_window_of(const ir_window g, const long oy, const long ox, long* h0, long* h1, long* w0, long* w1) {
  const long top = oy * g.sh - g.pad_top, left = ox * g.sw - g.pad_left;
  *h0 = top > 0 ? top : 0;
  *h1 = top + g.kh < g.h ? top + g.kh : g.h;
  *w0 = left > 0 ? left : 0;
  *w1 = left + g.kw < g.w ? left + g.kw : g.w;
}

/* Offset (within the plane) of the first maximum of a clipped window. */
inline long ir_window_argmax(const __global T* plane, const ir_window g, const long h0, const long h1,
                             const long w0, const long w1) {
  long best = h0 * g.xs[2] + w0 * g.xs[3];
  for (long h = h0; h < h1; ++h) {
    for (long w = w0; w < w1; ++w) {
      const long at = h * g.xs[2] + w * g.xs[3];
      if (plane[at] > plane[best]) best = at;
    }
  }
  return best;
}

/* Pooling of every output cell (n, c, oy, ox); avg != 0 averages, else takes the maximum. */
__kernel void pool2d(__global const T* x, const long x_offset, __global T* y, const long y_offset,
                     const ir_window g, const int avg) {
  x += x_offset;
  y += y_offset;
  const long total = g.n * g.c * g.oh * g.ow;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long ox = idx % g.ow, oy = idx / g.ow % g.oh, c = idx / (g.ow * g.oh) % g.c, n = idx / (g.ow * g.oh * g.c);
    const __global T* plane = x + n * g.xs[0] + c * g.xs[1];
    long h0, h1, w0, w1;
    ir_window_of(g, oy, ox, &h0, &h1, &w0, &w1);
    T value;
    if (avg) {
      T sum = (T)0;
      for (long h = h0; h < h1; ++h) {
        for (long w = w0; w < w1; ++w) sum += plane[h * g.xs[2] + w * g.xs[3]];
      }
      value = sum / (T)((h1 - h0) * (w1 - w0));
    } else {
      value = plane[ir_window_argmax(plane, g, h0, h1, w0, w1)];
    }
    y[n * g.ys[0] + c * g.ys[1] + oy * g.ys[2] + ox * g.ys[3]] = value;
  }
}

/*
 * dx[n, c, ih, iw]: the sum over output cells whose window covers (ih, iw) of dy shared evenly
 * (avg != 0), or of dy where (ih, iw) is the window's first maximum in x.
 */
__kernel void pool2d_grad(__global const T* x, const long x_offset, __global const T* dy, const long dy_offset,
                          __global T* dx, const long dx_offset, const ir_window g, const int avg) {
  x += x_offset;
  dy += dy_offset;
  dx += dx_offset;
  const long total = g.n * g.c * g.h * g.w;
  for (long idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
    const long iw = idx % g.w, ih = idx / g.w % g.h, c = idx / (g.w * g.h) % g.c, n = idx / (g.w * g.h * g.c);
    const __global T* plane = x + n * g.xs[0] + c * g.xs[1];
    const long self = ih * g.xs[2] + iw * g.xs[3];
    /* Output rows oy with oy*sh - pad_top <= ih < oy*sh - pad_top + kh, and likewise columns. */
    const long lo_y = ih + g.pad_top - g.kh + 1, lo_x = iw + g.pad_left - g.kw + 1;
    const long oy0 = lo_y <= 0 ? 0 : (lo_y + g.sh - 1) / g.sh, ox0 = lo_x <= 0 ? 0 : (lo_x + g.sw - 1) / g.sw;
    const long oy1 = min((ih + g.pad_top) / g.sh + 1, g.oh), ox1 = min((iw + g.pad_left) / g.sw + 1, g.ow);
    T acc = (T)0;
    for (long oy = oy0; oy < oy1; ++oy) {
      for (long ox = ox0; ox < ox1; ++ox) {
        long h0, h1, w0, w1;
        ir_window_of(g, oy, ox, &h0, &h1, &w0, &w1);
        const T d = dy[n * g.ys[0] + c * g.ys[1] + oy * g.ys[2] + ox * g.ys[3]];
        if (avg) {
          acc += d / (T)((h1 - h0) * (w1 - w0));
        } else if (ir_window_argmax(plane, g, h0, h1, w0, w1) == self) {
          acc += d;
        }
      }
    }
    dx[n * g.xs[0] + c * g.xs[1] + self] = acc;
  }
}

/* ---- random ---- */

/* Philox4x32-10 of counter (index, draw) under key, as random::WordsAt. */
inline uint4 ir_philox(const ulong key, const ulong index, const ulong draw) {
  uint4 c = (uint4)((uint)index, (uint)(index >> 32), (uint)draw, (uint)(draw >> 32));
  uint k0 = (uint)key, k1 = (uint)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = (uint4)(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

/* 24 random bits (float32 elements) or 53 (float64 elements): the integer behind UniformAt. */
inline ulong ir_uniform_bits(const uint4 w) {
#if IR_T_IS_DOUBLE
  return ((ulong)w.x << 21) ^ (w.y >> 11);
#else
  return w.x >> 8;
#endif
}

#if IR_HAS_FP64
typedef double ir_real;
#else
typedef float ir_real;
#endif

/* random::UnitDouble */
inline ir_real ir_unit(const uint high, const uint low) {
  return (ir_real)(((ulong)high << 21) ^ (low >> 11)) * (ir_real)(1.0 / 9007199254740992.0);
}

/* The standard normal of element index, draw `draw` (random::NormalAt). */
inline ir_real ir_normal(const ulong key, const ulong index, const ulong draw) {
  const uint4 w = ir_philox(key, index / 2, draw);
  const ir_real u1 = (ir_real)1 - ir_unit(w.x, w.y), u2 = ir_unit(w.z, w.w);
  const ir_real radius = sqrt((ir_real)-2 * log(u1)), angle = (ir_real)6.283185307179586476925 * u2;
  return index % 2 == 0 ? radius * cos(angle) : radius * sin(angle);
}

/* lo + u * (hi - lo) with u the element's uniform in [0, 1), kept below hi as the CPU does. */
__kernel void random_uniform(__global T* out, const long out_offset, const long n, const ulong key, const T lo,
                             const T hi, const T below_hi) {
  out += out_offset;
  const T width = hi - lo;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const T u = (T)ir_uniform_bits(ir_philox(key, (ulong)i, 0)) * IR_UNIT_SCALE;
    const T v = lo + u * width;
    out[i] = v < hi || !(hi > lo) ? v : below_hi;
  }
}

__kernel void random_normal(__global T* out, const long out_offset, const long n, const ulong key,
                            const ir_real mean, const ir_real stddev, const int truncated) {
  out += out_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    ir_real z = ir_normal(key, (ulong)i, 0);
    for (ulong draw = 1; truncated && fabs(z) > (ir_real)2; ++draw) z = ir_normal(key, (ulong)i, draw);
    out[i] = (T)(mean + stddev * z);
  }
}

/* mask = scale where the element's uniform bits are below keep_bits (u < keep_prob), else 0; y = x * mask. */
__kernel void dropout(__global const T* x, const long x_offset, __global T* y, const long y_offset,
                      __global T* mask, const long mask_offset, const long n, const ulong key,
                      const ulong keep_bits, const T scale, const int active) {
  x += x_offset;
  y += y_offset;
  mask += mask_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const T m = !active ? (T)1 : ir_uniform_bits(ir_philox(key, (ulong)i, 0)) < keep_bits ? scale : (T)0;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

/* ---- reduce ---- */

#define IR_SUM(a, b) ((a) + (b))
#define IR_PROD(a, b) ((a) * (b))
#define IR_MAX(a, b) ((b) > (a) ? (b) : (a))
#define IR_MIN(a, b) ((b) < (a) ? (b) : (a))

/* acc / count, as the CPU's mean: an empty integer mean is 0. */
inline T ir_mean(const T acc, const long count) {
#if IR_T_FLOAT
  return acc / (T)count;
#else
  return count == 0 ? (T)0 : acc / (T)count;
#endif
}

#define IR_DEFINE_REDUCE(NAME, INIT, COMBINE)                                                         \
  __kernel void NAME(__global const T* x, const long x_offset, __global T* y, const long y_offset,   \
                     const ir_strided kept, const ir_strided red, const long num_kept,               \
                     const long num_red, const int mean) {                                           \
    x += x_offset;                                                                                   \
    y += y_offset;                                                                                   \
    const long e = red.ndim > 0 ? red.extent[red.ndim - 1] : 1;                                      \
    const long s = red.ndim > 0 ? red.stride[red.ndim - 1] : 0;                                      \
    const long rows = e > 0 ? num_red / e : 0;                                                       \
    ir_strided outer = red;                                                                          \
    outer.ndim = red.ndim > 0 ? red.ndim - 1 : 0;                                                    \
    for (long o = get_global_id(0); o < num_kept; o += get_global_size(0)) {                         \
      const long base = ir_offset(kept, o);                                                          \
      T acc = INIT;                                                                                  \
      for (long r = 0; r < rows; ++r) {                                                              \
        const __global T* row = x + base + ir_offset(outer, r);                                      \
        for (long j0 = 0; j0 < e; j0 += 256) {                                                       \
          const long j1 = j0 + 256 < e ? j0 + 256 : e;                                               \
          T block = INIT;                                                                            \
          for (long j = j0; j < j1; ++j) block = COMBINE(block, row[j * s]);                         \
          acc = COMBINE(acc, block);                                                                 \
        }                                                                                            \
      }                                                                                              \
      y[o] = mean ? ir_mean(acc, num_red) : acc;                                                     \
    }                                                                                                \
  }                                                                                                  \
  __kernel __attribute__((reqd_work_group_size(64, 1, 1))) void NAME##_group(                      \
      __global const T* x, const long x_offset, __global T* y, const long y_offset,                  \
      const ir_strided kept, const ir_strided red, const long num_kept, const long num_red,          \
      const int mean) {                                                                              \
    __local T partial[64];                                                                           \
    x += x_offset;                                                                                   \
    y += y_offset;                                                                                   \
    const int lid = get_local_id(0);                                                                 \
    for (long o = get_group_id(0); o < num_kept; o += get_num_groups(0)) {                           \
      const long base = ir_offset(kept, o);                                                          \
      T acc = INIT;                                                                                  \
      for (long r = lid; r < num_red; r += 64) acc = COMBINE(acc, x[base + ir_offset(red, r)]);      \
      partial[lid] = acc;                                                                            \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
      for (int step = 32; step > 0; step >>= 1) {                                                    \
        if (lid < step) partial[lid] = COMBINE(partial[lid], partial[lid + step]);                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      }                                                                                              \
      if (lid == 0) y[o] = mean ? ir_mean(partial[0], num_red) : partial[0];                         \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    }                                                                                                \
  }

IR_DEFINE_REDUCE(reduce_sum, (T)0, IR_SUM)
IR_DEFINE_REDUCE(reduce_prod, (T)1, IR_PROD)
IR_DEFINE_REDUCE(reduce_max, T_LOWEST, IR_MAX)
IR_DEFINE_REDUCE(reduce_min, T_HIGHEST, IR_MIN)

/* dst[i] = src[offset of i in walk] / divisor: a reduction's result spread back over its axes. */
__kernel void broadcast_divide(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                               const ir_strided walk, const long n, const T divisor) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)] / divisor;
}

/* out[o * inner + j] = index of the first extremum of x[o, :, j] (x viewed as [outer, n, inner]). */
#define IR_DEFINE_ARG_REDUCE(NAME, BETTER)                                                           \
  __kernel void NAME(__global const T* x, const long x_offset, __global long* out, const long out_offset, \
                     const long outer, const long n, const long inner) {                            \
    x += x_offset;                                                                                   \
    out += out_offset;                                                                               \
    for (long o = get_global_id(0); o < outer * inner; o += get_global_size(0)) {                    \
      const __global T* base = x + o / inner * n * inner + o % inner;                                \
      T best = base[0];                                                                              \
      long index = 0;                                                                                \
      for (long i = 1; i < n; ++i) {                                                                 \
        const T v = base[i * inner];                                                                 \
        if (v BETTER best) {                                                                         \
          best = v;                                                                                  \
          index = i;                                                                                 \
        }                                                                                            \
      }                                                                                              \
      out[o] = index;                                                                                \
    }                                                                                                \
  }
IR_DEFINE_ARG_REDUCE(argmax, >)
IR_DEFINE_ARG_REDUCE(argmin, <)

/* ---- softmax ---- */

/* softmax (or log_softmax when use_log) of x viewed as [outer, n, inner], along n. y may be x. */
__kernel void softmax(__global const T* x, const long x_offset, __global T* y, const long y_offset,
                      const long outer, const long n, const long inner, const int use_log) {
  x += x_offset;
  y += y_offset;
  for (long row = get_global_id(0); row < outer * inner; row += get_global_size(0)) {
    const long base = row / inner * n * inner + row % inner;
    T m = x[base];
    for (long j = 1; j < n; ++j) m = max(m, x[base + j * inner]);
    T s = (T)0;
    for (long j = 0; j < n; ++j) s += exp(x[base + j * inner] - m);
    if (use_log) {
      const T shift = m + log(s);
      for (long j = 0; j < n; ++j) y[base + j * inner] = x[base + j * inner] - shift;
    } else {
      const T inv = (T)1 / s;
      for (long j = 0; j < n; ++j) y[base + j * inner] = exp(x[base + j * inner] - m) * inv;
    }
  }
}

/*
 * Row i of [rows, classes] logits: with lse = log sum e^x, loss = sum_j p_j (lse - x_j) and
 * backprop = softmax(x) - p, where p is the label distribution (probs, or one-hot of label).
 */
inline void ir_cross_entropy(const __global T* x, const __global T* probs, const long label, const long classes,
                             __global T* loss, __global T* backprop) {
  T m = x[0];
  for (long j = 1; j < classes; ++j) m = max(m, x[j]);
  T s = (T)0;
  for (long j = 0; j < classes; ++j) s += exp(x[j] - m);
  const T lse = m + log(s);
  T total = (T)0;
  for (long j = 0; j < classes; ++j) {
    const T p = probs != 0 ? probs[j] : (T)(j == label);
    total += p * (lse - x[j]);
    backprop[j] = exp(x[j] - lse) - p;
  }
  *loss = probs == 0 && (label < 0 || label >= classes) ? (T)NAN : total;
}

__kernel void softmax_cross_entropy(__global const T* x, const long x_offset, __global const T* labels,
                                    const long labels_offset, __global T* loss, const long loss_offset,
                                    __global T* backprop, const long backprop_offset, const long rows,
                                    const long classes) {
  for (long i = get_global_id(0); i < rows; i += get_global_size(0)) {
    ir_cross_entropy(x + x_offset + i * classes, labels + labels_offset + i * classes, -1, classes,
                     loss + loss_offset + i, backprop + backprop_offset + i * classes);
  }
}

#define IR_SPARSE_CROSS_ENTROPY(NAME, I)                                                                \
  __kernel void NAME(__global const T* x, const long x_offset, __global const I* labels,                \
                     const long labels_offset, __global T* loss, const long loss_offset,                \
                     __global T* backprop, const long backprop_offset, const long rows,                 \
                     const long classes) {                                                              \
    for (long i = get_global_id(0); i < rows; i += get_global_size(0)) {                                \
      ir_cross_entropy(x + x_offset + i * classes, 0, (long)labels[labels_offset + i], classes,         \
                       loss + loss_offset + i, backprop + backprop_offset + i * classes);               \
    }                                                                                                   \
  }
IR_SPARSE_CROSS_ENTROPY(sparse_softmax_cross_entropy_i32, int)
IR_SPARSE_CROSS_ENTROPY(sparse_softmax_cross_entropy_i64, long)

/* ---- state ---- */

__kernel void assign_add(__global T* ref, const long ref_offset, __global const T* value, const long value_offset,
                         const long n) {
  ref += ref_offset;
  value += value_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) ref[i] = ref[i] + value[i];
}

__kernel void assign_sub(__global T* ref, const long ref_offset, __global const T* value, const long value_offset,
                         const long n) {
  ref += ref_offset;
  value += value_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) ref[i] = ref[i] - value[i];
}
