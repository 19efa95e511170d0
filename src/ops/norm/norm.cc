/*!
 * \file norm.cc
 * \brief dropout, batch_norm (TensorFlow FusedBatchNorm) and batch_norm_grad, and local response
 * normalization: lrn and lrn_grad (TensorFlow LRN, LRNGrad), whose device kernels are in the
 * library of nn_device_library.h.
 *
 * dropout draws its mask from the random ops' counter-based generator keyed by
 * (OpContext::seed, seed) and the element index, so a mask does not depend on the number of
 * threads. Batch norm kernels view the
 * activation as [outer, channels, inner] around the data_format's channel axis, accumulate
 * per-channel statistics in double, then apply one multiply-add per element.
 */
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "ops/nn_common.h"
#include "ops/nn_device_library.h"
#include "ops/random_utils.h"
#include "ops/simd.h"

namespace ir {
namespace op {
namespace {

using nn::ChannelView;
using nn::Layout;
using nn::Slot;

// ---------------------------------------------------------------- dropout

struct DropoutParam : public dmlc::Parameter<DropoutParam> {
  double keep_prob;
  int seed;
  DMLC_DECLARE_PARAMETER(DropoutParam) {
    DMLC_DECLARE_FIELD(keep_prob).set_default(0.5).describe("Probability of keeping an element, in (0, 1].");
    DMLC_DECLARE_FIELD(seed).set_default(0).describe("Seed mixed into the run's seed by the runtime.");
  }
};
DMLC_REGISTER_PARAMETER(DropoutParam);

void ParseDropout(NodeAttrs* attrs) {
  ParamParser<DropoutParam>(attrs);
  double keep = dmlc::get<DropoutParam>(attrs->parsed).keep_prob;
  IR_CHECK(keep > 0 && keep <= 1) << NodeDesc(*attrs) << ": keep_prob " << keep << " must be in (0, 1]";
}

/*!
 * \brief Elements [begin, end) of an active dropout: mask = scale where the element's uniform
 * is below keep, else 0; y = x * mask. The generator is evaluated in vector lanes (Philox is
 * integer arithmetic), giving each element the same draw as a scalar loop.
 */
template <typename T>
void DropoutSpan(uint64_t key, double keep, T scale, int64_t begin, int64_t end, const T* x, T* y, T* mask) {
  simd::Dispatch(
      [](uint64_t key, double keep, T scale, int64_t begin, int64_t end, const T* x, T* y, T* mask) IR_SIMD_BODY {
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) {
          T m = random::UniformAt<T>(key, static_cast<uint64_t>(i)) < keep ? scale : T(0);
          mask[i] = m;
          y[i] = x[i] * m;
        }
      },
      key, keep, scale, begin, end, x, y, mask);
}

void DropoutCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  const auto& param = dmlc::get<DropoutParam>(attrs.parsed);
  double keep = param.keep_prob;
  bool active = ctx.is_train && keep < 1;
  uint64_t key = random::CombineSeeds(ctx.seed, static_cast<uint64_t>(static_cast<int64_t>(param.seed)));
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    T* mask = out[1].data<T>();
    ParallelFor(in[0].Size(), [&](int64_t begin, int64_t end) {
      if (active) return DropoutSpan<T>(key, keep, static_cast<T>(1 / keep), begin, end, x, y, mask);
      std::fill(mask + begin, mask + end, T(1));
      if (y != x) std::copy(x + begin, x + end, y + begin);
    });
  });
}

void DropoutDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  // The mask is drawn in double, as on the CPU (random.cc): a device without it runs the CPU kernel.
  if (!dev.SupportsFloat64()) return dev.RunOnHost(attrs, in, out);
  const auto& param = dmlc::get<DropoutParam>(attrs.parsed);
  const OpContext& ctx = dev.op_context();
  uint64_t key = random::CombineSeeds(ctx.seed, static_cast<uint64_t>(static_cast<int64_t>(param.seed)));
  random::DropoutOnDevice(dev, key, param.keep_prob, ctx.is_train && param.keep_prob < 1, in[0], out[0], out[1]);
}

std::vector<NodeEntry> DropoutGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("multiply", n, "x", {og[0], Out(n, 1)})};
}

bool FloatElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*in)[0], FloatTypes());
  return known;
}

// ---------------------------------------------------------------- batch norm: inference

struct BatchNormParam : public dmlc::Parameter<BatchNormParam> {
  double epsilon;
  bool is_training;
  std::string data_format;
  DMLC_DECLARE_PARAMETER(BatchNormParam) {
    DMLC_DECLARE_FIELD(epsilon).set_default(1e-3).describe("Added to the variance before its square root.");
    DMLC_DECLARE_FIELD(is_training)
        .set_default(true)
        .describe("Normalize with the batch's statistics (true) or with the given mean and variance (false).");
    DMLC_DECLARE_FIELD(data_format).set_default("NHWC").describe("Channels last (NHWC) or at axis 1 (NCHW).");
  }
};
DMLC_REGISTER_PARAMETER(BatchNormParam);

void ParseBatchNorm(NodeAttrs* attrs) {
  ParamParser<BatchNormParam>(attrs);
  nn::ParseLayout(*attrs, dmlc::get<BatchNormParam>(attrs->parsed).data_format);
}

/*!
 * \brief Activations share one shape of rank >= 2; per-channel shapes are [C], C the extent
 * of the channel axis. In training, mean and variance may be empty ([0]), as TensorFlow allows.
 */
bool ChannelShapes(const NodeAttrs& attrs, const std::vector<Slot>& activations, const std::vector<Slot>& channels,
                   const std::vector<Slot>& optional_in_training) {
  const auto& param = dmlc::get<BatchNormParam>(attrs.parsed);
  Layout layout = nn::ParseLayout(attrs, param.data_format);
  Shape act;
  for (const Slot& s : activations) {
    AssignShape(attrs, s.what, s.shape, act);
    act = *s.shape;
  }
  IR_CHECK(!act.rank_known() || act.ndim() >= 2)
      << NodeDesc(attrs) << ": " << activations[0].what << " has shape " << act << " but must have rank 2 or more";
  int axis = !act.rank_known() ? -1 : layout == Layout::kNHWC ? act.ndim() - 1 : 1;
  Shape per_channel{axis < 0 ? kUnknownDim : act[axis]};
  std::vector<Slot> all = channels;
  for (const Slot& s : optional_in_training) {
    if (!(param.is_training && *s.shape == Shape{0})) all.push_back(s);
  }
  for (const Slot& s : all) {
    AssignShape(attrs, s.what, s.shape, per_channel);
    per_channel = *s.shape;
  }
  for (const Slot& s : all) *s.shape = per_channel;
  if (axis >= 0) act[axis] = per_channel[0];
  for (const Slot& s : activations) *s.shape = act;
  bool known = act.is_known() && per_channel.is_known();
  for (const Slot& s : optional_in_training) known = known && s.shape->is_known();
  return known;
}

bool BatchNormShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return ChannelShapes(attrs, {{"input 0 (x)", &(*in)[0]}, {"output 0 (y)", &(*out)[0]}},
                       {{"input 1 (gamma)", &(*in)[1]},
                        {"input 2 (beta)", &(*in)[2]},
                        {"output 1 (batch_mean)", &(*out)[1]},
                        {"output 2 (batch_variance)", &(*out)[2]}},
                       {{"input 3 (mean)", &(*in)[3]}, {"input 4 (variance)", &(*in)[4]}});
}

bool BatchNormGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return ChannelShapes(attrs, {{"input 0 (dy)", &(*in)[0]}, {"input 1 (x)", &(*in)[1]}, {"output 0 (dx)", &(*out)[0]}},
                       {{"input 2 (gamma)", &(*in)[2]},
                        {"input 5 (d_batch_mean)", &(*in)[5]},
                        {"input 6 (d_batch_variance)", &(*in)[6]},
                        {"output 1 (dgamma)", &(*out)[1]},
                        {"output 2 (dbeta)", &(*out)[2]}},
                       {{"input 3 (mean)", &(*in)[3]}, {"input 4 (variance)", &(*in)[4]}});
}

// ---------------------------------------------------------------- batch norm: kernels

/*!
 * \brief Per-channel sums of f(i, c) (K values each) over every element i of channel c, in
 * double. Channels-last data is split into row blocks with partial sums; otherwise each
 * thread owns whole channels.
 */
template <int K, typename F>
std::vector<std::array<double, K>> ChannelSums(const ChannelView& v, const F& f) {
  std::vector<std::array<double, K>> sums(v.channels, std::array<double, K>{});
  if (v.inner != 1) {
    ParallelFor(
        v.channels,
        [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            for (int64_t o = 0; o < v.outer; ++o) {
              int64_t base = (o * v.channels + c) * v.inner;
              for (int64_t k = 0; k < v.inner; ++k) {
                std::array<double, K> t = f(base + k, c);
                for (int j = 0; j < K; ++j) sums[c][j] += t[j];
              }
            }
          }
        },
        std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(v.outer * v.inner, 1)));
    return sums;
  }
  int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(NumThreads(), v.outer * v.channels >> 15));
  std::vector<std::array<double, K>> partial(blocks * v.channels, std::array<double, K>{});
  ParallelFor(
      blocks,
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          std::array<double, K>* acc = partial.data() + b * v.channels;
          for (int64_t r = v.outer * b / blocks; r < v.outer * (b + 1) / blocks; ++r) {
            for (int64_t c = 0; c < v.channels; ++c) {
              std::array<double, K> t = f(r * v.channels + c, c);
              for (int j = 0; j < K; ++j) acc[c][j] += t[j];
            }
          }
        }
      },
      1);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t c = 0; c < v.channels; ++c) {
      for (int j = 0; j < K; ++j) sums[c][j] += partial[b * v.channels + c][j];
    }
  }
  return sums;
}

/*! \brief Calls f(i, c) for every element i (of channel c), in parallel. */
template <typename F>
void ForEachElement(const ChannelView& v, const F& f) {
  ParallelFor(
      v.outer,
      [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          for (int64_t c = 0; c < v.channels; ++c) {
            int64_t base = (o * v.channels + c) * v.inner;
            for (int64_t k = 0; k < v.inner; ++k) f(base + k, c);
          }
        }
      },
      std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(v.channels * v.inner, 1)));
}

/*! \brief Per-channel mean and 1 / sqrt(variance + epsilon) a kernel normalizes with. */
struct ChannelStats {
  std::vector<double> mean, var, inv_std;
};

/*! \brief Batch statistics (biased variance, two passes for accuracy) or the given mean and variance. */
template <typename T>
ChannelStats Statistics(const BatchNormParam& param, const ChannelView& v, const T* x, const NDArray& mean,
                        const NDArray& variance) {
  ChannelStats s;
  if (param.is_training) {
    double count = static_cast<double>(v.outer * v.inner);
    for (const auto& t : ChannelSums<1>(v, [&](int64_t i, int64_t) { return std::array<double, 1>{double(x[i])}; })) {
      s.mean.push_back(count > 0 ? t[0] / count : 0);
    }
    for (const auto& t : ChannelSums<1>(v, [&](int64_t i, int64_t c) {
           double d = x[i] - s.mean[c];
           return std::array<double, 1>{d * d};
         })) {
      s.var.push_back(count > 0 ? t[0] / count : 0);
    }
  } else {
    s.mean.assign(mean.data<T>(), mean.data<T>() + v.channels);
    s.var.assign(variance.data<T>(), variance.data<T>() + v.channels);
  }
  for (double var : s.var) s.inv_std.push_back(1 / std::sqrt(var + param.epsilon));
  return s;
}

/*! \brief TensorFlow's batch_variance output: the unbiased variance n / (n - 1) * var (n > 1). */
double BesselFactor(const ChannelView& v) {
  int64_t n = v.outer * v.inner;
  return n > 1 ? static_cast<double>(n) / static_cast<double>(n - 1) : 1.0;
}

void BatchNormCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const auto& param = dmlc::get<BatchNormParam>(attrs.parsed);
  ChannelView v = nn::MakeChannelView(in[0].shape(), nn::ParseLayout(attrs, param.data_format));
  IR_FLOAT_SWITCH(in[0].dtype(), T, {
    const T* x = in[0].data<T>();
    ChannelStats s = Statistics(param, v, x, in[3], in[4]);
    std::vector<T> scale(v.channels), shift(v.channels);
    double bessel = param.is_training ? BesselFactor(v) : 1.0;
    for (int64_t c = 0; c < v.channels; ++c) {
      scale[c] = static_cast<T>(in[1].data<T>()[c] * s.inv_std[c]);
      shift[c] = static_cast<T>(in[2].data<T>()[c] - s.mean[c] * scale[c]);
      out[1].data<T>()[c] = static_cast<T>(s.mean[c]);
      out[2].data<T>()[c] = static_cast<T>(s.var[c] * bessel);
    }
    T* y = out[0].data<T>();
    ForEachElement(v, [&](int64_t i, int64_t c) { y[i] = x[i] * scale[c] + shift[c]; });
  });
}

/*!
 * \brief dx, dgamma, dbeta. With xc = x - mean and r = 1 / sqrt(var + eps): dbeta = sum(dy),
 * dgamma = r * sum(dy * xc); in training (n elements per channel) dx = gamma r (dy - dbeta/n -
 * xc r^2 sum(dy xc)/n) plus the terms of the batch_mean and batch_variance outputs; in inference
 * dx = gamma r dy.
 */
void BatchNormGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out) {
  const auto& param = dmlc::get<BatchNormParam>(attrs.parsed);
  ChannelView v = nn::MakeChannelView(in[1].shape(), nn::ParseLayout(attrs, param.data_format));
  IR_FLOAT_SWITCH(in[1].dtype(), T, {
    const T* dy = in[0].data<T>();
    const T* x = in[1].data<T>();
    ChannelStats s = Statistics(param, v, x, in[3], in[4]);
    auto sums = ChannelSums<2>(v, [&](int64_t i, int64_t c) {
      return std::array<double, 2>{double(dy[i]), dy[i] * (x[i] - s.mean[c])};
    });
    double n = static_cast<double>(std::max<int64_t>(v.outer * v.inner, 1));
    double bessel = BesselFactor(v);
    std::vector<T> a(v.channels), b(v.channels), k(v.channels), mean(s.mean.begin(), s.mean.end());
    for (int64_t c = 0; c < v.channels; ++c) {
      double gamma = in[2].data<T>()[c], r = s.inv_std[c];
      out[1].data<T>()[c] = static_cast<T>(r * sums[c][1]);
      out[2].data<T>()[c] = static_cast<T>(sums[c][0]);
      a[c] = static_cast<T>(gamma * r);
      if (param.is_training) {
        b[c] = static_cast<T>(-gamma * r * r * r * sums[c][1] / n + 2 * bessel * in[6].data<T>()[c] / n);
        k[c] = static_cast<T>(-gamma * r * sums[c][0] / n + in[5].data<T>()[c] / n);
      }
    }
    T* dx = out[0].data<T>();
    ForEachElement(v, [&](int64_t i, int64_t c) { dx[i] = a[c] * dy[i] + b[c] * (x[i] - mean[c]) + k[c]; });
  });
}

/*! \brief One batch_norm_grad node gives x, gamma and beta their gradients; mean and variance get none. */
std::vector<NodeEntry> BatchNormGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry grad = GradNode("batch_norm_grad", n, "batch_norm_grad",
                            {og[0], In(n, 0), In(n, 1), In(n, 3), In(n, 4), og[1], og[2]}, n->attrs.dict);
  return {Out(grad.node, 0), Out(grad.node, 1), Out(grad.node, 2), NodeEntry(), NodeEntry()};
}

std::vector<std::pair<int, int>> OutputReusesInput(const NodeAttrs&) { return {{0, 0}}; }

// ---------------------------------------------------------------- lrn

struct LRNParam : public dmlc::Parameter<LRNParam> {
  int depth_radius;
  double bias, alpha, beta;
  DMLC_DECLARE_PARAMETER(LRNParam) {
    DMLC_DECLARE_FIELD(depth_radius).set_default(5).set_lower_bound(0).describe("Half-width of the window.");
    DMLC_DECLARE_FIELD(bias).set_default(1.0).describe("Offset (usually positive).");
    DMLC_DECLARE_FIELD(alpha).set_default(1.0).describe("Scale factor of the sum of squares.");
    DMLC_DECLARE_FIELD(beta).set_default(0.5).describe("Exponent.");
  }
};
DMLC_REGISTER_PARAMETER(LRNParam);

bool LRNShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  for (size_t i = 0; i < in->size(); ++i) nn::RequireRank4(attrs, StrCat("input ", i), &(*in)[i]);
  return ElemwiseShape(attrs, in, out);
}

/*!
 * \brief Over rows of the last axis: s_i = bias + alpha * sum_{|k-i|<=r} x_k^2; lrn y_i = x_i s_i^-beta;
 * lrn_grad (dy, x) dx_j = dy_j s_j^-beta - 2 alpha beta x_j sum_{|i-j|<=r} dy_i x_i s_i^(-beta-1).
 */
template <typename T>
void LRNKernel(const LRNParam& p, const NDArray& x, const NDArray* dy, const NDArray& out) {
  const T* px = x.data<T>();
  const T* pdy = dy ? dy->data<T>() : nullptr;
  T* po = out.data<T>();
  int64_t depth = x.shape()[3], rows = depth == 0 ? 0 : x.Size() / depth, r = p.depth_radius;
  ParallelFor(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<double> s(depth), t(depth);
        for (int64_t row = begin; row < end; ++row) {
          const T* xr = px + row * depth;
          for (int64_t i = 0; i < depth; ++i) {
            double sum = 0;
            for (int64_t k = std::max<int64_t>(0, i - r); k <= std::min(depth - 1, i + r); ++k)
              sum += double(xr[k]) * xr[k];
            s[i] = p.bias + p.alpha * sum;
          }
          if (!pdy) {
            for (int64_t i = 0; i < depth; ++i) po[row * depth + i] = T(xr[i] * std::pow(s[i], -p.beta));
            continue;
          }
          const T* dr = pdy + row * depth;
          for (int64_t i = 0; i < depth; ++i) t[i] = double(dr[i]) * xr[i] * std::pow(s[i], -p.beta - 1);
          for (int64_t j = 0; j < depth; ++j) {
            double sum = 0;
            for (int64_t i = std::max<int64_t>(0, j - r); i <= std::min(depth - 1, j + r); ++i) sum += t[i];
            po[row * depth + j] = T(dr[j] * std::pow(s[j], -p.beta) - 2 * p.alpha * p.beta * xr[j] * sum);
          }
        }
      },
      64);
}

}  // namespace

const char nn::kLRNDeviceC[] = R"(
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
)";

namespace {

/*! \brief lrn (kGrad false: inputs (x)) or lrn_grad (inputs (dy, x)). */
template <bool kGrad>
void LRNDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<NDArray>& out) {
  DType dtype = out[0].dtype();
  if (!nn::DeviceOrHost(dev, attrs, in, out, dtype, 4)) return;
  const LRNParam& p = dmlc::get<LRNParam>(attrs.parsed);
  DeviceArgs args;
  args.Array(in[kGrad ? 1 : 0]);
  if (kGrad) {
    args.Array(in[0]);
  } else {
    args.NullArray();
  }
  args.Array(out[0]).Value(out[0].Size()).Value(out[0].shape()[3]).Value(int64_t{p.depth_radius});
  args.Scalar(dtype, p.bias).Scalar(dtype, p.alpha).Scalar(dtype, p.beta).Value(int64_t{kGrad});
  dev.Launch(nn::DeviceLibrary(), dtype, "lrn", args, DeviceLaunch::Threads(out[0].Size()));
}

/*! \brief FCompute of lrn (kGrad false: inputs (x)) or lrn_grad (inputs (dy, x)). */
template <bool kGrad>
void LRNCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  const LRNParam& p = dmlc::get<LRNParam>(attrs.parsed);
  IR_FLOAT_SWITCH(in[0].dtype(), T, LRNKernel<T>(p, in[kGrad ? 1 : 0], kGrad ? &in[0] : nullptr, out[0]));
}

/*! \brief What lrn and lrn_grad share. */
template <bool kGrad>
void LRNOp(Op& op) {
  op.set_param<LRNParam>();
  op.set_attr<FInferShape>("FInferShape", LRNShape);
  op.set_attr<FInferType>("FInferType", FloatElemwiseType);
  op.set_attr<FCompute>("FCompute", LRNCompute<kGrad>);
  op.set_attr<FDeviceKernel>("FDeviceKernel", LRNDevice<kGrad>);
  op.set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(dropout)
    .describe(
        "Keeps each element with probability keep_prob and scales it by 1 / keep_prob; outputs (y, mask) "
        "with y = x * mask. The identity (mask of ones) when the run is not training.")
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_input_names({"x"})
    .set_param<DropoutParam>()
    .set_attr_parser(ParseDropout)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"y", "mask"};
                                })
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", FloatElemwiseType)
    .set_attr<FCompute>("FCompute", DropoutCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", DropoutDeviceKernel)
    .set_attr<FGradient>("FGradient", DropoutGradient)
    .set_attr<FInplaceOption>("FInplaceOption", OutputReusesInput)
    .set_attr<TIsStateful>("TIsStateful", true)
    .set_attr<TReplayable>("TReplayable", true)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(batch_norm)
    .describe(
        "Batch normalization as TensorFlow FusedBatchNorm: y = gamma (x - mean) / sqrt(var + epsilon) + beta "
        "per channel. Training normalizes with the batch's mean and biased variance and outputs them as "
        "batch_mean and the unbiased batch_variance; inference uses (and outputs) the given mean and variance.")
    .set_num_inputs(5)
    .set_num_outputs(3)
    .set_input_names({"x", "gamma", "beta", "mean", "variance"})
    .set_param<BatchNormParam>()
    .set_attr_parser(ParseBatchNorm)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"y", "batch_mean", "batch_variance"};
                                })
    .set_attr<FInferShape>("FInferShape", BatchNormShape)
    .set_attr<FInferType>("FInferType", FloatElemwiseType)
    .set_attr<FCompute>("FCompute", BatchNormCompute)
    .set_attr<FGradient>("FGradient", BatchNormGradient)
    .set_attr<FInplaceOption>("FInplaceOption", OutputReusesInput)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(batch_norm_grad)
    .describe(
        "Gradients (dx, dgamma, dbeta) of batch_norm from the gradients of its outputs (dy, d_batch_mean, "
        "d_batch_variance); takes batch_norm's attributes. Training recomputes the batch statistics of x.")
    .set_num_inputs(7)
    .set_num_outputs(3)
    .set_input_names({"dy", "x", "gamma", "mean", "variance", "d_batch_mean", "d_batch_variance"})
    .set_param<BatchNormParam>()
    .set_attr_parser(ParseBatchNorm)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"dx", "dgamma", "dbeta"};
                                })
    .set_attr<FInferShape>("FInferShape", BatchNormGradShape)
    .set_attr<FInferType>("FInferType", FloatElemwiseType)
    .set_attr<FCompute>("FCompute", BatchNormGradCompute)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(lrn)
    .describe("Local response normalization over the last axis of a 4-D tensor (TensorFlow LRN).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .apply(LRNOp<false>)
    .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{GradNode("lrn_grad", n, "lrn_grad", {og[0], In(n, 0)}, n->attrs.dict)};
    });

IR_REGISTER_OP(lrn_grad)
    .describe("Gradient of lrn for its input x given dy (TensorFlow LRNGrad, which also takes lrn's output).")
    .set_num_inputs(2)
    .set_input_names({"dy", "x"})
    .apply(LRNOp<true>);

}  // namespace op
}  // namespace ir
