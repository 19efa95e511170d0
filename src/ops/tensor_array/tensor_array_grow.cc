/*!
 * \file tensor_array_grow.cc
 * \brief Writes onto tensor arrays that grow (TensorFlow's `dynamic_size=True`, and the stacks a
 * TF1 gradient loop reads back): tensor_array_write_grow / tensor_array_scatter_grow are
 * tensor_array_write / _scatter whose indices may lie past the array's rows. The array then
 * grows to the last row written, or, with `double_capacity`, to at least twice its rows (a stack
 * pushed once per iteration copies O(n log n) rows instead of O(n^2)); the new rows are zeros.
 *
 * The output's rows are a value the graph computes, so the kernels (FComputeShaped) allocate it
 * and inference leaves its first dimension unknown. An array of 0 element dimensions (made
 * before its elements' shape was known, see tensor_array.cc) adopts the value's.
 */
#include <algorithm>
#include <cstring>
#include <map>

#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

struct GrowParam : public dmlc::Parameter<GrowParam> {
  bool double_capacity;
  DMLC_DECLARE_PARAMETER(GrowParam) {
    DMLC_DECLARE_FIELD(double_capacity)
        .set_default(false)
        .describe("Grow to at least twice the rows (a stack's capacity) instead of to the last row written.");
  }
};
DMLC_REGISTER_PARAMETER(GrowParam);

/*! \brief The element shape of the array after writing `value` (`k` rows; k = [] for one): ta's, or the value's when ta
 * holds nothing. */
Shape ElementShape(const NodeAttrs& attrs, const Shape& ta, const Shape& value, const Shape& k) {
  IR_CHECK(!ta.rank_known() || ta.ndim() >= 1)
      << NodeDesc(attrs) << ": the tensor array must have rank >= 1, got " << ta;
  Shape from_value;
  if (value.rank_known()) {
    IR_CHECK(value.ndim() >= k.ndim()) << NodeDesc(attrs) << ": input 2 (the value) has shape " << value
                                       << " but must hold " << k << " rows";
    from_value = Shape(std::vector<int64_t>(value.dims().begin() + k.ndim(), value.dims().end()));
  }
  if (!ta.rank_known()) return from_value;
  std::vector<int64_t> elem(ta.dims().begin() + 1, ta.dims().end());
  bool any_rank = elem.size() == 1 && elem[0] == 0;  // [rows, 0]: not even the rank was known
  if (any_rank || !from_value.rank_known()) return any_rank ? from_value : Shape(elem);
  IR_CHECK(from_value.ndim() == static_cast<int>(elem.size()))
      << NodeDesc(attrs) << ": input 2 (the value) has shape " << value << " but the array's elements are "
      << Shape(elem);
  for (size_t d = 0; d < elem.size(); ++d) {
    int64_t v = from_value[static_cast<int>(d)];
    IR_CHECK(elem[d] == 0 || elem[d] == kUnknownDim || v == kUnknownDim || v == elem[d])
        << NodeDesc(attrs) << ": input 2 (the value) has shape " << value << " but the array's elements are "
        << Shape(elem);
    if (elem[d] == 0 || elem[d] == kUnknownDim) elem[d] = v;
  }
  return Shape(elem);
}

template <bool kSingle>
bool GrowShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if (kSingle) AssignShape(attrs, "input 1 (the index)", &(*in)[1], Shape::Scalar());
  Shape k = kSingle ? Shape::Scalar() : Shape{(*in)[1].rank_known() ? (*in)[1][0] : kUnknownDim};
  Shape elem = ElementShape(attrs, (*in)[0], (*in)[2], k);
  if (elem.rank_known()) {
    std::vector<int64_t> dims = elem.dims();
    dims.insert(dims.begin(), kUnknownDim);
    AssignShape(attrs, "output 0", &(*out)[0], Shape(dims));
  }
  return false;  // the rows are known only when it runs
}

bool GrowType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  if ((*in)[1] != DType::kUnknown) CheckDType(attrs, "index", (*in)[1], {DType::kInt32, DType::kInt64});
  AssignType(attrs, "input 2 (the value)", &(*in)[2], (*in)[0]);
  AssignType(attrs, "input 0 (the tensor array)", &(*in)[0], (*in)[2]);
  if ((*in)[0] != DType::kUnknown) AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
  return AllKnown(*in, *out);
}

/*! \brief The indices as int64; each must be >= 0, and a scatter may not write a row twice. */
std::vector<int64_t> Rows(const NodeAttrs& attrs, const NDArray& indices) {
  std::vector<int64_t> rows;
  if (indices.dtype() == DType::kInt32) {
    for (int32_t i : indices.ToVector<int32_t>()) rows.push_back(i);
  } else {
    rows = indices.ToVector<int64_t>();
  }
  std::map<int64_t, size_t> seen;
  for (size_t k = 0; k < rows.size(); ++k) {
    IR_CHECK(rows[k] >= 0) << NodeDesc(attrs) << ": tried to write to index " << rows[k];
    auto it = seen.emplace(rows[k], k);
    IR_CHECK(it.second) << NodeDesc(attrs) << ": index " << rows[k] << " is written twice (indices elements "
                        << it.first->second << " and " << k << ")";
  }
  return rows;
}

/*! \brief The array grown to hold `rows` (zeros in new rows, and everywhere when it adopts a new element shape), the
 * rows written. */
template <bool kSingle>
std::vector<NDArray> GrowCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  NDArray ta = in[0].CopyTo(Device::CPU()), value = in[2].CopyTo(Device::CPU());
  std::vector<int64_t> rows = Rows(attrs, in[1]);
  Shape k = kSingle ? Shape::Scalar() : Shape{static_cast<int64_t>(rows.size())};
  Shape elem = ElementShape(attrs, ta.shape(), value.shape(), k);
  int64_t have = ta.shape()[0], need = have;
  for (int64_t r : rows) need = std::max(need, r + 1);
  if (need > have && dmlc::get<GrowParam>(attrs.parsed).double_capacity) need = std::max(need, 2 * have);
  std::vector<int64_t> dims = elem.dims();
  dims.insert(dims.begin(), need);
  NDArray out(Shape(dims), ta.dtype(), Device::CPU());
  std::memset(out.data(), 0, out.nbytes());
  bool same_elements =
      std::equal(ta.shape().dims().begin() + 1, ta.shape().dims().end(), elem.dims().begin(), elem.dims().end());
  if (same_elements && have > 0) std::memcpy(out.data(), ta.data(), ta.nbytes());
  size_t row_bytes = static_cast<size_t>(elem.Size()) * DTypeSize(ta.dtype());
  IR_CHECK(value.nbytes() == rows.size() * row_bytes)
      << NodeDesc(attrs) << ": input 2 (the value) has shape " << value.shape() << " for " << rows.size()
      << " rows of shape " << elem;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(static_cast<char*>(out.data()) + static_cast<size_t>(rows[i]) * row_bytes,
                static_cast<const char*>(value.data()) + i * row_bytes, row_bytes);
  }
  return {ctx.device.type == DeviceType::kCPU ? out : out.CopyTo(ctx.device)};
}

template <bool kSingle>
void GrowOp(Op& op) {
  op.set_num_inputs(3);
  op.set_param<GrowParam>();
  op.set_attr<FInferShape>("FInferShape", GrowShape<kSingle>);
  op.set_attr<FInferType>("FInferType", GrowType);
  op.set_attr<FComputeShaped>("FComputeShaped", GrowCompute<kSingle>);
  op.set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(tensor_array_write_grow)
    .describe(
        "tensor_array_write onto an array that grows: an index past its rows makes it that long (or, with "
        "double_capacity, at least twice as long), new rows zeros (TensorArrayWriteV3 of dynamic_size).")
    .set_input_names({"ta", "index", "value"})
    .apply(GrowOp<true>);

IR_REGISTER_OP(tensor_array_scatter_grow)
    .describe(
        "tensor_array_scatter onto an array that grows to hold every index (TensorArrayScatterV3 of dynamic_size).")
    .set_input_names({"ta", "indices", "value"})
    .apply(GrowOp<false>);

}  // namespace op
}  // namespace ir
