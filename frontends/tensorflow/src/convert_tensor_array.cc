/*!
 * \file convert_tensor_array.cc
 * \brief Converters of TF1's TensorArray family. A TensorArray becomes a dense tensor
 * [size, elem...] threaded as TF's "flow" value: TensorArrayV3 makes it (zeros; its handle output
 * is the same value), writes and scatters return a new array, reads and gathers take rows. The
 * handle inputs are ignored: the flow input carries the array. An element shape TensorArrayV3
 * leaves unknown is 0 (unknown rank: [size, 0]): the first write or scatter adopts the value's
 * (tensor_array.cc; a loop's converter gives such an array entering it the shape the loop writes).
 * Writes to an array of dynamic_size grow it (tensor_array_*_grow); a gradient array
 * (TensorArrayGradV3) is zeros like the forward array, and its writes start from zeros
 * (tensor_array_handles.cc says why).
 */
#include <algorithm>

#include "converter.h"
#include "functionalize.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief The TensorArray's rows' shape: element_shape with unknown dimensions 0, [0] for an unknown rank. */
std::vector<int64_t> ElementShape(const ImportContext& ctx) {
  Shape shape = ctx.HasAttr("element_shape") ? ctx.ShapeAttr("element_shape") : Shape();
  if (!shape.rank_known()) return {0};
  std::vector<int64_t> dims = shape.dims();
  for (int64_t& d : dims) d = d == kUnknownDim ? 0 : d;
  return dims;
}

Outputs ConvertTensorArray(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  NDArray known = ctx.TryConstInput(0);
  IR_CHECK(known.defined() && known.Size() == 1)
      << "the TensorArray's size must be known when the graph is imported (a constant, or computed from shapes)";
  auto size = static_cast<int64_t>(ctx.ConstScalar(0));
  IR_CHECK(size >= 0) << "the TensorArray's size must not be negative, got " << size;
  std::vector<int64_t> dims{size};
  for (int64_t d : ElementShape(ctx)) dims.push_back(d);
  IR_CHECK(Shape(dims).Bytes(ctx.Type("dtype")) <= ctx.max_const_bytes())
      << "the TensorArray " << IntsAttr(dims) << " is larger than the " << ctx.max_const_bytes() << "-byte limit";
  NodeEntry zeros =
      ctx.Op("fill", {}, {{"shape", IntsAttr(dims)}, {"value", "0"}, {"dtype", DTypeName(ctx.Type("dtype"))}});
  return {zeros, zeros};
}

/*! \brief The array a write or scatter starts from: the flow, zeros for a gradient array, grown for dynamic_size. */
NodeEntry WriteBase(const ImportContext& ctx) {
  return ctx.Bool(kGradientArrayAttr, false) ? ctx.input(0) : ctx.input(3);
}

/*! \brief The write op: growing (TensorArray of dynamic_size) or not. */
std::string WriteOp(const ImportContext& ctx, const std::string& op) {
  return ctx.Bool(kGrowsAttr, false) ? op + "_grow" : op;
}

Outputs ConvertWrite(ImportContext& ctx) {
  ctx.ExpectInputs(4);
  return {ctx.Op(WriteOp(ctx, "tensor_array_write"), {WriteBase(ctx), ctx.input(1), ctx.input(2)})};
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
  return {ctx.Op(WriteOp(ctx, "tensor_array_scatter"), {WriteBase(ctx), ctx.input(1), ctx.input(2)})};
}

/*! \brief The array's shape (flow input `i`), which must be known. */
Shape ArrayShape(const ImportContext& ctx, size_t i) {
  Shape shape = ctx.InputShape(i);
  IR_CHECK(shape.is_known() && shape.ndim() >= 1) << "the TensorArray's shape must be known here, but it is " << shape;
  return shape;
}

/*! \brief The number of rows: a constant when the array's shape is known, else read from it when the graph runs. */
Outputs ConvertSize(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  Shape shape = ctx.InputShape(1);
  if (shape.rank_known() && shape.ndim() >= 1 && shape[0] != kUnknownDim) {
    return {ctx.Constant(NDArray::Scalar<int32_t>(static_cast<int32_t>(shape[0])))};
  }
  NodeEntry dims = ctx.Op("shape", {ctx.input(1)}, {{"out_type", "int32"}}, "shape");
  NodeEntry first = ctx.Op("slice", {dims}, {{"begin", "(0)"}, {"size", "(1)"}}, "rows");
  return {ctx.Op("reshape", {first}, {{"shape", "()"}})};
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

/*!
 * \brief TensorArrayGradV3 (handle, flow_in): the gradient array, zeros like the forward array the
 * flow carries (its writes start from zeros anyway), and the flow passed on.
 */
Outputs ConvertGradientArray(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("zeros_like", {ctx.input(1)}), ctx.input(1)};
}

Outputs RejectStack(ImportContext& ctx) {
  ctx.Fail(StrCat("op ", ctx.op(),
                  " is only converted as TensorFlow's gradients of a while loop use stacks (a StackV2 outside the "
                  "loops, pushed in one frame, popped in another frame that runs as many iterations, through "
                  "constant Enters); this stack is used otherwise"));
}

Outputs RejectGradientWithShape(ImportContext& ctx) {
  ctx.Fail("TensorArrayGradWithShape (a gradient array with a shape prepended) is not supported");
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
IR_TF_CONVERTER({"TensorArrayGradV3"}, ConvertGradientArray);
IR_TF_CONVERTER({"TensorArrayGradWithShape"}, RejectGradientWithShape);
IR_TF_CONVERTER({"StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "Stack", "StackPush", "StackPop",
                 "StackClose"},
                RejectStack);

}  // namespace tf
}  // namespace ir
