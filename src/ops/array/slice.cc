/*!
 * \file slice.cc
 * \brief Ops that read or write a box of a tensor: slice (begin/size), strided_slice (as
 * TensorFlow), strided_slice_grad (their gradient: the slice written back into zeros) and pad.
 *
 * All four go through CanonicalizeStridedSlice: slice is a strided slice with stride 1, and
 * pad's gradient is the strided slice that cuts the padding off again.
 */
#include <limits>

#include "ops/array/array_common.h"
#include "ops/array/array_vectorize.h"
#include "ops/strided_copy.h"
#include "ops/strided_slice_spec.h"

namespace ir {
namespace op {
namespace {

struct SliceParam : public dmlc::Parameter<SliceParam> {
  IntList begin;
  IntList size;
  DMLC_DECLARE_PARAMETER(SliceParam) {
    DMLC_DECLARE_FIELD(begin).describe("First index per dimension (non-negative).");
    DMLC_DECLARE_FIELD(size).describe("Extent per dimension; -1 takes everything from begin on.");
  }
};

struct PadParam : public dmlc::Parameter<PadParam> {
  IntList paddings;
  double constant_value;
  DMLC_DECLARE_PARAMETER(PadParam) {
    DMLC_DECLARE_FIELD(paddings).describe(
        "Pairs (before, after) per dimension, flattened: (b0,a0,b1,a1,...); non-negative.");
    DMLC_DECLARE_FIELD(constant_value).set_default(0.0).describe("Value of the padding.");
  }
};

DMLC_REGISTER_PARAMETER(SliceParam);
DMLC_REGISTER_PARAMETER(PadParam);

/*! \brief A StridedSliceParam with every field at its default. */
StridedSliceParam DefaultStridedSlice() {
  StridedSliceParam p;
  p.Init(std::map<std::string, std::string>{});
  return p;
}

/*! \brief An end index past any extent: clamping turns it into "to the end" (no mask bits needed). */
constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

/*! \brief slice(begin, size) as a strided slice: end = begin + size, or to the end where size is -1. */
StridedSliceParam SliceAsStrided(const SliceParam& slice) {
  StridedSliceParam p = DefaultStridedSlice();
  p.begin = slice.begin;
  for (size_t i = 0; i < slice.begin.size() && i < slice.size.size(); ++i) {
    p.end.values.push_back(slice.size[i] == -1 ? kToEnd : slice.begin[i] + slice.size[i]);
  }
  return p;
}

/*! \brief The strided slice that undoes pad: begin at `before`, end at -`after` (or the end). */
StridedSliceParam PadAsStrided(const PadParam& pad) {
  StridedSliceParam p = DefaultStridedSlice();
  for (size_t i = 0; 2 * i + 1 < pad.paddings.size(); ++i) {
    int64_t after = pad.paddings[2 * i + 1];
    p.begin.values.push_back(pad.paddings[2 * i]);
    p.end.values.push_back(after == 0 ? kToEnd : -after);
  }
  return p;
}

/*!
 * \brief The copy between the box `spec` reads from a tensor of shape `full` and a
 * contiguous tensor of the box's shape; `into_box` reverses the direction.
 */
StridedCopySpec BoxCopy(const StridedSliceSpec& spec, const Shape& full, bool into_box) {
  std::vector<int64_t> strides = ContiguousStrides(full);
  StridedCopySpec copy;
  copy.extents = spec.size;
  std::vector<int64_t> box_strides, dense_strides = ContiguousStrides(Shape(spec.size));
  int64_t offset = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    box_strides.push_back(strides[d] * spec.stride[d]);
    offset += spec.size[d] > 0 ? strides[d] * spec.begin[d] : 0;
  }
  copy.src_strides = into_box ? dense_strides : box_strides;
  copy.dst_strides = into_box ? box_strides : dense_strides;
  (into_box ? copy.dst_offset : copy.src_offset) = offset;
  return copy;
}

// ---------------------------------------------------------------- slice

void CheckSlice(const NodeAttrs& attrs, const Shape& in) {
  const SliceParam& p = dmlc::get<SliceParam>(attrs.parsed);
  IR_CHECK(p.begin.size() == p.size.size())
      << NodeDesc(attrs) << ": begin " << p.begin << " and size " << p.size << " differ in length";
  IR_CHECK(!in.rank_known() || static_cast<int>(p.begin.size()) == in.ndim())
      << NodeDesc(attrs) << ": begin " << p.begin << " does not match input " << in << " (rank " << in.ndim() << ")";
  for (size_t i = 0; i < p.begin.size(); ++i) {
    int64_t b = p.begin[i], s = p.size[i];
    bool fits = b >= 0 && s >= -1 && (!in.rank_known() || in[i] < 0 || b + std::max<int64_t>(s, 0) <= in[i]);
    IR_CHECK(fits) << NodeDesc(attrs) << ": slice begin " << p.begin << " size " << p.size
                   << " is out of bounds of input " << in << " in dimension " << i;
  }
}

bool SliceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckSlice(attrs, (*in)[0]);
  const SliceParam& p = dmlc::get<SliceParam>(attrs.parsed);
  if (!(*in)[0].rank_known()) AssignShape(attrs, "input 0", &(*in)[0], Shape::UnknownDims(p.begin.size()));
  std::vector<int64_t> dims = CanonicalizeStridedSlice(attrs, SliceAsStrided(p), (*in)[0]).out_shape.dims();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (p.size[i] >= 0) dims[i] = p.size[i];  // known even where the input's extent is not
  }
  AssignShape(attrs, "output 0", &(*out)[0], Shape(dims));
  return AllKnown(*in, *out);
}

void SliceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  CheckSlice(attrs, in[0].shape());
  StridedSliceParam p = SliceAsStrided(dmlc::get<SliceParam>(attrs.parsed));
  StridedCopy(BoxCopy(CanonicalizeStridedSlice(attrs, p, in[0].shape()), in[0].shape(), false), in[0], out[0]);
}

std::vector<NodeEntry> SliceGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  StridedSliceParam p = SliceAsStrided(dmlc::get<SliceParam>(n->attrs.parsed));
  return {GradNode("strided_slice_grad", n, "data", {og[0], In(n, 0)}, p.__DICT__())};
}

// ---------------------------------------------------------------- strided_slice

bool StridedSliceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = dmlc::get<StridedSliceParam>(attrs.parsed);
  AssignShape(attrs, "output 0", &(*out)[0], CanonicalizeStridedSlice(attrs, p, (*in)[0]).out_shape);
  return AllKnown(*in, *out);
}

void StridedSliceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  const auto& p = dmlc::get<StridedSliceParam>(attrs.parsed);
  StridedCopy(BoxCopy(CanonicalizeStridedSlice(attrs, p, in[0].shape()), in[0].shape(), false), in[0], out[0]);
}

std::vector<NodeEntry> StridedSliceGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("strided_slice_grad", n, "data", {og[0], In(n, 0)}, n->attrs.dict)};
}

// strided_slice_grad(dy, like): zeros shaped like `like`, with dy written where the slice read.
bool StridedSliceGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = dmlc::get<StridedSliceParam>(attrs.parsed);
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignShape(attrs, "input 1", &(*in)[1], (*out)[0]);
  AssignShape(attrs, "input 0", &(*in)[0], CanonicalizeStridedSlice(attrs, p, (*in)[1]).out_shape);
  return AllKnown(*in, *out);
}

void StridedSliceGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                             const std::vector<NDArray>& out) {
  const auto& p = dmlc::get<StridedSliceParam>(attrs.parsed);
  Fill(out[0], 0);
  StridedCopy(BoxCopy(CanonicalizeStridedSlice(attrs, p, out[0].shape()), out[0].shape(), true), in[0], out[0]);
}

std::vector<NodeEntry> StridedSliceGradGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("strided_slice", n, "dy", {og[0]}, n->attrs.dict), NodeEntry()};
}

// ---------------------------------------------------------------- pad

bool PadShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const IntList& pads = dmlc::get<PadParam>(attrs.parsed).paddings;
  IR_CHECK(pads.size() % 2 == 0) << NodeDesc(attrs) << ": paddings " << pads << " must hold (before, after) pairs";
  for (int64_t v : pads.values) {
    IR_CHECK(v >= 0) << NodeDesc(attrs) << ": paddings " << pads << " must be non-negative";
  }
  int ndim = static_cast<int>(pads.size() / 2);
  Shape& data = (*in)[0];
  Shape& result = (*out)[0];
  IR_CHECK(!data.rank_known() || data.ndim() == ndim)
      << NodeDesc(attrs) << ": paddings " << pads << " have " << ndim << " pairs for input " << data;
  if (!data.rank_known()) data = Shape::UnknownDims(ndim);
  if (!result.rank_known()) result = Shape::UnknownDims(ndim);
  std::vector<int64_t> fwd(ndim), back(ndim);
  for (int d = 0; d < ndim; ++d) {
    int64_t total = pads[2 * d] + pads[2 * d + 1];
    fwd[d] = data[d] < 0 ? kUnknownDim : data[d] + total;
    back[d] = result[d] < 0 ? kUnknownDim : result[d] - total;
  }
  AssignShape(attrs, "output 0", &result, Shape(fwd));
  AssignShape(attrs, "input 0", &data, Shape(back));
  return AllKnown(*in, *out);
}

void PadCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  const PadParam& p = dmlc::get<PadParam>(attrs.parsed);
  Fill(out[0], p.constant_value);
  StridedCopy(BoxCopy(CanonicalizeStridedSlice(attrs, PadAsStrided(p), out[0].shape()), out[0].shape(), true), in[0],
              out[0]);
}

std::vector<NodeEntry> PadGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  StridedSliceParam p = PadAsStrided(dmlc::get<PadParam>(n->attrs.parsed));
  return {GradNode("strided_slice", n, "data", {og[0]}, p.__DICT__())};
}

// ---------------------------------------------------------------- FVectorize

/*! \brief slice, pad: the leading n kept whole (begin 0 / size -1, no padding). */
std::vector<PforValue> SlicePadVectorize(PforContext& ctx) {
  std::map<std::string, std::string> dict = ctx.attrs().dict;
  if (ctx.attrs().op->name == "slice") {
    dict["begin"] = Prepended(dict.at("begin"), 0);
    dict["size"] = Prepended(dict.at("size"), -1);
  } else {
    dict["paddings"] = Prepended(Prepended(dict.at("paddings"), 0), 0);
  }
  return AllStacked(ctx.CopyNode(StackedFrom(ctx, 0), dict), ctx.num_outputs());
}

/*! \brief strided_slice(_grad): a full first entry prepended, every mask shifted past it. */
std::vector<PforValue> StridedSliceVectorize(PforContext& ctx) {
  std::vector<PforValue> outs;
  if (ctx.num_inputs() > 1 && OnlyShapeDonorsStacked(ctx, &outs)) return outs;
  std::map<std::string, std::string> dict = ctx.attrs().dict;
  for (const char* key : {"begin", "end"}) dict[key] = Prepended(AttrOr<std::string>(ctx.attrs(), key, "()"), 0);
  IntList strides = AttrOr<IntList>(ctx.attrs(), "strides", IntList());
  if (strides.values.empty()) strides.values.assign(AttrOr<IntList>(ctx.attrs(), "begin", IntList()).values.size(), 1);
  dict["strides"] = Prepended(StrCat(strides), 1);
  for (const char* key : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    int64_t mask = AttrOr<int64_t>(ctx.attrs(), key, 0) << 1;
    if (std::string(key) == "begin_mask" || std::string(key) == "end_mask") mask |= 1;
    dict[key] = std::to_string(mask);
  }
  return AllStacked(ctx.CopyNode(StackedFrom(ctx, 0), dict), ctx.num_outputs());
}

}  // namespace

IR_REGISTER_OP(slice)
    .describe("The box of the input starting at `begin` with extents `size` (-1: to the end), as tf.slice.")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<SliceParam>()
    .set_attr<FInferShape>("FInferShape", SliceShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", SliceCompute)
    .set_attr<FGradient>("FGradient", SliceGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", SlicePadVectorize);

IR_REGISTER_OP(strided_slice)
    .describe("data[begin:end:strides] with TensorFlow's masks (begin, end, ellipsis, new axis, shrink axis).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<StridedSliceParam>()
    .set_attr<FInferShape>("FInferShape", StridedSliceShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", StridedSliceCompute)
    .set_attr<FGradient>("FGradient", StridedSliceGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", StridedSliceVectorize);

IR_REGISTER_OP(strided_slice_grad)
    .describe(
        "Zeros shaped like `like`, with `dy` written where strided_slice (same attributes) reads: "
        "the gradient of strided_slice and slice.")
    .set_num_inputs(2)
    .set_input_names({"dy", "like"})
    .set_param<StridedSliceParam>()
    .set_attr<FInferShape>("FInferShape", StridedSliceGradShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", StridedSliceGradCompute)
    .set_attr<FGradient>("FGradient", StridedSliceGradGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", StridedSliceVectorize);

IR_REGISTER_OP(pad)
    .describe(
        "Surrounds the input with `constant_value`: paddings (b0,a0,b1,a1,...) elements before and after each "
        "dimension.")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<PadParam>()
    .set_attr<FInferShape>("FInferShape", PadShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", PadCompute)
    .set_attr<FGradient>("FGradient", PadGradient)
    .set_attr<TOpPattern>("TOpPattern", kInjective)
    .set_attr<FVectorize>("FVectorize", SlicePadVectorize);

}  // namespace op
}  // namespace ir
