/*!
 * \file random.cc
 * \brief Random tensors: random_uniform, random_normal and truncated_normal.
 *
 * Element i is a function of (OpContext::seed, the `seed` attribute, i) only (see
 * random_utils.h), so a run is reproducible and independent of the number of threads.
 * The ops are stateful (TIsStateful): passes must not merge or constant-fold them.
 */
#include <algorithm>
#include <string>

#include "ops/array_common.h"
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

/*! \brief What the random ops share: no inputs, shape and dtype from attributes, stateful. */
template <typename P>
auto RandomOp(FCompute compute) {
  return [compute](Op& op) {
    op.set_num_inputs(0).set_param<P>();
    op.set_attr<FInferShape>("FInferShape", RandomShape<P>);
    op.set_attr<FInferType>("FInferType", RandomType<P>);
    op.set_attr<FCompute>("FCompute", compute);
    op.set_attr<FGradient>("FGradient", ZeroGradient);
    op.set_attr<TIsStateful>("TIsStateful", true);
    op.set_attr<TOpPattern>("TOpPattern", kOpaque);
  };
}

}  // namespace

IR_REGISTER_OP(random_uniform)
    .describe("Uniform random values in [minval, maxval).")
    .apply(RandomOp<UniformParam>(UniformCompute));

IR_REGISTER_OP(random_normal)
    .describe("Normal random values with the given mean and stddev (Box-Muller).")
    .apply(RandomOp<NormalParam>(NormalCompute));

IR_REGISTER_OP(truncated_normal)
    .describe("Normal random values within two stddevs of the mean; values beyond are drawn again.")
    .apply(RandomOp<NormalParam>(TruncatedNormalCompute));

}  // namespace op
}  // namespace ir
