/*!
 * \file reduce.cc
 * \brief Reductions over axes (sum mean max min prod), argmax/argmin, and
 * _reduce_grad_broadcast, which spreads a reduction's gradient back over the reduced axes.
 *
 * Kernels are in reduce_kernels.h. Gradients of max/min share the output gradient equally
 * among tied extrema (as TensorFlow does). The gradient of prod is og * prod / x, which is
 * undefined where x is 0 (NaN or inf): the caveat TensorFlow's simple formula also has.
 */
#include <algorithm>
#include <string>
#include <vector>

#include "ir/device_kernel.h"
#include "ir/vectorize.h"
#include "ops/device_walk.h"
#include "ops/op_common.h"
#include "ops/reduce/reduce_device.h"
#include "ops/reduce/reduce_kernels.h"

namespace ir {
namespace op {

namespace reduce {

std::vector<std::pair<int64_t, bool>> MergeReducedDims(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<std::pair<int64_t, bool>> dims;
  for (int d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty() && dims.back().second == reduced[d]) {
      dims.back().first *= shape[d];
    } else {
      dims.emplace_back(shape[d], reduced[d]);
    }
  }
  return dims;
}

ReduceLayout MakeReduceLayout(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<std::pair<int64_t, bool>> dims = MergeReducedDims(shape, reduced);
  ReduceLayout layout;
  if (dims.empty()) return layout;
  layout.inner = dims.back().first;
  layout.inner_reduced = dims.back().second;
  int64_t stride = layout.inner;
  for (size_t i = dims.size() - 1; i-- > 0;) {
    auto& extent = dims[i].second ? layout.reduced_extent : layout.kept_extent;
    auto& strides = dims[i].second ? layout.reduced_stride : layout.kept_stride;
    extent.insert(extent.begin(), dims[i].first);
    strides.insert(strides.begin(), stride);
    (dims[i].second ? layout.num_reduced : layout.num_kept) *= dims[i].first;
    stride *= dims[i].first;
  }
  return layout;
}

}  // namespace reduce

namespace {

struct ReduceParam : public dmlc::Parameter<ReduceParam> {
  IntList axis;
  bool keepdims;
  DMLC_DECLARE_PARAMETER(ReduceParam) {
    DMLC_DECLARE_FIELD(axis).set_default(IntList()).describe(
        "Axes to reduce (negative counts from the end); empty reduces every axis.");
    DMLC_DECLARE_FIELD(keepdims).set_default(false).describe("Keep reduced axes as dimensions of size 1.");
  }
};

struct ArgReduceParam : public dmlc::Parameter<ArgReduceParam> {
  int axis;
  bool keepdims;
  DMLC_DECLARE_PARAMETER(ArgReduceParam) {
    DMLC_DECLARE_FIELD(axis).set_default(0).describe("Axis to search (negative counts from the end).");
    DMLC_DECLARE_FIELD(keepdims).set_default(false).describe("Keep the searched axis as a dimension of size 1.");
  }
};

struct ReduceGradParam : public dmlc::Parameter<ReduceGradParam> {
  IntList axis;
  bool keepdims;
  bool normalize;
  DMLC_DECLARE_PARAMETER(ReduceGradParam) {
    DMLC_DECLARE_FIELD(axis).set_default(IntList()).describe("The reduction's axes; empty means every axis.");
    DMLC_DECLARE_FIELD(keepdims).set_default(false).describe("Whether the reduction kept its reduced axes.");
    DMLC_DECLARE_FIELD(normalize).set_default(false).describe(
        "Divide by the number of reduced elements (the gradient of mean).");
  }
};

DMLC_REGISTER_PARAMETER(ReduceParam);
DMLC_REGISTER_PARAMETER(ArgReduceParam);
DMLC_REGISTER_PARAMETER(ReduceGradParam);

/*! \brief Which of `ndim` axes `axis` reduces; throws naming the node on a bad or repeated axis. */
std::vector<bool> ReducedAxes(const NodeAttrs& attrs, const IntList& axis, int ndim) {
  std::vector<bool> reduced(ndim, axis.empty());
  for (int64_t a : axis.values) {
    IR_CHECK(-ndim <= a && a < ndim) << NodeDesc(attrs) << ": axis " << a << " is out of range for rank " << ndim;
    int64_t d = a < 0 ? a + ndim : a;
    IR_CHECK(!reduced[d]) << NodeDesc(attrs) << ": axis " << a << " is repeated in axis " << axis;
    reduced[d] = true;
  }
  return reduced;
}

/*! \brief The result shape of reducing `data` (known rank) over `reduced`. */
Shape ReducedShape(const Shape& data, const std::vector<bool>& reduced, bool keepdims) {
  std::vector<int64_t> dims;
  for (int d = 0; d < data.ndim(); ++d) {
    if (!reduced[d]) {
      dims.push_back(data[d]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return Shape(dims);
}

/*!
 * \brief Refines `data` and `result` of a reduction over `axis` both ways. The data's rank
 * comes from the result when the data's is unknown: equal with keepdims, else larger by the
 * number of listed axes. Reducing every axis of data of unknown rank gives a scalar.
 */
void InferReduceShape(const NodeAttrs& attrs, const IntList& axis, bool keepdims, Shape* data, Shape* result,
                      const std::string& data_name, const std::string& result_name) {
  int ndim = data->ndim();
  if (ndim < 0 && result->rank_known()) {
    if (keepdims) {
      ndim = result->ndim();
    } else if (!axis.empty()) {
      ndim = result->ndim() + static_cast<int>(axis.size());
    }
  }
  if (ndim < 0) {
    if (axis.empty() && !keepdims) AssignShape(attrs, result_name, result, Shape::Scalar());
    return;
  }
  std::vector<bool> reduced = ReducedAxes(attrs, axis, ndim);
  if (data->rank_known()) AssignShape(attrs, result_name, result, ReducedShape(*data, reduced, keepdims));
  Shape from_result = Shape::UnknownDims(ndim);
  Shape expected = ReducedShape(from_result, reduced, keepdims);
  if (result->ndim() == expected.ndim()) {
    for (int d = 0, j = 0; d < ndim; ++d) {
      if (!reduced[d] || keepdims) {
        if (!reduced[d]) from_result[d] = (*result)[j];
        ++j;
      }
    }
  }
  AssignShape(attrs, data_name, data, from_result);
  AssignShape(attrs, result_name, result, ReducedShape(*data, reduced, keepdims));
}

bool ReduceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const ReduceParam& p = dmlc::get<ReduceParam>(attrs.parsed);
  InferReduceShape(attrs, p.axis, p.keepdims, &(*in)[0], &(*out)[0], "input 0", "output 0");
  return AllKnown(*in, *out);
}

bool ArgReduceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const ArgReduceParam& p = dmlc::get<ArgReduceParam>(attrs.parsed);
  Shape& data = (*in)[0];
  InferReduceShape(attrs, IntList{p.axis}, p.keepdims, &data, &(*out)[0], "input 0", "output 0");
  if (data.rank_known()) {
    int64_t extent = data[p.axis < 0 ? p.axis + data.ndim() : p.axis];
    IR_CHECK(extent != 0) << NodeDesc(attrs) << ": cannot search axis " << p.axis << " of size 0 in shape " << data;
  }
  return AllKnown(*in, *out);
}

/*! \brief (og, like) -> like's shape, where og has the shape of like reduced over `axis`. */
bool ReduceGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const ReduceGradParam& p = dmlc::get<ReduceGradParam>(attrs.parsed);
  Shape& like = (*in)[1];
  AssignShape(attrs, "input 1", &like, (*out)[0]);
  InferReduceShape(attrs, p.axis, p.keepdims, &like, &(*in)[0], "input 1", "input 0");
  AssignShape(attrs, "output 0", &(*out)[0], like);
  return AllKnown(*in, *out);
}

bool NumericType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*out)[0], NumericTypes());
  return known;
}

bool ArgReduceType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckDType(attrs, "input", (*in)[0], NumericTypes());
  return OutputsAre(DType::kInt64, in, out);
}

/*! \brief Output has og's dtype; like only gives the shape. */
bool ReduceGradType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
  AssignType(attrs, "input 0", &(*in)[0], (*out)[0]);
  CheckDType(attrs, "input 0", (*in)[0], NumericTypes());
  return AllKnown(*in, *out);
}

// ---------------------------------------------------------------- kernels

template <typename R>
void ReduceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  const ReduceParam& p = dmlc::get<ReduceParam>(attrs.parsed);
  std::vector<bool> reduced = ReducedAxes(attrs, p.axis, in[0].shape().ndim());
  IR_NUMERIC_SWITCH(in[0].dtype(), T, reduce::Reduce<R>(in[0].data<T>(), in[0].shape(), reduced, out[0].data<T>()));
}

template <bool kMax>
void ArgReduceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int axis = dmlc::get<ArgReduceParam>(attrs.parsed).axis;
  axis = axis < 0 ? axis + shape.ndim() : axis;
  int64_t outer = shape.ProdDims(0, axis), inner = shape.ProdDims(axis + 1, shape.ndim());
  IR_NUMERIC_SWITCH(in[0].dtype(), T,
                    reduce::ArgReduce<kMax>(in[0].data<T>(), outer, shape[axis], inner, out[0].data<int64_t>()));
}

void ReduceGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out) {
  const ReduceGradParam& p = dmlc::get<ReduceGradParam>(attrs.parsed);
  const Shape& shape = out[0].shape();
  std::vector<bool> reduced = ReducedAxes(attrs, p.axis, shape.ndim());
  IR_NUMERIC_SWITCH(out[0].dtype(), T,
                    reduce::BroadcastReduced(in[0].data<T>(), shape, reduced, p.normalize, out[0].data<T>()));
}

std::vector<int> ReduceAxesOf(const NodeAttrs& attrs, int ndim) {
  std::vector<bool> reduced = ReducedAxes(attrs, dmlc::get<ReduceParam>(attrs.parsed).axis, ndim);
  std::vector<int> axes;
  for (int d = 0; d < ndim; ++d) {
    if (reduced[d]) axes.push_back(d);
  }
  return axes;
}

// ---------------------------------------------------------------- device kernels

const DeviceKernelSource& kArgReduceSource = RegisterDeviceKernelSource({"arg_reduce", R"(
/* out[g] = index of the first maximum (is_max) or minimum of x[g / inner, :, g % inner]. */
IR_KERNEL void arg_reduce(IR_CONST_ARRAY(T, x), IR_ARRAY(long, out), const long outer, const long n, const long inner,
                          const long is_max) {
  IR_OFFSET(x);
  IR_OFFSET(out);
  IR_THREAD_LOOP(g, outer * inner) {
    const long base = g / inner * n * inner + g % inner;
    T best = x[base];
    long index = 0;
    for (long i = 1; i < n; ++i) {
      const T v = x[base + i * inner];
      if (is_max ? v > best : v < best) {
        best = v;
        index = i;
      }
    }
    out[g] = index;
  }
}
)",
                                                                         NumericTypes()});

template <bool kMax>
void ArgReduceDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int axis = dmlc::get<ArgReduceParam>(attrs.parsed).axis;
  axis = axis < 0 ? axis + shape.ndim() : axis;
  int64_t outer = shape.ProdDims(0, axis), inner = shape.ProdDims(axis + 1, shape.ndim());
  DeviceArgs args;
  args.Array(in[0]).Array(out[0]).Value(outer).Value(shape[axis]).Value(inner).Value(int64_t{kMax});
  dev.Launch(kArgReduceSource, in[0].dtype(), "arg_reduce", args, DeviceLaunch::Threads(outer * inner));
}

/*! \brief og (row-major over the kept axes) gathered over like's shape: stride 0 along the reduced axes. */
void ReduceGradDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const ReduceGradParam& p = dmlc::get<ReduceGradParam>(attrs.parsed);
  const Shape& shape = out[0].shape();
  std::vector<bool> reduced = ReducedAxes(attrs, p.axis, shape.ndim());
  std::vector<int64_t> strides(shape.ndim(), 0);
  int64_t stride = 1, count = 1;
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    if (reduced[d]) {
      count *= shape[d];
    } else {
      strides[d] = stride;
      stride *= shape[d];
    }
  }
  if (!DeviceGather(dev, in[0], out[0], shape.dims(), strides, p.normalize ? count : 1)) dev.RunOnHost(attrs, in, out);
}

// ---------------------------------------------------------------- gradients

/*! \brief The attributes of a node of the reduction `n` that reduces or broadcasts like `n`. */
std::map<std::string, std::string> SameAxes(const NodePtr& n) {
  const ReduceParam& p = dmlc::get<ReduceParam>(n->attrs.parsed);
  return {{"axis", StrCat(p.axis)}, {"keepdims", p.keepdims ? "1" : "0"}};
}

/*! \brief `value` (shaped like n's output) broadcast back to the shape of n's input. */
NodeEntry BroadcastBack(const NodePtr& n, const std::string& suffix, const NodeEntry& value, bool normalize = false) {
  std::map<std::string, std::string> attrs = SameAxes(n);
  attrs["normalize"] = normalize ? "1" : "0";
  return GradNode("_reduce_grad_broadcast", n, suffix, {value, In(n, 0)}, attrs);
}

std::vector<NodeEntry> SumGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {BroadcastBack(n, "dx", og[0])};
}

std::vector<NodeEntry> MeanGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {BroadcastBack(n, "dx", og[0], true)};
}

/*! \brief og shared equally by the elements equal to the result (ties split it). */
std::vector<NodeEntry> ExtremumGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry is_extremum = GradNode("equal", n, "is_extremum", {In(n, 0), BroadcastBack(n, "result", Out(n))});
  NodeEntry mask = GradNode("cast_like", n, "mask", {is_extremum, In(n, 0)});
  NodeEntry ties = GradNode("sum", n, "ties", {mask}, SameAxes(n));
  NodeEntry share = GradNode("divide", n, "share", {og[0], ties});
  return {GradNode("multiply", n, "dx", {BroadcastBack(n, "share_back", share), mask})};
}

/*! \brief og * prod / x: undefined (inf or NaN) where x is 0. */
std::vector<NodeEntry> ProdGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry scaled = GradNode("multiply", n, "og_prod", {og[0], Out(n)});
  return {GradNode("divide", n, "dx", {BroadcastBack(n, "og_prod_back", scaled), In(n, 0)})};
}

// ---------------------------------------------------------------- vectorization

/*!
 * \brief The axes of the stacked value ([n] + a shape of rank `ndim`) that a reduction over
 * `axis` of one iteration reduces: shifted past n; empty `axis` means every per-iteration axis.
 */
IntList StackedAxes(const NodeAttrs& attrs, const IntList& axis, int ndim) {
  std::vector<bool> reduced = ReducedAxes(attrs, axis, ndim);
  std::vector<int64_t> axes;
  for (int d = 0; d < ndim; ++d) {
    if (reduced[d]) axes.push_back(d + 1);
  }
  return IntList(axes);
}

/*! \brief A reduction of a stacked value over the shifted axes (of a scalar: the value itself). */
std::vector<PforValue> ReduceVectorize(PforContext& ctx) {
  IntList axes = StackedAxes(ctx.attrs(), dmlc::get<ReduceParam>(ctx.attrs().parsed).axis, ctx.in_shape(0).ndim());
  if (axes.empty()) return {ctx.input(0)};
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", StrCat(axes))), true}};
}

std::vector<PforValue> ArgReduceVectorize(PforContext& ctx) {
  int axis = NormalizeAxis(ctx.attrs(), dmlc::get<ArgReduceParam>(ctx.attrs().parsed).axis, ctx.in_shape(0).ndim());
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", std::to_string(axis + 1))), true}};
}

/*! \brief og spread over like's shape: like only gives the shape, so an unstacked operand is broadcast over n. */
std::vector<PforValue> ReduceGradVectorize(PforContext& ctx) {
  IntList axes = StackedAxes(ctx.attrs(), dmlc::get<ReduceGradParam>(ctx.attrs().parsed).axis, ctx.in_shape(1).ndim());
  if (axes.empty()) return {ctx.input(0)};
  return {PforValue{ctx.CopyNode({ctx.Stacked(0), ctx.Stacked(1)}, ctx.DictWith("axis", StrCat(axes))), true}};
}

/*! \brief Registers what the five reductions share; `kind` is their TReduceKind. */
template <typename R>
auto ReduceOp(const char* kind) {
  return [kind](Op& op) {
    op.set_num_inputs(1).set_input_names({"data"}).set_param<ReduceParam>();
    op.set_attr<FInferShape>("FInferShape", ReduceShape);
    op.set_attr<FInferType>("FInferType", NumericType);
    op.set_attr<FCompute>("FCompute", ReduceCompute<R>);
    op.set_attr<TOpPattern>("TOpPattern", kCommReduce);
    op.set_attr<TReduceKind>("TReduceKind", kind);
    op.set_attr<FReduceAxes>("FReduceAxes", ReduceAxesOf);
    op.set_attr<FVectorize>("FVectorize", ReduceVectorize);
    op.set_attr<FDeviceKernel>("FDeviceKernel",
                               [kind](DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                      const std::vector<NDArray>& out) {
                                 DeviceReduce(dev, attrs, in, out, kind, ReduceAxesOf(attrs, in[0].shape().ndim()));
                               });
  };
}

/*! \brief Registers argmax (kMax) or argmin. */
template <bool kMax>
void ArgReduceOp(Op& op) {
  op.set_num_inputs(1).set_input_names({"data"}).set_param<ArgReduceParam>();
  op.set_attr<FInferShape>("FInferShape", ArgReduceShape);
  op.set_attr<FInferType>("FInferType", ArgReduceType);
  op.set_attr<FCompute>("FCompute", ArgReduceCompute<kMax>);
  op.set_attr<FDeviceKernel>("FDeviceKernel", ArgReduceDevice<kMax>);
  op.set_attr<FGradient>("FGradient", ZeroGradient);
  op.set_attr<FVectorize>("FVectorize", ArgReduceVectorize);
  op.set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(sum)
    .describe("Sum over axes (float32 is summed pairwise in float32).")
    .apply(ReduceOp<reduce::SumReducer>("sum"))
    .add_alias("reduce_sum")
    .set_attr<FGradient>("FGradient", SumGradient);

IR_REGISTER_OP(mean)
    .describe("Mean over axes (the pairwise sum divided by the count; integer means truncate).")
    .apply(ReduceOp<reduce::MeanReducer>("mean"))
    .add_alias("reduce_mean")
    .set_attr<FGradient>("FGradient", MeanGradient);

IR_REGISTER_OP(max)
    .describe("Maximum over axes (-inf, or the lowest integer, for an empty reduction).")
    .apply(ReduceOp<reduce::MaxReducer>("max"))
    .add_alias("reduce_max")
    .set_attr<FGradient>("FGradient", ExtremumGradient);

IR_REGISTER_OP(min)
    .describe("Minimum over axes (inf, or the largest integer, for an empty reduction).")
    .apply(ReduceOp<reduce::MinReducer>("min"))
    .add_alias("reduce_min")
    .set_attr<FGradient>("FGradient", ExtremumGradient);

IR_REGISTER_OP(prod)
    .describe("Product over axes. Its gradient og * prod / x is undefined where x is 0.")
    .apply(ReduceOp<reduce::ProdReducer>("prod"))
    .add_alias("reduce_prod")
    .set_attr<FGradient>("FGradient", ProdGradient);

IR_REGISTER_OP(argmax)
    .describe("Index (int64) of the largest element along an axis; ties give the first.")
    .apply(ArgReduceOp<true>);

IR_REGISTER_OP(argmin)
    .describe("Index (int64) of the smallest element along an axis; ties give the first.")
    .apply(ArgReduceOp<false>);

IR_REGISTER_OP(_reduce_grad_broadcast)
    .describe(
        "og, the result of a reduction of like over axis, broadcast back to like's shape "
        "(divided by the number of reduced elements when normalize): the gradient of sum and mean.")
    .set_num_inputs(2)
    .set_input_names({"og", "like"})
    .set_param<ReduceGradParam>()
    .set_attr<FInferShape>("FInferShape", ReduceGradShape)
    .set_attr<FInferType>("FInferType", ReduceGradType)
    .set_attr<FCompute>("FCompute", ReduceGradCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", ReduceGradDevice)
    .set_attr<FVectorize>("FVectorize", ReduceGradVectorize)
    .set_attr<FGradient>(
        "FGradient",
        [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          const ReduceGradParam& p = dmlc::get<ReduceGradParam>(n->attrs.parsed);
          std::map<std::string, std::string> attrs = {{"axis", StrCat(p.axis)}, {"keepdims", p.keepdims ? "1" : "0"}};
          return std::vector<NodeEntry>{GradNode(p.normalize ? "mean" : "sum", n, "dog", {og[0]}, attrs), NodeEntry()};
        })
    // Each output element reads one element of og, but not by NumPy broadcasting (keepdims=0).
    .set_attr<TOpPattern>("TOpPattern", kInjective);

}  // namespace op
}  // namespace ir
