/*!
 * \file convert_basic.cc
 * \brief Converters for constants, graph inputs, variables and their updates, and the ops
 * that only forward values or order work (Identity, NoOp, TF1's Print...).
 */
#include "converter.h"
#include "ir_tf_tensor.pb.h"
#include "tensor_decode.h"
#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief Hidden attributes of a variable node: kind, and shape/dtype when known. */
std::map<std::string, std::string> InputHints(const char* kind, const Shape& shape, DType dtype) {
  std::map<std::string, std::string> hints{{"__kind__", kind}};
  if (shape.rank_known()) hints["__shape__"] = shape.ToString();
  if (dtype != DType::kUnknown) hints["__dtype__"] = DTypeName(dtype);
  return hints;
}

Outputs ConvertConst(ImportContext& ctx) {
  const tfproto::AttrValue& value = ctx.Attr("value");
  IR_CHECK(value.value_case() == tfproto::AttrValue::kTensor) << "attribute 'value' is not a tensor";
  if (ctx.HasAttr("dtype")) {
    IR_CHECK(ctx.Attr("dtype").type() == value.tensor().dtype())
        << "attribute 'dtype' is " << TFTypeName(ctx.Attr("dtype").type()) << " but the tensor holds "
        << TFTypeName(value.tensor().dtype());
  }
  Splat splat;
  if (DecodeSplat(value.tensor(), ctx.max_const_bytes(), &splat)) {  // a large splat is never materialized
    return {ctx.Op("fill", {},
                   {{"shape", IntsAttr(splat.shape.dims())},
                    {"value", NumberAttr(splat.value)},
                    {"dtype", DTypeName(splat.dtype)}})};
  }
  return {ctx.Constant(DecodeTensor(value.tensor(), ctx.max_const_bytes()))};
}

/*! \brief A placeholder's declared shape: before GraphDef version 21, an empty shape meant "any shape". */
Shape PlaceholderShape(const ImportContext& ctx) {
  Shape shape = ctx.ShapeAttr("shape");
  return ctx.producer() < 21 && shape.ndim() == 0 ? Shape() : shape;
}

/*! \brief The dtype of a fed tensor: the node's "dtype" (placeholders) or "T" attribute. */
DType FedType(const ImportContext& ctx) {
  for (const char* key : {"dtype", "T"}) {
    if (ctx.HasAttr(key)) return ctx.Type(key);
  }
  throw Error("cannot feed it: the node has no 'dtype' or 'T' attribute giving the fed tensor's dtype");
}

/*! \brief A fed tensor becomes a placeholder of the fed shape (which must fit the declared one). */
Outputs ConvertFed(ImportContext& ctx) {
  Shape shape = ctx.FedShape();
  if (ctx.HasAttr("shape") && ctx.Attr("shape").value_case() == tfproto::AttrValue::kShape) {
    Shape declared = PlaceholderShape(ctx), merged;
    IR_CHECK(Shape::Merge(declared, shape, &merged))
        << "fed shape " << shape << " does not match the placeholder's shape " << declared;
  }
  return {ctx.Variable(InputHints("placeholder", shape, FedType(ctx)))};
}

Outputs ConvertPlaceholder(ImportContext& ctx) {
  Shape shape = ctx.HasAttr("shape") ? PlaceholderShape(ctx) : Shape();
  return {ctx.Variable(InputHints("placeholder", shape, ctx.Type("dtype")))};
}

/*! \brief Not fed: the default value (a fed one is converted by ConvertFed). */
Outputs ConvertPlaceholderWithDefault(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.input(0)};
}

Outputs ConvertVariable(ImportContext& ctx) {
  Shape shape = ctx.HasAttr("shape") ? ctx.ShapeAttr("shape") : Shape();
  return {ctx.Variable(InputHints("variable", shape, ctx.Type("dtype")))};
}

Outputs Forward(ImportContext& ctx) {
  ctx.input(0);
  return {ctx.input(0)};
}

Outputs ForwardAll(ImportContext& ctx) { return ctx.inputs(); }

Outputs ConvertStopGradient(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("stop_gradient", {ctx.input(0)})};
}

Outputs ConvertNoOp(ImportContext& ctx) { return {ctx.Op("no_op", {})}; }

/*!
 * \brief Assert(condition, data...): a run where the condition is false fails with an error naming
 * the Assert (its data are not printed). Nodes that wait for it (control edges) wait for the check.
 */
Outputs ConvertAssert(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() >= 1) << "Assert needs a condition input";
  NodeEntry flag = ctx.Op("cast", {ctx.input(0)}, {{"dtype", "int32"}}, "condition");
  return {
      ctx.Op("check_int_operand", {flag},
             {{"require", "nonzero"}, {"message", StrCat("assertion failed: TensorFlow Assert '", ctx.name(), "'")}})};
}

/*! \brief Assign and its relatives: our op on the variable behind input 0. */
Converter Update(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    return {ctx.Op(op, {ctx.VariableInput(0), ctx.input(1)})};
  };
}

Outputs ConvertReadVariable(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("identity", {ctx.VariableInput(0)})};
}

/*! \brief TF1 Print(input, data...) passes input through (we print nothing). */
Outputs ConvertPrint(ImportContext& ctx) {
  ctx.input(0);
  return {ctx.Op("identity", {ctx.input(0)})};
}

}  // namespace

IR_TF_CONVERTER({"Const", "HostConst"}, ConvertConst);
IR_TF_CONVERTER({"__fed__"}, ConvertFed);
IR_TF_CONVERTER({"Placeholder", "PlaceholderV2"}, ConvertPlaceholder);
IR_TF_CONVERTER({"PlaceholderWithDefault"}, ConvertPlaceholderWithDefault);
IR_TF_CONVERTER({"Variable", "VariableV2", "VarHandleOp"}, ConvertVariable);
IR_TF_CONVERTER({"Identity", "Snapshot", "PreventGradient", "EnsureShape", "CheckNumerics"}, Forward);
IR_TF_CONVERTER({"IdentityN"}, ForwardAll);
IR_TF_CONVERTER({"StopGradient"}, ConvertStopGradient);
IR_TF_CONVERTER({"NoOp"}, ConvertNoOp);
IR_TF_CONVERTER({"Assert"}, ConvertAssert);
IR_TF_CONVERTER({"Assign", "AssignVariableOp"}, Update("assign"));
IR_TF_CONVERTER({"AssignAdd", "AssignAddVariableOp"}, Update("assign_add"));
IR_TF_CONVERTER({"AssignSub", "AssignSubVariableOp"}, Update("assign_sub"));
IR_TF_CONVERTER({"ReadVariableOp"}, ConvertReadVariable);

IR_TF_CONVERTER({"Print"}, ConvertPrint);

}  // namespace tf
}  // namespace ir
