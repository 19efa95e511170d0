/*!
 * \file attention_device.cc
 * \brief The device kernels of fused_attention, fused_attention_grad and _fused_attention_dv:
 * portable C for every device backend (OpenCL, CUDA), the dense formulas of attention.cc's file
 * comment, one work-item per row.
 */
#include <cstdint>
#include <limits>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/attention/attention.h"

namespace ir {
namespace op {
namespace attention {

namespace {

/*
 * The dense formulas (the file comment), one work-item per row: scores are recomputed in each
 * pass over the keys, never stored. Row r of the batch * T rows is (b, i) = (r / t, r % t). The
 * backward kernels take p from each row's maximum and sum (attention_stats), not from lse.
 */
const char kAttentionC[] = R"(
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
)";

const DeviceKernelSource& kAttentionSource =
    RegisterDeviceKernelSource({"attention", kAttentionC, {DType::kFloat32, DType::kFloat64}});

/*! \brief Whether the device takes the dtype (float64 only where it has it); else the node runs on the host. */
bool OnDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
              const std::vector<NDArray>& out) {
  DType dtype = out[0].dtype();
  bool ok = dtype == DType::kFloat32 || (dtype == DType::kFloat64 && dev.SupportsFloat64());
  if (!ok) dev.RunOnHost(attrs, in, out);
  return ok;
}

/*! \brief The launch arguments every kernel ends with. */
}  // namespace

void ProblemArgs(const Problem& g, DType dtype, DeviceArgs* args) {
  args->Value(g.t).Value(g.s).Value(g.d).Value(g.e).Value(g.offset).Value(int64_t{g.causal});
  args->Value(int64_t{g.mask_form}).Scalar(dtype, g.scale).Scalar(dtype, g.mask_value);
}

void ForwardDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out)) return;
  const Problem g = MakeProblem(attrs, in[0].shape(), in[2].shape());
  if (g.batch == 0 || g.t == 0) return;
  if (g.s == 0) {
    dev.Fill(out[0], 0);
    dev.Fill(out[1], -std::numeric_limits<double>::infinity());
    return;
  }
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(in[2]).Array(out[0]).Array(out[1]).Value(g.batch * g.t);
  ProblemArgs(g, in[0].dtype(), &args);
  dev.Launch(kAttentionSource, in[0].dtype(), "attention_forward", args, DeviceLaunch::Threads(g.batch * g.t));
}

/*! \brief The rows' score maxima and reciprocal sums (attention_stats) into new device arrays. */
void RowStats(DeviceKernelContext& dev, const Problem& g, DType dtype, const NDArray& q, const NDArray& k,
              NDArray* rmax, NDArray* rinv) {
  *rmax = NDArray(Shape{g.batch * g.t}, dtype, dev.op_context().device);
  *rinv = NDArray(Shape{g.batch * g.t}, dtype, dev.op_context().device);
  DeviceArgs args;
  args.Array(q).Array(k).Array(*rmax).Array(*rinv).Value(g.batch * g.t);
  ProblemArgs(g, dtype, &args);
  dev.Launch(kAttentionSource, dtype, "attention_stats", args, DeviceLaunch::Threads(g.batch * g.t));
}

void BackwardDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out)) return;
  const Problem g = MakeProblem(attrs, in[1].shape(), in[3].shape());
  if (g.batch == 0) return;
  if (g.t == 0 || g.s == 0) {
    for (const NDArray& x : out) {
      if (x.Size() > 0) dev.Fill(x, 0);
    }
    return;
  }
  const DType dtype = in[0].dtype();
  NDArray rmax, rinv;
  RowStats(dev, g, dtype, in[1], in[2], &rmax, &rinv);
  for (int64_t keys_mode = 0; keys_mode < 2; ++keys_mode) {
    const int64_t total = g.batch * (keys_mode ? g.s : g.t);
    DeviceArgs args;
    for (int i = 0; i < 5; ++i) args.Array(in[i]);
    args.Array(rmax).Array(rinv).Array(out[0]).Array(out[1]).Array(out[2]).Value(total).Value(keys_mode);
    ProblemArgs(g, dtype, &args);
    dev.Launch(kAttentionSource, dtype, "attention_backward", args, DeviceLaunch::Threads(total));
  }
  if (!g.with_dv) dev.Fill(out[2], 0);
}

/*! \brief _fused_attention_dv on a device: the rows' statistics (attention_stats), then attention_dv. */
void DvDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
              const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out)) return;
  const Problem g = MakeProblem(attrs, in[1].shape(), out[0].shape());
  if (g.batch == 0 || g.s == 0 || g.e == 0) return;
  if (g.t == 0) {
    dev.Fill(out[0], 0);
    return;
  }
  const DType dtype = in[0].dtype();
  NDArray rmax, rinv;
  RowStats(dev, g, dtype, in[1], in[2], &rmax, &rinv);
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(in[2]).Array(rmax).Array(rinv).Array(out[0]).Value(g.batch * g.s);
  ProblemArgs(g, dtype, &args);
  dev.Launch(kAttentionSource, dtype, "attention_dv", args, DeviceLaunch::Threads(g.batch * g.s));
}

}  // namespace attention
}  // namespace op
}  // namespace ir
