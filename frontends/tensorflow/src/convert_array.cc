/*!
 * \file convert_array.cc
 * \brief Converters for shape manipulation and indexing. TensorFlow passes shapes, axes and
 * multiples as tensor inputs; they become our ops' parameters once they are known at import.
 * Also BroadcastArgs, ResourceGather, DepthToSpace/SpaceToDepth (reshape, transpose, reshape),
 * MatrixBandPart (a constant mask), SpaceToBatch(ND)/BatchToSpace(ND) (so the dilated-convolution
 * pattern SpaceToBatchND -> Conv2D -> BatchToSpaceND imports) and MirrorPad(Grad): block shapes,
 * paddings and crops are constant inputs in TF graphs and become attributes here.
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

std::string Bits(int64_t mask) { return std::to_string(mask); }

Outputs ConvertReshape(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  std::vector<int64_t> shape = ctx.ConstInts(1);
  for (int64_t d : shape) {
    IR_CHECK(d != 0) << "reshaping to " << IntsAttr(shape) << ", which has a zero dimension, is not supported";
  }
  return {ctx.Op("reshape", {ctx.input(0)}, {{"shape", IntsAttr(shape)}})};
}

std::string OutType(const ImportContext& ctx) {
  return DTypeName(ctx.HasAttr("out_type") ? ctx.Type("out_type") : DType::kInt32);
}

Outputs ConvertShape(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("shape", {ctx.input(0)}, {{"out_type", OutType(ctx)}})};
}

Outputs ConvertShapeN(ImportContext& ctx) {
  ctx.ExpectListLength("N", ctx.num_inputs());
  Outputs outs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    outs.push_back(ctx.Op("shape", {ctx.input(i)}, {{"out_type", OutType(ctx)}}, std::to_string(i)));
  }
  ctx.input(0);
  return outs;
}

Outputs ConvertSize(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("size", {ctx.input(0)}, {{"out_type", OutType(ctx)}})};
}

Outputs ConvertRank(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.Op("rank", {ctx.input(0)})};
}

/*! \brief Fill(dims, value): a `fill` of a known value, else the value broadcast. */
/*! \brief Fill: a static shape when dims folds to a constant, else fill_dims (the shape found when it runs). */
Outputs ConvertFill(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  if (!ctx.TryConstInput(0).defined()) return {ctx.Op("fill_dims", {ctx.input(0), ctx.input(1)})};
  std::string shape = IntsAttr(ctx.ConstInts(0));
  NDArray value = ctx.TryConstInput(1);
  if (!value.defined()) return {ctx.Op("broadcast_to", {ctx.input(1)}, {{"shape", shape}})};
  return {ctx.Op("fill", {},
                 {{"shape", shape}, {"value", NumberAttr(ctx.ConstScalar(1))}, {"dtype", DTypeName(value.dtype())}})};
}

Outputs ConvertTile(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("tile", {ctx.input(0)}, {{"reps", IntsAttr(ctx.ConstInts(1))}})};
}

Outputs Concat(ImportContext& ctx, std::vector<NodeEntry> values, int64_t axis) {
  IR_CHECK(!values.empty()) << "nothing to concatenate";
  if (values.size() == 1) return {ctx.Op("identity", values)};
  return {ctx.Op("concat", std::move(values), {{"axis", std::to_string(axis)}})};
}

Outputs ConvertConcatV2(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() >= 2) << "needs values and an axis, has " << ctx.num_inputs() << " input(s)";
  std::vector<NodeEntry> values(ctx.inputs().begin(), ctx.inputs().end() - 1);
  ctx.ExpectListLength("N", values.size());
  return Concat(ctx, values, static_cast<int64_t>(ctx.ConstScalar(ctx.num_inputs() - 1)));
}

Outputs ConvertConcat(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() >= 2) << "needs an axis and values, has " << ctx.num_inputs() << " input(s)";
  std::vector<NodeEntry> values(ctx.inputs().begin() + 1, ctx.inputs().end());
  ctx.ExpectListLength("N", values.size());
  return Concat(ctx, values, static_cast<int64_t>(ctx.ConstScalar(0)));
}

/*! \brief ConcatOffset(axis, shapes...): where each input starts in the concatenation. */
Outputs ConvertConcatOffset(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() >= 2) << "needs an axis and shapes, has " << ctx.num_inputs() << " input(s)";
  ctx.ExpectListLength("N", ctx.num_inputs() - 1);
  int64_t axis = static_cast<int64_t>(ctx.ConstScalar(0));
  Outputs outs;
  int64_t offset = 0;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    std::vector<int64_t> shape = ctx.ConstInts(i);
    int64_t rank = static_cast<int64_t>(shape.size());
    int64_t a = ctx.NormalizeAxis(axis, rank, StrCat("axis (shape ", IntsAttr(shape), ")"));
    std::vector<int32_t> result(shape.size(), 0);
    result[a] = static_cast<int32_t>(offset);
    offset += shape[a];
    outs.push_back(ctx.Constant(NDArray::FromVector<int32_t>(Shape{rank}, result), std::to_string(i - 1)));
  }
  return outs;
}

Outputs ConvertPack(ImportContext& ctx) {
  ctx.ExpectListLength("N", ctx.num_inputs());
  std::string axis = std::to_string(ctx.Int("axis", 0));
  std::vector<NodeEntry> expanded;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    expanded.push_back(ctx.Op("expand_dims", {ctx.input(i)}, {{"axis", axis}}, "expand_" + std::to_string(i)));
  }
  IR_CHECK(!expanded.empty()) << "nothing to pack";
  if (expanded.size() == 1) return expanded;
  return {ctx.Op("concat", expanded, {{"axis", axis}})};
}

Outputs ConvertUnpack(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  std::string axis = std::to_string(ctx.Int("axis", 0));
  int64_t num = ctx.Int("num");
  IR_CHECK(num >= 1) << "attribute 'num' must be at least 1, got " << num;
  NodeEntry parts = ctx.input(0);
  if (num > 1) parts = ctx.Op("split", {parts}, {{"axis", axis}, {"num_outputs", std::to_string(num)}}, "split");
  Outputs outs;
  for (int64_t i = 0; i < num; ++i) {
    NodeEntry part{parts.node, static_cast<uint32_t>(num > 1 ? i : parts.index)};
    outs.push_back(ctx.Op("squeeze", {part}, {{"axis", IntsAttr({ctx.Int("axis", 0)})}}, std::to_string(i)));
  }
  return outs;
}

Outputs SplitOutputs(ImportContext& ctx, const NodeEntry& value, int64_t axis,
                     const std::map<std::string, std::string>& how, int64_t count) {
  std::map<std::string, std::string> attrs = how;
  attrs["axis"] = std::to_string(axis);
  NodeEntry split = ctx.Op("split", {value}, attrs);
  Outputs outs;
  for (int64_t i = 0; i < count; ++i) outs.push_back(NodeEntry{split.node, static_cast<uint32_t>(i)});
  return outs;
}

/*! \brief TF1 Split takes the axis first: Split(split_dim, value). */
Outputs ConvertSplit(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  int64_t num = ctx.Int("num_split");
  IR_CHECK(num >= 1) << "attribute 'num_split' must be at least 1, got " << num;
  return SplitOutputs(ctx, ctx.input(1), static_cast<int64_t>(ctx.ConstScalar(0)),
                      {{"num_outputs", std::to_string(num)}}, num);
}

Outputs ConvertSplitV(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  std::vector<int64_t> sizes = ctx.ConstInts(1);
  return SplitOutputs(ctx, ctx.input(0), static_cast<int64_t>(ctx.ConstScalar(2)), {{"sizes", IntsAttr(sizes)}},
                      static_cast<int64_t>(sizes.size()));
}

Outputs ConvertSlice(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  return {
      ctx.Op("slice", {ctx.input(0)}, {{"begin", IntsAttr(ctx.ConstInts(1))}, {"size", IntsAttr(ctx.ConstInts(2))}})};
}

Outputs ConvertStridedSlice(ImportContext& ctx) {
  ctx.ExpectInputs(4);
  return {ctx.Op("strided_slice", {ctx.input(0)},
                 {{"begin", IntsAttr(ctx.ConstInts(1))},
                  {"end", IntsAttr(ctx.ConstInts(2))},
                  {"strides", IntsAttr(ctx.ConstInts(3))},
                  {"begin_mask", Bits(ctx.Int("begin_mask", 0))},
                  {"end_mask", Bits(ctx.Int("end_mask", 0))},
                  {"ellipsis_mask", Bits(ctx.Int("ellipsis_mask", 0))},
                  {"new_axis_mask", Bits(ctx.Int("new_axis_mask", 0))},
                  {"shrink_axis_mask", Bits(ctx.Int("shrink_axis_mask", 0))}})};
}

Outputs ConvertExpandDims(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("expand_dims", {ctx.input(0)}, {{"axis", std::to_string(static_cast<int64_t>(ctx.ConstScalar(1)))}})};
}

Outputs ConvertSqueeze(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  std::vector<int64_t> axes = ctx.HasAttr("squeeze_dims") ? ctx.Ints("squeeze_dims")
                              : ctx.HasAttr("axis")       ? ctx.Ints("axis")
                                                          : std::vector<int64_t>();
  return {ctx.Op("squeeze", {ctx.input(0)}, {{"axis", IntsAttr(axes)}})};
}

Outputs ConvertTranspose(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("transpose", {ctx.input(0)}, {{"axes", IntsAttr(ctx.ConstInts(1))}})};
}

/*! \brief Range: static when its arguments fold; integers known only at run time (the size of a growing TensorArray)
 * make range_dims. */
Outputs ConvertRange(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  DType dtype = ctx.HasAttr("Tidx") ? ctx.Type("Tidx") : DType::kInt32;
  bool known = ctx.TryConstInput(0).defined() && ctx.TryConstInput(1).defined() && ctx.TryConstInput(2).defined();
  if (!known && (dtype == DType::kInt32 || dtype == DType::kInt64)) {
    return {ctx.Op("range_dims", {ctx.input(0), ctx.input(1), ctx.input(2)})};
  }
  return {ctx.Op("range", {},
                 {{"start", NumberAttr(ctx.ConstScalar(0))},
                  {"limit", NumberAttr(ctx.ConstScalar(1))},
                  {"delta", NumberAttr(ctx.ConstScalar(2))},
                  {"dtype", DTypeName(dtype)}})};
}

Outputs ConvertBroadcastTo(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  return {ctx.Op("broadcast_to", {ctx.input(0)}, {{"shape", IntsAttr(ctx.ConstInts(1))}})};
}

Outputs ConvertPad(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() == 2 || ctx.num_inputs() == 3) << "needs 2 or 3 inputs, has " << ctx.num_inputs();
  std::string fill = ctx.num_inputs() == 3 ? NumberAttr(ctx.ConstScalar(2)) : "0";
  Shape paddings = ctx.ConstInput(1).shape();
  IR_CHECK(paddings.ndim() == 2 && paddings[1] == 2)
      << "paddings must be a matrix [rank, 2], but its shape is " << paddings;
  return {ctx.Op("pad", {ctx.input(0)}, {{"paddings", IntsAttr(ctx.ConstInts(1))}, {"constant_value", fill}})};
}

Outputs ConvertOneHot(ImportContext& ctx) {
  ctx.ExpectInputs(4);
  return {ctx.Op("one_hot", {ctx.input(0)},
                 {{"depth", std::to_string(static_cast<int64_t>(ctx.ConstScalar(1)))},
                  {"on_value", NumberAttr(ctx.ConstScalar(2))},
                  {"off_value", NumberAttr(ctx.ConstScalar(3))},
                  {"axis", std::to_string(ctx.Int("axis", -1))},
                  {"dtype", DTypeName(ctx.Type("T"))}})};
}

Outputs ConvertGather(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() == 2 || ctx.num_inputs() == 3) << "needs 2 or 3 inputs, has " << ctx.num_inputs();
  int64_t axis = ctx.num_inputs() == 3 ? static_cast<int64_t>(ctx.ConstScalar(2)) : 0;
  IR_CHECK(ctx.Int("batch_dims", 0) == 0) << "batch_dims other than 0 is not supported";
  return {ctx.Op("gather", {ctx.input(0), ctx.input(1)}, {{"axis", std::to_string(axis)}})};
}

/*! \brief BroadcastArgs(s0, s1): the broadcast shape of two known shapes, as a constant. */
Outputs ConvertBroadcastArgs(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  std::vector<int64_t> a = ctx.ConstInts(0), b = ctx.ConstInts(1);
  if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
  if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    IR_CHECK(a[i] == b[i] || a[i] == 1 || b[i] == 1)
        << "shapes " << Shape(ctx.ConstInts(0)) << " and " << Shape(ctx.ConstInts(1)) << " do not broadcast";
    out[i] = a[i] == 1 ? b[i] : a[i];
  }
  Shape shape{static_cast<int64_t>(out.size())};
  if (ctx.HasAttr("T") && ctx.Type("T") == DType::kInt64) return {ctx.Constant(NDArray::FromVector(shape, out))};
  return {ctx.Constant(NDArray::FromVector(shape, std::vector<int32_t>(out.begin(), out.end())))};
}

/*! \brief ResourceGather(resource, indices): rows of the variable (batch_dims 0). */
Outputs ConvertResourceGather(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  IR_CHECK(ctx.Int("batch_dims", 0) == 0) << "batch_dims other than 0 is not supported";
  return {ctx.Op("gather", {ctx.VariableInput(0), ctx.input(1)}, {{"axis", "0"}})};
}

/*!
 * \brief DepthToSpace / SpaceToDepth, NHWC with known H, W, C: as TF documents them, a reshape
 * to 6-D, the transpose (0, 1, 3, 2, 4, 5) and a reshape back to 4-D.
 */
Outputs ConvertSpaceDepth(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  IR_CHECK(ctx.Str("data_format", "NHWC") == "NHWC") << "only data_format NHWC is supported";
  int64_t b = ctx.Int("block_size");
  IR_CHECK(b >= 2) << "block_size must be at least 2, got " << b;
  Shape s = ctx.InputShape(0);
  IR_CHECK(s.rank_known() && s.ndim() == 4 && s[1] >= 0 && s[2] >= 0 && s[3] >= 0)
      << "input must be 4-D NHWC with known height, width and depth, got " << s;
  int64_t h = s[1], w = s[2], c = s[3];
  std::vector<int64_t> split, merged;
  if (ctx.op() == "DepthToSpace") {
    IR_CHECK(c % (b * b) == 0) << "input depth " << c << " must be divisible by block_size^2 = " << b * b;
    split = {-1, h, w, b, b, c / (b * b)};
    merged = {-1, h * b, w * b, c / (b * b)};
  } else {
    IR_CHECK(h % b == 0 && w % b == 0) << "height and width of " << s << " must be divisible by block_size " << b;
    split = {-1, h / b, b, w / b, b, c};
    merged = {-1, h / b, w / b, b * b * c};
  }
  NodeEntry x = ctx.Op("reshape", {ctx.input(0)}, {{"shape", IntsAttr(split)}}, "split");
  x = ctx.Op("transpose", {x}, {{"axes", "(0,1,3,2,4,5)"}}, "transpose");
  return {ctx.Op("reshape", {x}, {{"shape", IntsAttr(merged)}})};
}

/*!
 * \brief MatrixBandPart(input, num_lower, num_upper): input where (num_lower < 0 || i - j <=
 * num_lower) && (num_upper < 0 || j - i <= num_upper) over the last two axes (known sizes).
 */
Outputs ConvertMatrixBandPart(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  Shape s = ctx.InputShape(0);
  IR_CHECK(s.rank_known() && s.ndim() >= 2 && s[s.ndim() - 2] >= 0 && s[s.ndim() - 1] >= 0)
      << "input must have rank >= 2 and known last two dimensions, got " << s;
  int64_t m = s[s.ndim() - 2], n = s[s.ndim() - 1];
  int64_t lower = static_cast<int64_t>(ctx.ConstScalar(1)), upper = static_cast<int64_t>(ctx.ConstScalar(2));
  IR_CHECK(lower <= m) << "num_lower must be negative or less or equal to number of rows (" << m << ") got: " << lower;
  IR_CHECK(upper <= n) << "num_upper must be negative or less or equal to number of columns (" << n
                       << ") got: " << upper;
  IR_CHECK(m * n <= ctx.max_const_bytes()) << "the band mask of " << s << " is larger than the constant limit";
  NDArray band(Shape{m, n}, DType::kBool);
  bool* keep = band.data<bool>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) keep[i * n + j] = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
  }
  NodeEntry mask = ctx.Constant(band, "band");
  NodeEntry x = ctx.input(0);
  return {ctx.Op("where", {mask, x, ctx.Op("zeros_like", {x}, {}, "zeros")})};
}

/*! \brief A constant [M, 2] paddings/crops input flattened, checked against M block dimensions. */
std::string Pairs(const ImportContext& ctx, size_t i, size_t m, const char* what) {
  std::vector<int64_t> v = ctx.ConstInts(i);
  IR_CHECK(v.size() == 2 * m) << what << " " << IntsAttr(v) << " must have shape [" << m << ", 2]";
  return IntsAttr(v);
}

/*! \brief SpaceToBatchND / BatchToSpaceND (input, block_shape, paddings or crops). */
Converter SpaceBatchND(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(3);
    std::vector<int64_t> block = ctx.ConstInts(1);
    return {ctx.Op(op, {ctx.input(0)},
                   {{"block_shape", IntsAttr(block)}, {"paddings", Pairs(ctx, 2, block.size(), "paddings/crops")}})};
  };
}

/*! \brief SpaceToBatch / BatchToSpace (input, paddings or crops) with attribute block_size over 2 dimensions. */
Converter SpaceBatch(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    int64_t b = ctx.Int("block_size");
    IR_CHECK(b >= 2) << "attribute 'block_size' " << b << " must be greater than one";
    return {ctx.Op(op, {ctx.input(0)},
                   {{"block_shape", IntsAttr({b, b})}, {"paddings", Pairs(ctx, 1, 2, "paddings/crops")}})};
  };
}

/*! \brief MirrorPad / MirrorPadGrad (input, paddings) with attribute mode. */
Converter MirrorPad(const char* op) {
  return [op](ImportContext& ctx) -> Outputs {
    ctx.ExpectInputs(2);
    return {ctx.Op(op, {ctx.input(0)}, {{"paddings", IntsAttr(ctx.ConstInts(1))}, {"mode", ctx.Str("mode")}})};
  };
}

}  // namespace

IR_TF_CONVERTER({"Reshape"}, ConvertReshape);
IR_TF_CONVERTER({"Shape"}, ConvertShape);
IR_TF_CONVERTER({"ShapeN"}, ConvertShapeN);
IR_TF_CONVERTER({"Size"}, ConvertSize);
IR_TF_CONVERTER({"Rank"}, ConvertRank);
IR_TF_CONVERTER({"Fill"}, ConvertFill);
IR_TF_CONVERTER({"ZerosLike"}, [](ImportContext& ctx) -> Outputs { return {ctx.Op("zeros_like", {ctx.input(0)})}; });
IR_TF_CONVERTER({"OnesLike"}, [](ImportContext& ctx) -> Outputs { return {ctx.Op("ones_like", {ctx.input(0)})}; });
IR_TF_CONVERTER({"Tile"}, ConvertTile);
IR_TF_CONVERTER({"ConcatV2"}, ConvertConcatV2);
IR_TF_CONVERTER({"Concat"}, ConvertConcat);
IR_TF_CONVERTER({"ConcatOffset"}, ConvertConcatOffset);
IR_TF_CONVERTER({"Pack"}, ConvertPack);
IR_TF_CONVERTER({"Unpack"}, ConvertUnpack);
IR_TF_CONVERTER({"Split"}, ConvertSplit);
IR_TF_CONVERTER({"SplitV"}, ConvertSplitV);
IR_TF_CONVERTER({"Slice"}, ConvertSlice);
IR_TF_CONVERTER({"StridedSlice"}, ConvertStridedSlice);
IR_TF_CONVERTER({"ExpandDims"}, ConvertExpandDims);
IR_TF_CONVERTER({"Squeeze"}, ConvertSqueeze);
IR_TF_CONVERTER({"Transpose"}, ConvertTranspose);
IR_TF_CONVERTER({"Range"}, ConvertRange);
IR_TF_CONVERTER({"BroadcastTo"}, ConvertBroadcastTo);
IR_TF_CONVERTER({"Pad", "PadV2"}, ConvertPad);
IR_TF_CONVERTER({"OneHot"}, ConvertOneHot);
IR_TF_CONVERTER({"Gather", "GatherV2"}, ConvertGather);

IR_TF_CONVERTER({"BroadcastArgs"}, ConvertBroadcastArgs);
IR_TF_CONVERTER({"ResourceGather"}, ConvertResourceGather);
IR_TF_CONVERTER({"DepthToSpace", "SpaceToDepth"}, ConvertSpaceDepth);
IR_TF_CONVERTER({"MatrixBandPart"}, ConvertMatrixBandPart);
IR_TF_CONVERTER({"SpaceToBatchND"}, SpaceBatchND("space_to_batch_nd"));
IR_TF_CONVERTER({"BatchToSpaceND"}, SpaceBatchND("batch_to_space_nd"));
IR_TF_CONVERTER({"SpaceToBatch"}, SpaceBatch("space_to_batch_nd"));
IR_TF_CONVERTER({"BatchToSpace"}, SpaceBatch("batch_to_space_nd"));
IR_TF_CONVERTER({"MirrorPad"}, MirrorPad("mirror_pad"));
IR_TF_CONVERTER({"MirrorPadGrad"}, MirrorPad("mirror_pad_grad"));

}  // namespace tf
}  // namespace ir
