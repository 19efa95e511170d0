/*!
 * \file index.cc
 * \brief Ops driven by integer index tensors: gather, gather_grad (its gradient, a
 * scatter-add into zeros) and one_hot.
 */
#include <algorithm>
#include <string>

#include "ir/vectorize.h"
#include "ops/array/array_common.h"
#include "ops/array/array_vectorize.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

struct GatherParam : public dmlc::Parameter<GatherParam> {
  int axis;
  DMLC_DECLARE_PARAMETER(GatherParam) {
    DMLC_DECLARE_FIELD(axis).set_default(0).describe("Axis of params the indices select along.");
  }
};

struct OneHotParam : public dmlc::Parameter<OneHotParam> {
  int depth;
  double on_value;
  double off_value;
  int axis;
  std::string dtype;
  DMLC_DECLARE_PARAMETER(OneHotParam) {
    DMLC_DECLARE_FIELD(depth).set_lower_bound(0).describe("Extent of the new dimension.");
    DMLC_DECLARE_FIELD(on_value).set_default(1.0).describe("Value where the index matches.");
    DMLC_DECLARE_FIELD(off_value).set_default(0.0).describe("Value elsewhere (also for indices outside [0, depth)).");
    DMLC_DECLARE_FIELD(axis).set_default(-1).describe("Position of the new dimension in the output; -1 is last.");
    DMLC_DECLARE_FIELD(dtype).set_default("float32").describe("Output dtype.");
  }
};

DMLC_REGISTER_PARAMETER(GatherParam);
DMLC_REGISTER_PARAMETER(OneHotParam);

const DTypeSet& IndexTypes() {
  static const DTypeSet types = {DType::kInt32, DType::kInt64};
  return types;
}

std::vector<int64_t> IndicesAsInt64(const NDArray& indices) {
  std::vector<int64_t> out(indices.Size());
  if (indices.dtype() == DType::kInt32) {
    std::copy_n(indices.data<int32_t>(), out.size(), out.begin());
  } else {
    std::copy_n(indices.data<int64_t>(), out.size(), out.begin());
  }
  return out;
}

// ---------------------------------------------------------------- gather, gather_grad

/*! \brief Normalized gather axis for params of rank `ndim` (which must be at least 1). */
int GatherAxis(const NodeAttrs& attrs, int ndim) {
  IR_CHECK(ndim > 0) << NodeDesc(attrs) << ": cannot gather from a scalar";
  return NormalizeAxis(attrs, dmlc::get<GatherParam>(attrs.parsed).axis, ndim);
}

/*! \brief params[:axis] + indices + params[axis+1:], or unknown rank. */
Shape GatherResult(const NodeAttrs& attrs, const Shape& params, const Shape& indices) {
  if (!params.rank_known() || !indices.rank_known()) return Shape();
  int axis = GatherAxis(attrs, params.ndim());
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  return Shape(dims);
}

bool GatherShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], GatherResult(attrs, (*in)[0], (*in)[1]));
  return AllKnown(*in, *out);
}

bool IndexedType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckDType(attrs, "indices", (*in)[1], IndexTypes());
  return SameTypeAsFirstInput(attrs, in, out);
}

/*! \brief The indices as int64; each must lie in [0, params' extent along axis). */
std::vector<int64_t> CheckedIndices(const NodeAttrs& attrs, const NDArray& indices, const Shape& params, int axis) {
  std::vector<int64_t> index = IndicesAsInt64(indices);
  for (size_t k = 0; k < index.size(); ++k) {
    IR_CHECK(0 <= index[k] && index[k] < params[axis])
        << NodeDesc(attrs) << ": index " << index[k] << " (indices element " << k << ") is out of range [0, "
        << params[axis] << ") for axis " << axis << " of params " << params;
  }
  return index;
}

/*! \brief Sizes of params around the gather axis: [outer, extent, inner]. */
struct GatherLayout {
  int64_t outer, extent, inner;
  GatherLayout(const Shape& params, int axis)
      : outer(params.ProdDims(0, axis)), extent(params[axis]), inner(params.ProdDims(axis + 1, params.ndim())) {}
};

void GatherCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  const Shape& params = in[0].shape();
  int axis = GatherAxis(attrs, params.ndim());
  std::vector<int64_t> index = CheckedIndices(attrs, in[1], params, axis);
  GatherLayout g(params, axis);
  int64_t count = static_cast<int64_t>(index.size());
  if (out[0].Size() == 0) return;
  IR_ALL_TYPES_SWITCH(in[0].dtype(), DT, {
    const DT* src = in[0].data<DT>();
    DT* dst = out[0].data<DT>();
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        std::copy_n(src + ((r / count) * g.extent + index[r % count]) * g.inner, g.inner, dst + r * g.inner);
      }
    };
    ParallelFor(g.outer * count, body, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(g.inner, 1)));
  });
}

std::vector<NodeEntry> GatherGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("gather_grad", n, "params", {og[0], In(n, 1), In(n, 0)}, n->attrs.dict), NodeEntry()};
}

// gather_grad(dy, indices, like): zeros shaped like `like`, dy's rows added at the indices.
bool GatherGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[2]);
  AssignShape(attrs, "input 2", &(*in)[2], (*out)[0]);
  AssignShape(attrs, "input 0", &(*in)[0], GatherResult(attrs, (*in)[2], (*in)[1]));
  return AllKnown(*in, *out);
}

/*!
 * \brief Threads own disjoint column ranges of the output rows, so repeated indices
 * accumulate without races.
 */
void GatherGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out) {
  const Shape& params = out[0].shape();
  int axis = GatherAxis(attrs, params.ndim());
  std::vector<int64_t> index = CheckedIndices(attrs, in[1], params, axis);
  GatherLayout g(params, axis);
  int64_t count = static_cast<int64_t>(index.size());
  Fill(out[0], 0);
  if (in[0].Size() == 0) return;
  IR_NUMERIC_SWITCH(out[0].dtype(), DT, {
    const DT* dy = in[0].data<DT>();
    DT* dst = out[0].data<DT>();
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t pos = begin; pos < end;) {
        int64_t o = pos / g.inner, c0 = pos % g.inner, c1 = std::min(g.inner, c0 + (end - pos));
        for (int64_t k = 0; k < count; ++k) {
          const DT* from = dy + (o * count + k) * g.inner;
          DT* to = dst + (o * g.extent + index[k]) * g.inner;
          for (int64_t c = c0; c < c1; ++c) to[c] += from[c];
        }
        pos += c1 - c0;
      }
    };
    ParallelFor(g.outer * g.inner, body, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(count, 1)));
  });
}

std::vector<NodeEntry> GatherGradGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("gather", n, "dy", {og[0], In(n, 1)}, n->attrs.dict), NodeEntry(), NodeEntry()};
}

// ---------------------------------------------------------------- one_hot

/*! \brief Position of the depth dimension in the output for indices of rank `ndim`. */
int OneHotAxis(const NodeAttrs& attrs, int ndim) {
  int axis = dmlc::get<OneHotParam>(attrs.parsed).axis;
  return axis == -1 ? ndim : NormalizeAxis(attrs, axis, ndim + 1);
}

bool OneHotShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& indices = (*in)[0];
  if (!indices.rank_known()) return false;
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + OneHotAxis(attrs, indices.ndim()), dmlc::get<OneHotParam>(attrs.parsed).depth);
  AssignShape(attrs, "output 0", &(*out)[0], Shape(dims));
  return AllKnown(*in, *out);
}

bool OneHotType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckDType(attrs, "indices", (*in)[0], IndexTypes());
  DType dtype = DTypeAttr(attrs, "attribute 'dtype'", dmlc::get<OneHotParam>(attrs.parsed).dtype, AllTypes());
  AssignType(attrs, "output 0", &(*out)[0], dtype);
  return AllKnown(*in, *out);
}

const DeviceKernelSource& kOneHotSource = RegisterDeviceKernelSource({"one_hot", R"(
/* out[i] = on where i's position along depth equals its index, else off; out viewed as
 * [outer, depth, inner], indices as [outer, inner]. */
IR_KERNEL void one_hot_i32(IR_CONST_ARRAY(int, indices), IR_ARRAY(T, out), const long depth, const long inner,
                           const long n, const T on, const T off) {
  IR_OFFSET(indices);
  IR_OFFSET(out);
  IR_THREAD_LOOP(i, n) out[i] = (long)indices[i / (inner * depth) * inner + i % inner] == i / inner % depth ? on : off;
}

IR_KERNEL void one_hot_i64(IR_CONST_ARRAY(long, indices), IR_ARRAY(T, out), const long depth, const long inner,
                           const long n, const T on, const T off) {
  IR_OFFSET(indices);
  IR_OFFSET(out);
  IR_THREAD_LOOP(i, n) out[i] = indices[i / (inner * depth) * inner + i % inner] == i / inner % depth ? on : off;
}
)",
                                                                      AllTypes()});

void OneHotDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  const OneHotParam& p = dmlc::get<OneHotParam>(attrs.parsed);
  const Shape& shape = in[0].shape();
  int64_t inner = shape.ProdDims(OneHotAxis(attrs, shape.ndim()), shape.ndim()), n = out[0].Size();
  DType dtype = out[0].dtype();
  DeviceArgs args;
  args.Array(in[0]).Array(out[0]).Value(int64_t{p.depth}).Value(inner).Value(n);
  args.Scalar(dtype, p.on_value).Scalar(dtype, p.off_value);
  const char* kernel = in[0].dtype() == DType::kInt32 ? "one_hot_i32" : "one_hot_i64";
  dev.Launch(kOneHotSource, dtype, kernel, args, DeviceLaunch::Threads(n));
}

void OneHotCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  const OneHotParam& p = dmlc::get<OneHotParam>(attrs.parsed);
  const Shape& shape = in[0].shape();
  int axis = OneHotAxis(attrs, shape.ndim());
  int64_t inner = shape.ProdDims(axis, shape.ndim()), depth = p.depth;
  std::vector<int64_t> index = IndicesAsInt64(in[0]);
  Fill(out[0], p.off_value);
  IR_ALL_TYPES_SWITCH(out[0].dtype(), DT, {
    DT on = static_cast<DT>(p.on_value);
    DT* dst = out[0].data<DT>();
    ParallelFor(static_cast<int64_t>(index.size()), [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) {
        if (index[e] >= 0 && index[e] < depth) dst[((e / inner) * depth + index[e]) * inner + e % inner] = on;
      }
    });
  });
}

/*! \brief (0, 1, ..., rank - 1) with `from` moved to position `to`. */
std::string MovedAxes(int rank, int from, int to) {
  std::vector<int64_t> axes;
  for (int a = 0; a < rank; ++a) {
    if (a != from) axes.push_back(a);
  }
  axes.insert(axes.begin() + to, from);
  return StrCat(IntList(axes));
}

/*! \brief Whether `v` is the pfor index itself: range(0, n) of step 1. */
bool IsLoopIndex(const PforValue& v, int64_t n) {
  const Node& node = *v.entry.node;
  if (node.is_variable() || node.op()->name != "range") return false;
  auto get = [&](const char* key, const char* def) {
    auto it = node.attrs.dict.find(key);
    return it == node.attrs.dict.end() ? std::string(def) : it->second;
  };
  return std::stod(get("start", "0")) == 0 && std::stod(get("delta", "1")) == 1 &&
         std::stod(get("limit", "-1")) == static_cast<double>(n);
}

/*!
 * \brief gather: stacked indices index the unstacked params directly (the loop index itself
 * selects rows 0..n-1: the params as they are); stacked params gather along axis + 1; both
 * stacked gather from the params flattened over (n, extent) with offset indices.
 */
std::vector<PforValue> GatherVectorize(PforContext& ctx) {
  const Shape& params = ctx.in_shape(0);
  const Shape& indices = ctx.in_shape(1);
  int axis = dmlc::get<GatherParam>(ctx.attrs().parsed).axis;
  if (axis < 0) axis += params.ndim();
  if (!ctx.stacked(0)) {
    if (axis == 0 && indices.ndim() == 0 && params[0] == ctx.n() && IsLoopIndex(ctx.input(1), ctx.n())) {
      return {PforValue{ctx.input(0).entry, true}};
    }
    NodeEntry out = ctx.CopyNode({ctx.input(0).entry, ctx.input(1).entry}, ctx.attrs().dict);
    if (axis != 0) {
      out = ctx.Make("transpose", {out}, {{"axes", MovedAxes(params.ndim() + indices.ndim(), axis, 0)}});
    }
    return {PforValue{out, true}};
  }
  if (!ctx.stacked(1)) {
    return {PforValue{
        ctx.CopyNode({ctx.input(0).entry, ctx.input(1).entry}, ctx.DictWith("axis", std::to_string(axis + 1))), true}};
  }
  const int rank = params.ndim() + 1;
  NodeEntry p = ctx.input(0).entry;
  if (axis != 0) p = ctx.Make("transpose", {p}, {{"axes", MovedAxes(rank, axis + 1, 1)}});
  std::vector<int64_t> moved{ctx.n() * params[axis]};
  for (int a = 0; a < params.ndim(); ++a) {
    if (a != axis) moved.push_back(params[a]);
  }
  NodeEntry flat = ctx.Make("reshape", {p}, {{"shape", StrCat(IntList(moved))}});
  NodeEntry base = ctx.Make("range", {},
                            {{"start", "0"},
                             {"limit", std::to_string(ctx.n() * params[axis])},
                             {"delta", std::to_string(params[axis])},
                             {"dtype", DTypeName(ctx.in_dtype(1))}});
  std::vector<int64_t> base_shape(indices.ndim() + 1, 1);
  base_shape[0] = ctx.n();
  base = ctx.Make("reshape", {base}, {{"shape", StrCat(IntList(base_shape))}});
  NodeEntry offset = ctx.Make("add", {ctx.input(1).entry, base});
  NodeEntry out = ctx.CopyNode({flat, offset}, ctx.DictWith("axis", "0"));
  if (axis != 0) {
    // out: [n] + indices + moved[1:]; the params' axes before `axis` go back in front of the indices.
    const int out_rank = 1 + indices.ndim() + params.ndim() - 1;
    std::vector<int64_t> axes{0};
    for (int a = 0; a < axis; ++a) axes.push_back(1 + indices.ndim() + a);
    for (int a = 0; a < indices.ndim(); ++a) axes.push_back(1 + a);
    for (int a = 1 + indices.ndim() + axis; a < out_rank; ++a) axes.push_back(a);
    out = ctx.Make("transpose", {out}, {{"axes", StrCat(IntList(axes))}});
  }
  return {PforValue{out, true}};
}

// ---------------------------------------------------------------- FVectorize

/*!
 * \brief gather_grad: every iteration scatters into its own rows: the gathered axis moved to the
 * front, the iterations folded into it with offset indices, one gather_grad, then moved back.
 */
std::vector<PforValue> GatherGradVectorize(PforContext& ctx) {
  const Shape& like = ctx.out_shape(0);
  if (!ctx.stacked(0) && !ctx.stacked(1)) {  // only `like` is stacked: it gives only its shape
    NodeEntry zeros =
        ctx.Make("zeros", {}, {{"shape", ShapeAttr(like.dims())}, {"dtype", DTypeName(ctx.out_dtype(0))}});
    return {PforValue{ctx.CopyNode({ctx.input(0).entry, ctx.input(1).entry, zeros}, ctx.attrs().dict), false}};
  }
  const int axis = NormalizedAxis(ctx, AttrOr<int>(ctx.attrs(), "axis", 0), like.ndim());
  const int k = ctx.in_shape(1).ndim();
  NodeEntry dy = ctx.Stacked(0), indices = ctx.Stacked(1);
  if (axis != 0) {  // dy: [n, like[:axis], I, like[axis+1:]] -> [n, I, like[:axis], like[axis+1:]]
    std::vector<int64_t> perm{0};
    for (int a = 0; a < k; ++a) perm.push_back(1 + axis + a);
    for (int a = 0; a < axis; ++a) perm.push_back(1 + a);
    for (int a = 1 + axis + k; a <= ctx.in_shape(0).ndim(); ++a) perm.push_back(a);
    dy = ctx.Make("transpose", {dy}, {{"axes", ShapeAttr(perm)}});
  }
  std::vector<int64_t> moved{ctx.n() * like[axis]};  // [n * like[axis], like[:axis], like[axis+1:]]
  for (int a = 0; a < like.ndim(); ++a) {
    if (a != axis) moved.push_back(like[a]);
  }
  NodeEntry base = ctx.Make("range", {},
                            {{"start", "0"},
                             {"limit", std::to_string(ctx.n() * like[axis])},
                             {"delta", std::to_string(like[axis])},
                             {"dtype", DTypeName(ctx.in_dtype(1))}});
  std::vector<int64_t> base_shape(k + 1, 1);
  base_shape[0] = ctx.n();
  NodeEntry offset = ctx.Make("add", {indices, ctx.Make("reshape", {base}, {{"shape", ShapeAttr(base_shape)}})});
  NodeEntry shape_donor = ctx.Make("zeros", {}, {{"shape", ShapeAttr(moved)}, {"dtype", DTypeName(ctx.out_dtype(0))}});
  NodeEntry flat_dy = dy;
  NodeEntry out = ctx.CopyNode({flat_dy, offset, shape_donor}, ctx.DictWith("axis", "0"));
  std::vector<int64_t> split{ctx.n(), like[axis]};
  split.insert(split.end(), moved.begin() + 1, moved.end());
  out = ctx.Make("reshape", {out}, {{"shape", ShapeAttr(split)}});
  if (axis != 0) {  // [n, like[axis], like[:axis], rest] -> [n, like[:axis], like[axis], rest]
    std::vector<int64_t> perm{0};
    for (int a = 0; a < axis; ++a) perm.push_back(2 + a);
    perm.push_back(1);
    for (int a = axis + 2; a <= like.ndim(); ++a) perm.push_back(a);
    out = ctx.Make("transpose", {out}, {{"axes", ShapeAttr(perm)}});
  }
  return {PforValue{out, true}};
}

/*! \brief one_hot of stacked indices: the new axis shifts by one unless it is last (-1). */
std::vector<PforValue> OneHotVectorize(PforContext& ctx) {
  int axis = AttrOr<int>(ctx.attrs(), "axis", -1);
  std::string shifted = axis < 0 ? std::to_string(axis) : std::to_string(axis + 1);
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", shifted)), true}};
}

}  // namespace

IR_REGISTER_OP(gather)
    .describe(
        "Slices of params along `axis` at the given indices (tf.gather); an index outside [0, extent) is an error.")
    .set_num_inputs(2)
    .set_input_names({"params", "indices"})
    .set_param<GatherParam>()
    .set_attr<FInferShape>("FInferShape", GatherShape)
    .set_attr<FInferType>("FInferType", IndexedType)
    .set_attr<FCompute>("FCompute", GatherCompute)
    .set_attr<FGradient>("FGradient", GatherGradient)
    .set_attr<FVectorize>("FVectorize", GatherVectorize)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(gather_grad)
    .describe("Zeros shaped like `like` with the slices of dy added at the indices along `axis` (gather's gradient).")
    .set_num_inputs(3)
    .set_input_names({"dy", "indices", "like"})
    .set_param<GatherParam>()
    .set_attr<FInferShape>("FInferShape", GatherGradShape)
    .set_attr<FInferType>("FInferType", IndexedType)
    .set_attr<FCompute>("FCompute", GatherGradCompute)
    .set_attr<FGradient>("FGradient", GatherGradGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque)
    .set_attr<FVectorize>("FVectorize", GatherGradVectorize);

IR_REGISTER_OP(one_hot)
    .describe("on_value where the new `axis` dimension equals the index, off_value elsewhere (tf.one_hot).")
    .set_num_inputs(1)
    .set_input_names({"indices"})
    .set_param<OneHotParam>()
    .set_attr<FInferShape>("FInferShape", OneHotShape)
    .set_attr<FInferType>("FInferType", OneHotType)
    .set_attr<FCompute>("FCompute", OneHotCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", OneHotDevice)
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque)
    .set_attr<FVectorize>("FVectorize", OneHotVectorize);

}  // namespace op
}  // namespace ir
