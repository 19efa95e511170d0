/* ir device kernels 'attention' for opencl, T = float32 */
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


/* The unfused graph's score of key j for row i (q row qi, k slice kb). */
IR_FUNC T att_score(IR_GLOBAL const T* qi, IR_GLOBAL const T* kj, const long d, const long i, const long j,
                    const long limit_off, const long causal, const long form, const T scale, const T mask_value) {
  T s = (T)0;
  for (long x = 0; x < d; ++x) s += qi[x] * kj[x];
  s = s * scale;
  if (causal && j >= i + 1 + limit_off) {
    s = form == 1 ? s + mask_value : form == 2 ? s * (T)0 + mask_value : mask_value;
  }
  return s;
}

IR_KERNEL void attention_forward(IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k), IR_CONST_ARRAY(T, v), IR_ARRAY(T, o),
                                 IR_ARRAY(T, lse), const long rows, const long t, const long s, const long d,
                                 const long e, const long limit_off, const long causal, const long form,
                                 const T scale, const T mask_value) {
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(v);
  IR_OFFSET(o);
  IR_OFFSET(lse);
  IR_THREAD_LOOP(r, rows) {
    const long b = r / t, i = r % t;
    IR_GLOBAL const T* qi = q + r * d;
    IR_GLOBAL const T* kb = k + b * s * d;
    IR_GLOBAL const T* vb = v + b * s * e;
    IR_GLOBAL T* oi = o + r * e;
    T m = att_score(qi, kb, d, i, 0, limit_off, causal, form, scale, mask_value);
    for (long j = 1; j < s; ++j) {
      const T x = att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value);
      m = x > m ? x : m;
    }
    T sum = (T)0;
    for (long j = 0; j < s; ++j) sum += ir_exp(att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value) - m);
    const T inv = (T)1 / sum;
    for (long x = 0; x < e; ++x) oi[x] = (T)0;
    for (long j = 0; j < s; ++j) {
      const T p = ir_exp(att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value) - m) * inv;
      for (long x = 0; x < e; ++x) oi[x] += p * vb[j * e + x];
    }
    lse[r] = m + ir_log(sum);
  }
}

/*
 * Row r's score maximum and the reciprocal of its sum of exp(score - max), for the backward
 * kernels' p = exp(score - max) * inv: exp(score - lse) would lose p where lse is large (a row
 * attending no key, whose scores are all near mask_value: lse = -1e9 + log(S) is -1e9 in float32).
 */
IR_KERNEL void attention_stats(IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k), IR_ARRAY(T, rmax), IR_ARRAY(T, rinv),
                               const long rows, const long t, const long s, const long d, const long e,
                               const long limit_off, const long causal, const long form, const T scale,
                               const T mask_value) {
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(rmax);
  IR_OFFSET(rinv);
  IR_THREAD_LOOP(r, rows) {
    const long b = r / t, i = r % t;
    IR_GLOBAL const T* qi = q + r * d;
    IR_GLOBAL const T* kb = k + b * s * d;
    T m = att_score(qi, kb, d, i, 0, limit_off, causal, form, scale, mask_value);
    for (long j = 1; j < s; ++j) {
      const T x = att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value);
      m = x > m ? x : m;
    }
    T sum = (T)0;
    for (long j = 0; j < s; ++j) sum += ir_exp(att_score(qi, kb + j * d, d, i, j, limit_off, causal, form, scale, mask_value) - m);
    rmax[r] = m;
    rinv[r] = (T)1 / sum;
  }
}

/* The gradient of score (i, j) given p = exp(score - max_i) / sum_i, dp = dO_i . v_j, delta = dO_i . O_i. */
IR_FUNC T att_dscore(const T p, const T dp, const T delta, const long i, const long j, const long limit_off,
                     const long causal, const long form, const T scale) {
  T ds = p * (dp - delta);
  if (causal && j >= i + 1 + limit_off) ds = form == 0 ? (T)0 : form == 2 ? ds * (T)0 : ds;
  return ds * scale;
}

/* dq (keys_mode 0: one work-item per query row of the batch * t) or dk and dv (keys_mode 1: one per key row). */
IR_KERNEL void attention_backward(IR_CONST_ARRAY(T, dout), IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k),
                                  IR_CONST_ARRAY(T, v), IR_CONST_ARRAY(T, o), IR_CONST_ARRAY(T, rmax),
                                  IR_CONST_ARRAY(T, rinv), IR_ARRAY(T, dq),
                                  IR_ARRAY(T, dk), IR_ARRAY(T, dv), const long total, const long keys_mode,
                                  const long t, const long s, const long d, const long e, const long limit_off,
                                  const long causal, const long form, const T scale, const T mask_value) {
  IR_OFFSET(dout);
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(v);
  IR_OFFSET(o);
  IR_OFFSET(rmax);
  IR_OFFSET(rinv);
  IR_OFFSET(dq);
  IR_OFFSET(dk);
  IR_OFFSET(dv);
  IR_THREAD_LOOP(r, total) {
    if (!keys_mode) {
      const long b = r / t, i = r % t;
      IR_GLOBAL const T* qi = q + r * d;
      IR_GLOBAL const T* doi = dout + r * e;
      IR_GLOBAL const T* oi = o + r * e;
      IR_GLOBAL T* dqi = dq + r * d;
      T delta = (T)0;
      for (long x = 0; x < e; ++x) delta += doi[x] * oi[x];
      for (long x = 0; x < d; ++x) dqi[x] = (T)0;
      for (long j = 0; j < s; ++j) {
        IR_GLOBAL const T* kj = k + (b * s + j) * d;
        IR_GLOBAL const T* vj = v + (b * s + j) * e;
        const T p = ir_exp(att_score(qi, kj, d, i, j, limit_off, causal, form, scale, mask_value) - rmax[r]) * rinv[r];
        T dp = (T)0;
        for (long x = 0; x < e; ++x) dp += doi[x] * vj[x];
        const T g = att_dscore(p, dp, delta, i, j, limit_off, causal, form, scale);
        for (long x = 0; x < d; ++x) dqi[x] += g * kj[x];
      }
    } else {
      const long b = r / s, j = r % s;
      IR_GLOBAL const T* kj = k + r * d;
      IR_GLOBAL const T* vj = v + r * e;
      IR_GLOBAL T* dkj = dk + r * d;
      IR_GLOBAL T* dvj = dv + r * e;
      for (long x = 0; x < d; ++x) dkj[x] = (T)0;
      for (long x = 0; x < e; ++x) dvj[x] = (T)0;
      for (long i = 0; i < t; ++i) {
        const long row = b * t + i;
        IR_GLOBAL const T* qi = q + row * d;
        IR_GLOBAL const T* doi = dout + row * e;
        IR_GLOBAL const T* oi = o + row * e;
        T delta = (T)0, dp = (T)0;
        for (long x = 0; x < e; ++x) {
          delta += doi[x] * oi[x];
          dp += doi[x] * vj[x];
        }
        const T p = ir_exp(att_score(qi, kj, d, i, j, limit_off, causal, form, scale, mask_value) - rmax[row]) * rinv[row];
        const T g = att_dscore(p, dp, delta, i, j, limit_off, causal, form, scale);
        for (long x = 0; x < d; ++x) dkj[x] += g * qi[x];
        for (long x = 0; x < e; ++x) dvj[x] += p * doi[x];
      }
    }
  }
}

/* _fused_attention_dv: dv_j = sum_i p_ij dO_i, one work-item per key row of the batch * s (rows by attention_stats). */
IR_KERNEL void attention_dv(IR_CONST_ARRAY(T, dout), IR_CONST_ARRAY(T, q), IR_CONST_ARRAY(T, k),
                            IR_CONST_ARRAY(T, rmax), IR_CONST_ARRAY(T, rinv), IR_ARRAY(T, dv), const long total, const long t, const long s, const long d, const long e,
                            const long limit_off, const long causal, const long form, const T scale,
                            const T mask_value) {
  IR_OFFSET(dout);
  IR_OFFSET(q);
  IR_OFFSET(k);
  IR_OFFSET(rmax);
  IR_OFFSET(rinv);
  IR_OFFSET(dv);
  IR_THREAD_LOOP(r, total) {
    const long b = r / s, j = r % s;
    IR_GLOBAL const T* kj = k + r * d;
    IR_GLOBAL T* dvj = dv + r * e;
    for (long x = 0; x < e; ++x) dvj[x] = (T)0;
    for (long i = 0; i < t; ++i) {
      const long row = b * t + i;
      const T p = ir_exp(att_score(q + row * d, kj, d, i, j, limit_off, causal, form, scale, mask_value) - rmax[row]) * rinv[row];
      for (long x = 0; x < e; ++x) dvj[x] += p * dout[row * e + x];
    }
  }
}
