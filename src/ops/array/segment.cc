/*!
 * \file segment.cc
 * \brief Segment reductions: unsorted_segment_sum / max / min (tf.unsorted_segment_sum...: rows of data
 * combined into num_segments rows by segment id; negative ids are dropped, as TensorFlow does), the sum's
 * gradient segment_gather (rows of dy at the ids, zeros for negative ids), and segment_sum / mean /
 * max / min (tf.segment_sum...: sorted ids; the output has max id + 1 rows, known only when it runs),
 * and unsorted_segment_sum_dims / max / min: the unsorted ones with num_segments a tensor computed
 * when the graph runs (TF1's sparse optimizer updates count Unique's rows), whose kernels allocate
 * their outputs (FComputeShaped).
 *
 * segment_ids has a prefix of data's shape; data viewed as [ids.size, inner] is summed row by
 * row into an output viewed as [rows, inner].
 */
#include <limits>
#include <string>

#include "ops/index_util.h"

namespace ir {
namespace op {
namespace {

struct SegmentParam : public dmlc::Parameter<SegmentParam> {
  int64_t num_segments;
  DMLC_DECLARE_PARAMETER(SegmentParam) {
    DMLC_DECLARE_FIELD(num_segments).set_lower_bound(0).describe("Rows of the output.");
  }
};
DMLC_REGISTER_PARAMETER(SegmentParam);

/*! \brief segment_gather's: without num_segments (the gradient of the _dims ops), dy's rows. */
struct SegmentGatherParam : public dmlc::Parameter<SegmentGatherParam> {
  int64_t num_segments;
  DMLC_DECLARE_PARAMETER(SegmentGatherParam) {
    DMLC_DECLARE_FIELD(num_segments).set_default(-1).set_lower_bound(-1).describe("Rows of dy; -1: dy's rows.");
  }
};
DMLC_REGISTER_PARAMETER(SegmentGatherParam);

int64_t NumSegments(const NodeAttrs& attrs) { return dmlc::get<SegmentParam>(attrs.parsed).num_segments; }
int64_t GatherRows(const NodeAttrs& attrs) { return dmlc::get<SegmentGatherParam>(attrs.parsed).num_segments; }

/*! \brief Whether `n` is one of the _dims ops (num_segments is input 2, a tensor). */
bool CountsAtRunTime(const NodePtr& n) { return n->inputs.size() == 3; }

/*! \brief Throws unless `ids` is a prefix of `data`'s shape (as far as both are known). */
void CheckIdsPrefix(const NodeAttrs& attrs, const Shape& data, const Shape& ids) {
  if (!data.rank_known() || !ids.rank_known()) return;
  bool prefix = ids.ndim() <= data.ndim();
  for (int d = 0; prefix && d < ids.ndim(); ++d) {
    prefix = ids[d] == kUnknownDim || data[d] == kUnknownDim || ids[d] == data[d];
  }
  IR_CHECK(prefix) << NodeDesc(attrs) << ": segment_ids' shape " << ids << " must be a prefix of data's shape " << data;
}

/*! \brief [rows] + data.shape[ids.ndim:]. */
Shape SegmentResult(const Shape& data, const Shape& ids, int64_t rows) {
  if (!data.rank_known() || !ids.rank_known()) return Shape();
  std::vector<int64_t> dims{rows};
  dims.insert(dims.end(), data.dims().begin() + ids.ndim(), data.dims().end());
  return Shape(dims);
}

bool SegmentType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "segment_ids", (*in)[1]);
  if ((*in)[0] != DType::kUnknown) CheckDType(attrs, "data", (*in)[0], NumericTypes());
  return SameTypeAsFirstInput(attrs, in, out);
}

/*! \brief How rows that share a segment id combine. */
enum class Combine { kSum, kMax, kMin, kMean };

/*!
 * \brief out (viewed as [rows, inner]) = each row the combination of the data rows with its id
 * (0 for sum, the lowest / highest value for max / min when there are none); negative ids are skipped.
 */
void ReduceRows(const NDArray& data, const std::vector<int64_t>& ids, const NDArray& out, Combine how) {
  int64_t rows = out.shape().ndim() > 0 ? out.shape()[0] : 1, inner = rows == 0 ? 0 : out.Size() / rows;
  IR_NUMERIC_SWITCH(out.dtype(), DT, {
    const DT* src = data.data<DT>();
    DT* dst = out.data<DT>();
    DT init = how == Combine::kSum   ? DT(0)
              : how == Combine::kMax ? std::numeric_limits<DT>::lowest()
                                     : std::numeric_limits<DT>::max();
    std::fill_n(dst, out.Size(), init);
    ParallelFor(inner, [&](int64_t c0, int64_t c1) {  // threads own columns: rows with one id combine without races
      for (size_t r = 0; r < ids.size(); ++r) {
        if (ids[r] < 0) continue;
        DT* to = dst + ids[r] * inner;
        const DT* from = src + r * inner;
        for (int64_t c = c0; c < c1; ++c) {
          to[c] = how == Combine::kSum   ? to[c] + from[c]
                  : how == Combine::kMax ? std::max(to[c], from[c])
                                         : std::min(to[c], from[c]);
        }
      }
    });
  });
}

// ---------------------------------------------------------------- unsorted_segment_sum

bool UnsortedShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckIdsPrefix(attrs, (*in)[0], (*in)[1]);
  AssignShape(attrs, "output 0", &(*out)[0], SegmentResult((*in)[0], (*in)[1], NumSegments(attrs)));
  return AllKnown(*in, *out);
}

/*! \brief The ids as int64, each below `rows` (negative ids are dropped later). */
std::vector<int64_t> IdsBelow(const NodeAttrs& attrs, const NDArray& segment_ids, int64_t rows) {
  std::vector<int64_t> ids = ReadIndices(segment_ids);
  for (size_t r = 0; r < ids.size(); ++r) {
    IR_CHECK(ids[r] < rows) << NodeDesc(attrs) << ": segment_ids[" << r << "] = " << ids[r] << " is out of range [0, "
                            << rows << ")";
  }
  return ids;
}

template <Combine kHow>
void UnsortedCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  ReduceRows(in[0], IdsBelow(attrs, in[1], NumSegments(attrs)), out[0], kHow);
}

/*! \brief The gradients of a segment op's inputs: `data`'s, none for the ids (and num_segments). */
std::vector<NodeEntry> DataGradient(const NodePtr& n, NodeEntry data) {
  std::vector<NodeEntry> grads(n->inputs.size());
  grads[0] = std::move(data);
  return grads;
}

/*! \brief Rows of `rows` at the segment ids: segment_gather (unsorted ops) or gather (sorted ids, all valid). */
NodeEntry RowsAtIds(const NodePtr& n, const char* suffix, NodeEntry rows) {
  bool sorted = n->op()->name.rfind("segment_", 0) == 0;
  return sorted ? GradNode("gather", n, suffix, {rows, In(n, 1)})
                : GradNode("segment_gather", n, suffix, {rows, In(n, 1)}, n->attrs.dict);
}

std::vector<NodeEntry> UnsortedGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return DataGradient(n, RowsAtIds(n, "data", og[0]));
}

/*! \brief Rows of `data` summed by the node's segment ids into rows like its output. */
NodeEntry SumByIds(const NodePtr& n, const char* suffix, NodeEntry data) {
  if (n->op()->name.rfind("segment_", 0) == 0) return GradNode("segment_sum", n, suffix, {data, In(n, 1)});
  if (CountsAtRunTime(n)) return GradNode("unsorted_segment_sum_dims", n, suffix, {data, In(n, 1), In(n, 2)});
  return GradNode("unsorted_segment_sum", n, suffix, {data, In(n, 1)}, n->attrs.dict);
}

/*!
 * \brief TensorFlow's gradient of a segment max / min: dy of a segment is shared equally by the
 * data elements equal to its result (ties split it), the others get zero.
 */
std::vector<NodeEntry> ExtremumGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry data = In(n, 0);
  NodeEntry selected = GradNode("equal", n, "selected", {data, RowsAtIds(n, "result", Out(n))});
  NodeEntry ones =
      GradNode("where", n, "ones",
               {selected, GradNode("ones_like", n, "one", {data}), GradNode("zeros_like", n, "zero", {data})});
  NodeEntry spread = RowsAtIds(n, "spread", GradNode("divide", n, "share", {og[0], SumByIds(n, "count", ones)}));
  return DataGradient(n, GradNode("where", n, "data", {selected, spread, GradNode("zeros_like", n, "none", {spread})}));
}

/*! \brief segment_mean: each data row gets dy of its segment divided by the segment's size. */
std::vector<NodeEntry> MeanGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry counts = SumByIds(n, "count", GradNode("ones_like", n, "one", {In(n, 0)}));
  return {RowsAtIds(n, "data", GradNode("divide", n, "share", {og[0], counts})), NodeEntry()};
}

// ---------------------------------------------------------------- segment_gather

// segment_gather(dy, ids): dy's rows at the ids (zeros at negative ids), shaped ids.shape + dy.shape[1:].
bool SegmentGatherShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape &dy = (*in)[0], &ids = (*in)[1];
  if (dy.rank_known()) {
    IR_CHECK(dy.ndim() >= 1) << NodeDesc(attrs) << ": dy must have rank at least 1, got shape " << dy;
    std::vector<int64_t> dims = dy.dims();
    if (GatherRows(attrs) >= 0) dims[0] = GatherRows(attrs);
    AssignShape(attrs, "input 0", &(*in)[0], Shape(dims));
  }
  if (dy.rank_known() && ids.rank_known()) {
    std::vector<int64_t> dims = ids.dims();
    dims.insert(dims.end(), dy.dims().begin() + 1, dy.dims().end());
    AssignShape(attrs, "output 0", &(*out)[0], Shape(dims));
  }
  return AllKnown(*in, *out);
}

void SegmentGatherCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out) {
  int64_t rows = in[0].shape()[0], inner = rows == 0 ? 0 : in[0].Size() / rows;
  std::vector<int64_t> ids = IdsBelow(attrs, in[1], rows);
  IR_NUMERIC_SWITCH(out[0].dtype(), DT, {
    const DT* src = in[0].data<DT>();
    DT* dst = out[0].data<DT>();
    ParallelFor(static_cast<int64_t>(ids.size()), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (ids[r] < 0) {
          std::fill_n(dst + r * inner, inner, DT(0));
        } else {
          std::copy_n(src + ids[r] * inner, inner, dst + r * inner);
        }
      }
    });
  });
}

/*! \brief dy's rows summed back by the ids (into dy's row count, a tensor, without num_segments). */
std::vector<NodeEntry> SegmentGatherGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  if (GatherRows(n->attrs) >= 0) {
    return {GradNode("unsorted_segment_sum", n, "dy", {og[0], In(n, 1)}, n->attrs.dict), NodeEntry()};
  }
  NodeEntry rows = GradNode("strided_slice", n, "rows", {GradNode("shape", n, "shape", {In(n, 0)})},
                            {{"begin", "(0)"}, {"end", "(1)"}, {"strides", "(1)"}, {"shrink_axis_mask", "1"}});
  return {GradNode("unsorted_segment_sum_dims", n, "dy", {og[0], In(n, 1), rows}), NodeEntry()};
}

// ---------------------------------------------------------------- unsorted_segment_sum_dims

bool UnsortedDimsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckIdsPrefix(attrs, (*in)[0], (*in)[1]);
  IR_CHECK(!(*in)[2].is_known() || (*in)[2].ndim() == 0)
      << NodeDesc(attrs) << ": num_segments must be a scalar, got shape " << (*in)[2];
  AssignShape(attrs, "output 0", &(*out)[0], SegmentResult((*in)[0], (*in)[1], kUnknownDim));
  return false;  // the number of rows is a value: known only when it runs
}

bool UnsortedDimsType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "num_segments", (*in)[2]);
  return SegmentType(attrs, in, out);
}

template <Combine kHow>
std::vector<NDArray> UnsortedDimsCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  int64_t rows = ReadIndices(in[2])[0];
  IR_CHECK(rows >= 0) << NodeDesc(attrs) << ": num_segments must be non-negative, got " << rows;
  std::vector<int64_t> ids = IdsBelow(attrs, in[1], rows);
  NDArray data = in[0].CopyTo(Device::CPU());
  NDArray out(SegmentResult(data.shape(), in[1].shape(), rows), data.dtype(), Device::CPU());
  ReduceRows(data, ids, out, kHow);
  return {ctx.device.type == DeviceType::kCPU ? out : out.CopyTo(ctx.device)};
}

// ---------------------------------------------------------------- segment_sum

bool SortedShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ids = (*in)[1];
  IR_CHECK(!ids.rank_known() || ids.ndim() == 1)
      << NodeDesc(attrs) << ": segment_ids must be a vector, got shape " << ids;
  CheckIdsPrefix(attrs, (*in)[0], ids);
  if ((*in)[0].rank_known()) AssignShape(attrs, "output 0", &(*out)[0], SegmentResult((*in)[0], ids, kUnknownDim));
  return false;  // the number of rows is a value: known only when it runs
}

/*! \brief Sorted segment max / min / mean: empty segments become 0 (as in TensorFlow), means divide by the size. */
void FinishSortedRows(const std::vector<int64_t>& ids, const NDArray& out, bool mean) {
  int64_t rows = out.shape()[0], inner = rows == 0 ? 0 : out.Size() / rows;
  std::vector<int64_t> counts(rows, 0);
  for (int64_t id : ids) ++counts[id];
  IR_NUMERIC_SWITCH(out.dtype(), DT, {
    DT* dst = out.data<DT>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < inner; ++c) {
        DT& v = dst[r * inner + c];
        v = counts[r] == 0 ? DT(0) : mean ? v / static_cast<DT>(counts[r]) : v;
      }
    }
  });
}

template <Combine kHow>
std::vector<NDArray> SortedCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  NDArray data = in[0].CopyTo(Device::CPU());
  std::vector<int64_t> ids = ReadIndices(in[1]);
  for (size_t r = 0; r < ids.size(); ++r) {
    IR_CHECK(ids[r] >= 0) << NodeDesc(attrs) << ": segment_ids[" << r << "] = " << ids[r] << " is negative";
    IR_CHECK(r == 0 || ids[r] >= ids[r - 1]) << NodeDesc(attrs) << ": segment ids are not increasing (segment_ids[" << r
                                             << "] = " << ids[r] << " < " << ids[r - 1] << ")";
  }
  NDArray out(SegmentResult(data.shape(), in[1].shape(), ids.empty() ? 0 : ids.back() + 1), data.dtype(),
              Device::CPU());
  ReduceRows(data, ids, out, kHow == Combine::kMean ? Combine::kSum : kHow);
  if (kHow != Combine::kSum) FinishSortedRows(ids, out, kHow == Combine::kMean);
  return {ctx.device.type == DeviceType::kCPU ? out : out.CopyTo(ctx.device)};
}

std::vector<NodeEntry> SortedGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return DataGradient(n, GradNode("gather", n, "data", {og[0], In(n, 1)}));
}

/*! \brief What the sorted segment reductions share: the number of rows is max id + 1, known when they run. */
void SortedOp(Op& op, FComputeShaped compute, FGradient gradient) {
  op.set_num_inputs(2)
      .set_input_names({"data", "segment_ids"})
      .set_attr<FInferShape>("FInferShape", SortedShape)
      .set_attr<FInferType>("FInferType", SegmentType)
      .set_attr<FComputeShaped>("FComputeShaped", std::move(compute))
      .set_attr<FGradient>("FGradient", std::move(gradient))
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

/*! \brief What the unsorted segment reductions share. */
void UnsortedOp(Op& op, FCompute compute, FGradient gradient) {
  op.set_num_inputs(2)
      .set_input_names({"data", "segment_ids"})
      .set_param<SegmentParam>()
      .set_attr<FInferShape>("FInferShape", UnsortedShape)
      .set_attr<FInferType>("FInferType", SegmentType)
      .set_attr<FCompute>("FCompute", std::move(compute))
      .set_attr<FGradient>("FGradient", std::move(gradient))
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

/*! \brief What the unsorted segment reductions with a run-time num_segments share. */
void UnsortedDimsOp(Op& op, FComputeShaped compute, FGradient gradient) {
  op.set_num_inputs(3)
      .set_input_names({"data", "segment_ids", "num_segments"})
      .set_attr<FInferShape>("FInferShape", UnsortedDimsShape)
      .set_attr<FInferType>("FInferType", UnsortedDimsType)
      .set_attr<FComputeShaped>("FComputeShaped", std::move(compute))
      .set_attr<FGradient>("FGradient", std::move(gradient))
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(unsorted_segment_sum)
    .describe(
        "Rows of data summed by segment id into num_segments rows; negative ids are dropped "
        "(tf.unsorted_segment_sum).")
    .apply([](Op& op) { UnsortedOp(op, UnsortedCompute<Combine::kSum>, UnsortedGradient); });

IR_REGISTER_OP(unsorted_segment_max)
    .describe(
        "The largest of the rows of data with each segment id (the lowest value where there are none; "
        "tf.unsorted_segment_max).")
    .apply([](Op& op) { UnsortedOp(op, UnsortedCompute<Combine::kMax>, ExtremumGradient); });

IR_REGISTER_OP(unsorted_segment_min)
    .describe(
        "The smallest of the rows of data with each segment id (the highest value where there are none; "
        "tf.unsorted_segment_min).")
    .apply([](Op& op) { UnsortedOp(op, UnsortedCompute<Combine::kMin>, ExtremumGradient); });

IR_REGISTER_OP(segment_gather)
    .describe(
        "Rows of dy (num_segments rows) at the segment ids, zeros at negative ids "
        "(unsorted_segment_sum's gradient).")
    .set_num_inputs(2)
    .set_input_names({"dy", "segment_ids"})
    .set_param<SegmentGatherParam>()
    .set_attr<FInferShape>("FInferShape", SegmentGatherShape)
    .set_attr<FInferType>("FInferType", SegmentType)
    .set_attr<FCompute>("FCompute", SegmentGatherCompute)
    .set_attr<FGradient>("FGradient", SegmentGatherGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(unsorted_segment_sum_dims)
    .describe(
        "unsorted_segment_sum with num_segments a scalar tensor known when the graph runs (TF's "
        "UnsortedSegmentSum of a computed count).")
    .apply([](Op& op) { UnsortedDimsOp(op, UnsortedDimsCompute<Combine::kSum>, UnsortedGradient); });

IR_REGISTER_OP(unsorted_segment_max_dims)
    .describe("unsorted_segment_max with num_segments a scalar tensor known when the graph runs.")
    .apply([](Op& op) { UnsortedDimsOp(op, UnsortedDimsCompute<Combine::kMax>, ExtremumGradient); });

IR_REGISTER_OP(unsorted_segment_min_dims)
    .describe("unsorted_segment_min with num_segments a scalar tensor known when the graph runs.")
    .apply([](Op& op) { UnsortedDimsOp(op, UnsortedDimsCompute<Combine::kMin>, ExtremumGradient); });

IR_REGISTER_OP(segment_sum)
    .describe("Rows of data summed by sorted segment id; the output has max id + 1 rows (tf.segment_sum).")
    .apply([](Op& op) { SortedOp(op, SortedCompute<Combine::kSum>, SortedGradient); });

IR_REGISTER_OP(segment_mean)
    .describe("The mean of the rows of data with each sorted segment id, 0 for none (tf.segment_mean).")
    .apply([](Op& op) { SortedOp(op, SortedCompute<Combine::kMean>, MeanGradient); });

IR_REGISTER_OP(segment_max)
    .describe("The largest of the rows of data with each sorted segment id, 0 for none (tf.segment_max).")
    .apply([](Op& op) { SortedOp(op, SortedCompute<Combine::kMax>, ExtremumGradient); });

IR_REGISTER_OP(segment_min)
    .describe("The smallest of the rows of data with each sorted segment id, 0 for none (tf.segment_min).")
    .apply([](Op& op) { SortedOp(op, SortedCompute<Combine::kMin>, ExtremumGradient); });

}  // namespace op
}  // namespace ir
