/*!
 * \file convert_nn.cc
 * \brief Converters for neural-network ops and their gradients (convolution and depthwise
 * convolution, pooling, LRN, softmax and cross-entropy, batch norm and FusedBatchNormGrad*, TopK
 * and InTopK) and for random initializers.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;
using Attrs = std::map<std::string, std::string>;

/*! \brief TF's data_format of a 2-D window op: "NHWC" (default) or "NCHW"; anything else is an error. */
std::string DataFormat(const ImportContext& ctx) {
  std::string format = ctx.Str("data_format", "NHWC");
  IR_CHECK(format == "NHWC" || format == "NCHW")
      << "attribute 'data_format' must be \"NHWC\" or \"NCHW\", got \"" << format << "\" (Invalid data format)";
  return format;
}

/*!
 * \brief A per-dimension window attribute (strides, ksize, dilations) as TensorFlow requires it:
 * 4 positive values in data_format order, 1 along the batch and depth dimensions.
 */
std::vector<int64_t> WindowList(const ImportContext& ctx, const std::string& key, const std::string& format) {
  std::vector<int64_t> v = ctx.Ints(key);
  IR_CHECK(v.size() == 4) << "attribute '" << key << "' " << IntsAttr(v)
                          << " must specify 4 dimensions (sliding window " << key << " field)";
  for (int64_t d : v) IR_CHECK(d >= 1) << "attribute '" << key << "' " << IntsAttr(v) << " must be positive";
  size_t depth = format == "NHWC" ? 3 : 1;
  IR_CHECK(v[0] == 1 && v[depth] == 1) << "attribute '" << key << "' " << IntsAttr(v)
                                       << " is not 1 along the batch and "
                                       << "depth dimensions of " << format << ", which TensorFlow does not support";
  return v;
}

/*! \brief TF's padding attribute: "SAME", "VALID" or (convolutions) "EXPLICIT". */
std::string PaddingAttr(const ImportContext& ctx, bool explicit_allowed) {
  std::string padding = ctx.Str("padding");
  bool known = padding == "SAME" || padding == "VALID" || (explicit_allowed && padding == "EXPLICIT");
  IR_CHECK(known) << "attribute 'padding' must be \"SAME\" or \"VALID\"" << (explicit_allowed ? " or \"EXPLICIT\"" : "")
                  << ", got \"" << padding << "\"";
  if (padding != "EXPLICIT" && ctx.HasAttr("explicit_paddings")) {
    IR_CHECK(ctx.Ints("explicit_paddings").empty())
        << "attribute 'explicit_paddings' must be empty when padding is \"" << padding << "\"";
  }
  return padding;
}

/*! \brief strides, padding, data_format (and explicit pads) as our conv and pool ops take them. */
Attrs WindowAttrs(const ImportContext& ctx, bool explicit_allowed) {
  std::string format = DataFormat(ctx), padding = PaddingAttr(ctx, explicit_allowed);
  Attrs attrs{{"strides", IntsAttr(WindowList(ctx, "strides", format))}, {"padding", padding}, {"data_format", format}};
  if (padding == "EXPLICIT") {
    std::vector<int64_t> p = ctx.Ints("explicit_paddings");
    IR_CHECK(p.size() == 8) << "attribute 'explicit_paddings' needs 8 values, has " << p.size();
    size_t depth = format == "NHWC" ? 6 : 2;
    IR_CHECK(p[0] == 0 && p[1] == 0 && p[depth] == 0 && p[depth + 1] == 0)
        << "attribute 'explicit_paddings' " << IntsAttr(p) << " pads the batch or depth dimension of " << format
        << ", which TensorFlow does not support";
    size_t h = format == "NCHW" ? 4 : 2;
    attrs["pads"] = IntsAttr({p[h], p[h + 1], p[h + 2], p[h + 3]});
    attrs.erase("padding");
  }
  return attrs;
}

Attrs ConvAttrs(const ImportContext& ctx) {
  Attrs attrs = WindowAttrs(ctx, true);
  if (ctx.HasAttr("dilations")) attrs["dilations"] = IntsAttr(WindowList(ctx, "dilations", attrs["data_format"]));
  return attrs;
}

/*! \brief MaxPool* also take explicit paddings (TF 2.x); AvgPool* only "SAME" and "VALID". */
Attrs PoolAttrs(const ImportContext& ctx) {
  Attrs attrs = WindowAttrs(ctx, ctx.op().rfind("MaxPool", 0) == 0);
  attrs["ksize"] = IntsAttr(WindowList(ctx, "ksize", attrs["data_format"]));
  return attrs;
}

/*! \brief A tensor of the shape given by input `i` (values unused): the `like` of gradient ops. */
NodeEntry ShapedLike(ImportContext& ctx, size_t i, const std::string& suffix) {
  std::string dtype = DTypeName(ctx.HasAttr("T") ? ctx.Type("T") : DType::kFloat32);
  return ctx.Op("zeros", {}, {{"shape", IntsAttr(ctx.ConstInts(i))}, {"dtype", dtype}}, suffix);
}

Outputs ConvertConv2D(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("conv2d", ctx.inputs(), ConvAttrs(ctx))};
}

Outputs ConvertConv2DBackpropInput(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {
      ctx.Op("conv2d_backprop_input", {ctx.input(2), ctx.input(1), ShapedLike(ctx, 0, "input_shape")}, ConvAttrs(ctx))};
}

Outputs ConvertConv2DBackpropFilter(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {ctx.Op("conv2d_backprop_filter", {ctx.input(0), ctx.input(2), ShapedLike(ctx, 1, "filter_shape")},
                 ConvAttrs(ctx))};
}

Converter Pool(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(1);
    return {ctx.Op(op, ctx.inputs(), PoolAttrs(ctx))};
  };
}

Outputs ConvertMaxPoolGrad(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {ctx.Op("max_pool2d_grad", ctx.inputs(), PoolAttrs(ctx))};
}

Outputs ConvertAvgPoolGrad(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("avg_pool2d_grad", {ctx.input(1), ShapedLike(ctx, 0, "input_shape")}, PoolAttrs(ctx))};
}

Converter Softmax(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(1);
    return {ctx.Op(op, ctx.inputs(), {{"axis", "-1"}})};
  };
}

/*! \brief (Sparse)SoftmaxCrossEntropyWithLogits: outputs (loss per row, backprop). */
Converter CrossEntropy(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    NodeEntry e = ctx.Op(op, ctx.inputs());
    return {NodeEntry{e.node, 0}, NodeEntry{e.node, 1}};
  };
}

/*! \brief FusedBatchNorm*: (y, mean, variance); TF's reserve spaces repeat mean and variance. */
Outputs ConvertFusedBatchNorm(ImportContext& ctx) {
  ctx.ExpectInputs(5);
  NodeEntry bn = ctx.Op("batch_norm", ctx.inputs(),
                        {{"epsilon", NumberAttr(ctx.Float("epsilon", 1e-4))},
                         {"is_training", ctx.Bool("is_training", true) ? "true" : "false"},
                         {"data_format", ctx.Str("data_format", "NHWC")}});
  NodeEntry y{bn.node, 0}, mean{bn.node, 1}, variance{bn.node, 2};
  return {y, mean, variance, mean, variance, mean};
}

/*! \brief TF's two seeds folded into our one op seed (the runtime mixes in the graph seed). */
std::string Seed(const ImportContext& ctx) {
  int64_t seed = ctx.Int("seed", 0), seed2 = ctx.Int("seed2", 0);
  return std::to_string((seed * 1000003 + seed2) & 0x7fffffff);
}

/*! \brief RandomUniform, RandomStandardNormal, TruncatedNormal: the shape is input 0. */
Converter Random(const char* op, Attrs extra) {
  return [op, extra](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(1);
    Attrs attrs = extra;
    attrs["shape"] = IntsAttr(ctx.ConstInts(0));
    attrs["dtype"] = DTypeName(ctx.Type("dtype"));
    attrs["seed"] = Seed(ctx);
    return {ctx.Op(op, {}, attrs)};
  };
}

/*!
 * \brief FusedBatchNormGrad*(dy, x, scale, reserve_1, reserve_2[, reserve_3]) -> (dx, dscale,
 * doffset, empty, empty): reserve_1/2 are the batch mean and variance in training (our
 * batch_norm_grad recomputes them from x), the population statistics otherwise.
 */
Outputs ConvertFusedBatchNormGrad(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() == 5 || ctx.num_inputs() == 6) << "needs 5 or 6 inputs, has " << ctx.num_inputs();
  NodeEntry zeros = ctx.Op("zeros_like", {ctx.input(3)}, {}, "zero_stat_grad");
  NodeEntry grad =
      ctx.Op("batch_norm_grad", {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), zeros, zeros},
             {{"epsilon", NumberAttr(ctx.Float("epsilon", 1e-4))},
              {"is_training", ctx.Bool("is_training", true) ? "true" : "false"},
              {"data_format", ctx.Str("data_format", "NHWC")}});
  NodeEntry empty = ctx.Constant(NDArray::FromVector(Shape{0}, std::vector<float>{}), "empty");
  return {{grad.node, 0}, {grad.node, 1}, {grad.node, 2}, empty, empty};
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

Outputs ConvertDepthwise(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("depthwise_conv2d", ctx.inputs(), DepthwiseAttrs(ctx))};
}

Outputs ConvertDepthwiseBackpropInput(ImportContext& ctx) {  // (input_sizes, filter, out_backprop)
  ctx.ExpectInputs(3);
  return {ctx.Op("depthwise_conv2d_backprop_input", {ctx.input(2), ctx.input(1), ShapedLike(ctx, 0, "input_sizes")},
                 DepthwiseAttrs(ctx))};
}

Outputs ConvertDepthwiseBackpropFilter(ImportContext& ctx) {  // (input, filter_sizes, out_backprop)
  ctx.ExpectInputs(3);
  return {ctx.Op("depthwise_conv2d_backprop_filter", {ctx.input(0), ctx.input(2), ShapedLike(ctx, 1, "filter_sizes")},
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

IR_TF_CONVERTER({"Conv2D"}, ConvertConv2D);
IR_TF_CONVERTER({"Conv2DBackpropInput"}, ConvertConv2DBackpropInput);
IR_TF_CONVERTER({"Conv2DBackpropFilter"}, ConvertConv2DBackpropFilter);
IR_TF_CONVERTER({"MaxPool"}, Pool("max_pool2d"));
IR_TF_CONVERTER({"AvgPool"}, Pool("avg_pool2d"));
IR_TF_CONVERTER({"MaxPoolGrad"}, ConvertMaxPoolGrad);
IR_TF_CONVERTER({"AvgPoolGrad"}, ConvertAvgPoolGrad);
IR_TF_CONVERTER({"Softmax"}, Softmax("softmax"));
IR_TF_CONVERTER({"LogSoftmax"}, Softmax("log_softmax"));
IR_TF_CONVERTER({"SoftmaxCrossEntropyWithLogits"}, CrossEntropy("softmax_cross_entropy_with_logits"));
IR_TF_CONVERTER({"SparseSoftmaxCrossEntropyWithLogits"}, CrossEntropy("sparse_softmax_cross_entropy_with_logits"));
IR_TF_CONVERTER({"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}, ConvertFusedBatchNorm);
IR_TF_CONVERTER({"RandomUniform"}, Random("random_uniform", {}));
IR_TF_CONVERTER({"RandomStandardNormal"}, Random("random_normal", {}));
IR_TF_CONVERTER({"TruncatedNormal"}, Random("truncated_normal", {}));

IR_TF_CONVERTER({"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}, ConvertFusedBatchNormGrad);
IR_TF_CONVERTER({"DepthwiseConv2dNative"}, ConvertDepthwise);
IR_TF_CONVERTER({"DepthwiseConv2dNativeBackpropInput"}, ConvertDepthwiseBackpropInput);
IR_TF_CONVERTER({"DepthwiseConv2dNativeBackpropFilter"}, ConvertDepthwiseBackpropFilter);
IR_TF_CONVERTER({"LRN"}, ConvertLRN);
IR_TF_CONVERTER({"LRNGrad"}, ConvertLRNGrad);
IR_TF_CONVERTER({"TopK", "TopKV2"}, ConvertTopK);
IR_TF_CONVERTER({"InTopK", "InTopKV2"}, ConvertInTopK);

}  // namespace tf
}  // namespace ir
