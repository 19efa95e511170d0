/*!
 * \file tensor_array.cc
 * \brief TensorArray ops over a dense tensor [size, elem...] threaded as a value (TF's "flow"):
 * tensor_array_read / tensor_array_gather (rows out) and tensor_array_write /
 * tensor_array_scatter (a copy with rows replaced, in place when the planner allows).
 *
 * Every kernel is a few row-range copies, so one implementation serves the CPU and every
 * device target: it is written against a copy function (a host memcpy, or the device's copy).
 * The indices are read on the host to check their range, as TF keeps them in host memory.
 *
 * An array made before its elements' shape is known (a TensorArray entering a loop before its
 * first write, element dimensions known only at run time) has those element dimensions 0: it
 * holds nothing, and a write or scatter adopts the value's dimensions there (its output is zeros
 * of the adopted shape with the rows written). One whose elements' rank is unknown too is
 * [size, 0]: a write or scatter adopts the value's element shape, whatever its rank.
 */
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/device_kernel.h"
#include "ir/vectorize.h"
#include "ops/array/array_common.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

/*! \brief Copies src into dst (same size; nothing when they are the same memory). */
using CopyFn = std::function<void(const NDArray& src, const NDArray& dst)>;
/*! \brief Sets every element of dst to zero. */
using ZeroFn = std::function<void(const NDArray& dst)>;

const DTypeSet& IndexTypes() {
  static const DTypeSet types = {DType::kInt32, DType::kInt64};
  return types;
}

/*! \brief Whether rows are read out of the array (read, gather) or written into it (write, scatter). */
enum class Access { kRead, kWrite };

/*!
 * \brief The indices (any device) as int64 on the host; each must lie in [0, size), and a
 * scatter may not write a row twice (TF: a TensorArray element is written once).
 */
std::vector<int64_t> CheckedRows(const NodeAttrs& attrs, const NDArray& indices, int64_t size, Access access) {
  std::vector<int64_t> rows;
  if (indices.dtype() == DType::kInt32) {
    for (int32_t i : indices.ToVector<int32_t>()) rows.push_back(i);
  } else {
    rows = indices.ToVector<int64_t>();
  }
  std::map<int64_t, size_t> seen;
  for (size_t k = 0; k < rows.size(); ++k) {
    IR_CHECK(0 <= rows[k] && rows[k] < size)
        << NodeDesc(attrs) << ": tried to " << (access == Access::kRead ? "read from" : "write to") << " index "
        << rows[k] << " but array size is: " << size;
    if (access == Access::kRead) continue;
    auto it = seen.emplace(rows[k], k);
    IR_CHECK(it.second) << NodeDesc(attrs) << ": index " << rows[k] << " is written twice (indices elements "
                        << it.first->second << " and " << k << ")";
  }
  return rows;
}

/*! \brief Calls copy(row, pos, len) for each run of consecutive rows rows[pos..pos+len) = row, row+1, ... */
void ForEachRun(const std::vector<int64_t>& rows, const std::function<void(int64_t, int64_t, int64_t)>& copy) {
  for (size_t pos = 0; pos < rows.size();) {
    size_t end = pos + 1;
    while (end < rows.size() && rows[end] == rows[end - 1] + 1) ++end;
    copy(rows[pos], static_cast<int64_t>(pos), static_cast<int64_t>(end - pos));
    pos = end;
  }
}

/*! \brief `array` as [k, elem...]: a read's output or a write's value as one row. */
NDArray AsRows(const NDArray& array, bool single) {
  if (!single) return array;
  std::vector<int64_t> dims = array.shape().dims();
  dims.insert(dims.begin(), 1);
  return array.Reshape(Shape(dims));
}

/*! \brief read / gather: out rows are the array's rows at the indices. */
void Gather(const NodeAttrs& attrs, const std::vector<NDArray>& in, const NDArray& out, bool single, const CopyFn& copy,
            const ZeroFn&) {
  const NDArray& ta = in[0];
  NDArray rows_out = AsRows(out, single);
  ForEachRun(CheckedRows(attrs, in[1], ta.shape()[0], Access::kRead), [&](int64_t row, int64_t pos, int64_t len) {
    copy(ta.Slice(row, row + len), rows_out.Slice(pos, pos + len));
  });
}

/*! \brief write / scatter: out is the array with the value's rows at the indices. */
void Scatter(const NodeAttrs& attrs, const std::vector<NDArray>& in, const NDArray& out, bool single,
             const CopyFn& copy, const ZeroFn& zero) {
  std::vector<int64_t> rows = CheckedRows(attrs, in[1], in[0].shape()[0], Access::kWrite);
  if (in[0].shape() == out.shape()) {
    copy(in[0], out);  // nothing when the planner let out take ta's storage
  } else {
    zero(out);  // an array never written adopts the value's element dimensions
  }
  NDArray value = AsRows(in[2], single);
  ForEachRun(rows, [&](int64_t row, int64_t pos, int64_t len) {
    copy(value.Slice(pos, pos + len), out.Slice(row, row + len));
  });
}

using Kernel = void (*)(const NodeAttrs&, const std::vector<NDArray>&, const NDArray&, bool, const CopyFn&,
                        const ZeroFn&);

/*! \brief The CPU kernel of a row-copy op. */
template <Kernel kKernel, bool kSingle>
void HostCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  kKernel(
      attrs, in, out[0], kSingle, [](const NDArray& src, const NDArray& dst) { CopyUnlessAliased(src, dst); },
      [](const NDArray& dst) { std::memset(dst.data(), 0, static_cast<size_t>(dst.shape().Bytes(dst.dtype()))); });
}

/*! \brief The device kernel of a row-copy op (every target): the copies run on the device. */
template <Kernel kKernel, bool kSingle>
void DeviceCompute(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  kKernel(
      attrs, in, out[0], kSingle, [&dev](const NDArray& src, const NDArray& dst) { dev.Copy(src, dst); },
      [&dev](const NDArray& dst) { dev.Fill(dst, 0); });
}

// ---------------------------------------------------------------- inference

/*! \brief [k] + the element shape of `ta` (unknown rank when ta's is). */
Shape RowsShape(const Shape& ta, const Shape& k) {
  if (!ta.rank_known()) return Shape();
  std::vector<int64_t> dims = k.dims();
  dims.insert(dims.end(), ta.dims().begin() + 1, ta.dims().end());
  return Shape(dims);
}

/*! \brief [unknown size] + `elem`: what the element shape says about the array (unknown rank when it says nothing). */
Shape ArrayShape(const Shape& elem, int leading) {
  if (!elem.rank_known() || elem.ndim() < leading) return Shape();
  std::vector<int64_t> dims(elem.dims().begin() + leading, elem.dims().end());
  dims.insert(dims.begin(), kUnknownDim);
  return Shape(dims);
}

/*! \brief The indices' shape: a scalar for read/write, a vector for gather/scatter. */
Shape IndexShape(bool single, const Shape& indices) {
  return single ? Shape::Scalar() : (indices.rank_known() ? indices : Shape::UnknownDims(1));
}

/*!
 * \brief Shapes of a read/gather (inputs ta, indices; output the rows) or a write/scatter
 * (inputs ta, indices, value; output ta's shape), inferred both ways.
 */
/*! \brief `ta` with its 0 element dimensions unknown (an array never written: see the file comment). */
Shape Unwritten(const Shape& ta) {
  Shape loose = ta;
  for (int d = 1; ta.rank_known() && d < ta.ndim(); ++d) {
    if (ta[d] == 0) loose[d] = kUnknownDim;
  }
  return loose;
}

/*! \brief Whether `ta` is an array made before its elements' rank was known: [size, 0]. */
bool UnknownElementRank(const Shape& ta) { return ta.rank_known() && ta.ndim() == 2 && ta[1] == 0; }

/*! \brief [ta's size] + the element shape of `value`'s rows (`k` rows): what an array of unknown element rank adopts.
 */
Shape AdoptedAnyRank(const NodeAttrs& attrs, const Shape& ta, const Shape& k, Shape* value) {
  if (!value->rank_known()) return Shape();
  IR_CHECK(value->ndim() >= k.ndim()) << NodeDesc(attrs) << ": input 2 (the value) has shape " << *value
                                      << " but must hold " << k << " rows";
  if (k.ndim() == 1) AssignShape(attrs, "input 2 (the value)", value, RowsShape(Shape::UnknownDims(value->ndim()), k));
  std::vector<int64_t> dims{ta[0]};
  dims.insert(dims.end(), value->dims().begin() + k.ndim(), value->dims().end());
  return Shape(dims);
}

/*! \brief A write or scatter onto an array with 0 element dimensions: the output adopts the value's. */
bool AdoptingShapes(const NodeAttrs& attrs, bool single, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape loose = Unwritten((*in)[0]);
  Shape k = single ? Shape::Scalar() : Shape{(*in)[1][0]};
  Shape adopted = loose;
  if (UnknownElementRank((*in)[0])) {
    adopted = AdoptedAnyRank(attrs, (*in)[0], k, &(*in)[2]);
  } else {
    AssignShape(attrs, "input 2 (the value)", &(*in)[2], RowsShape(loose, k));
    const Shape& value = (*in)[2];
    for (int d = 1; value.rank_known() && d < adopted.ndim(); ++d) {
      if (adopted[d] == kUnknownDim) adopted[d] = value[d - 1 + k.ndim()];
    }
  }
  if (adopted.rank_known()) AssignShape(attrs, "output 0", &(*out)[0], adopted);
  return AllKnown(*in, *out);
}

template <bool kSingle>
bool RowsShapes(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape& ta = (*in)[0];
  if (in->size() == 3 && Unwritten(ta) != ta) {
    AssignShape(attrs, "input 1 (the index)", &(*in)[1], IndexShape(kSingle, (*in)[1]));
    return AdoptingShapes(attrs, kSingle, in, out);
  }
  AssignShape(attrs, "input 1 (the index)", &(*in)[1], IndexShape(kSingle, (*in)[1]));
  IR_CHECK(!ta.rank_known() || ta.ndim() >= 1)
      << NodeDesc(attrs) << ": the tensor array must have rank >= 1, got " << ta;
  Shape k = kSingle ? Shape::Scalar() : Shape{(*in)[1][0]};
  bool write = in->size() == 3;
  Shape& rows = write ? (*in)[2] : (*out)[0];
  AssignShape(attrs, write ? "input 2 (the value)" : "output 0", &rows, RowsShape(ta, k));
  AssignShape(attrs, "input 0 (the tensor array)", &ta, ArrayShape(rows, kSingle ? 0 : 1));
  AssignShape(attrs, write ? "input 2 (the value)" : "output 0", &rows, RowsShape(ta, k));
  if (write) {
    AssignShape(attrs, "output 0", &(*out)[0], ta);
    AssignShape(attrs, "input 0 (the tensor array)", &ta, (*out)[0]);
  }
  return AllKnown(*in, *out);
}

bool RowsTypes(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckDType(attrs, "index", (*in)[1], IndexTypes());
  if (in->size() == 3) {
    AssignType(attrs, "input 2 (the value)", &(*in)[2], (*in)[0]);
    AssignType(attrs, "input 0 (the tensor array)", &(*in)[0], (*in)[2]);
  }
  return SameTypeAsFirstInput(attrs, in, out);
}

// ---------------------------------------------------------------- gradients

/*! \brief read: the gradient written into zeros at the index. */
std::vector<NodeEntry> ReadGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry zeros = GradNode("zeros_like", n, "zeros", {In(n, 0)});
  return {GradNode("tensor_array_write", n, "ta", {zeros, In(n, 1), og[0]}), NodeEntry()};
}

/*! \brief gather: the gradients added into zeros at the indices (a row may be gathered twice). */
std::vector<NodeEntry> GatherGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("gather_grad", n, "ta", {og[0], In(n, 1), In(n, 0)}), NodeEntry()};
}

/*! \brief write / scatter: ta gets og with the written rows zeroed, value gets og's written rows. */
template <bool kSingle>
std::vector<NodeEntry> WriteGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry zeros = GradNode("zeros_like", n, "zeros", {In(n, 2)});
  const char* write = kSingle ? "tensor_array_write" : "tensor_array_scatter";
  const char* read = kSingle ? "tensor_array_read" : "tensor_array_gather";
  return {GradNode(write, n, "ta", {og[0], In(n, 1), zeros}), NodeEntry(),
          GradNode(read, n, "value", {og[0], In(n, 1)})};
}

/*! \brief What the four ops share. */
template <Kernel kKernel, bool kSingle>
void RowsOp(Op& op) {
  // Separate statements: the arguments depend on the template parameters.
  op.set_attr<FInferShape>("FInferShape", RowsShapes<kSingle>);
  op.set_attr<FInferType>("FInferType", RowsTypes);
  op.set_attr<FCompute>("FCompute", HostCompute<kKernel, kSingle>);
  op.set_attr<FDeviceKernel>("FDeviceKernel", DeviceCompute<kKernel, kSingle>);
  op.set_attr<TOpPattern>("TOpPattern", kOpaque);
}

/*! \brief A write updates its array in place when the planner can give the output ta's storage. */
void InPlaceOnArray(Op& op) {
  op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    }).set_attr<TInplaceSameShape>("TInplaceSameShape", true);
}

// ---------------------------------------------------------------- vectorization (pfor)

/*!
 * \brief The rows iteration i addresses in a stacked array flattened over (n, size): its
 * index (stacked or not) + i * size, flattened ([n * k]; k = 1 for read/write).
 */
NodeEntry FlatRows(PforContext& ctx, int64_t size) {
  const Shape& index = ctx.in_shape(1);
  NodeEntry base = ctx.Make("range", {},
                            {{"start", "0"},
                             {"limit", std::to_string(ctx.n() * size)},
                             {"delta", std::to_string(size)},
                             {"dtype", DTypeName(ctx.in_dtype(1))}});
  std::vector<int64_t> dims(index.ndim() + 1, 1);
  dims[0] = ctx.n();
  base = ctx.Make("reshape", {base}, {{"shape", StrCat(IntList(dims))}});
  return ctx.Make("reshape", {ctx.Make("add", {ctx.input(1).entry, base})}, {{"shape", "(-1)"}});
}

/*!
 * \brief read / gather: rows of the unstacked array at the stacked indices, or of the stacked
 * array flattened over (n, size) at offset indices. An index outside [0, size) of a stacked
 * array is caught only when it leaves the flattened array.
 */
std::vector<PforValue> ReadVectorize(PforContext& ctx) {
  const Shape& ta = ctx.in_shape(0);
  NodeEntry array = ctx.input(0).entry;
  NodeEntry rows = ctx.Make("reshape", {ctx.input(1).entry}, {{"shape", "(-1)"}});
  if (ctx.stacked(0)) {
    array = ctx.MergeLeading(array, ta);
    rows = FlatRows(ctx, ta[0]);
  }
  NodeEntry flat = ctx.Make("tensor_array_gather", {array, rows});
  return {PforValue{ctx.SplitLeading(flat, ctx.out_shape(0)), true}};
}

/*! \brief write / scatter: one scatter into the arrays of all iterations, flattened over (n, size). */
std::vector<PforValue> WriteVectorize(PforContext& ctx) {
  const Shape& ta = ctx.in_shape(0);
  if (ta != ctx.out_shape(0)) return {};  // an array adopting its first write's element shape
  NodeEntry array = ctx.MergeLeading(ctx.Stacked(0), ta);
  NodeEntry value = ctx.Stacked(2);
  if (ctx.in_shape(1).ndim() == 1) value = ctx.MergeLeading(value, ctx.in_shape(2));
  NodeEntry flat = ctx.Make("tensor_array_scatter", {array, FlatRows(ctx, ta[0]), value});
  return {PforValue{ctx.SplitLeading(flat, ta), true}};
}

}  // namespace

IR_REGISTER_OP(tensor_array_read)
    .describe(
        "Row `index` of the tensor array ta [size, elem...] (TensorArrayReadV3); an index outside [0, size) "
        "is an error.")
    .set_num_inputs(2)
    .set_input_names({"ta", "index"})
    .apply(RowsOp<Gather, true>)
    .set_attr<FGradient>("FGradient", ReadGradient)
    .set_attr<FVectorize>("FVectorize", ReadVectorize);

IR_REGISTER_OP(tensor_array_write)
    .describe("A copy of the tensor array ta with row `index` replaced by value (TensorArrayWriteV3).")
    .set_num_inputs(3)
    .set_input_names({"ta", "index", "value"})
    .apply(RowsOp<Scatter, true>)
    .apply(InPlaceOnArray)
    .set_attr<FGradient>("FGradient", WriteGradient<true>)
    .set_attr<FVectorize>("FVectorize", WriteVectorize);

IR_REGISTER_OP(tensor_array_gather)
    .describe("Rows of the tensor array ta at a vector of indices: [k, elem...] (TensorArrayGatherV3).")
    .set_num_inputs(2)
    .set_input_names({"ta", "indices"})
    .apply(RowsOp<Gather, false>)
    .set_attr<FGradient>("FGradient", GatherGradient)
    .set_attr<FVectorize>("FVectorize", ReadVectorize);

IR_REGISTER_OP(tensor_array_scatter)
    .describe(
        "A copy of the tensor array ta with rows `indices` replaced by value's rows (TensorArrayScatterV3); "
        "an index written twice is an error.")
    .set_num_inputs(3)
    .set_input_names({"ta", "indices", "value"})
    .apply(RowsOp<Scatter, false>)
    .apply(InPlaceOnArray)
    .set_attr<FGradient>("FGradient", WriteGradient<false>)
    .set_attr<FVectorize>("FVectorize", WriteVectorize);

}  // namespace op
}  // namespace ir
