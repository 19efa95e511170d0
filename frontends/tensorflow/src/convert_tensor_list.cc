/*!
 * \file convert_tensor_list.cc
 * \brief Converters of TF2's TensorList ops (what tf.TensorArray and keras' recurrent layers write
 * inside While bodies). A list (TF's variant handle) becomes our dense tensor array [size, elem...],
 * the representation TF1's TensorArrays have (convert_tensor_array.cc): Reserve / EmptyTensorList
 * make zeros, FromTensor is the tensor itself, SetItem / GetItem / Gather / ScatterIntoExistingList
 * are the tensor_array ops, Stack the array itself, PushBack / PopBack grow and shrink it
 * (tensor_list_push_back / pop_back), Length and ElementShape read its shape, Concat / Split
 * reshape it.
 *
 * Element dimensions TF leaves unknown (element_shape -1 entries) are 0 in the array: it holds
 * nothing until the first write adopts the written value's dimensions. A list of unknown element
 * rank (element_shape -1) is a placeholder until something tells the rank: a write or push onto
 * it, or a While body writing it (see ConvertWhile).
 */
#include "convert_tensor_list.h"

#include <algorithm>
#include <set>

#include "converter.h"
#include "ir/op.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief The suffix naming the node that stands for a list of unknown element rank. */
constexpr const char* kUnranked = "unranked_list";

/*! \brief An element_shape input (TF's TensorShapeFromTensor): -1 is an unknown rank, -1 entries unknown dims. */
Shape ElementShapeInput(const ImportContext& ctx, size_t i) {
  NDArray value = ctx.TryConstInput(i);
  if (!value.defined()) return Shape();
  std::vector<int64_t> dims = ctx.ConstInts(i);
  if (value.shape().ndim() == 0) {
    IR_CHECK(dims[0] == -1) << "element_shape (input " << i << ") is the scalar " << dims[0]
                            << ": the only valid scalar shape tensor is the fully unknown shape specified as -1";
    return Shape();
  }
  IR_CHECK(value.shape().ndim() == 1) << "element_shape (input " << i << ") must be a vector, got shape "
                                      << value.shape();
  for (int64_t& d : dims) {
    IR_CHECK(d >= -1) << "element_shape (input " << i << ") " << IntsAttr(dims) << " has a dimension below -1";
    if (d == -1) d = kUnknownDim;
  }
  return Shape(dims);
}

/*! \brief `elem` with its unknown dimensions 0: the element part of an array holding nothing yet. */
std::vector<int64_t> Unwritten(const Shape& elem) {
  std::vector<int64_t> dims = elem.dims();
  for (int64_t& d : dims) d = d == kUnknownDim ? 0 : d;
  return dims;
}

/*! \brief The elements' shape of an array of shape `list`: dimensions 0 (nothing written) unknown. */
Shape Elements(const Shape& list) {
  if (!list.rank_known() || list.ndim() == 0) return Shape();
  std::vector<int64_t> dims(list.dims().begin() + 1, list.dims().end());
  for (int64_t& d : dims) d = d == 0 ? kUnknownDim : d;
  return Shape(dims);
}

/*! \brief A list's size: known at import, or computed when the graph runs by `entry`. */
struct ListSize {
  int64_t known = -1;
  NodeEntry entry;
  DType dtype = DType::kInt32;
};

/*! \brief The size input `i` gives (Reserve's num_elements). */
ListSize SizeInput(const ImportContext& ctx, size_t i) {
  if (!ctx.TryConstInput(i).defined()) return ListSize{-1, ctx.input(i), ctx.InputType(i)};
  auto n = static_cast<int64_t>(ctx.ConstScalar(i));
  IR_CHECK(n >= 0) << "the number of elements to reserve must be a non-negative number, but got " << n;
  return ListSize{n, NodeEntry(), DType::kInt32};
}

/*! \brief An empty list: [size] + `elem_dims`, zeros of `dtype` (a fill, or a fill_dims of a run-time size). */
NodeEntry NewList(ImportContext& ctx, const ListSize& size, const std::vector<int64_t>& elem_dims, DType dtype,
                  const std::string& suffix = "") {
  if (size.known >= 0) {
    std::vector<int64_t> dims{size.known};
    dims.insert(dims.end(), elem_dims.begin(), elem_dims.end());
    IR_CHECK(Shape(dims).Bytes(dtype) <= ctx.max_const_bytes())
        << "the list " << IntsAttr(dims) << " is larger than the " << ctx.max_const_bytes() << "-byte limit";
    return ctx.Op("fill", {}, {{"shape", IntsAttr(dims)}, {"value", "0"}, {"dtype", DTypeName(dtype)}}, suffix);
  }
  std::string prefix = suffix.empty() ? "list" : suffix;
  NodeEntry dims = ctx.Op("reshape", {size.entry}, {{"shape", "(1)"}}, prefix + "/size");
  if (!elem_dims.empty()) {
    std::vector<int64_t> rest = elem_dims;
    NDArray tail = size.dtype == DType::kInt64
                       ? NDArray::FromVector<int64_t>(Shape{static_cast<int64_t>(rest.size())}, rest)
                       : NDArray::FromVector<int32_t>(Shape{static_cast<int64_t>(rest.size())},
                                                      std::vector<int32_t>(rest.begin(), rest.end()));
    dims = ctx.Op("concat", {dims, ctx.Constant(tail, prefix + "/elem")}, {{"axis", "0"}}, prefix + "/dims");
  }
  NodeEntry zero = ctx.Op("fill", {}, {{"shape", "()"}, {"value", "0"}, {"dtype", DTypeName(dtype)}}, prefix + "/zero");
  return ctx.Op("fill_dims", {dims, zero}, {}, suffix);
}

/*! \brief Reserve / EmptyTensorList: an empty list; a placeholder standing for it when the rank is unknown. */
Outputs MakeList(ImportContext& ctx, const ListSize& size) {
  DType dtype = ctx.Type("element_dtype");
  Shape elem = ElementShapeInput(ctx, 0);
  if (!elem.rank_known()) return {NewList(ctx, size, {}, dtype, kUnranked)};
  return {NewList(ctx, size, Unwritten(elem), dtype)};
}

Outputs ConvertReserve(ImportContext& ctx) {
  ctx.ExpectInputs(2);  // element_shape, num_elements
  return MakeList(ctx, SizeInput(ctx, 1));
}

Outputs ConvertEmpty(ImportContext& ctx) {
  ctx.ExpectInputs(2);  // element_shape, max_num_elements (a bound TF checks only as it pushes)
  return MakeList(ctx, ListSize{0, NodeEntry(), DType::kInt32});
}

/*! \brief List input `i`, with elements of rank `rank` when it stands for a list of unknown rank. */
NodeEntry ListInput(ImportContext& ctx, size_t i, const Shape& item, const char* what) {
  if (!IsUnrankedList(ctx.input(i))) return ctx.input(i);
  IR_CHECK(item.rank_known()) << "the list's element shape is unknown (element_shape -1) and so is the rank of " << what
                              << ": the importer cannot tell the list's shape";
  return RankedList(ctx, ctx.input(i), item.ndim());
}

/*! \brief Throws unless a list that must be read (input `i`) has a known element rank. */
void ExpectRanked(const ImportContext& ctx, size_t i) {
  IR_CHECK(!IsUnrankedList(ctx.input(i)))
      << "the list (input " << i << ") has an unknown element shape (element_shape -1) and nothing was written to it";
}

/*! \brief Throws unless the list's elements (shape `list`) fit the op's element_shape `elem`. */
void CheckElements(const Shape& list, const Shape& elem) {
  Shape merged;
  IR_CHECK(Shape::Merge(Elements(list), elem, &merged))
      << "the list's elements have shape " << Elements(list) << " (the list is " << list
      << "), which does not fit the op's element_shape " << elem;
}

Outputs ConvertFromTensor(ImportContext& ctx) {
  ctx.ExpectInputs(2);  // tensor, element_shape
  Shape tensor = ctx.InputShape(0);
  IR_CHECK(!tensor.rank_known() || tensor.ndim() >= 1)
      << "TensorListFromTensor needs a tensor of rank >= 1, got shape " << tensor;
  CheckElements(tensor, ElementShapeInput(ctx, 1));
  return {ctx.Op("identity", {ctx.input(0)})};
}

Outputs ConvertSetItem(ImportContext& ctx) {
  ctx.ExpectInputs(3);  // input_handle, index, item
  IR_CHECK(!ctx.Bool("resize_if_index_out_of_bounds", false))
      << "resize_if_index_out_of_bounds (a TensorArray of dynamic_size=True) is not supported";
  NodeEntry list = ListInput(ctx, 0, ctx.InputShape(2), "the item");
  return {ctx.Op("tensor_array_write", {list, ctx.input(1), ctx.input(2)})};
}

Outputs ConvertGetItem(ImportContext& ctx) {
  ctx.ExpectInputs(3);  // input_handle, index, element_shape
  ExpectRanked(ctx, 0);
  CheckElements(ctx.InputShape(0), ElementShapeInput(ctx, 2));
  return {ctx.Op("tensor_array_read", {ctx.input(0), ctx.input(1)})};
}

Outputs ConvertGather(ImportContext& ctx) {
  ctx.ExpectInputs(3);  // input_handle, indices, element_shape
  ExpectRanked(ctx, 0);
  return {ctx.Op("tensor_array_gather", {ctx.input(0), ctx.input(1)})};
}

Outputs ConvertScatterInto(ImportContext& ctx) {
  ctx.ExpectInputs(3);  // input_handle, tensor, indices
  Shape rows = ctx.InputShape(1);
  NodeEntry list = ListInput(ctx, 0, rows.rank_known() ? Elements(rows) : Shape(), "the tensor's rows");
  return {ctx.Op("tensor_array_scatter", {list, ctx.input(2), ctx.input(1)})};
}

Outputs ConvertPushBack(ImportContext& ctx) {
  ctx.ExpectInputs(2);  // input_handle, tensor
  NodeEntry list = ListInput(ctx, 0, ctx.InputShape(1), "the item");
  return {ctx.Op("tensor_list_push_back", {list, ctx.input(1)})};
}

Outputs ConvertPopBack(ImportContext& ctx) {
  ctx.ExpectInputs(2);  // input_handle, element_shape
  ExpectRanked(ctx, 0);
  NodeEntry popped = ctx.Op("tensor_list_pop_back", {ctx.input(0)});
  return {popped, NodeEntry{popped.node, 1}};
}

/*!
 * \brief Stack: the array itself. A list nothing was written to whose element_shape the op knows
 * fully is zeros of that shape (TF reads unset elements as zeros); num_elements, when set, must match.
 */
Outputs ConvertStack(ImportContext& ctx) {
  ctx.ExpectInputs(2);  // input_handle, element_shape
  Shape elem = ElementShapeInput(ctx, 1);
  Shape list = ctx.InputShape(0);
  int64_t expected = ctx.Int("num_elements", -1);
  if (IsUnrankedList(ctx.input(0))) {
    IR_CHECK(elem.is_known()) << "stacking a list nothing was written to needs a fully known element_shape, got "
                              << elem;
  } else {
    CheckElements(list, elem);
  }
  IR_CHECK(expected < 0 || !list.is_known() || list[0] == expected)
      << "Operation expected a list with " << expected << " elements but got a list with " << list[0] << " elements";
  bool unwritten =
      list.is_known() && Elements(list) != Shape(std::vector<int64_t>(list.dims().begin() + 1, list.dims().end()));
  if ((unwritten || IsUnrankedList(ctx.input(0))) && elem.is_known() && list.is_known()) {
    std::vector<int64_t> dims = elem.dims();
    dims.insert(dims.begin(), list[0]);
    return {ctx.Op("fill", {}, {{"shape", IntsAttr(dims)}, {"value", "0"}, {"dtype", DTypeName(ctx.InputType(0))}})};
  }
  ExpectRanked(ctx, 0);
  return {ctx.Op("identity", {ctx.input(0)})};
}

/*! \brief Dimensions [begin, end) of input `i`'s shape when the graph runs (a scalar for one dimension when `shrink`).
 */
NodeEntry RunTimeDims(ImportContext& ctx, size_t i, int64_t begin, int64_t end, bool shrink, DType dtype,
                      const std::string& suffix) {
  NodeEntry shape = ctx.Op("shape", {ctx.input(i)}, {{"out_type", DTypeName(dtype)}}, suffix + "/shape");
  std::map<std::string, std::string> attrs{{"begin", IntsAttr({begin})}, {"strides", "(1)"}};
  if (end < 0) {
    attrs["end"] = "(0)";
    attrs["end_mask"] = "1";
  } else {
    attrs["end"] = IntsAttr({end});
  }
  if (shrink) attrs["shrink_axis_mask"] = "1";
  return ctx.Op("strided_slice", {shape}, attrs, suffix);
}

Outputs ConvertLength(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  Shape list = ctx.InputShape(0);
  if (list.rank_known() && list.ndim() >= 1 && list[0] != kUnknownDim) {
    return {ctx.Constant(NDArray::Scalar<int32_t>(static_cast<int32_t>(list[0])))};
  }
  return {RunTimeDims(ctx, 0, 0, 1, true, DType::kInt32, "length")};
}

/*!
 * \brief ElementShape: the elements' shape, -1 where nothing written tells it. (TF returns the
 * list's declared element_shape; ours is the shape of what it holds, equal wherever TF's is known.)
 */
Outputs ConvertElementShape(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  DType dtype = ctx.HasAttr("shape_type") ? ctx.Type("shape_type") : DType::kInt32;
  if (IsUnrankedList(ctx.input(0))) {
    return {ctx.Constant(dtype == DType::kInt64 ? NDArray::Scalar<int64_t>(-1) : NDArray::Scalar<int32_t>(-1))};
  }
  Shape elem = Elements(ctx.InputShape(0));
  if (!elem.rank_known()) return {RunTimeDims(ctx, 0, 1, -1, false, dtype, "shape")};
  std::vector<int64_t> dims = elem.dims();
  for (int64_t& d : dims) d = d == kUnknownDim ? -1 : d;
  auto n = static_cast<int64_t>(dims.size());
  if (dtype == DType::kInt64) return {ctx.Constant(NDArray::FromVector<int64_t>(Shape{n}, dims))};
  return {ctx.Constant(NDArray::FromVector<int32_t>(Shape{n}, std::vector<int32_t>(dims.begin(), dims.end())))};
}

/*!
 * \brief Concat (V1: element_shape attribute; V2: element_shape and leading_dims inputs): the
 * elements joined along their first axis, and each one's length (int64).
 */
Outputs ConvertConcat(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() == 1 || ctx.num_inputs() == 3)
      << "needs the list (and, in V2, element_shape and leading_dims), has " << ctx.num_inputs() << " input(s)";
  ExpectRanked(ctx, 0);
  Shape list = ctx.InputShape(0);
  IR_CHECK(list.rank_known() && list.ndim() >= 2)
      << "concatenating a list needs elements of known rank >= 1, but the list is " << list;
  std::vector<int64_t> rest(list.dims().begin() + 2, list.dims().end());
  IR_CHECK(std::none_of(rest.begin(), rest.end(), [](int64_t d) { return d == kUnknownDim; }))
      << "concatenating a list needs its elements' dimensions after the first known, but the list is " << list;
  std::vector<int64_t> dims{-1};
  dims.insert(dims.end(), rest.begin(), rest.end());
  NodeEntry joined = ctx.Op("reshape", {ctx.input(0)}, {{"shape", IntsAttr(dims)}});
  if (list[0] != kUnknownDim && list[1] != kUnknownDim) {
    std::vector<int64_t> lengths(static_cast<size_t>(list[0]), list[1]);
    return {joined, ctx.Constant(NDArray::FromVector<int64_t>(Shape{list[0]}, lengths), "lengths")};
  }
  NodeEntry count = RunTimeDims(ctx, 0, 0, 1, false, DType::kInt64, "count");
  NodeEntry length = RunTimeDims(ctx, 0, 1, 2, true, DType::kInt64, "length");
  return {joined, ctx.Op("fill_dims", {count, length}, {}, "lengths")};
}

/*! \brief Split(tensor, element_shape, lengths) into equal lengths: the tensor as [count, length, rest...]. */
Outputs ConvertSplit(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  std::vector<int64_t> lengths = ctx.ConstInts(2);
  IR_CHECK(!lengths.empty() && std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; }))
      << "only splits into equal lengths are supported (a list holds elements of one shape), got " << IntsAttr(lengths);
  Shape tensor = ctx.InputShape(0);
  auto count = static_cast<int64_t>(lengths.size());
  IR_CHECK(tensor.rank_known() && tensor.ndim() >= 1 && (tensor[0] == kUnknownDim || tensor[0] == lengths[0] * count))
      << "the tensor's shape " << tensor << " does not match the lengths " << IntsAttr(lengths);
  std::vector<int64_t> dims{count, lengths[0]};
  for (int d = 1; d < tensor.ndim(); ++d) {
    IR_CHECK(tensor[d] != kUnknownDim) << "splitting a tensor of shape " << tensor
                                       << " needs its dimensions after the first known";
    dims.push_back(tensor[d]);
  }
  CheckElements(Shape(dims), ElementShapeInput(ctx, 1));
  return {ctx.Op("reshape", {ctx.input(0)}, {{"shape", IntsAttr(dims)}})};
}

/*! \brief Ops that change a list's size, so a loop over it must let its size vary. */
bool ResizesLists(const tfproto::NodeDef& node) {
  static const std::set<std::string> ops = {"TensorListPushBack", "TensorListPopBack", "TensorListResize",
                                            "TensorListPushBackBatch", "TensorListConcatLists"};
  if (ops.count(node.op())) return true;
  auto resize = node.attr().find("resize_if_index_out_of_bounds");
  return node.op() == "TensorListSetItem" && resize != node.attr().end() && resize->second.b();
}

}  // namespace

bool IsUnrankedList(const NodeEntry& list) {
  const std::string& name = list.node->attrs.name;
  std::string suffix = std::string("/") + kUnranked;
  return !list.node->is_variable() && (list.node->op()->name == "fill" || list.node->op()->name == "fill_dims") &&
         name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

NodeEntry RankedList(ImportContext& ctx, const NodeEntry& list, int rank) {
  std::vector<int64_t> zeros(static_cast<size_t>(rank), 0);
  DType dtype = DTypeFromName(list.node->attrs.dict.count("dtype") ? list.node->attrs.dict.at("dtype") : "float32");
  if (list.node->op()->name == "fill") {
    std::string shape = list.node->attrs.dict.at("shape");  // "(n)"
    ListSize size{std::stoll(shape.substr(1, shape.size() - 2)), NodeEntry(), DType::kInt32};
    return NewList(ctx, size, zeros, dtype, "ranked_list");
  }
  NodeEntry size = list.node->inputs[0].node->inputs[0];  // fill_dims(reshape(size), zero)
  NodeEntry zero = list.node->inputs[1];
  dtype = DTypeFromName(zero.node->attrs.dict.at("dtype"));
  return NewList(ctx, ListSize{-1, size, DType::kInt32}, zeros, dtype, "ranked_list");
}

Shape ListLoopShape(const Shape& entering, bool resizes) {
  if (!entering.rank_known() || entering.ndim() == 0) return entering;
  Shape loop = Elements(entering);
  std::vector<int64_t> dims = loop.dims();
  dims.insert(dims.begin(), resizes ? kUnknownDim : entering[0]);
  return Shape(dims);
}

bool MayResizeLists(const FunctionScope& scope, const std::string& fn) {
  std::set<std::string> seen;
  std::vector<std::string> todo{fn};
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    auto found = scope.functions.find(name);
    if (!seen.insert(name).second || found == scope.functions.end()) continue;
    for (const tfproto::NodeDef& node : found->second->node_def()) {
      if (ResizesLists(node)) return true;
      if (scope.functions.count(node.op())) todo.push_back(node.op());
      for (const auto& kv : node.attr()) {
        if (kv.second.has_func()) todo.push_back(kv.second.func().name());
        for (const auto& f : kv.second.list().func()) todo.push_back(f.name());
      }
    }
  }
  return false;
}

IR_TF_CONVERTER({"TensorListReserve"}, ConvertReserve);
IR_TF_CONVERTER({"EmptyTensorList"}, ConvertEmpty);
IR_TF_CONVERTER({"TensorListFromTensor"}, ConvertFromTensor);
IR_TF_CONVERTER({"TensorListSetItem"}, ConvertSetItem);
IR_TF_CONVERTER({"TensorListGetItem"}, ConvertGetItem);
IR_TF_CONVERTER({"TensorListGather"}, ConvertGather);
IR_TF_CONVERTER({"TensorListScatterIntoExistingList"}, ConvertScatterInto);
IR_TF_CONVERTER({"TensorListPushBack"}, ConvertPushBack);
IR_TF_CONVERTER({"TensorListPopBack"}, ConvertPopBack);
IR_TF_CONVERTER({"TensorListStack"}, ConvertStack);
IR_TF_CONVERTER({"TensorListLength"}, ConvertLength);
IR_TF_CONVERTER({"TensorListElementShape"}, ConvertElementShape);
IR_TF_CONVERTER({"TensorListConcat", "TensorListConcatV2"}, ConvertConcat);
IR_TF_CONVERTER({"TensorListSplit"}, ConvertSplit);

}  // namespace tf
}  // namespace ir
