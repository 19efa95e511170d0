/*!
 * \file shape.cc
 * \brief Ops that rearrange or repeat a whole tensor: reshape, reshape_like, expand_dims,
 * squeeze (metadata only: the output may alias the input), transpose, broadcast_to and
 * broadcast_like.
 */
#include "ops/array/array_common.h"
#include "ops/array/array_vectorize.h"
#include "ops/device_walk.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

// ---------------------------------------------------------------- parameters

struct ReshapeParam : public dmlc::Parameter<ReshapeParam> {
  IntList shape;
  DMLC_DECLARE_PARAMETER(ReshapeParam) {
    DMLC_DECLARE_FIELD(shape).describe(
        "Target shape; 0 copies the input's dimension at that position, one -1 is inferred.");
  }
};

struct ExpandDimsParam : public dmlc::Parameter<ExpandDimsParam> {
  int axis;
  DMLC_DECLARE_PARAMETER(ExpandDimsParam) {
    DMLC_DECLARE_FIELD(axis).describe("Position of the new size-1 dimension in the output, in [-ndim-1, ndim].");
  }
};

struct AxesParam : public dmlc::Parameter<AxesParam> {
  IntList axis;
  DMLC_DECLARE_PARAMETER(AxesParam) {
    DMLC_DECLARE_FIELD(axis).set_default(IntList()).describe("Size-1 dimensions to remove; empty removes all of them.");
  }
};

struct TransposeParam : public dmlc::Parameter<TransposeParam> {
  IntList axes;
  DMLC_DECLARE_PARAMETER(TransposeParam) {
    DMLC_DECLARE_FIELD(axes).set_default(IntList()).describe(
        "Output dimension i is input dimension axes[i]; empty reverses the dimensions.");
  }
};

struct BroadcastToParam : public dmlc::Parameter<BroadcastToParam> {
  IntList shape;
  DMLC_DECLARE_PARAMETER(BroadcastToParam) {
    DMLC_DECLARE_FIELD(shape).describe("Target shape; the input broadcasts to it as in NumPy.");
  }
};

DMLC_REGISTER_PARAMETER(ReshapeParam);
DMLC_REGISTER_PARAMETER(ExpandDimsParam);
DMLC_REGISTER_PARAMETER(AxesParam);
DMLC_REGISTER_PARAMETER(TransposeParam);
DMLC_REGISTER_PARAMETER(BroadcastToParam);

// ---------------------------------------------------------------- reshape family

/*!
 * \brief The output shape of reshape, as far as it can be known: 0 copies the input's
 * dimension, -1 is the input size over the other dimensions. Input dimensions copied to the
 * same position cancel out, so reshape([?, 6], [0, 2, -1]) gives [?, 2, 3].
 */
Shape ReshapeTarget(const NodeAttrs& attrs, const Shape& in) {
  const IntList& target = dmlc::get<ReshapeParam>(attrs.parsed).shape;
  auto where = [&] { return StrCat(NodeDesc(attrs), ": reshape ", in, " to ", ListText(target.values)); };
  std::vector<int64_t> dims(target.size());
  int infer = -1;
  bool ratio_known = in.rank_known();
  int64_t in_size = 1, out_size = 1;  // products over the dimensions that do not cancel
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    IR_CHECK(t >= -1) << where() << ": dimension " << t << " is negative";
    if (t == -1) {
      IR_CHECK(infer < 0) << where() << ": more than one -1";
      infer = static_cast<int>(i);
    } else if (t == 0) {
      IR_CHECK(!in.rank_known() || static_cast<int>(i) < in.ndim())
          << where() << ": 0 at position " << i << " copies a dimension the input does not have";
      dims[i] = in.rank_known() ? in[i] : kUnknownDim;
    } else {
      dims[i] = t;
      IR_CHECK(CheckedMul(out_size, t, &out_size))
          << where() << ": the target has more elements than a 64-bit integer can count";
    }
  }
  for (int i = 0; i < in.ndim(); ++i) {
    bool copied = i < static_cast<int>(target.size()) && target[i] == 0;
    if (copied) continue;
    if (in[i] < 0) ratio_known = false;
    IR_CHECK(CheckedMul(in_size, std::max<int64_t>(in[i], 0), &in_size))
        << where() << ": the input has more elements than a 64-bit integer can count";
  }
  if (!ratio_known) {
    if (infer >= 0) dims[infer] = kUnknownDim;
    return Shape(dims);
  }
  std::string elements = in.is_known() ? StrCat(" (", in.Size(), " elements)") : "";
  if (infer >= 0) {
    IR_CHECK(out_size != 0) << where() << ": -1 is ambiguous next to a 0-sized dimension";
    IR_CHECK(in_size % out_size == 0) << NodeDesc(attrs) << ": reshape " << in << elements << " to "
                                      << ListText(target.values) << ": " << in_size << " is not divisible by "
                                      << out_size;
    dims[infer] = in_size / out_size;
  } else {
    IR_CHECK(in_size == out_size) << NodeDesc(attrs) << ": reshape " << in << elements << " to "
                                  << ListText(target.values) << " (" << out_size << " elements)";
  }
  return Shape(dims);
}

/*! \brief An input with a single unknown dimension takes it from a known output size. */
void InferMissingDim(Shape* in, const Shape& out) {
  if (!out.is_known() || !in->rank_known()) return;
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < in->ndim(); ++i) {
    if ((*in)[i] >= 0) {
      known *= (*in)[i];
    } else if (unknown >= 0) {
      return;
    } else {
      unknown = i;
    }
  }
  if (unknown >= 0 && known > 0) (*in)[unknown] = out.Size() / known;
}

bool ReshapeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], ReshapeTarget(attrs, (*in)[0]));
  InferMissingDim(&(*in)[0], (*out)[0]);
  return AllKnown(*in, *out);
}

bool ReshapeLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignShape(attrs, "input 1", &(*in)[1], (*out)[0]);
  const Shape& data = (*in)[0];
  const Shape& like = (*in)[1];
  IR_CHECK(!data.is_known() || !like.is_known() || data.Size() == like.Size())
      << NodeDesc(attrs) << ": cannot reshape data " << data << " (" << data.Size() << " elements) like " << like
      << " (" << like.Size() << " elements)";
  InferMissingDim(&(*in)[0], (*out)[0]);
  return AllKnown(*in, *out);
}

bool ExpandDimsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  int axis = dmlc::get<ExpandDimsParam>(attrs.parsed).axis;
  Shape& data = (*in)[0];
  Shape& result = (*out)[0];
  int ndim = data.rank_known() ? data.ndim() : result.rank_known() ? result.ndim() - 1 : -1;
  if (ndim < 0) return false;
  int at = NormalizeAxis(attrs, axis, ndim + 1);
  std::vector<int64_t> dims = data.rank_known() ? data.dims() : Shape::UnknownDims(ndim).dims();
  dims.insert(dims.begin() + at, 1);
  AssignShape(attrs, "output 0", &result, Shape(dims));
  std::vector<int64_t> back = result.dims();
  back.erase(back.begin() + at);
  AssignShape(attrs, "input 0", &data, Shape(back));
  return AllKnown(*in, *out);
}

bool SqueezeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const IntList& axes = dmlc::get<AxesParam>(attrs.parsed).axis;
  Shape& data = (*in)[0];
  if (!data.rank_known()) return false;
  std::vector<bool> drop(data.ndim(), false);
  if (axes.empty()) {
    for (int i = 0; i < data.ndim(); ++i) {
      if (data[i] < 0) return false;  // whether it goes depends on its unknown extent
      drop[i] = data[i] == 1;
    }
  }
  for (int64_t a : axes.values) {
    int i = NormalizeAxis(attrs, static_cast<int>(a), data.ndim());
    IR_CHECK(data[i] == 1 || data[i] == kUnknownDim)
        << NodeDesc(attrs) << ": cannot squeeze dimension " << i << " of size " << data[i] << " (input " << data << ")";
    data[i] = 1;
    drop[i] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < data.ndim(); ++i) {
    if (!drop[i]) dims.push_back(data[i]);
  }
  AssignShape(attrs, "output 0", &(*out)[0], Shape(dims));
  return AllKnown(*in, *out);
}

/*! \brief The kernel of every metadata op: nothing to do when the output aliases the input. */
void CopyCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  CopyUnlessAliased(in[0], out[0]);
}

std::vector<NodeEntry> ReshapeBackGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  std::vector<NodeEntry> grads(n->inputs.size());
  grads[0] = GradNode("reshape_like", n, "data", {og[0], In(n, 0)});
  return grads;
}

/*! \brief What reshape, reshape_like, expand_dims and squeeze share. */
void MetadataOp(Op& op) {
  op.set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
      .set_attr<FCompute>("FCompute", CopyCompute)
      .set_attr<FDeviceKernel>("FDeviceKernel", CopyDeviceKernel)
      .set_attr<FGradient>("FGradient", ReshapeBackGradient)
      .set_attr<FInplaceOption>("FInplaceOption",
                                [](const NodeAttrs&) {
                                  return std::vector<std::pair<int, int>>{{0, 0}};
                                })
      .set_attr<TOpPattern>("TOpPattern", kInjective);
}

// ---------------------------------------------------------------- transpose

/*! \brief The permutation of a transpose of rank `ndim` (empty axes: reversed). */
std::vector<int> Permutation(const NodeAttrs& attrs, int ndim) {
  const IntList& axes = dmlc::get<TransposeParam>(attrs.parsed).axes;
  std::vector<int> perm(ndim);
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
    return perm;
  }
  IR_CHECK(static_cast<int>(axes.size()) == ndim)
      << NodeDesc(attrs) << ": axes " << axes << " do not match input rank " << ndim;
  std::vector<bool> seen(ndim, false);
  for (int i = 0; i < ndim; ++i) {
    perm[i] = NormalizeAxis(attrs, static_cast<int>(axes[i]), ndim);
    IR_CHECK(!seen[perm[i]]) << NodeDesc(attrs) << ": axes " << axes << " are not a permutation of " << ndim
                             << " dimensions";
    seen[perm[i]] = true;
  }
  return perm;
}

bool TransposeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const IntList& axes = dmlc::get<TransposeParam>(attrs.parsed).axes;
  Shape& data = (*in)[0];
  Shape& result = (*out)[0];
  int ndim = data.rank_known() ? data.ndim() : result.rank_known() ? result.ndim() : -1;
  if (ndim < 0 && !axes.empty()) ndim = static_cast<int>(axes.size());
  if (ndim < 0) return false;
  std::vector<int> perm = Permutation(attrs, ndim);
  if (!data.rank_known()) data = Shape::UnknownDims(ndim);
  if (!result.rank_known()) result = Shape::UnknownDims(ndim);
  std::vector<int64_t> fwd(ndim), back(ndim);
  for (int i = 0; i < ndim; ++i) {
    fwd[i] = data[perm[i]];
    back[perm[i]] = result[i];
  }
  AssignShape(attrs, "output 0", &result, Shape(fwd));
  AssignShape(attrs, "input 0", &data, Shape(back));
  return AllKnown(*in, *out);
}

void TransposeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  std::vector<int> perm = Permutation(attrs, in[0].shape().ndim());
  std::vector<int64_t> in_strides = ContiguousStrides(in[0].shape());
  StridedCopySpec spec;
  spec.extents = out[0].shape().dims();
  spec.dst_strides = ContiguousStrides(out[0].shape());
  for (int p : perm) spec.src_strides.push_back(in_strides[p]);
  StridedCopy(spec, in[0], out[0]);
}

/*! \brief On devices: a strided gather (on the host when more than eight dimensions remain after merging). */
void TransposeDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  std::vector<int> perm = Permutation(attrs, in[0].shape().ndim());
  std::vector<int64_t> in_strides = ContiguousStrides(in[0].shape()), strides;
  for (int p : perm) strides.push_back(in_strides[p]);
  if (!DeviceGather(dev, in[0], out[0], out[0].shape().dims(), strides, 1)) dev.RunOnHost(attrs, in, out);
}

std::vector<NodeEntry> TransposeGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const IntList& axes = dmlc::get<TransposeParam>(n->attrs.parsed).axes;
  std::vector<int64_t> inverse(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + static_cast<int64_t>(axes.size()) : axes[i];
    inverse[a] = static_cast<int64_t>(i);
  }
  return {GradNode("transpose", n, "data", {og[0]}, {{"axes", IntListAttr(inverse)}})};
}

// ---------------------------------------------------------------- broadcast_to / broadcast_like

/*! \brief Checks that `data` broadcasts to `target` (right-aligned, each dim 1 or equal). */
void CheckBroadcastable(const NodeAttrs& attrs, const Shape& data, const Shape& target) {
  if (!data.rank_known() || !target.rank_known()) return;
  bool ok = data.ndim() <= target.ndim();
  for (int i = 0; ok && i < data.ndim(); ++i) {
    int64_t d = data[i], t = target[target.ndim() - data.ndim() + i];
    ok = d == 1 || d == t || d == kUnknownDim || t == kUnknownDim;
  }
  IR_CHECK(ok) << NodeDesc(attrs) << ": cannot broadcast " << data << " to " << target;
}

bool BroadcastToShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const IntList& target = dmlc::get<BroadcastToParam>(attrs.parsed).shape;
  for (int64_t d : target.values) {
    IR_CHECK(d >= 0) << NodeDesc(attrs) << ": target shape " << ListText(target.values) << " has a negative dimension";
  }
  AssignShape(attrs, "output 0", &(*out)[0], Shape(target.values));
  CheckBroadcastable(attrs, (*in)[0], (*out)[0]);
  return AllKnown(*in, *out);
}

bool BroadcastLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignShape(attrs, "input 1", &(*in)[1], (*out)[0]);
  CheckBroadcastable(attrs, (*in)[0], (*out)[0]);
  return AllKnown(*in, *out);
}

void BroadcastCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  StridedCopySpec spec;
  spec.extents = out[0].shape().dims();
  spec.src_strides = BroadcastStrides(in[0].shape(), out[0].shape());
  spec.dst_strides = ContiguousStrides(out[0].shape());
  StridedCopy(spec, in[0], out[0]);
}

std::vector<NodeEntry> BroadcastGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  std::vector<NodeEntry> grads(n->inputs.size());
  grads[0] = GradNode("collapse_sum_like", n, "data", {og[0], In(n, 0)});
  return grads;
}

/*! \brief What broadcast_to and broadcast_like share; in fused code a broadcast is just its load. */
void BroadcastOp(Op& op) {
  op.set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
      .set_attr<FCompute>("FCompute", BroadcastCompute)
      .set_attr<FGradient>("FGradient", BroadcastGradient)
      .set_attr<FCodeGen>(
          "FCodeGen", [](const NodeAttrs&, const std::vector<ast::Expr>& in) { return std::vector<ast::Expr>{in[0]}; })
      .set_attr<TOpPattern>("TOpPattern", kBroadcast);
}

// ---------------------------------------------------------------- FVectorize

/*! \brief Output 0 of the node, per iteration, from input 0 when it is stacked; unstacked otherwise. */
std::vector<PforValue> ReshapeVectorize(PforContext& ctx) {
  if (!ctx.stacked(0)) {
    return {
        PforValue{ctx.Make("reshape", {ctx.input(0).entry}, {{"shape", ShapeAttr(ctx.out_shape(0).dims())}}), false}};
  }
  return {ReshapeStacked(ctx, ctx.input(0).entry, ctx.out_shape(0))};
}

std::vector<PforValue> ExpandDimsVectorize(PforContext& ctx) {
  int axis = NormalizedAxis(ctx, std::stoi(ctx.attrs().dict.at("axis")), ctx.in_shape(0).ndim() + 1);
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", std::to_string(axis + 1))), true}};
}

/*! \brief Squeeze, transpose: the stacked input reshaped or permuted with n kept first. */
std::vector<PforValue> SqueezeVectorize(PforContext& ctx) {
  return {ReshapeStacked(ctx, ctx.input(0).entry, ctx.out_shape(0))};
}

std::vector<PforValue> TransposeVectorize(PforContext& ctx) {
  const int rank = ctx.in_shape(0).ndim();
  std::vector<int64_t> axes = AttrOr<IntList>(ctx.attrs(), "axes", IntList()).values;
  std::vector<int64_t> stacked{0};
  for (int i = 0; i < rank; ++i) {
    int64_t a = axes.empty() ? rank - 1 - i : axes.at(i);
    stacked.push_back(NormalizedAxis(ctx, static_cast<int>(a), rank) + 1);
  }
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axes", ShapeAttr(stacked))), true}};
}

/*! \brief Input `i` as [n] + ones + shape, of per-iteration rank `rank` (so it broadcasts with n first). */
NodeEntry AlignedStacked(PforContext& ctx, size_t i, int rank) {
  const Shape& shape = ctx.in_shape(i);
  if (shape.ndim() == rank) return ctx.input(i).entry;
  std::vector<int64_t> dims(1 + rank - shape.ndim(), 1);
  dims[0] = ctx.n();
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return ctx.Make("reshape", {ctx.input(i).entry}, {{"shape", ShapeAttr(dims)}});
}

/*! \brief broadcast_to / broadcast_like: to [n] + the per-iteration result shape. */
std::vector<PforValue> BroadcastVectorize(PforContext& ctx) {
  const Shape& out = ctx.out_shape(0);
  if (!ctx.stacked(0)) {
    return {PforValue{ctx.Make("broadcast_to", {ctx.input(0).entry}, {{"shape", ShapeAttr(out.dims())}}), false}};
  }
  NodeEntry x = AlignedStacked(ctx, 0, out.ndim());
  return {PforValue{ctx.Make("broadcast_to", {x}, {{"shape", ShapeAttr(Leading(ctx.n(), out))}}), true}};
}

}  // namespace

IR_REGISTER_OP(reshape)
    .describe("The input's elements in a new shape (row-major order kept); 0 copies a dimension, one -1 is inferred.")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<ReshapeParam>()
    .set_attr<FInferShape>("FInferShape", ReshapeShape)
    .apply(MetadataOp)
    .set_attr<FVectorize>("FVectorize", ReshapeVectorize);

IR_REGISTER_OP(reshape_like)
    .describe("data's elements in the shape of `like` (which is only read for its shape); reshape's gradient.")
    .set_num_inputs(2)
    .set_input_names({"data", "like"})
    .set_attr<FInferShape>("FInferShape", ReshapeLikeShape)
    .apply(MetadataOp)
    .set_attr<FVectorize>("FVectorize", ReshapeVectorize);

IR_REGISTER_OP(expand_dims)
    .describe("Inserts a dimension of size 1 at `axis`.")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<ExpandDimsParam>()
    .set_attr<FInferShape>("FInferShape", ExpandDimsShape)
    .apply(MetadataOp)
    .set_attr<FVectorize>("FVectorize", ExpandDimsVectorize);

IR_REGISTER_OP(squeeze)
    .describe("Removes dimensions of size 1 (those listed in `axis`, or all of them).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<AxesParam>()
    .set_attr<FInferShape>("FInferShape", SqueezeShape)
    .apply(MetadataOp)
    .set_attr<FVectorize>("FVectorize", SqueezeVectorize);

IR_REGISTER_OP(transpose)
    .describe("Permutes the dimensions: output dimension i is input dimension axes[i] (default: reversed).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<TransposeParam>()
    .set_attr<FInferShape>("FInferShape", TransposeShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", TransposeCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", TransposeDevice)
    .set_attr<FGradient>("FGradient", TransposeGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", TransposeVectorize);

IR_REGISTER_OP(broadcast_to)
    .describe("Broadcasts the input to `shape` as NumPy does (dimensions of size 1 repeat).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<BroadcastToParam>()
    .set_attr<FInferShape>("FInferShape", BroadcastToShape)
    .apply(BroadcastOp)
    .set_attr<FVectorize>("FVectorize", BroadcastVectorize);

IR_REGISTER_OP(broadcast_like)
    .describe("Broadcasts `data` to the shape of `like` (which is only read for its shape).")
    .set_num_inputs(2)
    .set_input_names({"data", "like"})
    .set_attr<FInferShape>("FInferShape", BroadcastLikeShape)
    .apply(BroadcastOp)
    .set_attr<FVectorize>("FVectorize", BroadcastVectorize);

}  // namespace op
}  // namespace ir
