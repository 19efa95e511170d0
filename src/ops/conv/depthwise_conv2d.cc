/*!
 * \file nn_extra.cc
 * \brief TensorFlow's depthwise convolution (and its backward ops), local response
 * normalization, top_k and in_top_k, with TensorFlow 1.x semantics. CPU kernels; on
 * accelerators these run on the host (no FDeviceKernel yet).
 *
 * depthwise_conv2d: data [N, C, H, W] (NHWC or NCHW), weight [KH, KW, C, M], output channel
 * c * M + m = sum over the window of data channel c times weight[:, :, c, m].
 */
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ops/nn_common.h"
#include "ops/nn_device.h"

namespace ir {
namespace op {
namespace {

using nn::Geometry;
using nn::Slot;
using nn::Window;

NodeEntry Apply(const NodePtr& n, const std::string& op, std::vector<NodeEntry> in,
                const std::map<std::string, std::string>& attrs = {}) {
  return GradNode(op, n, op, std::move(in), attrs);
}

// ---------------------------------------------------------------- depthwise_conv2d

struct DepthwiseParam : public dmlc::Parameter<DepthwiseParam> {
  IntList strides;
  std::string padding;
  IntList dilations;
  std::string data_format;
  DMLC_DECLARE_PARAMETER(DepthwiseParam) {
    DMLC_DECLARE_FIELD(strides).set_default(IntList{1, 1}).describe("Strides (h, w), or 4 in data_format order.");
    DMLC_DECLARE_FIELD(padding).set_default("VALID").describe("SAME or VALID (as TensorFlow).");
    DMLC_DECLARE_FIELD(dilations).set_default(IntList{1, 1}).describe("Dilations (h, w), given like strides.");
    DMLC_DECLARE_FIELD(data_format).set_default("NHWC").describe("NHWC or NCHW; weights are [KH, KW, C, M].");
  }
  Window ToWindow(const NodeAttrs& attrs) const {
    IR_CHECK(padding != "EXPLICIT") << NodeDesc(attrs) << ": padding must be \"SAME\" or \"VALID\"";
    Window w = nn::MakeWindow(attrs, data_format, padding, IntList(), strides);
    w.dilation = nn::SpatialPair(attrs, "dilations", dilations, w.layout, {1, 1});
    IR_CHECK((w.stride[0] == 1 && w.stride[1] == 1) || (w.dilation[0] == 1 && w.dilation[1] == 1))
        << NodeDesc(attrs) << ": strides " << strides << " and dilations " << dilations
        << " cannot both exceed 1 (as TensorFlow)";
    return w;
  }
};
DMLC_REGISTER_PARAMETER(DepthwiseParam);

/*! \brief Refines data, [KH, KW, C, M] weight and output shapes from one another. */
void DepthwiseShapes(const NodeAttrs& attrs, Slot data, Slot weight, Slot out) {
  Window w = dmlc::get<DepthwiseParam>(attrs.parsed).ToWindow(attrs);
  for (Slot s : {data, weight, out}) nn::RequireRank4(attrs, s.what, s.shape);
  std::array<int, 4> ax = nn::ActivationAxes(w.layout);
  Shape& x = *data.shape;
  Shape& k = *weight.shape;
  int64_t channels = x[ax[1]];
  IR_CHECK(channels < 0 || k[2] < 0 || channels == k[2])
      << NodeDesc(attrs) << ": data has " << channels << " channels but the weight has " << k[2] << " input channels ("
      << data.what << " " << x << ", " << weight.what << " " << k << " [KH, KW, C, M])";
  x[ax[1]] = k[2] = std::max(channels, k[2]);
  Shape& y = *out.shape;
  if (k[3] < 0 && k[2] > 0 && y[ax[1]] >= 0) k[3] = y[ax[1]] / k[2];
  int64_t oc = k[2] >= 0 && k[3] >= 0 ? k[2] * k[3] : kUnknownDim;
  int64_t oh = nn::ComputeExtent(attrs, w, 0, x[ax[2]], k[0]).out;
  int64_t ow = nn::ComputeExtent(attrs, w, 1, x[ax[3]], k[1]).out;
  AssignShape(attrs, out.what, out.shape, nn::ActivationShape(w.layout, x[ax[0]], oc, oh, ow));
  x[ax[0]] = y[ax[0]];
}

bool DepthwiseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  DepthwiseShapes(attrs, {"input 0 (data)", &(*in)[0]}, {"input 1 (weight)", &(*in)[1]}, {"output 0", &(*out)[0]});
  return AllKnown(*in, *out);
}

/*! \brief Backward ops: the result has the shape of input 2 (like). */
template <bool kFilter>
bool DepthwiseBackpropShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape& like = (*in)[2];
  AssignShape(attrs, "input 2 (like)", &like, (*out)[0]);
  if (kFilter) {
    DepthwiseShapes(attrs, {"input 0 (x)", &(*in)[0]}, {"input 2 (like)", &like}, {"input 1 (dy)", &(*in)[1]});
  } else {
    DepthwiseShapes(attrs, {"input 2 (like)", &like}, {"input 1 (weight)", &(*in)[1]}, {"input 0 (dy)", &(*in)[0]});
  }
  (*out)[0] = like;
  return AllKnown(*in, *out);
}

enum DepthwisePass { kForward, kBackwardData, kBackwardWeights };

/*!
 * \brief One kernel for the three passes over (data x, weight w, output y): forward writes y,
 * backward data writes x from y, backward weights writes w. Each pass parallelizes over what it
 * writes without overlap: output planes, input planes (n, c), weight channels c.
 */
template <typename T, DepthwisePass kPass>
void DepthwiseKernel(const Geometry& g, int64_t m, T* x, T* w, T* y) {
  std::array<int64_t, 4> xs = g.InputStrides(), ys = g.OutputStrides();
  // Planes (n, c) per thread: about 32k multiply-adds at least.
  int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, g.oh * g.ow * g.kh * g.kw * m));
  auto visit = [&](int64_t n, int64_t c, auto&& fn) {  // fn(x offset, weight offset, y offset) per tap
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          int64_t iy = oy * g.sh - g.pad_top + ky * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            int64_t ix = ox * g.sw - g.pad_left + kx * g.dw;
            if (ix < 0 || ix >= g.w) continue;
            int64_t xo = n * xs[0] + c * xs[1] + iy * xs[2] + ix * xs[3];
            int64_t wo = ((ky * g.kw + kx) * g.c + c) * m;
            int64_t yo = n * ys[0] + c * m * ys[1] + oy * ys[2] + ox * ys[3];
            for (int64_t j = 0; j < m; ++j) fn(xo, wo + j, yo + j * ys[1]);
          }
        }
      }
    }
  };
  if (kPass == kForward) {
    for (int64_t i = 0; i < g.n * g.oc * g.oh * g.ow; ++i) y[i] = T(0);
    ParallelFor(
        g.n * g.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p)
            visit(p / g.c, p % g.c, [&](int64_t xo, int64_t wo, int64_t yo) { y[yo] += x[xo] * w[wo]; });
        },
        grain);
  } else if (kPass == kBackwardData) {
    for (int64_t i = 0; i < g.n * g.c * g.h * g.w; ++i) x[i] = T(0);
    ParallelFor(
        g.n * g.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p)
            visit(p / g.c, p % g.c, [&](int64_t xo, int64_t wo, int64_t yo) { x[xo] += y[yo] * w[wo]; });
        },
        grain);
  } else {
    for (int64_t i = 0; i < g.kh * g.kw * g.c * m; ++i) w[i] = T(0);
    ParallelFor(
        g.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            for (int64_t n = 0; n < g.n; ++n)
              visit(n, c, [&](int64_t xo, int64_t wo, int64_t yo) { w[wo] += x[xo] * y[yo]; });
          }
        },
        std::max<int64_t>(1, grain / std::max<int64_t>(g.n, 1)));
  }
}

/*! \brief FCompute of pass kPass; inputs in the ops' order (data/dy/x first), `like` last. */
template <DepthwisePass kPass>
void DepthwiseCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const DepthwiseParam& p = dmlc::get<DepthwiseParam>(attrs.parsed);
  Window win = p.ToWindow(attrs);
  // (data, weight, output) arrays of this pass.
  NDArray data = kPass == kForward ? in[0] : kPass == kBackwardData ? out[0] : in[0];
  NDArray weight = kPass == kBackwardWeights ? out[0] : in[1];
  NDArray output = kPass == kForward ? out[0] : kPass == kBackwardData ? in[0] : in[1];
  const Shape& k = weight.shape();
  Geometry g = nn::MakeGeometry(attrs, win, data.shape(), k[0], k[1], k[2] * k[3]);
  IR_FLOAT_SWITCH(out[0].dtype(), T,
                  DepthwiseKernel<T, kPass>(g, k[3], const_cast<T*>(data.data<T>()), const_cast<T*>(weight.data<T>()),
                                            const_cast<T*>(output.data<T>())));
}

std::vector<NodeEntry> DepthwiseGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& a = n->attrs.dict;
  return {Apply(n, "depthwise_conv2d_backprop_input", {og[0], In(n, 1), In(n, 0)}, a),
          Apply(n, "depthwise_conv2d_backprop_filter", {In(n, 0), og[0], In(n, 1)}, a)};
}

// The backward ops are bilinear: their gradients are the other passes.
std::vector<NodeEntry> DepthwiseBackpropInputGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& a = n->attrs.dict;  // inputs (dy, weight, like)
  return {Apply(n, "depthwise_conv2d", {og[0], In(n, 1)}, a),
          Apply(n, "depthwise_conv2d_backprop_filter", {og[0], In(n, 0), In(n, 1)}, a), NodeEntry()};
}

std::vector<NodeEntry> DepthwiseBackpropFilterGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& a = n->attrs.dict;  // inputs (x, dy, like)
  return {Apply(n, "depthwise_conv2d_backprop_input", {In(n, 1), og[0], In(n, 0)}, a),
          Apply(n, "depthwise_conv2d", {In(n, 0), og[0]}, a), NodeEntry()};
}

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

bool FloatElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*out)[0], FloatTypes());
  return known;
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

// ---------------------------------------------------------------- top_k, in_top_k

struct TopKParam : public dmlc::Parameter<TopKParam> {
  int k;
  bool sorted;
  DMLC_DECLARE_PARAMETER(TopKParam) {
    DMLC_DECLARE_FIELD(k).set_default(1).set_lower_bound(0).describe("How many of the largest to take.");
    DMLC_DECLARE_FIELD(sorted).set_default(true).describe("Largest first (always so here, as TensorFlow's CPU).");
  }
};
DMLC_REGISTER_PARAMETER(TopKParam);

bool TopKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  int k = dmlc::get<TopKParam>(attrs.parsed).k;
  if (!x.rank_known()) return false;
  IR_CHECK(x.ndim() >= 1) << NodeDesc(attrs) << ": input must have rank at least 1, got shape " << x;
  int64_t last = x[x.ndim() - 1];
  IR_CHECK(last < 0 || last >= k) << NodeDesc(attrs) << ": input " << x << " must have at least k = " << k
                                  << " columns in its last dimension";
  Shape y = x;
  y[y.ndim() - 1] = k;
  AssignShape(attrs, "output 0 (values)", &(*out)[0], y);
  AssignShape(attrs, "output 1 (indices)", &(*out)[1], y);
  return AllKnown(*in, *out);
}

/*! \brief Row by row: the k largest, largest first, equal values by lower index first. */
template <typename T>
void TopKKernel(int64_t k, const NDArray& x, const NDArray& values, const NDArray& indices) {
  int64_t n = x.shape()[x.shape().ndim() - 1], rows = n == 0 ? 0 : x.Size() / n;
  const T* px = x.data<T>();
  T* pv = values.data<T>();
  int32_t* pi = indices.data<int32_t>();
  ParallelFor(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<int32_t> order(n);
        for (int64_t r = begin; r < end; ++r) {
          const T* row = px + r * n;
          std::iota(order.begin(), order.end(), 0);
          auto before = [row](int32_t a, int32_t b) { return row[a] > row[b] || (!(row[b] > row[a]) && a < b); };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            pi[r * k + j] = order[j];
            pv[r * k + j] = row[order[j]];
          }
        }
      },
      16);
}

/*! \brief top_k_grad(dy, indices, like): dx of like's shape, dy scattered to the indices of each row. */
bool TopKGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 1 (indices)", &(*in)[1], (*in)[0]);
  AssignShape(attrs, "input 0 (dy)", &(*in)[0], (*in)[1]);
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[2]);
  (*in)[2] = (*out)[0];
  return AllKnown(*in, *out);
}

template <typename T>
void TopKGradKernel(const NDArray& dy, const NDArray& indices, const NDArray& dx) {
  const Shape& s = dx.shape();
  int64_t n = s[s.ndim() - 1], k = dy.shape()[s.ndim() - 1], rows = n == 0 ? 0 : dx.Size() / n;
  const T* pd = dy.data<T>();
  const int32_t* pi = indices.data<int32_t>();
  T* po = dx.data<T>();
  std::fill(po, po + dx.Size(), T(0));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      int32_t i = pi[r * k + j];
      IR_CHECK(i >= 0 && i < n) << "top_k_grad: index " << i << " out of range [0, " << n << ")";
      po[r * n + i] += pd[r * k + j];
    }
  }
}

bool InTopKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 0 (predictions)", &(*in)[0], Shape::UnknownDims(2));
  AssignShape(attrs, "input 1 (targets)", &(*in)[1], Shape::UnknownDims(1));
  Shape& p = (*in)[0];
  Shape& t = (*in)[1];
  IR_CHECK(p[0] < 0 || t[0] < 0 || p[0] == t[0])
      << NodeDesc(attrs) << ": predictions " << p << " and targets " << t << " must have the same batch size";
  p[0] = t[0] = std::max(p[0], t[0]);
  AssignShape(attrs, "output 0", &(*out)[0], Shape{p[0]});
  return AllKnown(*in, *out);
}

bool InTopKType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "input 0 (predictions)", &(*in)[0], DType::kFloat32);
  if ((*in)[1] != DType::kUnknown) CheckDType(attrs, "input 1 (targets)", (*in)[1], {DType::kInt32, DType::kInt64});
  AssignType(attrs, "output 0", &(*out)[0], DType::kBool);
  return AllKnown(*in, *out);
}

/*!
 * \brief TensorFlow's InTopK: true when fewer than k predictions exceed the target's; false
 * when the target is out of range or its prediction is not finite.
 */
template <typename I>
void InTopKKernel(int64_t k, const NDArray& pred, const NDArray& targets, const NDArray& out) {
  int64_t rows = pred.shape()[0], classes = pred.shape()[1];
  const float* p = pred.data<float>();
  const I* t = targets.data<I>();
  bool* o = out.data<bool>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = p + r * classes;
    I target = t[r];
    if (target < 0 || target >= classes || !std::isfinite(row[target])) {
      o[r] = false;
      continue;
    }
    int64_t more = 0;
    for (int64_t c = 0; c < classes && more < k; ++c) more += row[c] > row[target];
    o[r] = more < k;
  }
}

// ---------------------------------------------------------------- mirror_pad

struct MirrorPadParam : public dmlc::Parameter<MirrorPadParam> {
  IntList paddings;
  std::string mode;
  DMLC_DECLARE_PARAMETER(MirrorPadParam) {
    DMLC_DECLARE_FIELD(paddings).describe("(before, after) for each dimension, flattened.");
    DMLC_DECLARE_FIELD(mode).set_default("REFLECT").describe("REFLECT (edge not repeated) or SYMMETRIC (repeated).");
  }
};
DMLC_REGISTER_PARAMETER(MirrorPadParam);

void ParseMirrorPad(NodeAttrs* attrs) {
  ParamParser<MirrorPadParam>(attrs);
  const MirrorPadParam& p = dmlc::get<MirrorPadParam>(attrs->parsed);
  IR_CHECK(p.mode == "REFLECT" || p.mode == "SYMMETRIC")
      << NodeDesc(*attrs) << ": mode must be \"REFLECT\" or \"SYMMETRIC\", got \"" << p.mode << "\"";
  IR_CHECK(p.paddings.size() % 2 == 0) << NodeDesc(*attrs) << ": paddings " << p.paddings << " must be pairs";
  for (int64_t v : p.paddings.values)
    IR_CHECK(v >= 0) << NodeDesc(*attrs) << ": paddings " << p.paddings << " is negative";
}

/*! \brief Shape of mirror_pad (kGrad false: input -> padded) or mirror_pad_grad (padded -> input). */
template <bool kGrad>
bool MirrorPadShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const MirrorPadParam& p = dmlc::get<MirrorPadParam>(attrs.parsed);
  int nd = static_cast<int>(p.paddings.size() / 2);
  AssignShape(attrs, "input 0", &(*in)[0], Shape::UnknownDims(nd));
  AssignShape(attrs, "output 0", &(*out)[0], Shape::UnknownDims(nd));
  Shape& x = kGrad ? (*out)[0] : (*in)[0];
  Shape& y = kGrad ? (*in)[0] : (*out)[0];
  int64_t slack = p.mode == "REFLECT" ? 1 : 0;
  for (int d = 0; d < nd; ++d) {
    int64_t pad = p.paddings[2 * d] + p.paddings[2 * d + 1];
    if (x[d] < 0 && y[d] >= 0) x[d] = y[d] - pad;
    if (x[d] < 0) continue;
    IR_CHECK(std::max(p.paddings[2 * d], p.paddings[2 * d + 1]) <= x[d] - slack)
        << NodeDesc(attrs) << ": paddings " << p.paddings << " of dimension " << d << " must be at most "
        << x[d] - slack << " for mode " << p.mode << " and input shape " << x;
    AssignShape(attrs, kGrad ? "input 0" : "output 0", &y, [&] {
      Shape s = y;
      s[d] = x[d] + pad;
      return s;
    }());
  }
  return AllKnown(*in, *out);
}

/*!
 * \brief For each element of the padded array y, the element of x it mirrors; mirror_pad copies
 * it (kGrad false), mirror_pad_grad adds y's value into x (MirrorPadGrad).
 */
template <typename T, bool kGrad>
void MirrorPadKernel(const MirrorPadParam& p, const NDArray& x, const NDArray& y) {
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  int nd = xs.ndim();
  int64_t offset = p.mode == "REFLECT" ? 0 : 1;
  T* px = x.data<T>();
  T* py = y.data<T>();
  if (kGrad) std::fill(px, px + x.Size(), T(0));
  std::vector<int64_t> coord(nd, 0);
  for (int64_t i = 0, total = y.Size(); i < total; ++i) {
    int64_t src = 0;
    for (int d = 0; d < nd; ++d) {
      int64_t c = coord[d] - p.paddings[2 * d];
      if (c < 0) c = -c - offset;
      if (c >= xs[d]) c = 2 * xs[d] - 2 + offset - c;
      src = src * xs[d] + c;
    }
    if (kGrad) {
      px[src] += py[i];
    } else {
      py[i] = px[src];
    }
    for (int d = nd - 1; d >= 0 && ++coord[d] == ys[d]; --d) coord[d] = 0;
  }
}

// ---------------------------------------------------------------- space_to_batch_nd, batch_to_space_nd

struct SpaceBatchParam : public dmlc::Parameter<SpaceBatchParam> {
  IntList block_shape;
  IntList paddings;
  DMLC_DECLARE_PARAMETER(SpaceBatchParam) {
    DMLC_DECLARE_FIELD(block_shape).describe("Block size of each of the M spatial dimensions (after the batch).");
    DMLC_DECLARE_FIELD(paddings).describe(
        "(start, end) for each spatial dimension, flattened: padding of space_to_batch_nd, crops of "
        "batch_to_space_nd.");
  }
};
DMLC_REGISTER_PARAMETER(SpaceBatchParam);

void ParseSpaceBatch(NodeAttrs* attrs) {
  ParamParser<SpaceBatchParam>(attrs);
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs->parsed);
  IR_CHECK(!p.block_shape.empty() && p.paddings.size() == 2 * p.block_shape.size())
      << NodeDesc(*attrs) << ": block_shape " << p.block_shape << " needs one (start, end) pair each in paddings, got "
      << p.paddings;
  for (int64_t b : p.block_shape.values)
    IR_CHECK(b >= 1) << NodeDesc(*attrs) << ": block_shape " << p.block_shape << " must be positive";
  for (int64_t v : p.paddings.values)
    IR_CHECK(v >= 0) << NodeDesc(*attrs) << ": paddings/crops " << p.paddings << " must not be negative";
}

/*! \brief space_to_batch_nd (kToSpace false) or batch_to_space_nd shapes, from the input's. */
template <bool kToSpace>
bool SpaceBatchShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs.parsed);
  const Shape& x = (*in)[0];
  if (!x.rank_known()) return false;
  int m = static_cast<int>(p.block_shape.size());
  IR_CHECK(x.ndim() >= m + 1) << NodeDesc(attrs) << ": input " << x << " must have rank at least " << m + 1
                              << " for block_shape " << p.block_shape;
  int64_t blocks = 1;
  for (int64_t b : p.block_shape.values) blocks *= b;
  Shape y = x;
  if (x[0] >= 0) {
    IR_CHECK(kToSpace ? x[0] % blocks == 0 : true)
        << NodeDesc(attrs) << ": batch of input " << x << " is not divisible by the product of block_shape "
        << p.block_shape;
    y[0] = kToSpace ? x[0] / blocks : x[0] * blocks;
  }
  for (int d = 0; d < m; ++d) {
    int64_t e = x[d + 1], pad = p.paddings[2 * d] + p.paddings[2 * d + 1], b = p.block_shape[d];
    if (e < 0) continue;
    if (kToSpace) {
      IR_CHECK(e * b >= pad) << NodeDesc(attrs) << ": crops " << p.paddings << " exceed dimension " << d + 1
                             << " of input " << x << " times block " << b;
      y[d + 1] = e * b - pad;
    } else {
      IR_CHECK((e + pad) % b == 0) << NodeDesc(attrs) << ": dimension " << d + 1 << " of input " << x << " padded by "
                                   << pad << " is not divisible by block " << b;
      y[d + 1] = (e + pad) / b;
    }
  }
  AssignShape(attrs, "output 0", &(*out)[0], y);
  return AllKnown(*in, *out);
}

/*!
 * \brief Walks the batch side b (shape [B*prod(block), blocked..., rest]) against the space side s
 * ([B, spatial..., rest]): batch element (ob, o_1..o_M, r) is space element (ob % B, o_i*block_i +
 * off_i - start_i, r) with off = ob / B in row-major order of the blocks (zero where that is padding).
 * kToSpace false fills batch from space (space_to_batch_nd), true space from batch.
 */
template <typename T, bool kToSpace>
void SpaceBatchKernel(const SpaceBatchParam& p, const NDArray& space, const NDArray& batch) {
  const Shape& ss = space.shape();
  const Shape& bs = batch.shape();
  int m = static_cast<int>(p.block_shape.size());
  int64_t rest = ss.ProdDims(m + 1, ss.ndim()), nb = ss[0];
  T* sp = space.data<T>();
  T* bp = batch.data<T>();
  int64_t outer = bs.ProdDims(0, m + 1);
  std::vector<int64_t> coord(m + 1, 0);
  for (int64_t i = 0; i < outer; ++i) {
    int64_t off = coord[0] / nb, src = coord[0] % nb;
    bool inside = true;
    std::vector<int64_t> offs(m);
    for (int d = m - 1; d >= 0; --d) {
      offs[d] = off % p.block_shape[d];
      off /= p.block_shape[d];
    }
    for (int d = 0; d < m; ++d) {
      int64_t pos = coord[d + 1] * p.block_shape[d] + offs[d] - p.paddings[2 * d];
      inside = inside && pos >= 0 && pos < ss[d + 1];
      src = src * ss[d + 1] + pos;
    }
    T* b = bp + i * rest;
    if (!kToSpace) {
      for (int64_t r = 0; r < rest; ++r) b[r] = inside ? sp[src * rest + r] : T(0);
    } else if (inside) {
      std::copy(b, b + rest, sp + src * rest);
    }
    for (int d = m; d >= 0 && ++coord[d] == bs[d]; --d) coord[d] = 0;
  }
}

/*! \brief Each other's gradient: the same block_shape and paddings/crops. */
FGradient SpaceBatchGradient(const char* inverse) {
  return [inverse](const NodePtr& n, const std::vector<NodeEntry>& og) {
    return std::vector<NodeEntry>{Apply(n, inverse, {og[0]}, n->attrs.dict)};
  };
}

// ---------------------------------------------------------------- device kernels

/*! \brief The rank-generic geometry of mirror_pad and space/batch kernels (at most kMaxRank dimensions). */
constexpr int kMaxRank = 8;
struct DeviceDims {
  int64_t nd = 0, offset = 0, rest = 1, nb = 0, m = 0;
  int64_t xs[kMaxRank] = {}, ys[kMaxRank] = {}, before[kMaxRank] = {}, after[kMaxRank] = {}, block[kMaxRank] = {};
};

const char kNNExtraC[] = R"(
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
)";

const DeviceKernelSource& kNNExtraSource = RegisterDeviceKernelSource(
    {"nn_extra", std::string(nn::kDeviceWindowC) + kNNExtraC, {DType::kFloat32, DType::kFloat64}});

/*! \brief The device kernels handle float types and at most kMaxRank dimensions; the rest runs on the host. */
bool OnDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
              const std::vector<NDArray>& out, DType dtype, int ndim) {
  bool ok = (dtype == DType::kFloat32 || (dtype == DType::kFloat64 && dev.SupportsFloat64())) && ndim <= kMaxRank;
  if (!ok) dev.RunOnHost(attrs, in, out);
  return ok;
}

template <DepthwisePass kPass>
void DepthwiseDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  if (!OnDevice(dev, attrs, in, out, out[0].dtype(), 4)) return;
  const NDArray& data = kPass == kForward || kPass == kBackwardWeights ? in[0] : out[0];
  const NDArray& weight = kPass == kBackwardWeights ? out[0] : in[1];
  const Shape& k = weight.shape();
  Geometry g = nn::MakeGeometry(attrs, dmlc::get<DepthwiseParam>(attrs.parsed).ToWindow(attrs), data.shape(), k[0],
                                k[1], k[2] * k[3]);
  static const char* kNames[] = {"depthwise_forward", "depthwise_backward_data", "depthwise_backward_filter"};
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]);  // (x or dy, weight or dy, result)
  args.Value(nn::ToDeviceWindow(g)).Value(int64_t{k[3]});
  dev.Launch(kNNExtraSource, out[0].dtype(), kNames[kPass], args, DeviceLaunch::Threads(out[0].Size()));
}

/*! \brief lrn (kGrad false: inputs (x)) or lrn_grad (inputs (dy, x)). */
template <bool kGrad>
void LRNDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<NDArray>& out) {
  DType dtype = out[0].dtype();
  if (!OnDevice(dev, attrs, in, out, dtype, 4)) return;
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
  dev.Launch(kNNExtraSource, dtype, "lrn", args, DeviceLaunch::Threads(out[0].Size()));
}

/*! \brief top_k (kGrad false: x -> values, indices) or top_k_grad ((dy, indices, like) -> dx). */
template <bool kGrad>
void TopKDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  const NDArray& wide = kGrad ? out[0] : in[0];
  if (!OnDevice(dev, attrs, in, out, wide.dtype(), wide.shape().ndim())) return;
  int64_t cols = wide.shape()[wide.shape().ndim() - 1];
  int64_t k = (kGrad ? in[0] : out[0]).shape()[wide.shape().ndim() - 1];
  DeviceArgs args;
  args.Array(in[0]).Array(kGrad ? in[1] : out[0]).Array(kGrad ? out[0] : out[1]);
  args.Value(wide.Size()).Value(cols).Value(k);
  dev.Launch(kNNExtraSource, wide.dtype(), kGrad ? "top_k_grad" : "top_k", args, DeviceLaunch::Threads(wide.Size()));
}

void InTopKDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  bool wide = in[1].dtype() == DType::kInt64;
  DeviceArgs args;
  args.Array(in[0]);
  if (wide) {
    args.NullArray().Array(in[1]);
  } else {
    args.Array(in[1]).NullArray();
  }
  args.Array(out[0]).Value(in[0].shape()[0]).Value(in[0].shape()[1]);
  args.Value(int64_t{dmlc::get<TopKParam>(attrs.parsed).k}).Value(int64_t{wide});
  dev.Launch(kNNExtraSource, DType::kFloat32, "in_top_k", args, DeviceLaunch::Threads(out[0].Size()));
}

/*! \brief mirror_pad (kGrad false: x -> y) or mirror_pad_grad (dy -> dx). */
template <bool kGrad>
void MirrorPadDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const Shape& xs = (kGrad ? out : in)[0].shape();
  if (!OnDevice(dev, attrs, in, out, out[0].dtype(), xs.ndim())) return;
  const MirrorPadParam& p = dmlc::get<MirrorPadParam>(attrs.parsed);
  const Shape& ys = (kGrad ? in : out)[0].shape();
  DeviceDims d;
  d.nd = xs.ndim();
  d.offset = p.mode == "REFLECT" ? 0 : 1;
  for (int i = 0; i < xs.ndim(); ++i) {
    d.xs[i] = xs[i];
    d.ys[i] = ys[i];
    d.before[i] = p.paddings[2 * i];
    d.after[i] = p.paddings[2 * i + 1];
  }
  DeviceArgs args;
  args.Array(in[0]).Array(out[0]).Value(d).Value(out[0].Size());
  dev.Launch(kNNExtraSource, out[0].dtype(), kGrad ? "mirror_pad_grad" : "mirror_pad", args,
             DeviceLaunch::Threads(out[0].Size()));
}

/*! \brief space_to_batch_nd (kToSpace false) or batch_to_space_nd. */
template <bool kToSpace>
void SpaceBatchDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const NDArray& space = kToSpace ? out[0] : in[0];
  const NDArray& batch = kToSpace ? in[0] : out[0];
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs.parsed);
  int m = static_cast<int>(p.block_shape.size());
  if (!OnDevice(dev, attrs, in, out, out[0].dtype(), m)) return;
  DeviceDims d;
  d.m = m;
  d.nb = space.shape()[0];
  d.rest = space.shape().ProdDims(m + 1, space.shape().ndim());
  for (int i = 0; i < m; ++i) {
    d.xs[i] = space.shape()[i + 1];
    d.ys[i] = batch.shape()[i + 1];
    d.block[i] = p.block_shape[i];
    d.before[i] = p.paddings[2 * i];
  }
  DeviceArgs args;
  args.Array(space).Array(batch).Value(d).Value(out[0].Size()).Value(int64_t{kToSpace});
  dev.Launch(kNNExtraSource, out[0].dtype(), "space_batch", args, DeviceLaunch::Threads(out[0].Size()));
}

}  // namespace

IR_REGISTER_OP(depthwise_conv2d)
    .describe("Depthwise 2-D convolution (TensorFlow DepthwiseConv2dNative): weight [KH, KW, C, M], C * M outputs.")
    .set_num_inputs(2)
    .set_input_names({"data", "weight"})
    .set_param<DepthwiseParam>()
    .set_attr_parser(nn::ParseWindowParam<DepthwiseParam>)
    .set_attr<FInferShape>("FInferShape", DepthwiseShape)
    .set_attr<FInferType>("FInferType", nn::WindowType<2>)
    .set_attr<FCompute>("FCompute", DepthwiseCompute<kForward>)
    .set_attr<FGradient>("FGradient", DepthwiseGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", DepthwiseDevice<kForward>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(depthwise_conv2d_backprop_input)
    .describe("Gradient of depthwise_conv2d for its data, shaped like `like` (DepthwiseConv2dNativeBackpropInput).")
    .set_num_inputs(3)
    .set_input_names({"dy", "weight", "like"})
    .set_param<DepthwiseParam>()
    .set_attr_parser(nn::ParseWindowParam<DepthwiseParam>)
    .set_attr<FInferShape>("FInferShape", DepthwiseBackpropShape<false>)
    .set_attr<FInferType>("FInferType", nn::WindowType<2>)
    .set_attr<FCompute>("FCompute", DepthwiseCompute<kBackwardData>)
    .set_attr<FGradient>("FGradient", DepthwiseBackpropInputGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", DepthwiseDevice<kBackwardData>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(depthwise_conv2d_backprop_filter)
    .describe("Gradient of depthwise_conv2d for its weight, shaped like `like` (DepthwiseConv2dNativeBackpropFilter).")
    .set_num_inputs(3)
    .set_input_names({"x", "dy", "like"})
    .set_param<DepthwiseParam>()
    .set_attr_parser(nn::ParseWindowParam<DepthwiseParam>)
    .set_attr<FInferShape>("FInferShape", DepthwiseBackpropShape<true>)
    .set_attr<FInferType>("FInferType", nn::WindowType<2>)
    .set_attr<FCompute>("FCompute", DepthwiseCompute<kBackwardWeights>)
    .set_attr<FGradient>("FGradient", DepthwiseBackpropFilterGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", DepthwiseDevice<kBackwardWeights>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(lrn)
    .describe("Local response normalization over the last axis of a 4-D tensor (TensorFlow LRN).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<LRNParam>()
    .set_attr<FInferShape>("FInferShape", LRNShape)
    .set_attr<FInferType>("FInferType", FloatElemwiseType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_FLOAT_SWITCH(in[0].dtype(), T,
                                          LRNKernel<T>(dmlc::get<LRNParam>(attrs.parsed), in[0], nullptr, out[0]));
                        })
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{Apply(n, "lrn_grad", {og[0], In(n, 0)}, n->attrs.dict)};
                         })
    .set_attr<FDeviceKernel>("FDeviceKernel", LRNDevice<false>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(lrn_grad)
    .describe("Gradient of lrn for its input x given dy (TensorFlow LRNGrad, which also takes lrn's output).")
    .set_num_inputs(2)
    .set_input_names({"dy", "x"})
    .set_param<LRNParam>()
    .set_attr<FInferShape>("FInferShape", LRNShape)
    .set_attr<FInferType>("FInferType", FloatElemwiseType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_FLOAT_SWITCH(in[0].dtype(), T,
                                          LRNKernel<T>(dmlc::get<LRNParam>(attrs.parsed), in[1], &in[0], out[0]));
                        })
    .set_attr<FDeviceKernel>("FDeviceKernel", LRNDevice<true>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(top_k)
    .describe(
        "The k largest along the last axis, largest first, ties by lower index, and their int32 indices (TopKV2).")
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_input_names({"data"})
    .set_param<TopKParam>()
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"values", "indices"};
                                })
    .set_attr<FInferShape>("FInferShape", TopKShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            AssignType(attrs, "output 0 (values)", &(*out)[0], (*in)[0]);
                            AssignType(attrs, "input 0", &(*in)[0], (*out)[0]);
                            if ((*in)[0] != DType::kUnknown) CheckDType(attrs, "input", (*in)[0], NumericTypes());
                            AssignType(attrs, "output 1 (indices)", &(*out)[1], DType::kInt32);
                            return AllKnown(*in, *out);
                          })
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          int64_t k = dmlc::get<TopKParam>(attrs.parsed).k;
                          IR_NUMERIC_SWITCH(in[0].dtype(), T, TopKKernel<T>(k, in[0], out[0], out[1]));
                        })
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{Apply(n, "top_k_grad", {og[0], Out(n, 1), In(n, 0)})};
                         })
    .set_attr<FDeviceKernel>("FDeviceKernel", TopKDevice<false>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(top_k_grad)
    .describe("Gradient of top_k: dy added at the indices of each last-axis row of a zero tensor shaped like `like`.")
    .set_num_inputs(3)
    .set_input_names({"dy", "indices", "like"})
    .set_attr<FInferShape>("FInferShape", TopKGradShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
                            AssignType(attrs, "input 0 (dy)", &(*in)[0], (*out)[0]);
                            AssignType(attrs, "input 1 (indices)", &(*in)[1], DType::kInt32);
                            return (*in)[0] != DType::kUnknown && (*in)[2] != DType::kUnknown;
                          })
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_NUMERIC_SWITCH(in[0].dtype(), T, TopKGradKernel<T>(in[0], in[1], out[0]));
                        })
    .set_attr<FDeviceKernel>("FDeviceKernel", TopKDevice<true>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(in_top_k)
    .describe("Whether each target's prediction is among the k largest of its row (TensorFlow InTopK/InTopKV2).")
    .set_num_inputs(2)
    .set_input_names({"predictions", "targets"})
    .set_param<TopKParam>()
    .set_attr<FInferShape>("FInferShape", InTopKShape)
    .set_attr<FInferType>("FInferType", InTopKType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          int64_t k = dmlc::get<TopKParam>(attrs.parsed).k;
                          if (in[1].dtype() == DType::kInt32) return InTopKKernel<int32_t>(k, in[0], in[1], out[0]);
                          InTopKKernel<int64_t>(k, in[0], in[1], out[0]);
                        })
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", InTopKDevice)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(mirror_pad)
    .describe("data padded with its mirror image (TensorFlow MirrorPad, REFLECT or SYMMETRIC).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<MirrorPadParam>()
    .set_attr_parser(ParseMirrorPad)
    .set_attr<FInferShape>("FInferShape", MirrorPadShape<false>)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_ALL_TYPES_SWITCH(
                              in[0].dtype(), T,
                              (MirrorPadKernel<T, false>(dmlc::get<MirrorPadParam>(attrs.parsed), in[0], out[0])));
                        })
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{Apply(n, "mirror_pad_grad", {og[0]}, n->attrs.dict)};
                         })
    .set_attr<FDeviceKernel>("FDeviceKernel", MirrorPadDevice<false>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(mirror_pad_grad)
    .describe("Gradient of mirror_pad: each padded element added back to the element it mirrors (MirrorPadGrad).")
    .set_num_inputs(1)
    .set_input_names({"dy"})
    .set_param<MirrorPadParam>()
    .set_attr_parser(ParseMirrorPad)
    .set_attr<FInferShape>("FInferShape", MirrorPadShape<true>)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_NUMERIC_SWITCH(
                              in[0].dtype(), T,
                              (MirrorPadKernel<T, true>(dmlc::get<MirrorPadParam>(attrs.parsed), out[0], in[0])));
                        })
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{Apply(n, "mirror_pad", {og[0]}, n->attrs.dict)};
                         })
    .set_attr<FDeviceKernel>("FDeviceKernel", MirrorPadDevice<true>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(space_to_batch_nd)
    .describe("Spatial blocks moved into the batch after zero padding (TensorFlow SpaceToBatchND).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<SpaceBatchParam>()
    .set_attr_parser(ParseSpaceBatch)
    .set_attr<FInferShape>("FInferShape", SpaceBatchShape<false>)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_ALL_TYPES_SWITCH(
                              in[0].dtype(), T,
                              (SpaceBatchKernel<T, false>(dmlc::get<SpaceBatchParam>(attrs.parsed), in[0], out[0])));
                        })
    .set_attr<FGradient>("FGradient", SpaceBatchGradient("batch_to_space_nd"))
    .set_attr<FDeviceKernel>("FDeviceKernel", SpaceBatchDevice<false>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(batch_to_space_nd)
    .describe("The inverse of space_to_batch_nd: batch blocks moved back into space, then cropped (BatchToSpaceND).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<SpaceBatchParam>()
    .set_attr_parser(ParseSpaceBatch)
    .set_attr<FInferShape>("FInferShape", SpaceBatchShape<true>)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_ALL_TYPES_SWITCH(
                              in[0].dtype(), T,
                              (SpaceBatchKernel<T, true>(dmlc::get<SpaceBatchParam>(attrs.parsed), out[0], in[0])));
                        })
    .set_attr<FGradient>("FGradient", SpaceBatchGradient("space_to_batch_nd"))
    .set_attr<FDeviceKernel>("FDeviceKernel", SpaceBatchDevice<true>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
