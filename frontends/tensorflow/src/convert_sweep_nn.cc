/*!
 * \file convert_sweep_nn.cc
 * \brief Converters composed of our ops for DepthToSpace/SpaceToDepth (reshape, transpose,
 * reshape), MatrixBandPart (a constant mask), FusedBatchNormGrad* (batch_norm_grad) and TF1's
 * Print (its input: nothing is printed).
 */
#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

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

/*!
 * \brief FusedBatchNormGrad*(dy, x, scale, reserve_1, reserve_2[, reserve_3]) -> (dx, dscale,
 * doffset, empty, empty): reserve_1/2 are the batch mean and variance in training (our
 * batch_norm_grad recomputes them from x), the population statistics otherwise.
 */
Outputs ConvertFusedBatchNormGrad(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() == 5 || ctx.num_inputs() == 6) << "needs 5 or 6 inputs, has " << ctx.num_inputs();
  NodeEntry zeros = ctx.Op("zeros_like", {ctx.input(3)}, {}, "zero_stat_grad");
  NodeEntry grad =
      ctx.Op("batch_norm_grad", {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), zeros, zeros},
             {{"epsilon", NumberAttr(ctx.Float("epsilon", 1e-4))},
              {"is_training", ctx.Bool("is_training", true) ? "true" : "false"},
              {"data_format", ctx.Str("data_format", "NHWC")}});
  NodeEntry empty = ctx.Constant(NDArray::FromVector(Shape{0}, std::vector<float>{}), "empty");
  return {{grad.node, 0}, {grad.node, 1}, {grad.node, 2}, empty, empty};
}

/*! \brief TF1 Print(input, data...) passes input through (we print nothing). */
Outputs ConvertPrint(ImportContext& ctx) {
  ctx.input(0);
  return {ctx.Op("identity", {ctx.input(0)})};
}

}  // namespace

IR_TF_CONVERTER({"DepthToSpace", "SpaceToDepth"}, ConvertSpaceDepth);
IR_TF_CONVERTER({"MatrixBandPart"}, ConvertMatrixBandPart);
IR_TF_CONVERTER({"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}, ConvertFusedBatchNormGrad);
IR_TF_CONVERTER({"Print"}, ConvertPrint);

}  // namespace tf
}  // namespace ir
