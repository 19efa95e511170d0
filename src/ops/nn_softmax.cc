/*!
 * \file nn_softmax.cc
 * \brief softmax and log_softmax along an axis, and the two softmax cross-entropy losses.
 *
 * Every kernel subtracts the maximum before exponentiating, so large logits do not
 * overflow. Gradients are built from broadcast and reduction ops (multiply, subtract, sum
 * with keepdims, exp, expand_dims), so the fusion pass can fuse them like any other math.
 * The ops themselves are kOpaque: each output element depends on a reduction along the
 * axis broadcast back to the input's shape, which no fusable pattern describes.
 */
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ir/vectorize.h"
#include "ops/nn_common.h"
#include "ops/nn_device.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

struct SoftmaxParam : public dmlc::Parameter<SoftmaxParam> {
  int axis;
  DMLC_DECLARE_PARAMETER(SoftmaxParam) {
    DMLC_DECLARE_FIELD(axis).set_default(-1).describe("The axis to normalize along (negative counts from the end).");
  }
};
DMLC_REGISTER_PARAMETER(SoftmaxParam);

struct CrossEntropyParam : public dmlc::Parameter<CrossEntropyParam> {
  bool general_labels;
  DMLC_DECLARE_PARAMETER(CrossEntropyParam) {
    DMLC_DECLARE_FIELD(general_labels)
        .set_default(false)
        .describe(
            "backprop = softmax * sum(labels) - labels, the true gradient for label rows of any sum (the rewrite "
            "rules set it); default softmax - labels, as TensorFlow, right when rows sum to 1.");
  }
};
DMLC_REGISTER_PARAMETER(CrossEntropyParam);

/*! \brief Whether a (dense) cross-entropy node computes the general backprop. */
template <bool kSparse>
bool GeneralLabels(const NodeAttrs& attrs) {
  return !kSparse && dmlc::get<CrossEntropyParam>(attrs.parsed).general_labels;
}

// ---------------------------------------------------------------- kernels

/*! \brief The maximum of x[0, n), n > 0 (a NaN may or may not win: its row becomes NaN anyway). */
template <typename T>
T RowMax(const T* x, int64_t n) {
  return simd::LaneReduce(x, n, [](T a, T b) { return b > a ? b : a; });
}

/*! \brief The sum of e^(x[j] - m) over j < n; also stores the terms in e[j] when kStore (e may be x). */
template <bool kStore, typename T>
T ExpShiftedSum(const T* x, T m, T* e, int64_t n) {
  return simd::Dispatch(
      [](const T* x, T m, T* e, int64_t n) IR_SIMD_BODY {
        T s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; ++j) {
          T term = simd::Exp(x[j] - m);
          if constexpr (kStore) e[j] = term;
          s += term;
        }
        return s;
      },
      x, m, e, n);
}

/*! \brief y[j] *= scale for j < n. */
template <typename T>
void Scale(T* y, T scale, int64_t n) {
  simd::Dispatch(
      [](T* y, T scale, int64_t n) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) y[j] *= scale;
      },
      y, scale, n);
}

/*! \brief y[j] = (x[j] - a) - b for j < n: (x - m) - log s, which does not round at the magnitude of m. */
template <typename T>
void SubtractTwice(const T* x, T a, T b, T* y, int64_t n) {
  simd::Dispatch(
      [](const T* x, T a, T b, T* y, int64_t n) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - a) - b;
      },
      x, a, b, y, n);
}

/*!
 * \brief softmax (or log_softmax when kLog) of `n` contiguous values: y = e^(x - m) / s or
 * (x - m) - log s, with m the maximum and s = sum e^(x - m). y may alias x. Each pass reads the
 * row from cache: max, exp (into y for softmax) and sum, then scale or shift.
 */
template <bool kLog, typename T>
void SoftmaxRow(const T* x, T* y, int64_t n) {
  T m = RowMax(x, n);
  if (kLog) {
    SubtractTwice(x, m, std::log(ExpShiftedSum<false>(x, m, y, n)), y, n);
  } else {
    Scale(y, T(1) / ExpShiftedSum<true>(x, m, y, n), n);
  }
}

/*!
 * \brief The same along the middle axis of an [n, inner] block (stride `inner`), vectorized
 * across the inner dimension. `m` and `s` are scratch buffers of `inner` values.
 */
template <bool kLog, typename T>
void SoftmaxBlock(const T* x, T* y, int64_t n, int64_t inner, T* m, T* s) {
  simd::Dispatch(
      [](const T* x, T* y, int64_t n, int64_t inner, T* m, T* s) IR_SIMD_BODY {
        std::copy(x, x + inner, m);
        for (int64_t j = 1; j < n; ++j) {
          for (int64_t k = 0; k < inner; ++k) m[k] = std::max(m[k], x[j * inner + k]);
        }
        std::fill(s, s + inner, T(0));
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t k = 0; k < inner; ++k) s[k] += simd::Exp(x[j * inner + k] - m[k]);
        }
        for (int64_t k = 0; k < inner; ++k) s[k] = kLog ? std::log(s[k]) : T(1) / s[k];
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t k = 0; k < inner; ++k) {
            const int64_t i = j * inner + k;
            y[i] = kLog ? (x[i] - m[k]) - s[k] : simd::Exp(x[i] - m[k]) * s[k];
          }
        }
      },
      x, y, n, inner, m, s);
}

template <bool kLog>
void SoftmaxCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int axis = NormalizeAxis(attrs, dmlc::get<SoftmaxParam>(attrs.parsed).axis, shape.ndim());
  int64_t outer = shape.ProdDims(0, axis), n = shape[axis], inner = shape.ProdDims(axis + 1, shape.ndim());
  if (n == 0) return;
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(
        outer,
        [&](int64_t begin, int64_t end) {
          std::vector<T> scratch(inner == 1 ? 0 : 2 * inner);
          for (int64_t o = begin; o < end; ++o) {
            if (inner == 1) {
              SoftmaxRow<kLog>(x + o * n, y + o * n, n);
            } else {
              SoftmaxBlock<kLog>(x + o * n * inner, y + o * n * inner, n, inner, scratch.data(),
                                 scratch.data() + inner);
            }
          }
        },
        std::max<int64_t>(1, 4096 / std::max<int64_t>(n * inner, 1)));
  });
}

bool SoftmaxShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  bool known = ElemwiseShape(attrs, in, out);
  if ((*in)[0].rank_known()) NormalizeAxis(attrs, dmlc::get<SoftmaxParam>(attrs.parsed).axis, (*in)[0].ndim());
  return known;
}

bool FloatElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*in)[0], FloatTypes());
  return known;
}

// ---------------------------------------------------------------- gradients

std::map<std::string, std::string> KeepAxis(const std::string& axis) { return {{"axis", axis}, {"keepdims", "true"}}; }

/*! \brief og's gradient through y = softmax(x) along `axis`: y * (og - sum(og * y, axis)). */
NodeEntry SoftmaxBackward(const NodePtr& n, const std::string& tag, const NodeEntry& y, const NodeEntry& og,
                          const std::string& axis) {
  NodeEntry dot = GradNode("sum", n, tag + "_dot", {GradNode("multiply", n, tag + "_og_y", {og, y})}, KeepAxis(axis));
  return GradNode("multiply", n, tag, {y, GradNode("subtract", n, tag + "_centered", {og, dot})});
}

std::string AxisOf(const NodePtr& n) { return std::to_string(dmlc::get<SoftmaxParam>(n->attrs.parsed).axis); }

std::vector<NodeEntry> SoftmaxGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {SoftmaxBackward(n, "x", Out(n), og[0], AxisOf(n))};
}

/*! \brief og - e^y * sum(og, axis) for y = log_softmax(x). */
std::vector<NodeEntry> LogSoftmaxGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry total = GradNode("sum", n, "og_sum", {og[0]}, KeepAxis(AxisOf(n)));
  NodeEntry scaled = GradNode("multiply", n, "softmax_og_sum", {GradNode("exp", n, "softmax", {Out(n)}), total});
  return {GradNode("subtract", n, "x", {og[0], scaled})};
}

// ---------------------------------------------------------------- cross entropy

/*! \brief Shapes of a loss over [N, C] logits: labels [N, C] (dense) or [N] (sparse). */
template <bool kSparse>
bool CrossEntropyShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape& logits = (*in)[0];
  Shape& labels = (*in)[1];
  Shape& loss = (*out)[0];
  Shape& backprop = (*out)[1];
  AssignShape(attrs, "input 0 (logits)", &logits, Shape::UnknownDims(2));
  AssignShape(attrs, "input 1 (labels)", &labels, Shape::UnknownDims(kSparse ? 1 : 2));
  AssignShape(attrs, "output 0 (loss)", &loss, Shape::UnknownDims(1));
  // Twice around the cycle, so that what any shape knows reaches every other one.
  for (int pass = 0; pass < 2; ++pass) {
    AssignShape(attrs, "output 1 (backprop)", &backprop, logits);
    AssignShape(attrs, "input 1 (labels)", &labels, kSparse ? Shape{backprop[0]} : backprop);
    AssignShape(attrs, "output 0 (loss)", &loss, Shape{labels[0]});
    AssignShape(attrs, "input 0 (logits)", &logits, kSparse ? Shape{loss[0], backprop[1]} : labels);
  }
  return AllKnown(*in, *out);
}

template <bool kSparse>
bool CrossEntropyType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = (*in)[0];
  if (!kSparse) AssignType(attrs, "input 0 (logits)", &dtype, (*in)[1]);
  for (DType t : *out) AssignType(attrs, "input 0 (logits)", &dtype, t);
  CheckDType(attrs, "logits", dtype, FloatTypes());
  CheckDType(attrs, "labels", (*in)[1], kSparse ? DTypeSet{DType::kInt32, DType::kInt64} : FloatTypes());
  (*in)[0] = dtype;
  if (!kSparse) (*in)[1] = dtype;
  for (DType& t : *out) t = dtype;
  return AllKnown(*in, *out);
}

/*!
 * \brief Dense labels: bp[j] = bp[j] * inv - p[j] turns bp = e^(x - m) into softmax - p; returns
 * the loss -sum_j p_j ((x_j - m) - log s).
 */
template <typename T>
T DenseCrossEntropy(const T* x, const T* p, T m, T log_s, T inv, T* bp, int64_t n) {
  return simd::Dispatch(
      [](const T* x, const T* p, T m, T log_s, T inv, T* bp, int64_t n) IR_SIMD_BODY {
        T total = 0;
#pragma omp simd reduction(+ : total)
        for (int64_t j = 0; j < n; ++j) {
          total -= p[j] * ((x[j] - m) - log_s);
          bp[j] = bp[j] * inv - p[j];
        }
        return total;
      },
      x, p, m, log_s, inv, bp, n);
}

/*!
 * \brief loss[i] and backprop[i, :] of one row of logits: with lse = log sum e^x,
 * loss = sum_j p_j (lse - x_j) and backprop = softmax(x) - p, p the row's label distribution
 * (softmax(x) * sum(p) - p when `general`). `label` >= 0 selects a one-hot p, else p is `probs`.
 */
template <typename T>
void CrossEntropyRow(const T* x, const T* probs, int64_t label, int64_t n, bool general, T* loss, T* backprop) {
  if (n == 0) {
    *loss = 0;
    return;
  }
  T m = RowMax(x, n), s = ExpShiftedSum<true>(x, m, backprop, n);
  T log_s = std::log(s), inv = T(1) / s;
  if (label >= 0) {
    Scale(backprop, inv, n);
    backprop[label] -= T(1);
    *loss = -((x[label] - m) - log_s);
  } else {
    T mass = T(1);
    if (general) mass = std::accumulate(probs, probs + n, T(0));
    *loss = DenseCrossEntropy(x, probs, m, log_s, inv * mass, backprop, n);
  }
}

/*! \brief Sparse labels as int64, checked to lie in [0, classes) before any thread starts. */
std::vector<int64_t> CheckedLabels(const NodeAttrs& attrs, const NDArray& labels, int64_t classes) {
  std::vector<int64_t> values(labels.Size());
  if (labels.dtype() == DType::kInt32) {
    std::copy_n(labels.data<int32_t>(), values.size(), values.begin());
  } else {
    std::copy_n(labels.data<int64_t>(), values.size(), values.begin());
  }
  for (size_t i = 0; i < values.size(); ++i) {
    IR_CHECK(values[i] >= 0 && values[i] < classes)
        << NodeDesc(attrs) << ": label " << values[i] << " of row " << i << " is outside [0, " << classes << ")";
  }
  return values;
}

template <bool kSparse>
void CrossEntropyCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  int64_t rows = in[0].shape()[0], classes = in[0].shape()[1];
  std::vector<int64_t> labels = kSparse ? CheckedLabels(attrs, in[1], classes) : std::vector<int64_t>();
  const bool general = GeneralLabels<kSparse>(attrs);
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    const T* x = in[0].data<T>();
    const T* probs = kSparse ? nullptr : in[1].data<T>();
    T* loss = out[0].data<T>();
    T* backprop = out[1].data<T>();
    ParallelFor(
        rows,
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            CrossEntropyRow(x + i * classes, kSparse ? nullptr : probs + i * classes, kSparse ? labels[i] : -1, classes,
                            general, loss + i, backprop + i * classes);
          }
        },
        std::max<int64_t>(1, 4096 / std::max<int64_t>(classes, 1)));
  });
}

/*!
 * \brief Gradients of (loss, backprop): logits get og_loss[:, None] * backprop plus og_backprop
 * through softmax; dense labels get -og_loss[:, None] * log_softmax(logits) - og_backprop.
 */
template <bool kSparse>
std::vector<NodeEntry> CrossEntropyGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry og_loss = GradNode("expand_dims", n, "og_loss", {og[0]}, {{"axis", "1"}});
  NodeEntry d_logits = GradNode("multiply", n, "logits_from_loss", {og_loss, Out(n, 1)});
  NodeEntry d_labels;
  if (!kSparse) {
    NodeEntry log_p = GradNode("log_softmax", n, "log_softmax", {In(n, 0)});
    d_labels = GradNode("negative", n, "labels_from_loss", {GradNode("multiply", n, "og_log_p", {og_loss, log_p})});
  }
  // The backprop output is rarely differentiated; skip its terms when it got no gradient.
  if (!nn::IsZeroGradient(og[1])) {
    NodeEntry softmax = GradNode("softmax", n, "softmax", {In(n, 0)});
    d_logits =
        GradNode("add", n, "logits", {d_logits, SoftmaxBackward(n, "logits_from_backprop", softmax, og[1], "-1")});
    if (!kSparse) d_labels = GradNode("subtract", n, "labels", {d_labels, og[1]});
    if (GeneralLabels<kSparse>(n->attrs)) {
      // backprop = p * sum(y) - y: its logits term scales by sum(y), and y gets sum(og * p) too.
      NodeEntry mass = GradNode("sum", n, "label_mass", {In(n, 1)}, {{"axis", "1"}, {"keepdims", "true"}});
      NodeEntry sb = SoftmaxBackward(n, "general_from_backprop", softmax, og[1], "-1");
      d_logits =
          GradNode("add", n, "logits_general",
                   {d_logits, GradNode("multiply", n, "scaled",
                                       {GradNode("subtract_scalar", n, "mass_m1", {mass}, {{"scalar", "1"}}), sb})});
      NodeEntry og_p = GradNode("sum", n, "og_p", {GradNode("multiply", n, "og_times_p", {og[1], softmax})},
                                {{"axis", "1"}, {"keepdims", "true"}});
      d_labels = GradNode("add", n, "labels_general", {d_labels, og_p});
    }
  }
  return {d_logits, d_labels};
}

// ---------------------------------------------------------------- device kernels

/*
 * The CPU kernels' formulas. A row along the axis of contiguous values (inner == 1, and every
 * cross-entropy row) gets a group that reduces it in shared memory; with inner > 1, each
 * work-item takes one strided row, neighbours reading neighbouring addresses.
 */
const char kSoftmaxC[] = R"(
/* softmax (log_softmax when use_log) of the contiguous rows of x [rows, n]: one group per row. y may be x. */
IR_KERNEL void softmax_rows(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const long rows, const long n, const long use_log) {
  IR_SHARED T s[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_GROUP_LOOP(r, rows) {
    IR_GLOBAL const T* xr = x + r * n;
    IR_GLOBAL T* yr = y + r * n;
    T m = xr[0];
    IR_LOCAL_LOOP(j, n) m = NN_MAX(m, xr[j]);
    NN_GROUP_REDUCE(s, m, NN_MAX);
    T sum = (T)0;
    IR_LOCAL_LOOP(j, n) sum += ir_exp(xr[j] - m);
    NN_GROUP_REDUCE(s, sum, NN_ADD);
    /* Each work-item rewrites only the elements it read: safe in place. */
    if (use_log) {
      const T log_s = ir_log(sum);
      IR_LOCAL_LOOP(j, n) yr[j] = (xr[j] - m) - log_s;
    } else {
      const T inv = (T)1 / sum;
      IR_LOCAL_LOOP(j, n) yr[j] = ir_exp(xr[j] - m) * inv;
    }
  }
}

/* The same along the middle axis of x [outer, n, inner], inner > 1: one work-item per (outer, inner). */
IR_KERNEL void softmax_columns(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const long outer, const long n, const long inner,
                               const long use_log) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_THREAD_LOOP(e, outer * inner) {
    const long base = e / inner * n * inner + e % inner;
    T m = x[base];
    for (long j = 1; j < n; ++j) m = NN_MAX(m, x[base + j * inner]);
    T sum = (T)0;
    for (long j = 0; j < n; ++j) sum += ir_exp(x[base + j * inner] - m);
    const T log_s = ir_log(sum), inv = (T)1 / sum;
    for (long j = 0; j < n; ++j) {
      const long at = base + j * inner;
      y[at] = use_log ? (x[at] - m) - log_s : ir_exp(x[at] - m) * inv;
    }
  }
}

/*
 * Row r of logits x [rows, classes], one group per row: with p the label distribution (probs,
 * or one-hot of the int32 or int64 label, the other arrays null), loss = -sum_j p_j log_softmax_j
 * and backprop = softmax - p (softmax * sum(p) - p when general). A label outside [0, classes) makes the row NaN: the CPU's error
 * would need a round trip to the host.
 */
IR_KERNEL void softmax_cross_entropy(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, probs), IR_CONST_ARRAY(int, labels32),
                                     IR_CONST_ARRAY(long, labels64), IR_ARRAY(T, loss), IR_ARRAY(T, backprop),
                                     const long rows, const long classes, const long general, const T nan) {
  IR_SHARED T s[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(probs);
  IR_OFFSET(labels32);
  IR_OFFSET(labels64);
  IR_OFFSET(loss);
  IR_OFFSET(backprop);
  IR_GROUP_LOOP(r, rows) {
    IR_GLOBAL const T* xr = x + r * classes;
    IR_GLOBAL T* bp = backprop + r * classes;
    const long label = labels32 ? (long)labels32[r] : labels64 ? labels64[r] : -1;
    if (!probs && (label < 0 || label >= classes)) {
      IR_LOCAL_LOOP(j, classes) bp[j] = nan;
      if (IR_LOCAL_ID == 0) loss[r] = nan;
      continue;
    }
    T m = xr[0];
    IR_LOCAL_LOOP(j, classes) m = NN_MAX(m, xr[j]);
    NN_GROUP_REDUCE(s, m, NN_MAX);
    T sum = (T)0;
    IR_LOCAL_LOOP(j, classes) sum += ir_exp(xr[j] - m);
    NN_GROUP_REDUCE(s, sum, NN_ADD);
    const T log_s = ir_log(sum);
    T mass = (T)0;
    if (general) {
      IR_LOCAL_LOOP(j, classes) mass += probs[r * classes + j];
      NN_GROUP_REDUCE(s, mass, NN_ADD);
    } else {
      mass = (T)1;
    }
    T total = (T)0;
    IR_LOCAL_LOOP(j, classes) {
      const T p = probs ? probs[r * classes + j] : (T)(j == label);
      const T log_softmax = (xr[j] - m) - log_s;
      total -= p * log_softmax;
      bp[j] = ir_exp(log_softmax) * mass - p;
    }
    NN_GROUP_REDUCE(s, total, NN_ADD);
    if (IR_LOCAL_ID == 0) loss[r] = total;
  }
}
)";

const DeviceKernelSource& kSoftmaxSource = RegisterDeviceKernelSource(
    {"softmax", std::string(nn::kGroupReduceC) + kSoftmaxC, {DType::kFloat32, DType::kFloat64}});

template <bool kLog>
void SoftmaxDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int axis = NormalizeAxis(attrs, dmlc::get<SoftmaxParam>(attrs.parsed).axis, shape.ndim());
  int64_t outer = shape.ProdDims(0, axis), n = shape[axis], inner = shape.ProdDims(axis + 1, shape.ndim());
  if (n == 0) return;
  DeviceArgs args;
  args.Array(in[0]).Array(out[0]);
  if (inner == 1) {
    args.Value(outer).Value(n).Value(int64_t{kLog});
    dev.Launch(kSoftmaxSource, in[0].dtype(), "softmax_rows", args, DeviceLaunch::Groups(outer));
  } else {
    args.Value(outer).Value(n).Value(inner).Value(int64_t{kLog});
    dev.Launch(kSoftmaxSource, in[0].dtype(), "softmax_columns", args, DeviceLaunch::Threads(outer * inner));
  }
}

template <bool kSparse>
void CrossEntropyDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                              const std::vector<NDArray>& out) {
  int64_t rows = in[0].shape()[0], classes = in[0].shape()[1];
  DType dtype = in[0].dtype();
  // No classes: the CPU's loss of an empty sum.
  if (classes == 0) return dev.Fill(out[0], 0);
  DeviceArgs args;
  args.Array(in[0]);
  if (kSparse) {
    args.NullArray();
    if (in[1].dtype() == DType::kInt32) {
      args.Array(in[1]).NullArray();
    } else {
      args.NullArray().Array(in[1]);
    }
  } else {
    args.Array(in[1]).NullArray().NullArray();
  }
  args.Array(out[0]).Array(out[1]).Value(rows).Value(classes);
  args.Value(int64_t{GeneralLabels<kSparse>(attrs)}).Scalar(dtype, std::nan(""));
  dev.Launch(kSoftmaxSource, dtype, "softmax_cross_entropy", args, DeviceLaunch::Groups(rows));
}

/*! \brief softmax, log_softmax: the axis shifted past the leading n. */
std::vector<PforValue> SoftmaxVectorize(PforContext& ctx) {
  auto it = ctx.attrs().dict.find("axis");
  int given = it == ctx.attrs().dict.end() ? -1 : std::stoi(it->second);
  int axis = NormalizeAxis(ctx.attrs(), given, ctx.in_shape(0).ndim());
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", std::to_string(axis + 1))), true}};
}

/*! \brief The losses: rows are independent, so the iterations' rows [n, N, ..] become one batch of n * N rows. */
std::vector<PforValue> CrossEntropyVectorize(PforContext& ctx) {
  NodeEntry logits = ctx.MergeLeading(ctx.Stacked(0), ctx.in_shape(0));
  NodeEntry labels = ctx.MergeLeading(ctx.Stacked(1), ctx.in_shape(1));
  NodeEntry loss = ctx.CopyNode({logits, labels}, ctx.attrs().dict);
  return {PforValue{ctx.SplitLeading(loss, ctx.out_shape(0)), true},
          PforValue{ctx.SplitLeading(NodeEntry{loss.node, 1}, ctx.out_shape(1)), true}};
}

template <bool kSparse>
void CrossEntropyOp(Op& op) {
  op.set_num_inputs(2).set_num_outputs(2).set_input_names({"logits", "labels"});
  if (!kSparse) op.set_param<CrossEntropyParam>();
  op.set_attr<FListOutputNames>("FListOutputNames", [](const NodeAttrs&) {
    return std::vector<std::string>{"loss", "backprop"};
  });
  op.set_attr<FInferShape>("FInferShape", CrossEntropyShape<kSparse>);
  op.set_attr<FInferType>("FInferType", CrossEntropyType<kSparse>);
  op.set_attr<FCompute>("FCompute", CrossEntropyCompute<kSparse>);
  op.set_attr<FDeviceKernel>("FDeviceKernel", CrossEntropyDeviceKernel<kSparse>);
  op.set_attr<FGradient>("FGradient", CrossEntropyGradient<kSparse>);
  op.set_attr<FVectorize>("FVectorize", CrossEntropyVectorize);
  op.set_attr<TOpPattern>("TOpPattern", kOpaque);
}

/*! \brief What softmax and log_softmax share. */
template <bool kLog>
void SoftmaxOp(Op& op) {
  op.set_num_inputs(1).set_input_names({"x"}).set_param<SoftmaxParam>();
  op.set_attr<FInferShape>("FInferShape", SoftmaxShape);
  op.set_attr<FInferType>("FInferType", FloatElemwiseType);
  op.set_attr<FCompute>("FCompute", SoftmaxCompute<kLog>);
  op.set_attr<FDeviceKernel>("FDeviceKernel", SoftmaxDeviceKernel<kLog>);
  op.set_attr<FVectorize>("FVectorize", SoftmaxVectorize);
  op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
    return std::vector<std::pair<int, int>>{{0, 0}};
  });
  op.set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(softmax)
    .describe("e^x / sum(e^x) along `axis`, computed stably (the maximum is subtracted first).")
    .apply(SoftmaxOp<false>)
    .set_attr<FGradient>("FGradient", SoftmaxGradient);

IR_REGISTER_OP(log_softmax)
    .describe("x - log(sum(e^x)) along `axis`, computed stably (the maximum is subtracted first).")
    .apply(SoftmaxOp<true>)
    .set_attr<FGradient>("FGradient", LogSoftmaxGradient);

IR_REGISTER_OP(softmax_cross_entropy_with_logits)
    .describe(
        "Cross entropy of softmax(logits [N, C]) against label distributions [N, C]: outputs loss [N] and "
        "backprop = softmax(logits) - labels [N, C] (TensorFlow SoftmaxCrossEntropyWithLogits).")
    .apply(CrossEntropyOp<false>);

IR_REGISTER_OP(sparse_softmax_cross_entropy_with_logits)
    .describe(
        "Cross entropy of softmax(logits [N, C]) against class indices [N] (int32 or int64, in [0, C)): "
        "outputs loss [N] and backprop = softmax(logits) - one_hot(labels) [N, C].")
    .apply(CrossEntropyOp<true>);

}  // namespace op
}  // namespace ir
