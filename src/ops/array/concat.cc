/*!
 * \file concat.cc
 * \brief Ops that join or repeat tensors along axes: concat, split, concat_grad (concat's
 * gradient: og cut into pieces shaped like concat's inputs), tile and tile_grad (the sum of
 * the tiles, tile's gradient).
 */
#include <string>

#include "ops/array/array_common.h"
#include "ops/array/array_vectorize.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

struct ConcatParam : public dmlc::Parameter<ConcatParam> {
  int axis;
  DMLC_DECLARE_PARAMETER(ConcatParam) {
    DMLC_DECLARE_FIELD(axis).set_default(0).describe("Axis to join along (negative counts from the end).");
  }
};

struct ConcatGradParam : public dmlc::Parameter<ConcatGradParam> {
  int axis;
  int num_outputs;
  DMLC_DECLARE_PARAMETER(ConcatGradParam) {
    DMLC_DECLARE_FIELD(axis).set_default(0).describe("Axis concat joined along.");
    DMLC_DECLARE_FIELD(num_outputs).set_lower_bound(1).describe("Number of pieces (concat's inputs).");
  }
};

struct SplitParam : public dmlc::Parameter<SplitParam> {
  int axis;
  int num_outputs;
  IntList sizes;
  DMLC_DECLARE_PARAMETER(SplitParam) {
    DMLC_DECLARE_FIELD(axis).set_default(0).describe("Axis to split along (negative counts from the end).");
    DMLC_DECLARE_FIELD(num_outputs)
        .set_default(1)
        .set_lower_bound(1)
        .describe("Number of equal pieces (when sizes is empty).");
    DMLC_DECLARE_FIELD(sizes).set_default(IntList()).describe(
        "Extent of each piece along axis; one may be -1 (the rest).");
  }
};

struct TileParam : public dmlc::Parameter<TileParam> {
  IntList reps;
  DMLC_DECLARE_PARAMETER(TileParam) {
    DMLC_DECLARE_FIELD(reps).describe("Repetitions per dimension (one per input dimension, non-negative).");
  }
};

DMLC_REGISTER_PARAMETER(ConcatParam);
DMLC_REGISTER_PARAMETER(ConcatGradParam);
DMLC_REGISTER_PARAMETER(SplitParam);
DMLC_REGISTER_PARAMETER(TileParam);

// ---------------------------------------------------------------- joining shapes

/*! \brief Names for error messages: "inputs"/"output" for concat, "outputs"/"input" for split. */
struct JoinRoles {
  const char* parts;
  const char* whole;
};

std::string JoinDesc(const std::vector<Shape*>& parts, const Shape& whole, const JoinRoles& roles) {
  std::vector<Shape> shapes;
  for (const Shape* s : parts) shapes.push_back(*s);
  return StrCat(roles.parts, " ", ShapesDesc(shapes), " and ", roles.whole, " ", whole);
}

/*!
 * \brief Refines `parts` and `whole` so that whole is the parts joined along `axis`: one rank,
 * equal dimensions off the axis, the whole's extent the sum of the parts' (or one unknown
 * part's extent the difference). Returns the normalized axis, or -1 while the rank is unknown.
 */
int JoinShapes(const NodeAttrs& attrs, int axis, const std::vector<Shape*>& parts, Shape* whole,
               const JoinRoles& roles) {
  IR_CHECK(!parts.empty()) << NodeDesc(attrs) << ": needs at least one " << roles.parts;
  int ndim = whole->ndim();
  for (const Shape* s : parts) {
    if (!s->rank_known()) continue;
    IR_CHECK(ndim < 0 || ndim == s->ndim())
        << NodeDesc(attrs) << ": " << JoinDesc(parts, *whole, roles) << " must have one rank";
    ndim = s->ndim();
  }
  if (ndim < 0) return -1;
  IR_CHECK(ndim > 0) << NodeDesc(attrs) << ": cannot join or split scalars (" << JoinDesc(parts, *whole, roles) << ")";
  axis = NormalizeAxis(attrs, axis, ndim);
  std::vector<Shape*> all = parts;
  all.push_back(whole);
  for (Shape* s : all) {
    if (!s->rank_known()) *s = Shape::UnknownDims(ndim);
  }
  for (int d = 0; d < ndim; ++d) {
    if (d == axis) continue;
    int64_t extent = kUnknownDim;
    for (const Shape* s : all) {
      IR_CHECK(extent < 0 || (*s)[d] < 0 || (*s)[d] == extent)
          << NodeDesc(attrs) << ": " << JoinDesc(parts, *whole, roles) << " differ in dimension " << d
          << " (joining along axis " << axis << ")";
      if ((*s)[d] >= 0) extent = (*s)[d];
    }
    for (Shape* s : all) (*s)[d] = extent;
  }
  int64_t sum = 0;
  Shape* unknown = nullptr;
  int num_unknown = 0;
  for (Shape* s : parts) {
    if ((*s)[axis] < 0) {
      unknown = s;
      ++num_unknown;
    } else {
      sum += (*s)[axis];
    }
  }
  bool fits =
      num_unknown > 0 ? (*whole)[axis] < 0 || (*whole)[axis] >= sum : (*whole)[axis] < 0 || (*whole)[axis] == sum;
  IR_CHECK(fits) << NodeDesc(attrs) << ": " << JoinDesc(parts, *whole, roles) << " do not add up along axis " << axis;
  if (num_unknown == 0) (*whole)[axis] = sum;
  if (num_unknown == 1 && (*whole)[axis] >= 0) (*unknown)[axis] = (*whole)[axis] - sum;
  return axis;
}

std::vector<Shape*> Pointers(std::vector<Shape>* shapes, size_t first = 0) {
  std::vector<Shape*> out;
  for (size_t i = first; i < shapes->size(); ++i) out.push_back(&(*shapes)[i]);
  return out;
}

/*! \brief Copies the parts into the whole along `axis` (join), or the whole into the parts. */
void MoveAlongAxis(const NDArray& whole, const std::vector<NDArray>& parts, int axis, bool join) {
  const Shape& ws = whole.shape();
  int64_t outer = ws.ProdDims(0, axis), inner = ws.ProdDims(axis + 1, ws.ndim()), row = ws[axis] * inner;
  int64_t offset = 0;
  for (const NDArray& part : parts) {
    int64_t len = part.shape()[axis] * inner;
    StridedCopySpec spec;
    spec.extents = {outer, len};
    spec.src_strides = join ? std::vector<int64_t>{len, 1} : std::vector<int64_t>{row, 1};
    spec.dst_strides = join ? std::vector<int64_t>{row, 1} : std::vector<int64_t>{len, 1};
    (join ? spec.dst_offset : spec.src_offset) = offset;
    StridedCopy(spec, join ? part : whole, join ? whole : part);
    offset += len;
  }
}

// ---------------------------------------------------------------- concat, concat_grad, split

bool ConcatShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  JoinShapes(attrs, dmlc::get<ConcatParam>(attrs.parsed).axis, Pointers(in), &(*out)[0], {"inputs", "output"});
  return AllKnown(*in, *out);
}

void ConcatCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  int axis = NormalizeAxis(attrs, dmlc::get<ConcatParam>(attrs.parsed).axis, out[0].shape().ndim());
  MoveAlongAxis(out[0], in, axis, true);
}

std::vector<NodeEntry> ConcatGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  std::vector<NodeEntry> inputs = {og[0]};
  inputs.insert(inputs.end(), n->inputs.begin(), n->inputs.end());
  NodeEntry pieces = GradNode("concat_grad", n, "data", inputs,
                              {{"axis", std::to_string(dmlc::get<ConcatParam>(n->attrs.parsed).axis)},
                               {"num_outputs", std::to_string(n->inputs.size())}});
  std::vector<NodeEntry> grads;
  for (uint32_t i = 0; i < n->inputs.size(); ++i) grads.push_back(Out(pieces.node, i));
  return grads;
}

// concat_grad(dy, like_0, ..., like_{n-1}): output i is the piece of dy where input i of concat went.
bool ConcatGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, StrCat("output ", i), &(*out)[i], (*in)[i + 1]);
    AssignShape(attrs, StrCat("input ", i + 1), &(*in)[i + 1], (*out)[i]);
  }
  JoinShapes(attrs, dmlc::get<ConcatGradParam>(attrs.parsed).axis, Pointers(out), &(*in)[0], {"outputs", "input"});
  return AllKnown(*in, *out);
}

bool ConcatGradType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> dy = {(*in)[0]};
  bool known = ElemwiseType(attrs, &dy, out);
  (*in)[0] = dy[0];
  return known && AllKnown(*in, *out);
}

void ConcatGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out) {
  int axis = NormalizeAxis(attrs, dmlc::get<ConcatGradParam>(attrs.parsed).axis, in[0].shape().ndim());
  MoveAlongAxis(in[0], out, axis, false);
}

std::vector<NodeEntry> ConcatGradGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  std::vector<NodeEntry> grads(n->inputs.size());
  grads[0] =
      GradNode("concat", n, "dy", og, {{"axis", std::to_string(dmlc::get<ConcatGradParam>(n->attrs.parsed).axis)}});
  return grads;
}

uint32_t SplitCount(const NodeAttrs& attrs) {
  const SplitParam& p = dmlc::get<SplitParam>(attrs.parsed);
  return p.sizes.empty() ? static_cast<uint32_t>(p.num_outputs) : static_cast<uint32_t>(p.sizes.size());
}

/*! \brief The extents of split's pieces along the axis, given the input's (maybe unknown) extent. */
std::vector<int64_t> SplitSizes(const NodeAttrs& attrs, const Shape& data, int axis) {
  const SplitParam& p = dmlc::get<SplitParam>(attrs.parsed);
  int64_t extent = data[axis];
  std::string where = StrCat(NodeDesc(attrs), ": split of ", data, " along axis ", axis);
  if (p.sizes.empty()) {
    IR_CHECK(extent < 0 || extent % p.num_outputs == 0)
        << where << " into " << p.num_outputs << " equal parts: " << extent << " is not divisible by " << p.num_outputs;
    return std::vector<int64_t>(p.num_outputs, extent < 0 ? kUnknownDim : extent / p.num_outputs);
  }
  std::vector<int64_t> sizes = p.sizes.values;
  int64_t sum = 0;
  int rest = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    IR_CHECK(sizes[i] >= -1 && (sizes[i] >= 0 || rest < 0))
        << where << " into sizes " << p.sizes << ": sizes must be non-negative, with at most one -1";
    if (sizes[i] < 0) rest = static_cast<int>(i);
    sum += std::max<int64_t>(sizes[i], 0);
  }
  bool fits = extent < 0 || (rest >= 0 ? sum <= extent : sum == extent);
  IR_CHECK(fits) << where << " into sizes " << p.sizes << ": sizes sum to " << sum << ", not " << extent;
  if (rest >= 0) sizes[rest] = extent < 0 ? kUnknownDim : extent - sum;
  return sizes;
}

bool SplitShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SplitParam& p = dmlc::get<SplitParam>(attrs.parsed);
  int axis = JoinShapes(attrs, p.axis, Pointers(out), &(*in)[0], {"outputs", "input"});
  if (axis < 0) return false;
  std::vector<int64_t> sizes = SplitSizes(attrs, (*in)[0], axis);
  for (size_t i = 0; i < out->size(); ++i) {
    Shape piece = (*in)[0];
    piece[axis] = sizes[i];
    AssignShape(attrs, StrCat("output ", i), &(*out)[i], piece);
  }
  JoinShapes(attrs, p.axis, Pointers(out), &(*in)[0], {"outputs", "input"});
  return AllKnown(*in, *out);
}

void SplitCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  int axis = NormalizeAxis(attrs, dmlc::get<SplitParam>(attrs.parsed).axis, in[0].shape().ndim());
  MoveAlongAxis(in[0], out, axis, false);
}

std::vector<NodeEntry> SplitGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("concat", n, "data", og, {{"axis", std::to_string(dmlc::get<SplitParam>(n->attrs.parsed).axis)}})};
}

// ---------------------------------------------------------------- tile, tile_grad

/*! \brief Refines `big` = `small` tiled by reps, both ways. */
void TileShapes(const NodeAttrs& attrs, Shape* small, Shape* big) {
  const IntList& reps = dmlc::get<TileParam>(attrs.parsed).reps;
  int ndim = static_cast<int>(reps.size());
  for (Shape* s : {small, big}) {
    IR_CHECK(!s->rank_known() || s->ndim() == ndim)
        << NodeDesc(attrs) << ": reps " << reps << " do not match the rank of " << *s;
    if (!s->rank_known()) *s = Shape::UnknownDims(ndim);
  }
  std::vector<int64_t> fwd(ndim), back(ndim);
  for (int d = 0; d < ndim; ++d) {
    IR_CHECK(reps[d] >= 0) << NodeDesc(attrs) << ": reps " << reps << " must be non-negative";
    IR_CHECK((*big)[d] < 0 || reps[d] == 0 || (*big)[d] % reps[d] == 0)
        << NodeDesc(attrs) << ": " << *big << " is not " << *small << " tiled by " << reps;
    fwd[d] = (*small)[d] < 0 ? kUnknownDim : (*small)[d] * reps[d];
    back[d] = (*big)[d] < 0 || reps[d] == 0 ? (*small)[d] : (*big)[d] / reps[d];
  }
  AssignShape(attrs, "the tiled shape", big, Shape(fwd));
  AssignShape(attrs, "the untiled shape", small, Shape(back));
}

bool TileShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  TileShapes(attrs, &(*in)[0], &(*out)[0]);
  return AllKnown(*in, *out);
}

/*! \brief tile as a strided copy: the output, seen as [r0, d0, r1, d1, ...], reads with stride 0 along each r. */
void TileCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  const IntList& reps = dmlc::get<TileParam>(attrs.parsed).reps;
  const Shape& small = in[0].shape();
  std::vector<int64_t> src = ContiguousStrides(small), dst = ContiguousStrides(out[0].shape());
  StridedCopySpec spec;
  for (int d = 0; d < small.ndim(); ++d) {
    spec.extents.insert(spec.extents.end(), {reps[d], small[d]});
    spec.src_strides.insert(spec.src_strides.end(), {0, src[d]});
    spec.dst_strides.insert(spec.dst_strides.end(), {small[d] * dst[d], dst[d]});
  }
  StridedCopy(spec, in[0], out[0]);
}

// tile_grad(dy, like): out[i] = sum of dy over the tiles, i.e. over i + t * like.shape.
bool TileGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignShape(attrs, "input 1", &(*in)[1], (*out)[0]);
  TileShapes(attrs, &(*out)[0], &(*in)[0]);
  AssignShape(attrs, "input 1", &(*in)[1], (*out)[0]);
  return AllKnown(*in, *out);
}

/*! \brief Each output row (last dimension) adds up the matching contiguous rows of every tile. */
template <typename T>
void SumTiles(const T* big, const Shape& big_shape, T* small, const Shape& small_shape, const IntList& reps) {
  int n = small_shape.ndim();
  std::vector<int64_t> strides = ContiguousStrides(big_shape);
  int64_t inner = n == 0 ? 1 : small_shape[n - 1], tiles = 1;
  for (int64_t r : reps.values) tiles *= r;
  int64_t rows = small_shape.Size() / std::max<int64_t>(inner, 1);
  auto body = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> t(n, 0);
    for (int64_t row = begin; row < end; ++row) {
      int64_t base = 0, rem = row;
      for (int d = n - 2; d >= 0; --d) {
        base += (rem % small_shape[d]) * strides[d];
        rem /= small_shape[d];
      }
      T* out = small + row * inner;
      std::fill(out, out + inner, T(0));
      for (int64_t k = 0, offset = 0; k < tiles; ++k) {
        const T* in = big + base + offset;
        for (int64_t j = 0; j < inner; ++j) out[j] += in[j];
        for (int d = n - 1; d >= 0; --d) {  // next tile: odometer over t, tracking its offset
          offset += small_shape[d] * strides[d];
          if (++t[d] < reps[d]) break;
          offset -= t[d] * small_shape[d] * strides[d];
          t[d] = 0;
        }
      }
    }
  };
  ParallelFor(rows, body, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, inner * tiles)));
}

void TileGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const IntList& reps = dmlc::get<TileParam>(attrs.parsed).reps;
  IR_NUMERIC_SWITCH(out[0].dtype(), DT,
                    { SumTiles<DT>(in[0].data<DT>(), in[0].shape(), out[0].data<DT>(), out[0].shape(), reps); });
}

std::vector<NodeEntry> TileGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("tile_grad", n, "data", {og[0], In(n, 0)}, n->attrs.dict)};
}

std::vector<NodeEntry> TileGradGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("tile", n, "dy", {og[0]}, n->attrs.dict), NodeEntry()};
}

// ---------------------------------------------------------------- FVectorize

/*! \brief concat, split, concat_grad: along the shifted axis, every piece stacked. */
std::vector<PforValue> AxisVectorize(PforContext& ctx) {
  std::vector<PforValue> outs;
  if (ctx.attrs().op->name == "concat_grad" && OnlyShapeDonorsStacked(ctx, &outs)) return outs;
  NodeEntry first = ctx.CopyNode(StackedFrom(ctx, 0), ctx.DictWith("axis", ShiftedAxis(ctx, ctx.in_shape(0).ndim())));
  return AllStacked(first, ctx.num_outputs());
}

/*! \brief tile, tile_grad: the leading n kept whole (1 rep). */
std::vector<PforValue> TileVectorize(PforContext& ctx) {
  std::vector<PforValue> outs;
  if (ctx.attrs().op->name == "tile_grad" && OnlyShapeDonorsStacked(ctx, &outs)) return outs;
  std::map<std::string, std::string> dict = ctx.attrs().dict;
  dict["reps"] = Prepended(dict.at("reps"), 1);
  return AllStacked(ctx.CopyNode(StackedFrom(ctx, 0), dict), ctx.num_outputs());
}

}  // namespace

IR_REGISTER_OP(concat)
    .describe("Joins its inputs along `axis`; they agree on every other dimension.")
    .set_num_inputs(kVariadic)
    .add_argument("data", "NDArray[]", "Tensors to join, of one rank and dtype.")
    .set_param<ConcatParam>()
    .set_attr<FInferShape>("FInferShape", ConcatShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", ConcatCompute)
    .set_attr<FGradient>("FGradient", ConcatGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", AxisVectorize);

IR_REGISTER_OP(concat_grad)
    .describe("Cuts `dy` along `axis` into pieces shaped like like_0 .. like_{n-1} (concat's gradient).")
    .set_num_inputs([](const NodeAttrs& attrs) {
      return static_cast<uint32_t>(dmlc::get<ConcatGradParam>(attrs.parsed).num_outputs) + 1;
    })
    .set_num_outputs([](const NodeAttrs& attrs) {
      return static_cast<uint32_t>(dmlc::get<ConcatGradParam>(attrs.parsed).num_outputs);
    })
    .add_argument("dy", "NDArray", "The gradient of concat's output.")
    .add_argument("like", "NDArray[]", "concat's inputs (only their shapes are read).")
    .set_param<ConcatGradParam>()
    .set_attr<FInferShape>("FInferShape", ConcatGradShape)
    .set_attr<FInferType>("FInferType", ConcatGradType)
    .set_attr<FCompute>("FCompute", ConcatGradCompute)
    .set_attr<FGradient>("FGradient", ConcatGradGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", AxisVectorize);

IR_REGISTER_OP(split)
    .describe("Splits the input along `axis` into num_outputs equal pieces, or pieces of the given sizes.")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_num_outputs(SplitCount)
    .set_param<SplitParam>()
    .set_attr<FInferShape>("FInferShape", SplitShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", SplitCompute)
    .set_attr<FGradient>("FGradient", SplitGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", AxisVectorize);

IR_REGISTER_OP(tile)
    .describe("Repeats the input reps[d] times along each dimension d (as tf.tile).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<TileParam>()
    .set_attr<FInferShape>("FInferShape", TileShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", TileCompute)
    .set_attr<FGradient>("FGradient", TileGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", TileVectorize);

IR_REGISTER_OP(tile_grad)
    .describe("The sum of the reps tiles of `dy`, shaped like `like` (tile's gradient).")
    .set_num_inputs(2)
    .set_input_names({"dy", "like"})
    .set_param<TileParam>()
    .set_attr<FInferShape>("FInferShape", TileGradShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", TileGradCompute)
    .set_attr<FGradient>("FGradient", TileGradGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", TileVectorize);

}  // namespace op
}  // namespace ir
