/*!
 * \file convert_reduce.cc
 * \brief Converters for reductions, whose axes TensorFlow passes as a tensor input.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief Sum, Mean...: an empty axis list reduces nothing in TensorFlow (ours would reduce all). */
Converter Reduce(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    std::vector<int64_t> axes = ctx.ConstInts(1);
    if (axes.empty()) return {ctx.Op("identity", {ctx.input(0)})};
    bool keep = ctx.Bool("keep_dims", ctx.Bool("keepdims", false));
    return {ctx.Op(op, {ctx.input(0)}, {{"axis", IntsAttr(axes)}, {"keepdims", keep ? "true" : "false"}})};
  };
}

/*! \brief ArgMax/ArgMin: our ops give int64; TF's output_type may ask for int32. */
Converter ArgReduce(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    std::string axis = std::to_string(static_cast<int64_t>(ctx.ConstScalar(1)));
    DType out = ctx.HasAttr("output_type") ? ctx.Type("output_type") : DType::kInt64;
    if (out == DType::kInt64) return {ctx.Op(op, {ctx.input(0)}, {{"axis", axis}})};
    NodeEntry index = ctx.Op(op, {ctx.input(0)}, {{"axis", axis}}, "int64");
    return {ctx.Op("cast", {index}, {{"dtype", DTypeName(out)}})};
  };
}

/*! \brief All / Any over bools: the min / max of the elements as int32, compared with 0 again. */
Converter BoolReduce(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    NodeEntry ints = ctx.Op("cast", {ctx.input(0)}, {{"dtype", "int32"}}, "as_int32");
    std::vector<int64_t> axes = ctx.ConstInts(1);
    bool keep = ctx.Bool("keep_dims", ctx.Bool("keepdims", false));
    NodeEntry reduced =
        axes.empty() ? ints
                     : ctx.Op(op, {ints}, {{"axis", IntsAttr(axes)}, {"keepdims", keep ? "true" : "false"}}, "reduce");
    return {ctx.Op("not_equal_scalar", {reduced}, {{"scalar", "0"}})};
  };
}

}  // namespace

IR_TF_CONVERTER({"All"}, BoolReduce("min"));
IR_TF_CONVERTER({"Any"}, BoolReduce("max"));
IR_TF_CONVERTER({"Sum"}, Reduce("sum"));
IR_TF_CONVERTER({"Mean"}, Reduce("mean"));
IR_TF_CONVERTER({"Prod"}, Reduce("prod"));
IR_TF_CONVERTER({"Max"}, Reduce("max"));
IR_TF_CONVERTER({"Min"}, Reduce("min"));
IR_TF_CONVERTER({"ArgMax"}, ArgReduce("argmax"));
IR_TF_CONVERTER({"ArgMin"}, ArgReduce("argmin"));

}  // namespace tf
}  // namespace ir
