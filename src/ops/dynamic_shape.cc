/*!
 * \file dynamic_shape.cc
 * \brief Ops whose output shape is a value the graph computes (like fill_dims): reshape_dims
 * (tf.reshape(x, [tf.shape(x)[0], -1])) and range_dims (tf.range(tf.shape(x)[0])). Inference
 * knows their rank at most; their kernels (FComputeShaped) allocate the output when they run.
 */
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

/*! \brief The int32/int64 values of a (host copy of a) shape or scalar tensor. */
std::vector<int64_t> IntValues(const NDArray& array) {
  NDArray host = array.CopyTo(Device::CPU());
  std::vector<int64_t> v(static_cast<size_t>(host.shape().Size()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = host.dtype() == DType::kInt32 ? host.data<int32_t>()[i] : host.data<int64_t>()[i];
  }
  return v;
}

bool ReshapeDimsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& dims = (*in)[1];
  IR_CHECK(!dims.rank_known() || dims.ndim() == 1) << NodeDesc(attrs) << ": shape must be a vector, got shape " << dims;
  if (dims.is_known()) AssignShape(attrs, "output 0", &(*out)[0], Shape::UnknownDims(static_cast<int>(dims[0])));
  return false;
}

bool IntInputType(const NodeAttrs& attrs, const std::string& what, DType dtype) {
  if (dtype != DType::kUnknown) CheckDType(attrs, what, dtype, {DType::kInt32, DType::kInt64});
  return dtype != DType::kUnknown;
}

bool ReshapeDimsType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  IntInputType(attrs, "shape", (*in)[1]);
  if ((*in)[0] != DType::kUnknown) AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
  return AllKnown(*in, *out);
}

std::vector<NDArray> ReshapeDimsCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  std::vector<int64_t> sizes = IntValues(in[1]);
  int64_t known = 1, infer = -1, total = in[0].shape().Size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      IR_CHECK(infer < 0) << NodeDesc(attrs) << ": only one dimension of the shape may be -1";
      infer = static_cast<int64_t>(i);
    } else {
      IR_CHECK(sizes[i] >= 0) << NodeDesc(attrs) << ": dimension " << i << " is " << sizes[i] << ", which is negative";
      known *= sizes[i];
    }
  }
  if (infer >= 0) {
    IR_CHECK(known > 0 && total % known == 0)
        << NodeDesc(attrs) << ": cannot reshape a tensor of shape " << in[0].shape() << " (" << total
        << " elements) into a shape with a -1 whose other dimensions hold " << known << " elements";
    sizes[static_cast<size_t>(infer)] = total / known;
    known = total;
  }
  Shape shape(sizes);
  IR_CHECK(known == total) << NodeDesc(attrs) << ": cannot reshape a tensor of shape " << in[0].shape() << " (" << total
                           << " elements) into shape " << shape << " (" << known << " elements)";
  return {in[0].CopyTo(ctx.device).Reshape(shape)};
}

/*! \brief data gets the output gradient in data's shape; shape gets none. */
std::vector<NodeEntry> ReshapeDimsGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  return {GradNode("reshape_like", node, "data", {ograds[0], In(node, 0)}), NodeEntry()};
}

bool RangeDimsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  for (size_t i = 0; i < in->size(); ++i) {
    IR_CHECK(!(*in)[i].is_known() || (*in)[i].Size() == 1)
        << NodeDesc(attrs) << ": input " << i << " must be a scalar, got shape " << (*in)[i];
  }
  AssignShape(attrs, "output 0", &(*out)[0], Shape::UnknownDims(1));
  return false;
}

bool RangeDimsType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  static const DTypeSet kRangeTypes = {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64};
  for (size_t i = 0; i < in->size(); ++i) {
    if ((*in)[i] != DType::kUnknown) CheckDType(attrs, "input " + std::to_string(i), (*in)[i], kRangeTypes);
    if (i > 0) AssignType(attrs, "input " + std::to_string(i), &(*in)[i], (*in)[0]);
  }
  if ((*in)[0] != DType::kUnknown) AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
  return AllKnown(*in, *out);
}

/*! \brief The scalar `array` (a host copy of it) as a double. */
double ScalarValue(const NDArray& array) {
  NDArray host = array.CopyTo(Device::CPU());
  double value = 0;
  IR_ALL_TYPES_SWITCH(host.dtype(), DT, { value = static_cast<double>(host.data<DT>()[0]); });
  return value;
}

/*! \brief Throws unless delta is nonzero and points from start towards limit (TF's Range checks). */
template <typename T>
void CheckRange(const NodeAttrs& attrs, T start, T limit, T delta) {
  IR_CHECK(delta != 0) << NodeDesc(attrs) << ": delta must not be 0";
  IR_CHECK(delta > 0 ? start <= limit : start >= limit)
      << NodeDesc(attrs) << ": requires start <= limit when delta > 0 (start >= limit when delta < 0): start " << start
      << ", limit " << limit << ", delta " << delta;
}

/*! \brief start, start + delta, ... up to limit (excluded), as tf.range of int or float tensors (TF's count). */
std::vector<NDArray> RangeDimsCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  DType dtype = in[0].dtype();
  NDArray out;
  if (DTypeIsFloat(dtype)) {
    double start = ScalarValue(in[0]), limit = ScalarValue(in[1]), delta = ScalarValue(in[2]);
    CheckRange(attrs, start, limit, delta);
    out = NDArray(Shape({static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)))}), dtype, Device::CPU());
    IR_FLOAT_SWITCH(dtype, DT, {
      for (int64_t i = 0; i < out.Size(); ++i)
        out.data<DT>()[i] = static_cast<DT>(start + static_cast<double>(i) * delta);
    });
  } else {
    int64_t start = IntValues(in[0])[0], limit = IntValues(in[1])[0], delta = IntValues(in[2])[0];
    CheckRange(attrs, start, limit, delta);
    out = NDArray(Shape({(std::abs(limit - start) + std::abs(delta) - 1) / std::abs(delta)}), dtype, Device::CPU());
    for (int64_t i = 0; i < out.Size(); ++i) {
      if (dtype == DType::kInt32) {
        out.data<int32_t>()[i] = static_cast<int32_t>(start + i * delta);
      } else {
        out.data<int64_t>()[i] = start + i * delta;
      }
    }
  }
  return {ctx.device.type == DeviceType::kCPU ? out : out.CopyTo(ctx.device)};
}

}  // namespace

IR_REGISTER_OP(reshape_dims)
    .describe("data in the shape `shape` (an int vector known when the graph runs; one entry may be -1).")
    .set_num_inputs(2)
    .set_input_names({"data", "shape"})
    .set_attr<FInferShape>("FInferShape", ReshapeDimsShape)
    .set_attr<FInferType>("FInferType", ReshapeDimsType)
    .set_attr<FComputeShaped>("FComputeShaped", ReshapeDimsCompute)
    .set_attr<FGradient>("FGradient", ReshapeDimsGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(range_dims)
    .describe(
        "start, start + delta, ... below limit (scalar int or float tensors of one dtype, known when the graph "
        "runs).")
    .set_num_inputs(3)
    .set_input_names({"start", "limit", "delta"})
    .set_attr<FInferShape>("FInferShape", RangeDimsShape)
    .set_attr<FInferType>("FInferType", RangeDimsType)
    .set_attr<FComputeShaped>("FComputeShaped", RangeDimsCompute)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
