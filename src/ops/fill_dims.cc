/*!
 * \file fill_dims.cc
 * \brief fill_dims: a tensor of a shape given as a tensor (TensorFlow's Fill with computed dims,
 * tf.zeros(tf.shape(x)), an RNN's zero state for a batch known only at run time).
 *
 * Its output shape depends on the values of `dims`, which inference cannot see: the rank is
 * known from dims' length, the dimensions are not, and its kernel (FComputeShaped) allocates
 * the output once dims is known. The executor then plans the graph dynamically.
 */
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

bool FillDimsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& dims = (*in)[0];
  IR_CHECK(!dims.rank_known() || dims.ndim() == 1)
      << NodeDesc(attrs) << ": dims must be a vector (one size per dimension), got shape " << dims;
  IR_CHECK(!(*in)[1].is_known() || (*in)[1].Size() == 1)
      << NodeDesc(attrs) << ": value must be a scalar, got shape " << (*in)[1];
  if (dims.is_known()) AssignShape(attrs, "output 0", &(*out)[0], Shape::UnknownDims(static_cast<int>(dims[0])));
  return false;  // the dimensions are values: known only when it runs
}

bool FillDimsType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  if ((*in)[0] != DType::kUnknown) CheckDType(attrs, "dims", (*in)[0], {DType::kInt32, DType::kInt64});
  if ((*in)[1] != DType::kUnknown) AssignType(attrs, "output 0", &(*out)[0], (*in)[1]);
  if ((*out)[0] != DType::kUnknown) AssignType(attrs, "input 1", &(*in)[1], (*out)[0]);
  return AllKnown(*in, *out);
}

std::vector<NDArray> FillDimsCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  NDArray dims = in[0].CopyTo(Device::CPU());
  NDArray value = in[1].CopyTo(Device::CPU());
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < dims.shape().Size(); ++i) {
    int64_t d = dims.dtype() == DType::kInt32 ? dims.data<int32_t>()[i] : dims.data<int64_t>()[i];
    IR_CHECK(d >= 0) << NodeDesc(attrs) << ": dimension " << i << " is " << d << ", which is negative";
    sizes.push_back(d);
  }
  Shape shape(sizes);
  IR_CHECK(shape.FitsInt64()) << NodeDesc(attrs) << ": shape " << shape << " has too many elements";
  NDArray out(shape, value.dtype(), Device::CPU());
  IR_ALL_TYPES_SWITCH(value.dtype(), DT, {
    DT v = value.data<DT>()[0];
    std::fill(out.data<DT>(), out.data<DT>() + shape.Size(), v);
  });
  return {ctx.device.type == DeviceType::kCPU ? out : out.CopyTo(ctx.device)};
}

/*! \brief dims gets none; value gets the sum of the output's gradient. */
std::vector<NodeEntry> FillDimsGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  return {NodeEntry(), GradNode("sum", node, "value", {ograds[0]})};
}

}  // namespace

IR_REGISTER_OP(fill_dims)
    .describe("A tensor of shape `dims` (an int vector, known when the graph runs) with every element `value`.")
    .set_num_inputs(2)
    .set_input_names({"dims", "value"})
    .set_attr<FInferShape>("FInferShape", FillDimsShape)
    .set_attr<FInferType>("FInferType", FillDimsType)
    .set_attr<FComputeShaped>("FComputeShaped", FillDimsCompute)
    .set_attr<FGradient>("FGradient", FillDimsGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
