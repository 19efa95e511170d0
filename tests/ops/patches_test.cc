// extract_image_patches and extract_image_patches_grad against a direct reference; their
// gradients against finite differences; clear errors for bad attributes and shapes.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief A window over an NHWC [n, h, w, c] image. */
struct PatchCase {
  int64_t n, h, w, c, kh, kw, sh, sw, rh, rw;
  std::string padding;
  std::array<int64_t, 4> pads;  // top, bottom, left, right (EXPLICIT only)

  Attrs attrs() const {
    Attrs a = {{"ksizes", StrCat("(", kh, ",", kw, ")")},
               {"strides", StrCat("(", sh, ",", sw, ")")},
               {"rates", StrCat("(", rh, ",", rw, ")")}};
    if (padding == "EXPLICIT") {
      a["pads"] = StrCat("(", pads[0], ",", pads[1], ",", pads[2], ",", pads[3], ")");
    } else {
      a["padding"] = padding;
    }
    return a;
  }
  Extent rows() const { return TfExtent(padding, h, (kh - 1) * rh + 1, sh, pads[0], pads[1]); }
  Extent cols() const { return TfExtent(padding, w, (kw - 1) * rw + 1, sw, pads[2], pads[3]); }
  Shape image() const { return Shape{n, h, w, c}; }
  Shape patches() const { return Shape{n, rows().out, cols().out, kh * kw * c}; }

  /*! \brief Calls f(patch index, image index) for every patch entry inside the image. */
  template <typename F>
  void ForEachEntry(const F& f) const {
    Extent r = rows(), q = cols();
    int64_t at = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oy = 0; oy < r.out; ++oy)
        for (int64_t ox = 0; ox < q.out; ++ox)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              for (int64_t ch = 0; ch < c; ++ch, ++at) {
                int64_t y = oy * sh - r.pad_before + i * rh, x = ox * sw - q.pad_before + j * rw;
                if (y >= 0 && y < h && x >= 0 && x < w) f(at, ((b * h + y) * w + x) * c + ch);
              }
  }
};

std::vector<PatchCase> Cases() {
  return {{2, 5, 6, 3, 3, 2, 1, 1, 1, 1, "VALID", {}},
          {1, 6, 5, 2, 3, 3, 2, 2, 1, 1, "SAME", {}},
          {2, 7, 6, 1, 2, 3, 1, 2, 2, 1, "SAME", {}},
          {1, 5, 5, 2, 3, 2, 2, 1, 1, 2, "EXPLICIT", {1, 2, 0, 1}}};
}

TEST(PatchesTest, MatchReference) {
  for (const PatchCase& p : Cases()) {
    SCOPED_TRACE(p.attrs().at("ksizes") + " " + p.padding);
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      NDArray x = RandomArray(p.image(), dtype, 1), dy = RandomArray(p.patches(), dtype, 2);
      std::vector<double> xv = Values(x), dyv = Values(dy);
      std::vector<double> patches(p.patches().Size(), 0.0), dx(xv.size(), 0.0);
      p.ForEachEntry([&](int64_t at, int64_t cell) {
        patches[at] = xv[cell];
        dx[cell] += dyv[at];
      });
      ExpectNear(RunOp("extract_image_patches", p.attrs(), {x})[0], patches, 1e-6, 1e-6);
      ExpectNear(RunOp("extract_image_patches_grad", p.attrs(), {dy, x})[0], dx, 1e-5, 1e-5);
    }
  }
}

TEST(PatchesTest, GradientsMatchFiniteDifferences) {
  for (const PatchCase& p : Cases()) {
    SCOPED_TRACE(p.attrs().at("ksizes") + " " + p.padding);
    NDArray x = RandomArray(p.image(), DType::kFloat64, 3), dy = RandomArray(p.patches(), DType::kFloat64, 4);
    CheckGradient("extract_image_patches", p.attrs(), {x});
    GradCheckOptions only_dy;
    only_dy.inputs = {0};
    CheckGradient("extract_image_patches_grad", p.attrs(), {dy, x}, only_dy);
  }
}

TEST(PatchesTest, ShapesInferBothWays) {
  PatchCase p = Cases()[1];
  std::vector<Shape> in = {p.image()}, out;
  EXPECT_TRUE(InferShapes("extract_image_patches", p.attrs(), &in, &out));
  EXPECT_EQ(out[0], p.patches());
  std::vector<Shape> grad_in = {p.patches(), Shape{kUnknownDim, 6, 5, kUnknownDim}};
  EXPECT_TRUE(InferShapes("extract_image_patches_grad", p.attrs(), &grad_in, &out));
  EXPECT_EQ(out[0], p.image());
}

TEST(PatchesTest, BadAttributesAndShapesGiveClearErrors) {
  NDArray x = RandomArray(Shape{1, 4, 4, 2}, DType::kFloat32, 5);
  EXPECT_ERROR(RunOp("extract_image_patches", {}, {x}), "ksizes");
  EXPECT_ERROR(RunOp("extract_image_patches", {{"ksizes", "(1,2,2,2)"}}, {x}),
               "ksizes (1,2,2,2) must be 1 along the batch and channel dimensions");
  EXPECT_ERROR(RunOp("extract_image_patches", {{"ksizes", "2"}, {"rates", "0"}}, {x}), "rates (0) must be positive");
  EXPECT_ERROR(RunOp("extract_image_patches", {{"ksizes", "2"}, {"padding", "FULL"}}, {x}),
               "padding must be \"SAME\", \"VALID\" or \"EXPLICIT\", got \"FULL\"");
  EXPECT_ERROR(RunOp("extract_image_patches", {{"ksizes", "3"}, {"rates", "2"}}, {x}), "does not fit the height 4");
  EXPECT_ERROR(RunOp("extract_image_patches", {{"ksizes", "2"}}, {RandomArray(Shape{4, 4, 2}, DType::kFloat32, 6)}),
               "input 0 (x) has shape [4,4,2] but must be [?,?,?,?]");
  EXPECT_ERROR(
      RunOp("extract_image_patches_grad", {{"ksizes", "2"}}, {RandomArray(Shape{1, 3, 3, 4}, DType::kFloat32, 7), x}),
      "input 0 (dy) has shape [1,3,3,4] but must be [1,3,3,8]");
  EXPECT_ERROR(RunOp("extract_image_patches", {{"ksizes", "2"}}, {RandomArray(Shape{1, 4, 4, 2}, DType::kInt32, 8)}),
               "int32");
}

}  // namespace
}  // namespace test
}  // namespace ir
