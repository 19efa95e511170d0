/*!
 * \file convert_indexing.cc
 * \brief Converters for index-driven ops: GatherNd, ScatterNd, the segment reductions, Unique, Where,
 * InvertPermutation, RandomShuffle, Cumsum/Cumprod, ParallelConcat, and the sparse variable
 * updates ScatterUpdate/Add/Sub (ref and resource forms). Shapes, axes and segment counts that
 * TensorFlow passes as tensors become our ops' parameters once they are known at import.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief TF's two seeds folded into our one op seed, as the random converters do. */
std::string Seed(const ImportContext& ctx) {
  int64_t seed = ctx.Int("seed", 0), seed2 = ctx.Int("seed2", 0);
  return std::to_string((seed * 1000003 + seed2) & 0x7fffffff);
}

/*! \brief A converter mapping the TF node's inputs one to one onto our op `op`. */
Converter Direct(const char* op, size_t inputs) {
  return [op, inputs](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(inputs);
    return {ctx.Op(op, ctx.inputs())};
  };
}

Outputs ConvertScatterNd(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {ctx.Op("scatter_nd", {ctx.input(0), ctx.input(1)}, {{"shape", IntsAttr(ctx.ConstInts(2))}})};
}

/*!
 * \brief UnsortedSegmentSum/Max/Min(data, ids, num_segments): our op with num_segments as an
 * attribute when it is known at import, else its _dims form, which reads it when it runs (a
 * sparse optimizer update counts Unique's rows).
 */
Converter UnsortedSegment(const std::string& op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(3);
    if (!ctx.TryConstInput(2).defined()) return {ctx.Op(op + "_dims", ctx.inputs())};
    return {ctx.Op(op, {ctx.input(0), ctx.input(1)},
                   {{"num_segments", std::to_string(static_cast<int64_t>(ctx.ConstScalar(2)))}})};
  };
}

Outputs ConvertUnique(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  DType idx = ctx.HasAttr("out_idx") ? ctx.Type("out_idx") : DType::kInt32;
  NodeEntry unique = ctx.Op("unique", {ctx.input(0)}, {{"out_idx", DTypeName(idx)}});
  return {unique, NodeEntry{unique.node, 1}};
}

Outputs ConvertRandomShuffle(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("random_shuffle", {ctx.input(0)}, {{"seed", Seed(ctx)}})};
}

/*! \brief Cumsum / Cumprod(x, axis) with the exclusive and reverse attributes. */
Converter Scan(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    return {ctx.Op(op, {ctx.input(0)},
                   {{"axis", std::to_string(static_cast<int64_t>(ctx.ConstScalar(1)))},
                    {"exclusive", ctx.Bool("exclusive", false) ? "true" : "false"},
                    {"reverse", ctx.Bool("reverse", false) ? "true" : "false"}})};
  };
}

/*!
 * \brief ParallelConcat(values...): the values, each with a first dimension of 1 (tf.parallel_stack
 * expands them), joined along it; the result has attribute `shape`'s shape.
 */
Outputs ConvertParallelConcat(ImportContext& ctx) {
  ctx.ExpectListLength("N", ctx.num_inputs());
  size_t n = ctx.num_inputs();
  IR_CHECK(n >= 1) << "ParallelConcat needs at least one value";
  for (size_t i = 0; i < n; ++i) {
    Shape shape = ctx.InputShape(i);
    IR_CHECK(!shape.rank_known() || (shape.ndim() >= 1 && (shape[0] == kUnknownDim || shape[0] == 1)))
        << "input " << i << " has shape " << shape << ": ParallelConcat's values need a first dimension of 1";
  }
  if (ctx.HasAttr("shape")) {
    Shape want = ctx.ShapeAttr("shape");
    IR_CHECK(!want.rank_known() || (want.ndim() >= 1 && (want[0] == kUnknownDim || want[0] == static_cast<int64_t>(n))))
        << "attribute shape " << want << " does not have the " << n << " values' count as its first dimension";
  }
  if (n == 1) return {ctx.input(0)};
  return {ctx.Op("concat", ctx.inputs(), {{"axis", "0"}})};
}

/*! \brief ScatterUpdate/Add/Sub and their Resource forms: our op on the variable behind input 0. */
Converter ScatterUpdate(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(3);
    return {ctx.Op(op, {ctx.VariableInput(0), ctx.input(1), ctx.input(2)})};
  };
}

}  // namespace

IR_TF_CONVERTER({"GatherNd"}, Direct("gather_nd", 2));
IR_TF_CONVERTER({"ScatterNd"}, ConvertScatterNd);
IR_TF_CONVERTER({"UnsortedSegmentSum"}, UnsortedSegment("unsorted_segment_sum"));
IR_TF_CONVERTER({"UnsortedSegmentMax"}, UnsortedSegment("unsorted_segment_max"));
IR_TF_CONVERTER({"UnsortedSegmentMin"}, UnsortedSegment("unsorted_segment_min"));
IR_TF_CONVERTER({"SegmentSum"}, Direct("segment_sum", 2));
IR_TF_CONVERTER({"SegmentMean"}, Direct("segment_mean", 2));
IR_TF_CONVERTER({"SegmentMax"}, Direct("segment_max", 2));
IR_TF_CONVERTER({"SegmentMin"}, Direct("segment_min", 2));
IR_TF_CONVERTER({"Unique"}, ConvertUnique);
IR_TF_CONVERTER({"Where"}, Direct("argwhere", 1));
IR_TF_CONVERTER({"InvertPermutation"}, Direct("invert_permutation", 1));
IR_TF_CONVERTER({"RandomShuffle"}, ConvertRandomShuffle);
IR_TF_CONVERTER({"Cumsum"}, Scan("cumsum"));
IR_TF_CONVERTER({"Cumprod"}, Scan("cumprod"));
IR_TF_CONVERTER({"ParallelConcat"}, ConvertParallelConcat);
IR_TF_CONVERTER({"ScatterUpdate", "ResourceScatterUpdate"}, ScatterUpdate("scatter_update"));
IR_TF_CONVERTER({"ScatterAdd", "ResourceScatterAdd"}, ScatterUpdate("scatter_add"));
IR_TF_CONVERTER({"ScatterSub", "ResourceScatterSub"}, ScatterUpdate("scatter_sub"));

}  // namespace tf
}  // namespace ir
