/*!
 * \file convert_nn.cc
 * \brief Converters for neural-network ops and their gradients (convolution, pooling, softmax
 * and cross-entropy, batch norm) and for random initializers.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;
using Attrs = std::map<std::string, std::string>;

/*! \brief strides, padding, data_format (and explicit pads) as our conv and pool ops take them. */
Attrs WindowAttrs(const ImportContext& ctx) {
  std::string format = ctx.Str("data_format", "NHWC");
  Attrs attrs{{"strides", IntsAttr(ctx.Ints("strides"))}, {"padding", ctx.Str("padding")}, {"data_format", format}};
  if (ctx.Str("padding") == "EXPLICIT") {
    std::vector<int64_t> p = ctx.Ints("explicit_paddings");
    IR_CHECK(p.size() == 8) << "attribute 'explicit_paddings' needs 8 values, has " << p.size();
    size_t h = format == "NCHW" ? 4 : 2;
    attrs["pads"] = IntsAttr({p[h], p[h + 1], p[h + 2], p[h + 3]});
    attrs.erase("padding");
  }
  return attrs;
}

Attrs ConvAttrs(const ImportContext& ctx) {
  Attrs attrs = WindowAttrs(ctx);
  if (ctx.HasAttr("dilations")) attrs["dilations"] = IntsAttr(ctx.Ints("dilations"));
  return attrs;
}

Attrs PoolAttrs(const ImportContext& ctx) {
  Attrs attrs = WindowAttrs(ctx);
  attrs["ksize"] = IntsAttr(ctx.Ints("ksize"));
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
  return {ctx.Op("conv2d_backprop_input", {ctx.input(2), ctx.input(1), ShapedLike(ctx, 0, "input_shape")}, ConvAttrs(ctx))};
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

}  // namespace tf
}  // namespace ir
