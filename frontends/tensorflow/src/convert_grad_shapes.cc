/*!
 * \file convert_grad_shapes.cc
 * \brief Converters for the shape arithmetic of TensorFlow's gradient subgraphs:
 * BroadcastGradientArgs and DynamicStitch. Their inputs are shapes, known once the feeds'
 * shapes are, so they become constants; DynamicStitch of computed data becomes a gather.
 */
#include <algorithm>
#include <cstring>

#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*!
 * \brief The axes each operand of a broadcasting binary op was broadcast along (its gradient
 * sums over them), as TensorFlow's BCast computes them: an axis where an operand has extent 1
 * (or is missing) and the result does not, and axes where both operands have extent 1.
 */
Outputs ConvertBroadcastGradientArgs(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  std::vector<int64_t> s0 = ctx.ConstInts(0), s1 = ctx.ConstInts(1);
  size_t rank = std::max(s0.size(), s1.size());
  s0.insert(s0.begin(), rank - s0.size(), 1);
  s1.insert(s1.begin(), rank - s1.size(), 1);
  std::vector<int32_t> r0, r1;
  for (size_t i = 0; i < rank; ++i) {
    IR_CHECK(s0[i] == s1[i] || s0[i] == 1 || s1[i] == 1)
        << "shapes " << IntsAttr(ctx.ConstInts(0)) << " and " << IntsAttr(ctx.ConstInts(1)) << " do not broadcast";
    if (s0[i] == 1) r0.push_back(static_cast<int32_t>(i));
    if (s1[i] == 1) r1.push_back(static_cast<int32_t>(i));
  }
  auto vector = [](const std::vector<int32_t>& v) {
    return NDArray::FromVector<int32_t>(Shape{static_cast<int64_t>(v.size())}, v);
  };
  return {ctx.Constant(vector(r0), "r0"), ctx.Constant(vector(r1), "r1")};
}

/*! \brief The DynamicStitch inputs: N index tensors, then N data tensors. */
struct Stitch {
  std::vector<std::vector<int64_t>> indices;
  std::vector<Shape> index_shapes;
  int64_t rows = 0;
  /*! \brief For each output row, the row of the concatenated data it comes from (last write wins). */
  std::vector<int64_t> source;
};

Stitch ReadStitch(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() % 2 == 0 && ctx.num_inputs() > 0)
      << "needs N index and N data inputs, has " << ctx.num_inputs() << " input(s)";
  size_t n = ctx.num_inputs() / 2;
  ctx.ExpectListLength("N", n);
  Stitch s;
  int64_t max_index = -1;
  for (size_t m = 0; m < n; ++m) {
    s.indices.push_back(ctx.ConstInts(m));
    s.index_shapes.push_back(ctx.ConstInput(m).shape());
    for (int64_t v : s.indices.back()) {
      IR_CHECK(v >= 0 && v < (int64_t{1} << 31)) << "index " << v << " is out of range";
      max_index = std::max(max_index, v);
    }
  }
  s.rows = max_index + 1;
  s.source.assign(s.rows, -1);
  int64_t position = 0;
  for (const auto& list : s.indices) {
    for (int64_t v : list) s.source[v] = position++;
  }
  for (int64_t r = 0; r < s.rows; ++r) IR_CHECK(s.source[r] >= 0) << "no input provides output row " << r;
  return s;
}

/*! \brief Input m's data as rows [count, rest...] (rest: the data dims after the index dims). */
std::vector<int64_t> RowShape(const Shape& data, const Shape& index) {
  std::vector<int64_t> rows{-1};
  for (int d = index.ndim(); d < data.ndim(); ++d) rows.push_back(data[d]);
  return rows;
}

NDArray StitchConstants(const Stitch& s, const std::vector<NDArray>& data) {
  std::vector<int64_t> dims{s.rows};
  for (int d = s.index_shapes[0].ndim(); d < data[0].shape().ndim(); ++d) dims.push_back(data[0].shape()[d]);
  NDArray out{Shape(dims), data[0].dtype()};
  size_t row_bytes = s.rows == 0 ? 0 : out.nbytes() / s.rows;
  std::string all;
  for (const NDArray& d : data) {
    IR_CHECK(d.dtype() == out.dtype() && d.nbytes() % std::max<size_t>(row_bytes, 1) == 0)
        << "data inputs disagree in dtype or row shape";
    all.append(static_cast<const char*>(d.data()), d.nbytes());
  }
  for (int64_t r = 0; r < s.rows; ++r) {
    IR_CHECK((static_cast<size_t>(s.source[r]) + 1) * row_bytes <= all.size()) << "data has fewer rows than indices";
    std::memcpy(static_cast<char*>(out.data()) + r * row_bytes, all.data() + s.source[r] * row_bytes, row_bytes);
  }
  return out;
}

Outputs ConvertDynamicStitch(ImportContext& ctx) {
  Stitch s = ReadStitch(ctx);
  size_t n = s.indices.size();
  std::vector<NDArray> values;
  for (size_t m = 0; m < n; ++m) values.push_back(ctx.TryConstInput(n + m));
  bool all_known = std::all_of(values.begin(), values.end(), [](const NDArray& v) { return v.defined(); });
  if (all_known) return {ctx.Constant(StitchConstants(s, values))};
  std::vector<NodeEntry> rows;
  for (size_t m = 0; m < n; ++m) {
    std::vector<int64_t> shape = RowShape(ctx.InputShape(n + m), s.index_shapes[m]);
    rows.push_back(ctx.Op("reshape", {ctx.input(n + m)}, {{"shape", IntsAttr(shape)}}, "rows_" + std::to_string(m)));
  }
  NodeEntry all = rows.size() == 1 ? rows[0] : ctx.Op("concat", rows, {{"axis", "0"}}, "rows");
  NodeEntry order = ctx.Constant(NDArray::FromVector<int64_t>(Shape{s.rows}, s.source), "order");
  return {ctx.Op("gather", {all, order}, {{"axis", "0"}})};
}

}  // namespace

IR_TF_CONVERTER({"BroadcastGradientArgs"}, ConvertBroadcastGradientArgs);
IR_TF_CONVERTER({"DynamicStitch", "ParallelDynamicStitch"}, ConvertDynamicStitch);

}  // namespace tf
}  // namespace ir
