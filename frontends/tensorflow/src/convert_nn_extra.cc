/*!
 * \file convert_nn_extra.cc
 * \brief Converters of further nn ops: Elu, Selu, Softsign and their gradients, IsNan/IsInf/
 * IsFinite, DepthwiseConv2dNative (and its backprops), LRN(Grad), SpaceToBatch(ND) and
 * BatchToSpace(ND) (so the dilated-convolution pattern SpaceToBatchND -> Conv2D ->
 * BatchToSpaceND imports), MirrorPad(Grad), TopK(V2) and InTopK(V2). Sizes, block shapes,
 * paddings, crops and k are constant inputs in TF graphs and become attributes here.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;
using Attrs = std::map<std::string, std::string>;

/*! \brief An op of the node's inputs [0, n) with no attributes. */
Converter Same(const char* op, size_t n) {
  return [op, n](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(n);
    return {ctx.Op(op, ctx.inputs())};
  };
}

/*! \brief SoftsignGrad(gradients, features) = gradients / (1 + |features|)^2. */
Outputs ConvertSoftsignGrad(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  NodeEntry denom = ctx.Op("add_scalar", {ctx.Op("abs", {ctx.input(1)}, {}, "abs")}, {{"scalar", "1"}}, "denom");
  return {ctx.Op("divide", {ctx.input(0), ctx.Op("square", {denom}, {}, "square")})};
}

/*! \brief strides, padding, data_format, dilations of DepthwiseConv2dNative*. */
Attrs DepthwiseAttrs(const ImportContext& ctx) {
  std::string format = ctx.Str("data_format", "NHWC");
  IR_CHECK(format == "NHWC" || format == "NCHW")
      << "attribute 'data_format' must be \"NHWC\" or \"NCHW\", got \"" << format << "\"";
  Attrs attrs{{"strides", IntsAttr(ctx.Ints("strides"))}, {"padding", ctx.Str("padding")}, {"data_format", format}};
  if (ctx.HasAttr("dilations")) attrs["dilations"] = IntsAttr(ctx.Ints("dilations"));
  return attrs;
}

/*! \brief Zeros of the constant shape in input `i`: the `like` of the backprop ops. */
NodeEntry Like(ImportContext& ctx, size_t i, const std::string& suffix) {
  std::string dtype = DTypeName(ctx.HasAttr("T") ? ctx.Type("T") : DType::kFloat32);
  return ctx.Op("zeros", {}, {{"shape", IntsAttr(ctx.ConstInts(i))}, {"dtype", dtype}}, suffix);
}

Outputs ConvertDepthwise(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("depthwise_conv2d", ctx.inputs(), DepthwiseAttrs(ctx))};
}

Outputs ConvertDepthwiseBackpropInput(ImportContext& ctx) {  // (input_sizes, filter, out_backprop)
  ctx.ExpectInputs(3);
  return {ctx.Op("depthwise_conv2d_backprop_input", {ctx.input(2), ctx.input(1), Like(ctx, 0, "input_sizes")},
                 DepthwiseAttrs(ctx))};
}

Outputs ConvertDepthwiseBackpropFilter(ImportContext& ctx) {  // (input, filter_sizes, out_backprop)
  ctx.ExpectInputs(3);
  return {ctx.Op("depthwise_conv2d_backprop_filter", {ctx.input(0), ctx.input(2), Like(ctx, 1, "filter_sizes")},
                 DepthwiseAttrs(ctx))};
}

Attrs LRNAttrs(const ImportContext& ctx) {
  return {{"depth_radius", std::to_string(ctx.Int("depth_radius", 5))},
          {"bias", NumberAttr(ctx.Float("bias", 1))},
          {"alpha", NumberAttr(ctx.Float("alpha", 1))},
          {"beta", NumberAttr(ctx.Float("beta", 0.5))}};
}

Outputs ConvertLRN(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("lrn", ctx.inputs(), LRNAttrs(ctx))};
}

Outputs ConvertLRNGrad(ImportContext& ctx) {  // (input_grads, input_image, output_image)
  ctx.ExpectInputs(3);
  return {ctx.Op("lrn_grad", {ctx.input(0), ctx.input(1)}, LRNAttrs(ctx))};
}

/*! \brief A constant [M, 2] paddings/crops input flattened, checked against M block dimensions. */
std::string Pairs(const ImportContext& ctx, size_t i, size_t m, const char* what) {
  std::vector<int64_t> v = ctx.ConstInts(i);
  IR_CHECK(v.size() == 2 * m) << what << " " << IntsAttr(v) << " must have shape [" << m << ", 2]";
  return IntsAttr(v);
}

/*! \brief SpaceToBatchND / BatchToSpaceND (input, block_shape, paddings or crops). */
Converter SpaceBatchND(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(3);
    std::vector<int64_t> block = ctx.ConstInts(1);
    return {ctx.Op(op, {ctx.input(0)},
                   {{"block_shape", IntsAttr(block)}, {"paddings", Pairs(ctx, 2, block.size(), "paddings/crops")}})};
  };
}

/*! \brief SpaceToBatch / BatchToSpace (input, paddings or crops) with attribute block_size over 2 dimensions. */
Converter SpaceBatch(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    int64_t b = ctx.Int("block_size");
    IR_CHECK(b >= 2) << "attribute 'block_size' " << b << " must be greater than one";
    return {ctx.Op(op, {ctx.input(0)},
                   {{"block_shape", IntsAttr({b, b})}, {"paddings", Pairs(ctx, 1, 2, "paddings/crops")}})};
  };
}

/*! \brief MirrorPad / MirrorPadGrad (input, paddings) with attribute mode. */
Converter MirrorPad(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    return {ctx.Op(op, {ctx.input(0)}, {{"paddings", IntsAttr(ctx.ConstInts(1))}, {"mode", ctx.Str("mode")}})};
  };
}

/*! \brief TopKV2 (input, k) and TopK (attribute k): (values, indices). */
Outputs ConvertTopK(ImportContext& ctx) {
  bool v2 = ctx.op() == "TopKV2";
  ctx.ExpectInputs(v2 ? 2 : 1);
  int64_t k = v2 ? static_cast<int64_t>(ctx.ConstScalar(1)) : ctx.Int("k");
  IR_CHECK(k >= 0) << "k " << k << " must be non-negative";
  NodeEntry e = ctx.Op("top_k", {ctx.input(0)},
                       {{"k", std::to_string(k)}, {"sorted", ctx.Bool("sorted", true) ? "true" : "false"}});
  return {NodeEntry{e.node, 0}, NodeEntry{e.node, 1}};
}

/*! \brief InTopKV2 (predictions, targets, k) and InTopK (attribute k). */
Outputs ConvertInTopK(ImportContext& ctx) {
  bool v2 = ctx.op() == "InTopKV2";
  ctx.ExpectInputs(v2 ? 3 : 2);
  int64_t k = v2 ? static_cast<int64_t>(ctx.ConstScalar(2)) : ctx.Int("k");
  return {ctx.Op("in_top_k", {ctx.input(0), ctx.input(1)}, {{"k", std::to_string(k)}})};
}

}  // namespace

IR_TF_CONVERTER({"Elu"}, Same("elu", 1));
IR_TF_CONVERTER({"EluGrad"}, Same("elu_grad", 2));
IR_TF_CONVERTER({"Selu"}, Same("selu", 1));
IR_TF_CONVERTER({"SeluGrad"}, Same("selu_grad", 2));
IR_TF_CONVERTER({"Softsign"}, Same("softsign", 1));
IR_TF_CONVERTER({"SoftsignGrad"}, ConvertSoftsignGrad);
IR_TF_CONVERTER({"IsNan"}, Same("is_nan", 1));
IR_TF_CONVERTER({"IsInf"}, Same("is_inf", 1));
IR_TF_CONVERTER({"IsFinite"}, Same("is_finite", 1));
IR_TF_CONVERTER({"DepthwiseConv2dNative"}, ConvertDepthwise);
IR_TF_CONVERTER({"DepthwiseConv2dNativeBackpropInput"}, ConvertDepthwiseBackpropInput);
IR_TF_CONVERTER({"DepthwiseConv2dNativeBackpropFilter"}, ConvertDepthwiseBackpropFilter);
IR_TF_CONVERTER({"LRN"}, ConvertLRN);
IR_TF_CONVERTER({"LRNGrad"}, ConvertLRNGrad);
IR_TF_CONVERTER({"SpaceToBatchND"}, SpaceBatchND("space_to_batch_nd"));
IR_TF_CONVERTER({"BatchToSpaceND"}, SpaceBatchND("batch_to_space_nd"));
IR_TF_CONVERTER({"SpaceToBatch"}, SpaceBatch("space_to_batch_nd"));
IR_TF_CONVERTER({"BatchToSpace"}, SpaceBatch("batch_to_space_nd"));
IR_TF_CONVERTER({"MirrorPad"}, MirrorPad("mirror_pad"));
IR_TF_CONVERTER({"MirrorPadGrad"}, MirrorPad("mirror_pad_grad"));
IR_TF_CONVERTER({"TopK", "TopKV2"}, ConvertTopK);
IR_TF_CONVERTER({"InTopK", "InTopKV2"}, ConvertInTopK);

}  // namespace tf
}  // namespace ir
