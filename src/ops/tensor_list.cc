/*!
 * \file tensor_list.cc
 * \brief Growing and shrinking a tensor array [size, elem...] (TF2's TensorListPushBack and
 * TensorListPopBack): tensor_list_push_back appends a row, tensor_list_pop_back removes the last
 * one and returns it. The other list operations are the tensor_array ops (tensor_array.cc).
 *
 * As there, an array whose element dimensions are 0 holds nothing (a list made before its
 * elements' shape was known): the first push adopts the item's dimensions, the rows before it
 * are zeros. Kernels are row copies against a copy function, so one implementation serves the
 * CPU and every device target.
 */
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/array/array_common.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

/*! \brief Copies src into dst (same size), and sets every element of dst to zero. */
using CopyFn = std::function<void(const NDArray& src, const NDArray& dst)>;
using ZeroFn = std::function<void(const NDArray& dst)>;

/*! \brief `item` as one row [1, elem...]. */
NDArray AsRow(const NDArray& item) {
  std::vector<int64_t> dims = item.shape().dims();
  dims.insert(dims.begin(), 1);
  return item.Reshape(Shape(dims));
}

/*! \brief The list's element shape, its 0 dimensions (nothing written yet) unknown. */
Shape ElementShape(const Shape& list) {
  if (!list.rank_known() || list.ndim() == 0) return Shape();
  std::vector<int64_t> dims(list.dims().begin() + 1, list.dims().end());
  for (int64_t& d : dims) {
    if (d == 0) d = kUnknownDim;
  }
  return Shape(dims);
}

/*! \brief [rows] + elem. */
Shape WithRows(int64_t rows, const Shape& elem) {
  if (!elem.rank_known()) return Shape();
  std::vector<int64_t> dims = elem.dims();
  dims.insert(dims.begin(), rows);
  return Shape(dims);
}

/*! \brief The size (dimension 0) of a list's shape, or unknown. */
int64_t Rows(const Shape& list) { return list.rank_known() && list.ndim() >= 1 ? list[0] : kUnknownDim; }

void CheckList(const NodeAttrs& attrs, const Shape& list) {
  IR_CHECK(!list.rank_known() || list.ndim() >= 1)
      << NodeDesc(attrs) << ": the list must have rank >= 1 ([size, element...]), got " << list;
}

// ---------------------------------------------------------------- push_back

/*! \brief list [n, elem], item elem -> [n + 1, elem]; a list of 0 element dimensions adopts the item's. */
bool PushShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckList(attrs, (*in)[0]);
  Shape elem = ElementShape((*in)[0]);
  const Shape& item = (*in)[1];
  IR_CHECK(!elem.rank_known() || !item.rank_known() || elem.ndim() == item.ndim())
      << NodeDesc(attrs) << ": tried to append an item of shape " << item << " to a list of shape " << (*in)[0]
      << " (element rank " << elem.ndim() << ")";
  Shape merged;
  IR_CHECK(Shape::Merge(elem, item, &merged))
      << NodeDesc(attrs) << ": tried to append an item of shape " << item << " to a list of elements of shape " << elem;
  int64_t n = Rows((*in)[0]);
  AssignShape(attrs, "output 0", &(*out)[0], WithRows(n == kUnknownDim ? n : n + 1, merged));
  AssignShape(attrs, "input 1 (the item)", &(*in)[1], ElementShape((*out)[0]));
  return AllKnown(*in, *out);
}

void Push(const std::vector<NDArray>& in, const NDArray& out, const CopyFn& copy, const ZeroFn& zero) {
  const NDArray& list = in[0];
  int64_t n = list.shape()[0];
  if (n > 0) {
    NDArray rows = out.Slice(0, n);
    if (list.shape() == rows.shape()) {
      copy(list, rows);
    } else {
      zero(rows);  // a list that held nothing: zeros of the adopted shape
    }
  }
  copy(AsRow(in[1]), out.Slice(n, n + 1));
}

std::vector<NodeEntry> PushGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry popped = GradNode("tensor_list_pop_back", n, "split", {og[0]});
  return {popped, NodeEntry{popped.node, 1}};
}

// ---------------------------------------------------------------- pop_back

/*! \brief list [n, elem] -> ([n - 1, elem], elem); an empty list is an error. */
bool PopShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& list = (*in)[0];
  CheckList(attrs, list);
  int64_t n = Rows(list);
  IR_CHECK(n != 0) << NodeDesc(attrs) << ": Trying to pop from an empty list (shape " << list << ")";
  Shape elem = list.rank_known() ? Shape(std::vector<int64_t>(list.dims().begin() + 1, list.dims().end())) : Shape();
  AssignShape(attrs, "output 0", &(*out)[0], WithRows(n == kUnknownDim ? n : n - 1, elem));
  AssignShape(attrs, "output 1 (the item)", &(*out)[1], elem);
  return AllKnown(*in, *out);
}

void Pop(const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<NDArray>& out, const CopyFn& copy) {
  int64_t n = in[0].shape()[0];
  IR_CHECK(n > 0) << NodeDesc(attrs) << ": Trying to pop from an empty list.";
  if (n > 1) copy(in[0].Slice(0, n - 1), out[0]);
  copy(in[0].Slice(n - 1, n), AsRow(out[1]));
}

std::vector<NodeEntry> PopGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("tensor_list_push_back", n, "list", {og[0], og[1]})};
}

// ---------------------------------------------------------------- kernels

void HostCopy(const NDArray& src, const NDArray& dst) { CopyUnlessAliased(src, dst); }
void HostZero(const NDArray& dst) { std::memset(dst.data(), 0, static_cast<size_t>(dst.shape().Bytes(dst.dtype()))); }

void PushCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  Push(in, out[0], HostCopy, HostZero);
}

void PushDevice(DeviceKernelContext& dev, const NodeAttrs&, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  Push(
      in, out[0], [&dev](const NDArray& src, const NDArray& dst) { dev.Copy(src, dst); },
      [&dev](const NDArray& dst) { dev.Fill(dst, 0); });
}

void PopCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  Pop(attrs, in, out, HostCopy);
}

void PopDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<NDArray>& out) {
  Pop(attrs, in, out, [&dev](const NDArray& src, const NDArray& dst) { dev.Copy(src, dst); });
}

bool PushType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "input 1 (the item)", &(*in)[1], (*in)[0]);
  AssignType(attrs, "input 0 (the list)", &(*in)[0], (*in)[1]);
  return SameTypeAsFirstInput(attrs, in, out);
}

}  // namespace

IR_REGISTER_OP(tensor_list_push_back)
    .describe(
        "The tensor array list [n, elem...] with `item` appended as row n (TensorListPushBack); a list of 0 "
        "element dimensions (nothing written) adopts the item's.")
    .set_num_inputs(2)
    .set_input_names({"list", "item"})
    .set_attr<FInferShape>("FInferShape", PushShape)
    .set_attr<FInferType>("FInferType", PushType)
    .set_attr<FCompute>("FCompute", PushCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", PushDevice)
    .set_attr<FGradient>("FGradient", PushGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(tensor_list_pop_back)
    .describe(
        "The tensor array list [n, elem...] without its last row, and that row (TensorListPopBack); an empty "
        "list is an error.")
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_input_names({"list"})
    .set_attr<FInferShape>("FInferShape", PopShape)
    .set_attr<FInferType>("FInferType", SameTypeAsFirstInput)
    .set_attr<FCompute>("FCompute", PopCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", PopDevice)
    .set_attr<FGradient>("FGradient", PopGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
