/*!
 * \file gather_nd.cc
 * \brief gather_nd (tf.gather_nd: slices of params at index tuples), scatter_nd (tf.scatter_nd:
 * updates added into zeros of a given shape at index tuples) and gather_nd_grad (scatter_nd
 * into zeros shaped like params: gather_nd's gradient). Each is the other's gradient.
 *
 * indices has shape [..., K]: each row of K indices picks a slice params[i0, ..., iK-1] of
 * shape params.shape[K:]. An index outside its dimension is an error (TensorFlow on the CPU).
 */
#include <string>

#include "ops/index_util.h"

namespace ir {
namespace op {
namespace {

struct ScatterNdParam : public dmlc::Parameter<ScatterNdParam> {
  IntList shape;
  DMLC_DECLARE_PARAMETER(ScatterNdParam) { DMLC_DECLARE_FIELD(shape).describe("Shape of the output."); }
};
DMLC_REGISTER_PARAMETER(ScatterNdParam);

/*! \brief indices.shape[:-1] + params.shape[K:], or unknown rank; throws when K exceeds params' rank. */
Shape GatherNdResult(const NodeAttrs& attrs, const Shape& params, const Shape& indices) {
  if (!params.rank_known() || !indices.rank_known()) return Shape();
  IR_CHECK(indices.ndim() >= 1) << NodeDesc(attrs) << ": indices must have rank at least 1, got shape " << indices;
  int64_t k = indices[indices.ndim() - 1];
  if (k == kUnknownDim) return Shape();
  IR_CHECK(k <= params.ndim()) << NodeDesc(attrs) << ": the index depth " << k << " (last dimension of indices "
                               << indices << ") exceeds the rank of params " << params;
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), params.dims().begin() + k, params.dims().end());
  return Shape(dims);
}

/*!
 * \brief For each of the N index tuples, the row it selects in params viewed as
 * [prod(shape[:K]), prod(shape[K:])]; throws naming the tuple when it is out of range.
 */
std::vector<int64_t> SliceRows(const NodeAttrs& attrs, const NDArray& indices, const Shape& params) {
  const Shape& ishape = indices.shape();
  int k = static_cast<int>(ishape[ishape.ndim() - 1]);
  std::vector<int64_t> index = ReadIndices(indices);
  std::vector<int64_t> rows(k == 0 ? ishape.ProdDims(0, ishape.ndim() - 1) : index.size() / k, 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int d = 0; d < k; ++d) {
      int64_t i = index[r * k + d];
      IR_CHECK(0 <= i && i < params[d]) << NodeDesc(attrs) << ": index " << i << " (row " << r << ", position " << d
                                        << " of indices " << ishape << ") is out of range [0, " << params[d]
                                        << ") for params " << params;
      rows[r] = rows[r] * params[d] + i;
    }
  }
  return rows;
}

bool GatherNdShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], GatherNdResult(attrs, (*in)[0], (*in)[1]));
  return AllKnown(*in, *out);
}

bool GatherNdType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "indices", (*in)[1]);
  return SameTypeAsFirstInput(attrs, in, out);
}

void GatherNdCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const Shape& params = in[0].shape();
  std::vector<int64_t> rows = SliceRows(attrs, in[1], params);
  int64_t k = in[1].shape()[in[1].shape().ndim() - 1], slice = params.ProdDims(static_cast<int>(k), params.ndim());
  if (out[0].Size() == 0) return;
  IR_ALL_TYPES_SWITCH(in[0].dtype(), DT, {
    const DT* src = in[0].data<DT>();
    DT* dst = out[0].data<DT>();
    ParallelFor(static_cast<int64_t>(rows.size()), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) std::copy_n(src + rows[r] * slice, slice, dst + r * slice);
    });
  });
}

/*! \brief out = zeros with `updates`' slices added at the rows `indices` selects (repeats add up). */
void ScatterAddNd(const NodeAttrs& attrs, const NDArray& indices, const NDArray& updates, const NDArray& out) {
  const Shape& shape = out.shape();
  std::vector<int64_t> rows = SliceRows(attrs, indices, shape);
  int64_t k = indices.shape()[indices.shape().ndim() - 1], slice = shape.ProdDims(static_cast<int>(k), shape.ndim());
  Fill(out, 0);
  IR_NUMERIC_SWITCH(out.dtype(), DT, {
    const DT* src = updates.data<DT>();
    DT* dst = out.data<DT>();
    ParallelFor(slice, [&](int64_t c0, int64_t c1) {  // threads own columns: repeated rows add without races
      for (size_t r = 0; r < rows.size(); ++r) {
        for (int64_t c = c0; c < c1; ++c) dst[rows[r] * slice + c] += src[r * slice + c];
      }
    });
  });
}

std::vector<NodeEntry> GatherNdGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("gather_nd_grad", n, "params", {og[0], In(n, 1), In(n, 0)}), NodeEntry()};
}

// scatter_nd(indices, updates), shape from the attribute.
bool ScatterNdShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape shape(dmlc::get<ScatterNdParam>(attrs.parsed).shape.values);
  for (int64_t d : shape.dims())
    IR_CHECK(d >= 0) << NodeDesc(attrs) << ": shape " << shape << " has a negative dimension";
  AssignShape(attrs, "output 0", &(*out)[0], shape);
  AssignShape(attrs, "input 1 (updates)", &(*in)[1], GatherNdResult(attrs, shape, (*in)[0]));
  return AllKnown(*in, *out);
}

bool ScatterNdType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "indices", (*in)[0]);
  AssignType(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignType(attrs, "input 1 (updates)", &(*in)[1], (*out)[0]);
  if ((*out)[0] != DType::kUnknown) CheckDType(attrs, "updates", (*out)[0], NumericTypes());
  return AllKnown(*in, *out);
}

std::vector<NodeEntry> ScatterNdGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {NodeEntry(), GradNode("gather_nd", n, "updates", {og[0], In(n, 0)})};
}

// gather_nd_grad(dy, indices, like): the output is shaped like `like`.
bool GatherNdGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[2]);
  AssignShape(attrs, "input 2", &(*in)[2], (*out)[0]);
  AssignShape(attrs, "input 0 (dy)", &(*in)[0], GatherNdResult(attrs, (*in)[2], (*in)[1]));
  return AllKnown(*in, *out);
}

bool GatherNdGradType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "indices", (*in)[1]);
  return SameTypeAsFirstInput(attrs, in, out);
}

std::vector<NodeEntry> GatherNdGradGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("gather_nd", n, "dy", {og[0], In(n, 1)}), NodeEntry(), NodeEntry()};
}

}  // namespace

IR_REGISTER_OP(gather_nd)
    .describe("Slices of params at the index tuples in the last dimension of indices (tf.gather_nd).")
    .set_num_inputs(2)
    .set_input_names({"params", "indices"})
    .set_attr<FInferShape>("FInferShape", GatherNdShape)
    .set_attr<FInferType>("FInferType", GatherNdType)
    .set_attr<FCompute>("FCompute", GatherNdCompute)
    .set_attr<FGradient>("FGradient", GatherNdGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(scatter_nd)
    .describe("Zeros of `shape` with the slices of updates added at the index tuples of indices (tf.scatter_nd).")
    .set_num_inputs(2)
    .set_input_names({"indices", "updates"})
    .set_param<ScatterNdParam>()
    .set_attr<FInferShape>("FInferShape", ScatterNdShape)
    .set_attr<FInferType>("FInferType", ScatterNdType)
    .set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                       const std::vector<NDArray>& out) { ScatterAddNd(attrs, in[0], in[1], out[0]); })
    .set_attr<FGradient>("FGradient", ScatterNdGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(gather_nd_grad)
    .describe("Zeros shaped like `like` with the slices of dy added at the index tuples (gather_nd's gradient).")
    .set_num_inputs(3)
    .set_input_names({"dy", "indices", "like"})
    .set_attr<FInferShape>("FInferShape", GatherNdGradShape)
    .set_attr<FInferType>("FInferType", GatherNdGradType)
    .set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                       const std::vector<NDArray>& out) { ScatterAddNd(attrs, in[1], in[0], out[0]); })
    .set_attr<FGradient>("FGradient", GatherNdGradGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
