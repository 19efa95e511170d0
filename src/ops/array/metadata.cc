/*!
 * \file metadata.cc
 * \brief Ops about shapes and index sequences: shape, size, rank (a tensor's metadata as a
 * tensor) and range (an arithmetic sequence). None has a gradient.
 */
#include <cmath>
#include <string>

#include "ops/array/array_common.h"
#include "ops/array/array_vectorize.h"

namespace ir {
namespace op {
namespace {

struct OutTypeParam : public dmlc::Parameter<OutTypeParam> {
  std::string out_type;
  DMLC_DECLARE_PARAMETER(OutTypeParam) {
    DMLC_DECLARE_FIELD(out_type).set_default("int32").describe("Output dtype: int32 or int64.");
  }
};

struct RangeParam : public dmlc::Parameter<RangeParam> {
  double start;
  double limit;
  double delta;
  std::string dtype;
  DMLC_DECLARE_PARAMETER(RangeParam) {
    DMLC_DECLARE_FIELD(start).set_default(0.0).describe("First value.");
    DMLC_DECLARE_FIELD(limit).describe("Bound the sequence stops before (not included).");
    DMLC_DECLARE_FIELD(delta).set_default(1.0).describe("Step, nonzero (negative counts down).");
    DMLC_DECLARE_FIELD(dtype).set_default("float32").describe("Output dtype (numeric).");
  }
};

DMLC_REGISTER_PARAMETER(OutTypeParam);
DMLC_REGISTER_PARAMETER(RangeParam);

const DTypeSet& IntTypes() {
  static const DTypeSet types = {DType::kInt32, DType::kInt64};
  return types;
}

bool OutTypeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = DTypeAttr(attrs, "attribute 'out_type'", dmlc::get<OutTypeParam>(attrs.parsed).out_type, IntTypes());
  return OutputsAre(dtype, in, out);
}

/*! \brief Writes `values` into the int32 or int64 array `out`. */
void WriteInts(const NDArray& out, const std::vector<int64_t>& values) {
  if (out.dtype() == DType::kInt32) {
    for (size_t i = 0; i < values.size(); ++i) out.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  } else {
    for (size_t i = 0; i < values.size(); ++i) out.data<int64_t>()[i] = values[i];
  }
}

// ---------------------------------------------------------------- shape, size, rank

bool ShapeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], Shape{(*in)[0].rank_known() ? (*in)[0].ndim() : kUnknownDim});
  return AllKnown(*in, *out);
}

bool ScalarShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], Shape::Scalar());
  return AllKnown(*in, *out);
}

void MetadataOp(Op& op) {
  op.set_num_inputs(1)
      .set_input_names({"data"})
      .set_attr<FGradient>("FGradient", ZeroGradient)
      // The result depends only on the input's shape: FoldConstants evaluates it once that is inferred.
      .set_attr<TShapeOnly>("TShapeOnly", true)
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

// ---------------------------------------------------------------- range

/*! \brief The output dtype of range; integer dtypes need integer start, limit and delta. */
DType RangeType(const NodeAttrs& attrs) {
  const RangeParam& p = dmlc::get<RangeParam>(attrs.parsed);
  DType dtype = DTypeAttr(attrs, "attribute 'dtype'", p.dtype, NumericTypes());
  if (!DTypeIsFloat(dtype)) {
    for (double v : {p.start, p.limit, p.delta}) {
      IR_CHECK(v == std::floor(v)) << NodeDesc(attrs) << ": range of " << DTypeName(dtype) << " needs integer start, "
                                   << "limit and delta, got " << v;
    }
  }
  return dtype;
}

/*! \brief Number of values of start, start + delta, ... before limit (as numpy.arange). */
int64_t RangeCount(const NodeAttrs& attrs) {
  const RangeParam& p = dmlc::get<RangeParam>(attrs.parsed);
  IR_CHECK(p.delta != 0) << NodeDesc(attrs) << ": delta must be nonzero (start " << p.start << ", limit " << p.limit
                         << ")";
  double count = std::ceil((p.limit - p.start) / p.delta);
  IR_CHECK(std::isfinite(count) && count < 9.0e15)
      << NodeDesc(attrs) << ": range from " << p.start << " to " << p.limit << " by " << p.delta << " is too long";
  return count > 0 ? static_cast<int64_t>(count) : 0;
}

bool RangeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], Shape{RangeCount(attrs)});
  return AllKnown(*in, *out);
}

bool RangeTypeInfer(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return OutputsAre(RangeType(attrs), in, out);
}

void RangeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>&,
                  const std::vector<NDArray>& out) {
  const RangeParam& p = dmlc::get<RangeParam>(attrs.parsed);
  IR_NUMERIC_SWITCH(out[0].dtype(), DT, {
    DT* dst = out[0].data<DT>();
    ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<DT>(p.start + static_cast<double>(i) * p.delta);
    });
  });
}

// ---------------------------------------------------------------- FVectorize

/*! \brief shape, size, rank of a stacked value: the per-iteration answer, loop-invariant. */
std::vector<PforValue> ShapeOfVectorize(PforContext& ctx) {
  const std::string& op = ctx.attrs().op->name;
  if (op == "shape") {
    NodeEntry all = ctx.CopyNode({ctx.input(0).entry}, ctx.attrs().dict);
    return {PforValue{ctx.Make("slice", {all}, {{"begin", "(1)"}, {"size", "(-1)"}}), false}};
  }
  const Shape& x = ctx.in_shape(0);
  const int64_t value = op == "rank" ? x.ndim() : x.Size();
  return {PforValue{
      ctx.Make("fill", {}, {{"shape", "()"}, {"value", std::to_string(value)}, {"dtype", DTypeName(ctx.out_dtype(0))}}),
      false}};
}

}  // namespace

IR_REGISTER_OP(shape)
    .describe("The input's shape as a vector (its values need only the input's shape).")
    .apply(MetadataOp)
    .set_param<OutTypeParam>()
    .set_attr<FInferShape>("FInferShape", ShapeShape)
    .set_attr<FInferType>("FInferType", OutTypeType)
    .set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                                       const std::vector<NDArray>& out) { WriteInts(out[0], in[0].shape().dims()); })
    .set_attr<FVectorize>("FVectorize", ShapeOfVectorize);

IR_REGISTER_OP(size)
    .describe("The number of elements of the input, as a scalar.")
    .apply(MetadataOp)
    .set_param<OutTypeParam>()
    .set_attr<FInferShape>("FInferShape", ScalarShape)
    .set_attr<FInferType>("FInferType", OutTypeType)
    .set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                                       const std::vector<NDArray>& out) { WriteInts(out[0], {in[0].Size()}); })
    .set_attr<FVectorize>("FVectorize", ShapeOfVectorize);

IR_REGISTER_OP(rank)
    .describe("The number of dimensions of the input, as an int32 scalar.")
    .apply(MetadataOp)
    .set_attr<FInferShape>("FInferShape", ScalarShape)
    .set_attr<FInferType>("FInferType", [](const NodeAttrs&, std::vector<DType>* in,
                                           std::vector<DType>* out) { return OutputsAre(DType::kInt32, in, out); })
    .set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                                       const std::vector<NDArray>& out) { WriteInts(out[0], {in[0].shape().ndim()}); })
    .set_attr<FVectorize>("FVectorize", ShapeOfVectorize);

IR_REGISTER_OP(range)
    .describe("start, start + delta, ... up to (not including) limit, as numpy.arange and tf.range.")
    .set_num_inputs(0)
    .set_param<RangeParam>()
    .set_attr<FInferShape>("FInferShape", RangeShape)
    .set_attr<FInferType>("FInferType", RangeTypeInfer)
    .set_attr<FCompute>("FCompute", RangeCompute)
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
