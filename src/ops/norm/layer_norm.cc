/*!
 * \file layer_norm.cc
 * \brief layer_norm and layer_norm_grad: normalization over the last axis, each one kernel.
 *
 * layer_norm(x, gamma, beta) computes, per row of the last axis (C elements), mean = sum(x) / C,
 * var = sum((x - mean)^2) / C, rstd = 1 / sqrt(var + epsilon) and y = (x - mean) * rstd * gamma
 * + beta, as tf.nn.moments over axis -1 followed by the TF1 formula; it also outputs mean and rstd
 * (shape x's without the last axis) so that its gradient needs no second statistics pass.
 * layer_norm_grad gives dx, dgamma and dbeta in one pass per row: with xhat = (x - mean) rstd and
 * g = dy gamma, dx = rstd (g - mean(g) - xhat mean(g xhat)) (+ the terms of the mean and rstd
 * outputs' gradients when they have any), dgamma = sum over rows of dy xhat, dbeta = sum of dy.
 * The CPU kernels are one vectorized pass per row (simd.h) in the element type, as the unfused
 * graph computes; the column sums are per-block partial sums (blocks fixed by the shape) added
 * in double in a fixed order, so results do not depend on the thread count. The device kernels (one launch
 * each) are in this file's library.
 */
#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/nn_common.h"
#include "ops/nn_device_library.h"
#include "ops/op_common.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

struct LayerNormParam : public dmlc::Parameter<LayerNormParam> {
  double epsilon;
  bool stat_grads;
  DMLC_DECLARE_PARAMETER(LayerNormParam) {
    DMLC_DECLARE_FIELD(epsilon).set_default(1e-12).describe("Added to the variance before its square root.");
    DMLC_DECLARE_FIELD(stat_grads)
        .set_default(false)
        .describe("layer_norm_grad only: it also takes the gradients of the mean and rstd outputs (inputs 5, 6).");
  }
};
DMLC_REGISTER_PARAMETER(LayerNormParam);

/*! \brief The per-row shape: x's without its last axis. */
Shape RowShape(const Shape& x) {
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end() - 1);
  return Shape(dims);
}

/*!
 * \brief x (and dy) of rank >= 1; gamma, beta (and dgamma, dbeta) of shape [C], C x's last
 * extent; the row values (mean, rstd and their gradients) of x's shape without the last axis.
 */
bool LayerNormShapes(const NodeAttrs& attrs, const std::vector<std::pair<std::string, Shape*>>& acts,
                     const std::vector<std::pair<std::string, Shape*>>& params,
                     const std::vector<std::pair<std::string, Shape*>>& rows) {
  Shape act;
  for (const auto& s : acts) {
    AssignShape(attrs, s.first, s.second, act);
    act = *s.second;
  }
  IR_CHECK(!act.rank_known() || act.ndim() >= 1)
      << NodeDesc(attrs) << ": " << acts[0].first << " has shape " << act << " but must have rank 1 or more";
  Shape per_channel{act.rank_known() ? act[act.ndim() - 1] : kUnknownDim};
  for (const auto& s : params) {
    AssignShape(attrs, s.first, s.second, per_channel);
    per_channel = *s.second;
  }
  if (act.rank_known()) {
    act[act.ndim() - 1] = per_channel[0];
    for (const auto& s : acts) *s.second = act;
    Shape row = RowShape(act);
    for (const auto& s : rows) AssignShape(attrs, s.first, s.second, row);
  }
  for (const auto& s : params) *s.second = per_channel;
  return act.is_known() && per_channel.is_known();
}

bool LayerNormShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return LayerNormShapes(attrs, {{"input 0 (x)", &(*in)[0]}, {"output 0 (y)", &(*out)[0]}},
                         {{"input 1 (gamma)", &(*in)[1]}, {"input 2 (beta)", &(*in)[2]}},
                         {{"output 1 (mean)", &(*out)[1]}, {"output 2 (rstd)", &(*out)[2]}});
}

bool LayerNormGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<std::pair<std::string, Shape*>> rows = {{"input 3 (mean)", &(*in)[3]}, {"input 4 (rstd)", &(*in)[4]}};
  if (in->size() == 7) {
    rows.push_back({"input 5 (dmean)", &(*in)[5]});
    rows.push_back({"input 6 (drstd)", &(*in)[6]});
  }
  return LayerNormShapes(
      attrs, {{"input 0 (dy)", &(*in)[0]}, {"input 1 (x)", &(*in)[1]}, {"output 0 (dx)", &(*out)[0]}},
      {{"input 2 (gamma)", &(*in)[2]}, {"output 1 (dgamma)", &(*out)[1]}, {"output 2 (dbeta)", &(*out)[2]}}, rows);
}

/*! \brief Every input and output of one float type. */
bool LayerNormType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*in)[0], FloatTypes());
  return known;
}

/*! \brief Rows (x's shape without the last axis) and their length C. */
void RowsOf(const NDArray& x, int64_t* rows, int64_t* cols) {
  *cols = x.shape().ndim() == 0 ? 1 : x.shape()[x.shape().ndim() - 1];
  *rows = RowShape(x.shape()).Size();
}

/*! \brief Rows per ParallelFor task: about 32K elements. */
int64_t RowGrain(int64_t cols) { return std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(cols, 1)); }

/*! \brief One row of layer_norm: mean, rstd and y (two statistics passes, then one multiply-add per element). */
template <typename T>
void NormRow(const T* x, const T* gamma, const T* beta, T* y, int64_t n, T eps, T* mean, T* rstd) {
  simd::Dispatch(
      [](const T* x, const T* gamma, const T* beta, T* y, int64_t n, T eps, T* mean, T* rstd) IR_SIMD_BODY {
        T sum = 0, sq = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t c = 0; c < n; ++c) sum += x[c];
        const T m = sum / static_cast<T>(n);  // NaN for empty rows, as the mean op
#pragma omp simd reduction(+ : sq)
        for (int64_t c = 0; c < n; ++c) sq += (x[c] - m) * (x[c] - m);
        const T inv = T(1) / std::sqrt(sq / static_cast<T>(n) + eps);
#pragma omp simd
        for (int64_t c = 0; c < n; ++c) y[c] = (x[c] - m) * inv * gamma[c] + beta[c];
        *mean = m;
        *rstd = inv;
      },
      x, gamma, beta, y, n, eps, mean, rstd);
}

/*!
 * \brief One row of layer_norm_grad: dx, and the row's terms added to the block's dgamma and
 * dbeta partial sums. em and er are the mean and rstd outputs' gradient terms (0 without).
 */
template <typename T>
void NormGradRow(const T* x, const T* dy, const T* gamma, T* dx, T* dg, T* db, int64_t n, T m, T inv, T em, T er) {
  simd::Dispatch(
      [](const T* x, const T* dy, const T* gamma, T* dx, T* dg, T* db, int64_t n, T m, T inv, T em, T er) IR_SIMD_BODY {
        T sg = 0, sgx = 0;
#pragma omp simd reduction(+ : sg, sgx)
        for (int64_t c = 0; c < n; ++c) {
          const T xh = (x[c] - m) * inv, d = dy[c], g = d * gamma[c];
          sg += g;
          sgx += g * xh;
          dg[c] += d * xh;
          db[c] += d;
        }
        const T count = static_cast<T>(std::max<int64_t>(n, 1));
        const T mg = sg / count, mgx = sgx / count;
#pragma omp simd
        for (int64_t c = 0; c < n; ++c) {
          const T xh = (x[c] - m) * inv;
          dx[c] = inv * (dy[c] * gamma[c] - mg - xh * mgx) + em + er * xh;
        }
      },
      x, dy, gamma, dx, dg, db, n, m, inv, em, er);
}

template <typename T>
void LayerNormKernel(double eps, const NDArray& x, const NDArray& gamma, const NDArray& beta, const NDArray& y,
                     const NDArray& mean, const NDArray& rstd) {
  int64_t rows, cols;
  RowsOf(x, &rows, &cols);
  const T *px = x.data<T>(), *pg = gamma.data<T>(), *pb = beta.data<T>();
  T *py = y.data<T>(), *pm = mean.data<T>(), *pr = rstd.data<T>();
  ParallelFor(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          NormRow<T>(px + r * cols, pg, pb, py + r * cols, cols, static_cast<T>(eps), pm + r, pr + r);
        }
      },
      RowGrain(cols));
}

/*! \brief Blocks of rows whose dgamma/dbeta partial sums are kept apart: fixed by the shape only. */
int64_t GradBlocks(int64_t rows, int64_t cols) {
  return std::max<int64_t>(1, std::min<int64_t>({rows, 64, rows * cols / 4096}));
}

template <typename T>
void LayerNormGradKernel(const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  int64_t rows, cols;
  RowsOf(in[1], &rows, &cols);
  const T *pdy = in[0].data<T>(), *px = in[1].data<T>(), *pg = in[2].data<T>();
  const T *pm = in[3].data<T>(), *pr = in[4].data<T>();
  const T* pdm = in.size() == 7 ? in[5].data<T>() : nullptr;
  const T* pdr = in.size() == 7 ? in[6].data<T>() : nullptr;
  T *pdx = out[0].data<T>(), *pdg = out[1].data<T>(), *pdb = out[2].data<T>();
  const int64_t blocks = GradBlocks(rows, cols);
  std::vector<T> partial(static_cast<size_t>(blocks * cols * 2), T(0));
  const T n = static_cast<T>(std::max<int64_t>(cols, 1));
  ParallelFor(
      blocks,
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          T* dg = partial.data() + b * cols * 2;
          for (int64_t r = rows * b / blocks; r < rows * (b + 1) / blocks; ++r) {
            const T inv = pr[r];
            const T em = pdm ? pdm[r] / n : T(0), er = pdr ? -pdr[r] * inv * inv / n : T(0);
            NormGradRow<T>(px + r * cols, pdy + r * cols, pg, pdx + r * cols, dg, dg + cols, cols, pm[r], inv, em, er);
          }
        }
      },
      1);
  for (int64_t c = 0; c < cols; ++c) {
    double dg = 0, db = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      dg += partial[b * cols * 2 + c];
      db += partial[b * cols * 2 + cols + c];
    }
    pdg[c] = static_cast<T>(dg);
    pdb[c] = static_cast<T>(db);
  }
}

void LayerNormCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  double eps = dmlc::get<LayerNormParam>(attrs.parsed).epsilon;
  IR_FLOAT_SWITCH(in[0].dtype(), T, LayerNormKernel<T>(eps, in[0], in[1], in[2], out[0], out[1], out[2]));
}

void LayerNormGradCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out) {
  IR_FLOAT_SWITCH(in[0].dtype(), T, LayerNormGradKernel<T>(in, out));
}

/*!
 * \brief The gradient: one layer_norm_grad node. When the mean and rstd outputs received
 * gradients (not the Gradient pass's zeros_like), they are inputs 5 and 6 of it.
 */
std::vector<NodeEntry> LayerNormGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  auto is_zero = [](const NodeEntry& e) {
    return e.node && !e.node->is_variable() && e.node->op()->name == "zeros_like";
  };
  std::vector<NodeEntry> inputs = {og[0], In(n, 0), In(n, 1), Out(n, 1), Out(n, 2)};
  std::map<std::string, std::string> attrs = {
      {"epsilon", n->attrs.dict.count("epsilon") ? n->attrs.dict.at("epsilon") : "1e-12"}};
  if (!is_zero(og[1]) || !is_zero(og[2])) {
    inputs.push_back(og[1]);
    inputs.push_back(og[2]);
    attrs["stat_grads"] = "1";
  }
  NodeEntry grad = GradNode("layer_norm_grad", n, "layer_norm_grad", inputs, attrs);
  return {Out(grad.node, 0), Out(grad.node, 1), Out(grad.node, 2)};
}

}  // namespace

/*! \brief The device kernels, as the CPU kernels (T accumulators). */
const char kLayerNormDeviceC[] = R"(
/* One work-item per row: mean, variance (two passes), y, mean and rstd. */
IR_KERNEL void layer_norm(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, gamma), IR_CONST_ARRAY(T, beta), IR_ARRAY(T, y),
                          IR_ARRAY(T, mean), IR_ARRAY(T, rstd), const long rows, const long cols, const T eps) {
  IR_OFFSET(x);
  IR_OFFSET(gamma);
  IR_OFFSET(beta);
  IR_OFFSET(y);
  IR_OFFSET(mean);
  IR_OFFSET(rstd);
  IR_THREAD_LOOP(r, rows) {
    IR_GLOBAL const T* xr = x + r * cols;
    T sum = (T)0, sq = (T)0;
    for (long c = 0; c < cols; ++c) sum += xr[c];
    const T m = sum / (T)cols; /* NaN for empty rows, as the mean op */
    for (long c = 0; c < cols; ++c) sq += (xr[c] - m) * (xr[c] - m);
    const T inv = (T)1 / ir_sqrt(sq / (T)cols + eps);
    for (long c = 0; c < cols; ++c) y[r * cols + c] = (xr[c] - m) * inv * gamma[c] + beta[c];
    mean[r] = m;
    rstd[r] = inv;
  }
}

/* Work-items [0, rows) give the rows of dx, [rows, rows + cols) the columns of dgamma and dbeta;
   dmean and drstd are read when stat (the gradients of the mean and rstd outputs). */
IR_KERNEL void layer_norm_grad(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, gamma),
                               IR_CONST_ARRAY(T, mean), IR_CONST_ARRAY(T, rstd), IR_CONST_ARRAY(T, dmean),
                               IR_CONST_ARRAY(T, drstd), IR_ARRAY(T, dx), IR_ARRAY(T, dgamma), IR_ARRAY(T, dbeta),
                               const long rows, const long cols, const long stat) {
  IR_OFFSET(dy);
  IR_OFFSET(x);
  IR_OFFSET(gamma);
  IR_OFFSET(mean);
  IR_OFFSET(rstd);
  IR_OFFSET(dmean);
  IR_OFFSET(drstd);
  IR_OFFSET(dx);
  IR_OFFSET(dgamma);
  IR_OFFSET(dbeta);
  IR_THREAD_LOOP(e, rows + cols) {
    if (e < rows) {
      const long base = e * cols;
      const T m = mean[e], inv = rstd[e];
      T sg = (T)0, sgx = (T)0;
      for (long c = 0; c < cols; ++c) {
        const T g = dy[base + c] * gamma[c];
        sg += g;
        sgx += g * (x[base + c] - m) * inv;
      }
      const T n = cols > 0 ? (T)cols : (T)1;
      const T mg = sg / n, mgx = sgx / n;
      const T em = stat ? dmean[e] / n : (T)0, er = stat ? -drstd[e] * inv * inv / n : (T)0;
      for (long c = 0; c < cols; ++c) {
        const T xh = (x[base + c] - m) * inv;
        dx[base + c] = inv * (dy[base + c] * gamma[c] - mg - xh * mgx) + em + er * xh;
      }
    } else {
      const long c = e - rows;
      T dg = (T)0, db = (T)0;
      for (long r = 0; r < rows; ++r) {
        const T d = dy[r * cols + c];
        dg += d * (x[r * cols + c] - mean[r]) * rstd[r];
        db += d;
      }
      dgamma[c] = dg;
      dbeta[c] = db;
    }
  }
}
)";

namespace {

const DeviceKernelSource& kLayerNormLibrary =
    RegisterDeviceKernelSource({"layer_norm", kLayerNormDeviceC, {DType::kFloat32, DType::kFloat64}});

void LayerNormDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  DType dtype = out[0].dtype();
  if (!nn::DeviceOrHost(dev, attrs, in, out, dtype, 0)) return;
  int64_t rows, cols;
  RowsOf(in[0], &rows, &cols);
  if (rows == 0) return;
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(in[2]).Array(out[0]).Array(out[1]).Array(out[2]);
  args.Value(rows).Value(cols).Scalar(dtype, dmlc::get<LayerNormParam>(attrs.parsed).epsilon);
  dev.Launch(kLayerNormLibrary, dtype, "layer_norm", args, DeviceLaunch::Threads(rows));
}

void LayerNormGradDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  DType dtype = out[0].dtype();
  if (!nn::DeviceOrHost(dev, attrs, in, out, dtype, 0)) return;
  int64_t rows, cols;
  RowsOf(in[1], &rows, &cols);
  if (rows + cols == 0) return;
  bool stat = in.size() == 7;
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(in[2]).Array(in[3]).Array(in[4]);
  if (stat) {
    args.Array(in[5]).Array(in[6]);
  } else {
    args.NullArray().NullArray();
  }
  args.Array(out[0]).Array(out[1]).Array(out[2]).Value(rows).Value(cols).Value(int64_t{stat});
  dev.Launch(kLayerNormLibrary, dtype, "layer_norm_grad", args, DeviceLaunch::Threads(rows + cols));
}

}  // namespace

IR_REGISTER_OP(layer_norm)
    .describe(
        "Layer normalization over the last axis: y = (x - mean) / sqrt(var + epsilon) * gamma + beta with the "
        "row's mean and biased variance (tf.nn.moments over axis -1); outputs (y, mean, rstd), rstd = 1 / "
        "sqrt(var + epsilon), mean and rstd of x's shape without the last axis.")
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_input_names({"x", "gamma", "beta"})
    .set_param<LayerNormParam>()
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"y", "mean", "rstd"};
                                })
    .set_attr<FInferShape>("FInferShape", LayerNormShape)
    .set_attr<FInferType>("FInferType", LayerNormType)
    .set_attr<FCompute>("FCompute", LayerNormCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", LayerNormDevice)
    .set_attr<FGradient>("FGradient", LayerNormGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(layer_norm_grad)
    .describe(
        "Gradients (dx, dgamma, dbeta) of layer_norm from dy, x, gamma and layer_norm's mean and rstd outputs "
        "(and, with stat_grads, the gradients dmean and drstd of those outputs), in one pass.")
    .set_num_inputs([](const NodeAttrs& attrs) { return dmlc::get<LayerNormParam>(attrs.parsed).stat_grads ? 7u : 5u; })
    .set_num_outputs(3)
    .set_input_names({"dy", "x", "gamma", "mean", "rstd", "dmean", "drstd"})
    .set_param<LayerNormParam>()
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"dx", "dgamma", "dbeta"};
                                })
    .set_attr<FInferShape>("FInferShape", LayerNormGradShape)
    .set_attr<FInferType>("FInferType", LayerNormType)
    .set_attr<FCompute>("FCompute", LayerNormGradCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", LayerNormGradDevice)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
