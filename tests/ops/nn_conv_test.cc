#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "ops/dnnl_utils.h"
#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief A convolution: data (n, c, h, w) in `format`, an HWIO kh x kw x c x o weight, window attributes. */
struct ConvCase {
  std::string format;
  int64_t n, c, h, w, kh, kw, o, sh, sw, dh, dw;
  std::string padding;
  std::array<int64_t, 4> pads;  // top, bottom, left, right (EXPLICIT only)

  Attrs attrs() const {
    Attrs a = {{"data_format", format},
               {"strides", "(" + std::to_string(sh) + "," + std::to_string(sw) + ")"},
               {"dilations", "(" + std::to_string(dh) + "," + std::to_string(dw) + ")"}};
    if (padding == "EXPLICIT") {
      // Explicit pads alone imply EXPLICIT padding.
      a["pads"] = "(" + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," + std::to_string(pads[2]) + "," +
                  std::to_string(pads[3]) + ")";
    } else {
      a["padding"] = padding;
    }
    return a;
  }
  Extent rows() const { return TfExtent(padding, h, (kh - 1) * dh + 1, sh, pads[0], pads[1]); }
  Extent cols() const { return TfExtent(padding, w, (kw - 1) * dw + 1, sw, pads[2], pads[3]); }
  Activation data() const { return {format, n, c, h, w}; }
  Activation output() const { return {format, n, o, rows().out, cols().out}; }
  Shape weight_shape() const { return Shape{kh, kw, c, o}; }

  /*! \brief Calls f(data index, weight index, output index) for every product the convolution sums. */
  template <typename F>
  void ForEachTap(const F& f) const {
    Activation x = data(), y = output();
    Extent r = rows(), q = cols();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t oh = 0; oh < y.h; ++oh)
          for (int64_t ow = 0; ow < y.w; ++ow)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j)
                for (int64_t ic = 0; ic < c; ++ic) {
                  int64_t ih = oh * sh - r.pad_before + i * dh, iw = ow * sw - q.pad_before + j * dw;
                  if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                  f(x.Index(b, ic, ih, iw), ((i * kw + j) * c + ic) * o + oc, y.Index(b, oc, oh, ow));
                }
  }
};

std::vector<ConvCase> Cases() {
  std::vector<ConvCase> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    cases.push_back({format, 2, 3, 5, 6, 3, 2, 4, 1, 1, 1, 1, "VALID", {}});
    cases.push_back({format, 1, 2, 7, 6, 3, 3, 3, 2, 2, 1, 1, "SAME", {}});
    cases.push_back({format, 2, 3, 6, 5, 2, 3, 2, 2, 1, 1, 1, "EXPLICIT", {1, 0, 2, 1}});
    cases.push_back({format, 1, 2, 7, 7, 3, 2, 3, 1, 1, 2, 2, "SAME", {}});
    cases.push_back({format, 1, 3, 8, 7, 2, 2, 2, 2, 2, 2, 1, "VALID", {}});
  }
  return cases;
}

std::string Describe(const ConvCase& c) {
  return StrCat(c.format, " ", c.padding, " data ", c.data().shape(), " weight ", c.weight_shape(), " strides ", c.sh,
                ",", c.sw, " dilations ", c.dh, ",", c.dw);
}

TEST(Conv2DTest, ForwardMatchesReferenceLoops) {
  for (const ConvCase& c : Cases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      SCOPED_TRACE(Describe(c) + " " + DTypeName(dtype));
      NDArray x = RandomArray(c.data().shape(), dtype, 1), w = RandomArray(c.weight_shape(), dtype, 2);
      std::vector<double> xv = Values(x), wv = Values(w), expected(c.output().shape().Size(), 0.0);
      std::vector<double> magnitude(expected.size(), 0.0);
      c.ForEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
        expected[yi] += xv[xi] * wv[wi];
        magnitude[yi] += std::fabs(xv[xi] * wv[wi]);
      });
      NDArray y = RunOp("conv2d", c.attrs(), {x, w})[0];
      EXPECT_EQ(y.shape(), c.output().shape());
      ExpectWithinSumBound(y, expected, magnitude, c.kh * c.kw * c.c);
    }
  }
}

TEST(Conv2DTest, BackwardOpsMatchReferenceLoops) {
  for (const ConvCase& c : Cases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      SCOPED_TRACE(Describe(c) + " " + DTypeName(dtype));
      NDArray x = RandomArray(c.data().shape(), dtype, 3), w = RandomArray(c.weight_shape(), dtype, 4);
      NDArray dy = RandomArray(c.output().shape(), dtype, 5);
      std::vector<double> xv = Values(x), wv = Values(w), dyv = Values(dy);
      std::vector<double> dx(x.Size(), 0.0), dw(w.Size(), 0.0), dx_magnitude(dx.size(), 0.0),
          dw_magnitude(dw.size(), 0.0);
      c.ForEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
        dx[xi] += dyv[yi] * wv[wi];
        dw[wi] += xv[xi] * dyv[yi];
        dx_magnitude[xi] += std::fabs(dyv[yi] * wv[wi]);
        dw_magnitude[wi] += std::fabs(xv[xi] * dyv[yi]);
      });
      // dx sums over output positions and channels, dw over the batch and the output positions.
      ExpectWithinSumBound(RunOp("conv2d_backprop_input", c.attrs(), {dy, w, x})[0], dx, dx_magnitude,
                           c.kh * c.kw * c.o);
      ExpectWithinSumBound(RunOp("conv2d_backprop_filter", c.attrs(), {x, dy, w})[0], dw, dw_magnitude,
                           c.output().shape().Size() / c.o);
    }
  }
}

TEST(Conv2DTest, SamePaddingPutsTheOddCellAfter) {
  // 3x3 input, 2x2 ones kernel, stride 1: total padding 1, all of it below and to the right.
  NDArray x = NDArray::FromVector<float>(Shape{1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  NDArray w = NDArray::FromVector<float>(Shape{2, 2, 1, 1}, {1, 1, 1, 1});
  ExpectNear(RunOp("conv2d", {{"padding", "SAME"}}, {x, w})[0], {12, 16, 9, 24, 28, 15, 15, 17, 9});
  // TensorFlow's 4-value strides in NHWC order mean the same as (2, 2).
  ExpectNear(RunOp("conv2d", {{"padding", "SAME"}, {"strides", "(1,2,2,1)"}}, {x, w})[0], {12, 9, 15, 9});
}

TEST(Conv2DTest, GradientsMatchFiniteDifferences) {
  std::vector<ConvCase> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    cases.push_back({format, 1, 2, 4, 5, 3, 2, 2, 2, 2, 1, 1, "SAME", {}});
    cases.push_back({format, 2, 2, 5, 4, 2, 2, 3, 1, 1, 1, 1, "EXPLICIT", {1, 0, 0, 1}});
    cases.push_back({format, 1, 2, 5, 5, 3, 3, 2, 2, 1, 1, 2, "SAME", {}});
  }
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(Describe(c));
    NDArray x = RandomArray(c.data().shape(), DType::kFloat64, 6),
            w = RandomArray(c.weight_shape(), DType::kFloat64, 7);
    NDArray dy = RandomArray(c.output().shape(), DType::kFloat64, 8);
    CheckGradient("conv2d", c.attrs(), {x, w});
    CheckGradient("conv2d_backprop_input", c.attrs(), {dy, w, x});
    CheckGradient("conv2d_backprop_filter", c.attrs(), {x, dy, w});
  }
}

TEST(Conv2DTest, ReusesCachedPrimitivesForOneGeometry) {
  ConvCase c{"NHWC", 1, 3, 9, 9, 3, 3, 5, 2, 2, 1, 1, "SAME", {}};
  NDArray x = RandomArray(c.data().shape(), DType::kFloat32, 1), w = RandomArray(c.weight_shape(), DType::kFloat32, 2);
  auto& cache = op::dnnl_utils::PrimitiveCache::Global();
  RunOp("conv2d", c.attrs(), {x, w});
  size_t created = cache.num_created();
  RunOp("conv2d", c.attrs(), {x, w});
  EXPECT_EQ(cache.num_created(), created);
  // Another batch size is another geometry (a primitive and a weight reorder), cached in turn.
  NDArray x2 = RandomArray(Shape{2, 9, 9, 3}, DType::kFloat32, 3);
  RunOp("conv2d", c.attrs(), {x2, w});
  size_t created2 = cache.num_created();
  EXPECT_GT(created2, created);
  RunOp("conv2d", c.attrs(), {x2, w});
  EXPECT_EQ(cache.num_created(), created2);
}

TEST(Conv2DTest, InfersShapesWithUnknownBatch) {
  std::vector<Shape> in = {Shape{kUnknownDim, 5, 5, 3}, Shape{3, 3, 3, 8}}, out;
  EXPECT_FALSE(InferShapes("conv2d", {{"padding", "SAME"}, {"strides", "2"}}, &in, &out));
  EXPECT_EQ(out[0], (Shape{kUnknownDim, 3, 3, 8}));

  // Unknown data: rank 4 with the weight's input channels; the output knows its channels.
  in = {Shape(), Shape{3, 3, 4, 8}};
  InferShapes("conv2d", {{"data_format", "NCHW"}}, &in, &out);
  EXPECT_EQ(in[0], (Shape{kUnknownDim, 4, kUnknownDim, kUnknownDim}));
  EXPECT_EQ(out[0], (Shape{kUnknownDim, 8, kUnknownDim, kUnknownDim}));

  // Backward ops: the result has the shape of `like`; dy's batch reaches it.
  in = {Shape{2, 3, 3, 8}, Shape{3, 3, 4, 8}, Shape{kUnknownDim, 5, 5, 4}};
  EXPECT_TRUE(InferShapes("conv2d_backprop_input", {{"padding", "SAME"}, {"strides", "2"}}, &in, &out));
  EXPECT_EQ(out[0], (Shape{2, 5, 5, 4}));
  in = {Shape{2, 5, 5, 4}, Shape{2, 3, 3, 8}, Shape()};
  InferShapes("conv2d_backprop_filter", {{"padding", "SAME"}, {"strides", "2"}}, &in, &out);
  EXPECT_EQ(out[0], (Shape{kUnknownDim, kUnknownDim, 4, 8}));
}

TEST(Conv2DTest, ReportsBadShapesAndAttributes) {
  NDArray x = RandomArray(Shape{1, 5, 5, 3}, DType::kFloat32, 1);
  NDArray w = RandomArray(Shape{3, 3, 4, 8}, DType::kFloat32, 2);
  EXPECT_ERROR(RunOp("conv2d", {}, {x, w}),
               "node 'conv2d' (op conv2d): data has 3 channels but the weight has 4 input channels (input 0 (data) "
               "[1,5,5,3] NHWC, input 1 (weight) [3,3,4,8] HWIO)");
  NDArray w3 = RandomArray(Shape{3, 3, 3, 2}, DType::kFloat32, 3);
  EXPECT_ERROR(RunOp("conv2d", {{"padding", "FULL"}}, {x, w3}),
               "node 'conv2d' (op conv2d): padding must be \"SAME\", \"VALID\" or \"EXPLICIT\", got \"FULL\"");
  EXPECT_ERROR(RunOp("conv2d", {{"data_format", "NWHC"}}, {x, w3}), "data_format must be \"NHWC\" or \"NCHW\"");
  EXPECT_ERROR(RunOp("conv2d", {{"strides", "(2,1,1,1)"}}, {x, w3}),
               "strides (2,1,1,1) must be 1 along the batch and channel dimensions");
  EXPECT_ERROR(RunOp("conv2d", {{"padding", "SAME"}, {"pads", "(1,1,1,1)"}}, {x, w3}),
               "padding \"SAME\" contradicts explicit pads (1,1,1,1)");
  EXPECT_ERROR(RunOp("conv2d", {{"pads", "(1,1)"}}, {x, w3}), "pads (1,1) must be (top, bottom, left, right)");
  EXPECT_ERROR(RunOp("conv2d", {{"dilations", "0"}}, {x, w3}), "dilations (0) must be positive");
  EXPECT_ERROR(RunOp("conv2d", {{"dilations", "3"}}, {x, w3}),
               "window of extent 7 (kernel 3, dilation 3) does not fit the height 5 padded by (0, 0)");
  EXPECT_ERROR(RunOp("conv2d", {}, {x, RandomArray(Shape{3, 3, 3}, DType::kFloat32, 4)}),
               "input 1 (weight) has shape [3,3,3] but must be [?,?,?,?]");
  EXPECT_ERROR(
      RunOp("conv2d", {},
            {RandomArray(Shape{1, 5, 5, 3}, DType::kInt32, 5), RandomArray(Shape{3, 3, 3, 2}, DType::kInt32, 6)}),
      "dtype int32 is not supported");
}

}  // namespace
}  // namespace test
}  // namespace ir
