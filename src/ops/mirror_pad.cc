/*!
 * \file mirror_pad.cc
 * \brief mirror_pad (TensorFlow MirrorPad, REFLECT or SYMMETRIC) and its gradient mirror_pad_grad
 * (MirrorPadGrad), each the other's gradient: CPU kernels and device kernels (in the library of
 * nn_device_library.h).
 */
#include <algorithm>
#include <string>
#include <vector>

#include "ops/nn_device_library.h"

namespace ir {
namespace op {
namespace {

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

/*! \brief FCompute of mirror_pad (kGrad false) or mirror_pad_grad. */
template <bool kGrad>
void MirrorPadCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const MirrorPadParam& p = dmlc::get<MirrorPadParam>(attrs.parsed);
  if (kGrad) {
    IR_NUMERIC_SWITCH(in[0].dtype(), T, (MirrorPadKernel<T, true>(p, out[0], in[0])));
  } else {
    IR_ALL_TYPES_SWITCH(in[0].dtype(), T, (MirrorPadKernel<T, false>(p, in[0], out[0])));
  }
}

}  // namespace

const char nn::kMirrorPadDeviceC[] = R"(
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
)";

namespace {

/*! \brief mirror_pad (kGrad false: x -> y) or mirror_pad_grad (dy -> dx). */
template <bool kGrad>
void MirrorPadDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const Shape& xs = (kGrad ? out : in)[0].shape();
  if (!nn::DeviceOrHost(dev, attrs, in, out, out[0].dtype(), xs.ndim())) return;
  const MirrorPadParam& p = dmlc::get<MirrorPadParam>(attrs.parsed);
  const Shape& ys = (kGrad ? in : out)[0].shape();
  nn::DeviceDims d;
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
  dev.Launch(nn::DeviceLibrary(), out[0].dtype(), kGrad ? "mirror_pad_grad" : "mirror_pad", args,
             DeviceLaunch::Threads(out[0].Size()));
}

}  // namespace

IR_REGISTER_OP(mirror_pad)
    .describe("data padded with its mirror image (TensorFlow MirrorPad, REFLECT or SYMMETRIC).")
    .apply(InversePair<MirrorPadParam>("data", ParseMirrorPad, "mirror_pad_grad"))
    .set_attr<FInferShape>("FInferShape", MirrorPadShape<false>)
    .set_attr<FCompute>("FCompute", MirrorPadCompute<false>)
    .set_attr<FDeviceKernel>("FDeviceKernel", MirrorPadDevice<false>);

IR_REGISTER_OP(mirror_pad_grad)
    .describe("Gradient of mirror_pad: each padded element added back to the element it mirrors (MirrorPadGrad).")
    .apply(InversePair<MirrorPadParam>("dy", ParseMirrorPad, "mirror_pad"))
    .set_attr<FInferShape>("FInferShape", MirrorPadShape<true>)
    .set_attr<FCompute>("FCompute", MirrorPadCompute<true>)
    .set_attr<FDeviceKernel>("FDeviceKernel", MirrorPadDevice<true>);

}  // namespace op
}  // namespace ir
