/*!
 * \file random.cc
 * \brief Random tensors: random_uniform (and random_uniform_like), random_normal and truncated_normal.
 *
 * Element i is a function of (OpContext::seed, the `seed` attribute, i) only (see
 * random_utils.h), so a run is reproducible and independent of the number of threads.
 * The ops are stateful (TIsStateful): passes must not merge or constant-fold them; and replayable
 * (TReplayable): drawing again with the same seed gives the same values, so a gradient may
 * recompute them (a body's gradient, with the body's key, draws what the body drew). The device
 * kernels (here, with dropout's) run the same generator in portable kernel C.
 */
#include <algorithm>
#include <cmath>
#include <string>

#include "ir/vectorize.h"
#include "ops/array/array_common.h"
#include "ops/random_utils.h"

namespace ir {
namespace op {
namespace {

struct UniformParam : public dmlc::Parameter<UniformParam> {
  IntList shape;
  std::string dtype;
  int seed;
  double minval;
  double maxval;
  DMLC_DECLARE_PARAMETER(UniformParam) {
    DMLC_DECLARE_FIELD(shape).describe("Output shape.");
    DMLC_DECLARE_FIELD(dtype).set_default("float32").describe("Output dtype: float32 or float64.");
    DMLC_DECLARE_FIELD(seed).set_default(0).describe("Op seed, combined with the run's seed.");
    DMLC_DECLARE_FIELD(minval).set_default(0.0).describe("Lower bound (included).");
    DMLC_DECLARE_FIELD(maxval).set_default(1.0).describe("Upper bound (excluded).");
  }
};

struct NormalParam : public dmlc::Parameter<NormalParam> {
  IntList shape;
  std::string dtype;
  int seed;
  double mean;
  double stddev;
  DMLC_DECLARE_PARAMETER(NormalParam) {
    DMLC_DECLARE_FIELD(shape).describe("Output shape.");
    DMLC_DECLARE_FIELD(dtype).set_default("float32").describe("Output dtype: float32 or float64.");
    DMLC_DECLARE_FIELD(seed).set_default(0).describe("Op seed, combined with the run's seed.");
    DMLC_DECLARE_FIELD(mean).set_default(0.0).describe("Mean of the normal distribution.");
    DMLC_DECLARE_FIELD(stddev).set_default(1.0).describe("Standard deviation of the normal distribution.");
  }
};

DMLC_REGISTER_PARAMETER(UniformParam);
DMLC_REGISTER_PARAMETER(NormalParam);

template <typename P>
bool RandomShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const IntList& shape = dmlc::get<P>(attrs.parsed).shape;
  for (int64_t d : shape.values) {
    IR_CHECK(d >= 0) << NodeDesc(attrs) << ": shape " << ListText(shape.values) << " has a negative dimension";
  }
  AssignShape(attrs, "output 0", &(*out)[0], Shape(shape.values));
  return AllKnown(*in, *out);
}

template <typename P>
bool RandomType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return OutputsAre(DTypeAttr(attrs, "attribute 'dtype'", dmlc::get<P>(attrs.parsed).dtype, FloatTypes()), in, out);
}

template <typename P>
uint64_t KeyOf(const OpContext& ctx, const NodeAttrs& attrs) {
  return random::CombineSeeds(ctx.seed, static_cast<uint64_t>(static_cast<int64_t>(dmlc::get<P>(attrs.parsed).seed)));
}

void UniformCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>&,
                    const std::vector<NDArray>& out) {
  const UniformParam& p = dmlc::get<UniformParam>(attrs.parsed);
  uint64_t key = KeyOf<UniformParam>(ctx, attrs);
  IR_FLOAT_SWITCH(out[0].dtype(), DT, {
    DT lo = static_cast<DT>(p.minval), hi = static_cast<DT>(p.maxval), width = hi - lo;
    DT* dst = out[0].data<DT>();
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        DT v = lo + random::UniformAt<DT>(key, i) * width;
        dst[i] = v < hi || !(hi > lo) ? v : std::nextafter(hi, lo);  // rounding must not reach maxval
      }
    };
    ParallelFor(out[0].Size(), body, 1 << 12);
  });
}

void NormalCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>&,
                   const std::vector<NDArray>& out) {
  const NormalParam& p = dmlc::get<NormalParam>(attrs.parsed);
  uint64_t key = KeyOf<NormalParam>(ctx, attrs);
  int64_t n = out[0].Size();
  IR_FLOAT_SWITCH(out[0].dtype(), DT, {
    DT* dst = out[0].data<DT>();
    // One Box-Muller pair fills elements 2k and 2k + 1.
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        std::pair<double, double> z = random::NormalPair(key, k);
        dst[2 * k] = static_cast<DT>(p.mean + p.stddev * z.first);
        if (2 * k + 1 < n) dst[2 * k + 1] = static_cast<DT>(p.mean + p.stddev * z.second);
      }
    };
    ParallelFor((n + 1) / 2, body, 1 << 11);
  });
}

void TruncatedNormalCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>&,
                            const std::vector<NDArray>& out) {
  const NormalParam& p = dmlc::get<NormalParam>(attrs.parsed);
  uint64_t key = KeyOf<NormalParam>(ctx, attrs);
  IR_FLOAT_SWITCH(out[0].dtype(), DT, {
    DT* dst = out[0].data<DT>();
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        dst[i] = static_cast<DT>(p.mean + p.stddev * random::TruncatedNormalAt(key, i));
      }
    };
    ParallelFor(out[0].Size(), body, 1 << 11);
  });
}

// ---------------------------------------------------------------- device kernels

/*
 * The generator of random_utils.h in portable kernel C, so devices draw the CPU's numbers:
 * uniform values and dropout masks bit for bit (integer arithmetic and exactly rounded
 * conversions); normals by Box-Muller in double as the CPU, with the device's log, sqrt, sin
 * and cos, which may differ from glibc's in the last bits.
 */
const char kRandomC[] = R"(
/* Philox4x32-10 of counter (index, draw) under key into w[4], as random::WordsAt. */
IR_FUNC void random_philox(const ulong key, const ulong index, const ulong draw, uint* w) {
  uint c0 = (uint)index, c1 = (uint)(index >> 32), c2 = (uint)draw, c3 = (uint)(draw >> 32);
  uint k0 = (uint)key, k1 = (uint)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
    c0 = (uint)(p1 >> 32) ^ c1 ^ k0;
    c1 = (uint)p1;
    c2 = (uint)(p0 >> 32) ^ c3 ^ k1;
    c3 = (uint)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

/* The integer behind random::UniformAt<T>: 24 random bits for float elements, 53 for double. */
IR_FUNC ulong random_uniform_bits(const ulong key, const ulong index) {
  uint w[4];
  random_philox(key, index, 0, w);
  return sizeof(T) == sizeof(double) ? (((ulong)w[0] << 21) ^ (w[1] >> 11)) : (ulong)(w[0] >> 8);
}

/* random::UnitDouble */
IR_FUNC double random_unit(const uint high, const uint low) {
  return (double)(((ulong)high << 21) ^ (low >> 11)) * (1.0 / 9007199254740992.0);
}

/* The standard normal of element index, draw `draw` (random::NormalAt). */
IR_FUNC double random_normal_at(const ulong key, const ulong index, const ulong draw) {
  uint w[4];
  random_philox(key, index / 2, draw, w);
  const double u1 = 1.0 - random_unit(w[0], w[1]), u2 = random_unit(w[2], w[3]);
  const double radius = sqrt(-2.0 * log(u1)), angle = 6.283185307179586476925 * u2;
  return index % 2 == 0 ? radius * cos(angle) : radius * sin(angle);
}

/* lo + u * (hi - lo) with u the element's uniform in [0, 1), kept below hi as the CPU does. */
IR_KERNEL void random_uniform(IR_ARRAY(T, out), const long n, const ulong key, const T lo, const T hi,
                              const T below_hi) {
  IR_OFFSET(out);
  const T width = hi - lo, unit = sizeof(T) == sizeof(double) ? (T)(1.0 / 9007199254740992.0) : (T)(1.0 / 16777216.0);
  IR_THREAD_LOOP(i, n) {
    const T v = lo + (T)random_uniform_bits(key, (ulong)i) * unit * width;
    out[i] = v < hi || !(hi > lo) ? v : below_hi;
  }
}

/* mean + stddev * z with z the element's standard normal, redrawn while |z| > 2 when truncated. */
IR_KERNEL void random_normal(IR_ARRAY(T, out), const long n, const ulong key, const double mean, const double stddev,
                             const long truncated) {
  IR_OFFSET(out);
  IR_THREAD_LOOP(i, n) {
    double z = random_normal_at(key, (ulong)i, 0);
    for (ulong draw = 1; truncated && fabs(z) > 2.0; ++draw) z = random_normal_at(key, (ulong)i, draw);
    out[i] = (T)(mean + stddev * z);
  }
}

/* mask = scale where the element's uniform bits are below keep_bits (u < keep_prob), else 0; y = x * mask. */
IR_KERNEL void random_dropout(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), IR_ARRAY(T, mask), const long n, const ulong key,
                              const ulong keep_bits, const T scale, const long active) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_OFFSET(mask);
  IR_THREAD_LOOP(i, n) {
    const T m = !active ? (T)1 : random_uniform_bits(key, (ulong)i) < keep_bits ? scale : (T)0;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}
)";

const DeviceKernelSource& kRandomSource =
    RegisterDeviceKernelSource({"random", kRandomC, {DType::kFloat32, DType::kFloat64}});

/*! \brief v rounded to the element type of `dtype` (as the CPU kernels round their parameters). */
double Rounded(DType dtype, double v) { return dtype == DType::kFloat32 ? static_cast<float>(v) : v; }

void UniformDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  // The generator computes in double, as the CPU kernel does (the same numbers on every target).
  if (!dev.SupportsFloat64()) return dev.RunOnHost(attrs, in, out);
  const UniformParam& p = dmlc::get<UniformParam>(attrs.parsed);
  DType dtype = out[0].dtype();
  double lo = Rounded(dtype, p.minval), hi = Rounded(dtype, p.maxval);
  double below = dtype == DType::kFloat32 ? std::nextafter(static_cast<float>(hi), static_cast<float>(lo))
                                          : std::nextafter(hi, lo);
  DeviceArgs args;
  args.Array(out[0]).Value(out[0].Size()).Value(KeyOf<UniformParam>(dev.op_context(), attrs));
  args.Scalar(dtype, lo).Scalar(dtype, hi).Scalar(dtype, below);
  dev.Launch(kRandomSource, dtype, "random_uniform", args, DeviceLaunch::Threads(out[0].Size()));
}

template <bool kTruncated>
void NormalDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                        const std::vector<NDArray>& out) {
  if (!dev.SupportsFloat64()) return dev.RunOnHost(attrs, in, out);
  const NormalParam& p = dmlc::get<NormalParam>(attrs.parsed);
  DeviceArgs args;
  args.Array(out[0]).Value(out[0].Size()).Value(KeyOf<NormalParam>(dev.op_context(), attrs));
  args.Value(p.mean).Value(p.stddev).Value(int64_t{kTruncated});
  dev.Launch(kRandomSource, out[0].dtype(), "random_normal", args, DeviceLaunch::Threads(out[0].Size()));
}

}  // namespace

namespace random {

void DropoutOnDevice(DeviceKernelContext& dev, uint64_t key, double keep_prob, bool active, const NDArray& x,
                     const NDArray& y, const NDArray& mask) {
  DType dtype = x.dtype();
  // u = bits / 2^b < keep_prob  <=>  bits < ceil(keep_prob * 2^b): exact, as keep_prob * 2^b is.
  auto keep_bits = static_cast<uint64_t>(std::ceil(std::ldexp(keep_prob, dtype == DType::kFloat64 ? 53 : 24)));
  DeviceArgs args;
  args.Array(x).Array(y).Array(mask).Value(x.Size()).Value(key).Value(keep_bits);
  args.Scalar(dtype, 1 / keep_prob).Value(int64_t{active});
  dev.Launch(kRandomSource, dtype, "random_dropout", args, DeviceLaunch::Threads(x.Size()));
}

}  // namespace random

namespace {

/*! \brief What the random ops share: no inputs, shape and dtype from attributes, stateful. */
template <typename P>
auto RandomOp(FCompute compute, FDeviceKernel device_kernel) {
  return [compute, device_kernel](Op& op) {
    op.set_num_inputs(0).set_param<P>();
    op.set_attr<FInferShape>("FInferShape", RandomShape<P>);
    op.set_attr<FInferType>("FInferType", RandomType<P>);
    op.set_attr<FCompute>("FCompute", compute);
    op.set_attr<FDeviceKernel>("FDeviceKernel", device_kernel);
    op.set_attr<FGradient>("FGradient", ZeroGradient);
    op.set_attr<TIsStateful>("TIsStateful", true).set_attr<TReplayable>("TReplayable", true);
    op.set_attr<TOpPattern>("TOpPattern", kOpaque);
  };
}

/*! \brief [n] + `shape`. */
std::vector<int64_t> WithN(const PforContext& ctx, const Shape& shape) {
  std::vector<int64_t> dims{ctx.n()};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return dims;
}

/*! \brief One draw of shape [n] + shape: independent elements, so independent iterations. */
std::vector<PforValue> RandomVectorize(PforContext& ctx) {
  return {PforValue{ctx.CopyNode({}, ctx.DictWith("shape", StrCat(IntList(WithN(ctx, ctx.out_shape(0)))))), true}};
}

}  // namespace

IR_REGISTER_OP(random_uniform)
    .describe("Uniform random values in [minval, maxval).")
    .apply(RandomOp<UniformParam>(UniformCompute, UniformDeviceKernel))
    .set_attr<FVectorize>("FVectorize", RandomVectorize);

IR_REGISTER_OP(random_uniform_like)
    .describe(
        "Uniform random values in [minval, maxval) with the shape and float dtype of its input, so a shape known "
        "only when the graph runs (a batch of any size) works; the attributes `shape` and `dtype` are ignored.")
    .set_num_inputs(1)
    .set_input_names({"like"})
    .set_param<UniformParam>()
    .set_attr_parser([](NodeAttrs* attrs) {
      attrs->dict.emplace("shape", "()");
      ParamParser<UniformParam>(attrs);
    })
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            bool known = ElemwiseType(attrs, in, out);
                            if (known) CheckDType(attrs, "input 'like'", (*in)[0], FloatTypes());
                            return known;
                          })
    .set_attr<FCompute>("FCompute", UniformCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", UniformDeviceKernel)
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<TIsStateful>("TIsStateful", true)
    .set_attr<TReplayable>("TReplayable", true)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(random_normal)
    .describe("Normal random values with the given mean and stddev (Box-Muller).")
    .apply(RandomOp<NormalParam>(NormalCompute, NormalDeviceKernel<false>))
    .set_attr<FVectorize>("FVectorize", RandomVectorize);

IR_REGISTER_OP(truncated_normal)
    .describe("Normal random values within two stddevs of the mean; values beyond are drawn again.")
    .apply(RandomOp<NormalParam>(TruncatedNormalCompute, NormalDeviceKernel<true>))
    .set_attr<FVectorize>("FVectorize", RandomVectorize);

}  // namespace op
}  // namespace ir
