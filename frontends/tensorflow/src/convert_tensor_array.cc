/*!
 * \file convert_tensor_array.cc
 * \brief Converters of TF1's TensorArray family. A TensorArray becomes a dense tensor
 * [size, elem...] threaded as TF's "flow" value: TensorArrayV3 makes it (zeros; its handle output
 * is the same value), writes and scatters return a new array, reads and gathers take rows. The
 * handle inputs are ignored: the flow input carries the array. Stacks and TensorArray gradients
 * (only in graphs TF differentiated) are rejected.
 */
#include <algorithm>

#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief The TensorArray's rows' shape: the element_shape attribute, which must be known. */
std::vector<int64_t> ElementShape(const ImportContext& ctx) {
  Shape shape = ctx.HasAttr("element_shape") ? ctx.ShapeAttr("element_shape") : Shape();
  IR_CHECK(shape.is_known()) << "the TensorArray's element_shape is "
                             << (shape.rank_known() ? shape.ToString() : "unknown")
                             << "; only TensorArrays of a known element shape are supported";
  return shape.dims();
}

Outputs ConvertTensorArray(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  auto size = static_cast<int64_t>(ctx.ConstScalar(0));
  IR_CHECK(size > 0) << "the TensorArray's size must be known and positive, got " << size;
  std::vector<int64_t> dims{size};
  for (int64_t d : ElementShape(ctx)) dims.push_back(d);
  IR_CHECK(Shape(dims).Bytes(ctx.Type("dtype")) <= ctx.max_const_bytes())
      << "the TensorArray " << IntsAttr(dims) << " is larger than the " << ctx.max_const_bytes() << "-byte limit";
  NodeEntry zeros =
      ctx.Op("fill", {}, {{"shape", IntsAttr(dims)}, {"value", "0"}, {"dtype", DTypeName(ctx.Type("dtype"))}});
  return {zeros, zeros};
}

Outputs ConvertWrite(ImportContext& ctx) {
  ctx.ExpectInputs(4);
  return {ctx.Op("tensor_array_write", {ctx.input(3), ctx.input(1), ctx.input(2)})};
}

Outputs ConvertRead(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {ctx.Op("tensor_array_read", {ctx.input(2), ctx.input(1)})};
}

Outputs ConvertGather(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {ctx.Op("tensor_array_gather", {ctx.input(2), ctx.input(1)})};
}

Outputs ConvertScatter(ImportContext& ctx) {
  ctx.ExpectInputs(4);
  return {ctx.Op("tensor_array_scatter", {ctx.input(3), ctx.input(1), ctx.input(2)})};
}

/*! \brief The array's shape (flow input `i`), which must be known. */
Shape ArrayShape(const ImportContext& ctx, size_t i) {
  Shape shape = ctx.InputShape(i);
  IR_CHECK(shape.is_known() && shape.ndim() >= 1) << "the TensorArray's shape must be known here, but it is " << shape;
  return shape;
}

Outputs ConvertSize(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Constant(NDArray::Scalar<int32_t>(static_cast<int32_t>(ArrayShape(ctx, 1)[0])))};
}

/*! \brief Concat: the rows joined along their first axis, and each row's length. */
Outputs ConvertConcat(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  Shape shape = ArrayShape(ctx, 1);
  IR_CHECK(shape.ndim() >= 2) << "concatenating a TensorArray needs elements of rank >= 1, got " << shape;
  std::vector<int64_t> dims(shape.dims().begin() + 1, shape.dims().end());
  dims[0] *= shape[0];
  std::vector<int64_t> lengths(static_cast<size_t>(shape[0]), shape[1]);
  return {ctx.Op("reshape", {ctx.input(1)}, {{"shape", IntsAttr(dims)}}),
          ctx.Constant(NDArray::FromVector<int64_t>(Shape{shape[0]}, lengths), "lengths")};
}

/*! \brief Split with equal lengths: the value reshaped to [count, length, rest...]. */
Outputs ConvertSplit(ImportContext& ctx) {
  ctx.ExpectInputs(4);
  std::vector<int64_t> lengths = ctx.ConstInts(2);
  IR_CHECK(!lengths.empty() && std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; }))
      << "only splits into equal lengths are supported, got " << IntsAttr(lengths);
  Shape value = ctx.InputShape(1);
  IR_CHECK(value.is_known() && value.ndim() >= 1 && value[0] == lengths[0] * static_cast<int64_t>(lengths.size()))
      << "the value's shape " << value << " does not match the lengths " << IntsAttr(lengths);
  std::vector<int64_t> dims{static_cast<int64_t>(lengths.size()), lengths[0]};
  dims.insert(dims.end(), value.dims().begin() + 1, value.dims().end());
  return {ctx.Op("reshape", {ctx.input(1)}, {{"shape", IntsAttr(dims)}})};
}

Outputs ConvertClose(ImportContext& ctx) { return {ctx.Op("no_op", {})}; }

Outputs RejectGradientOnly(ImportContext& ctx) {
  ctx.Fail(StrCat("op ", ctx.op(),
                  " appears only in graphs TensorFlow differentiated (tf.gradients through a while loop): "
                  "import the forward graph and differentiate it with the IR's Gradient pass instead"));
}

}  // namespace

IR_TF_CONVERTER({"TensorArrayV3"}, ConvertTensorArray);
IR_TF_CONVERTER({"TensorArrayWriteV3"}, ConvertWrite);
IR_TF_CONVERTER({"TensorArrayReadV3"}, ConvertRead);
IR_TF_CONVERTER({"TensorArrayGatherV3"}, ConvertGather);
IR_TF_CONVERTER({"TensorArrayScatterV3"}, ConvertScatter);
IR_TF_CONVERTER({"TensorArraySizeV3"}, ConvertSize);
IR_TF_CONVERTER({"TensorArrayConcatV3"}, ConvertConcat);
IR_TF_CONVERTER({"TensorArraySplitV3"}, ConvertSplit);
IR_TF_CONVERTER({"TensorArrayCloseV3"}, ConvertClose);
IR_TF_CONVERTER({"TensorArrayGradV3", "TensorArrayGradWithShape", "StackV2", "StackPushV2", "StackPopV2",
                 "StackCloseV2"},
                RejectGradientOnly);

}  // namespace tf
}  // namespace ir
