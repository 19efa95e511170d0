// Tests of the TensorFlow nn ops (depthwise conv, LRN, top_k, mirror_pad, space/batch, activations) against references
// written out here (and values from TensorFlow's documentation).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

NDArray F64(const Shape& shape, const std::vector<double>& v) { return NDArray::FromVector<double>(shape, v); }

NDArray F32(const NDArray& x) { return RunOp("cast", {{"dtype", "float32"}}, {x})[0]; }

TEST(NNExtraElemwiseTest, ValuesGradientsAndCodeGen) {
  NDArray x = F64(Shape{5}, {-2, -0.5, 0, 0.5, 3});
  ExpectNear(RunOp("elu", {}, {x})[0], {std::expm1(-2.0), std::expm1(-0.5), 0, 0.5, 3});
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  ExpectNear(RunOp("selu", {}, {x})[0],
             {scale * alpha * std::expm1(-2.0), scale * alpha * std::expm1(-0.5), 0, scale * 0.5, scale * 3});
  ExpectNear(RunOp("softsign", {}, {x})[0], {-2.0 / 3, -0.5 / 1.5, 0, 0.5 / 1.5, 0.75});
  NDArray r = RandomArray(Shape{3, 4}, DType::kFloat64, 3, -2, 2);
  for (const char* op : {"elu", "selu", "softsign"}) {
    CheckGradient(op, {}, {r});
    CheckCodeGen(op, {}, {r}, 1e-12);
  }
  NDArray dy = RandomArray(Shape{3, 4}, DType::kFloat64, 4);
  for (const char* op : {"elu_grad", "selu_grad"}) {
    CheckGradient(op, {}, {dy, r});
    CheckCodeGen(op, {}, {dy, r}, 1e-12);
  }
  EXPECT_ERROR(RunOp("elu", {}, {NDArray::FromVector<int32_t>(Shape{1}, {1})}), "input dtype int32 is not supported");
}

TEST(NNExtraElemwiseTest, FloatClassesAreBool) {
  double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  NDArray x = NDArray::FromVector<float>(Shape{5}, {1.f, float(inf), float(-inf), float(nan), -0.f});
  NDArray is_nan = RunOp("is_nan", {}, {x})[0], is_inf = RunOp("is_inf", {}, {x})[0];
  EXPECT_EQ(is_nan.dtype(), DType::kBool);
  ExpectNear(is_nan, {0, 0, 0, 1, 0});
  ExpectNear(is_inf, {0, 1, 1, 0, 0});
  ExpectNear(RunOp("is_finite", {}, {x})[0], {1, 0, 0, 0, 1});
  for (const char* op : {"is_nan", "is_inf", "is_finite"}) CheckCodeGen(op, {}, {x});
}

/*! \brief Depthwise convolution by its definition, NHWC, weight [KH, KW, C, M]. */
std::vector<double> DepthwiseReference(const NDArray& x, const NDArray& w, const std::string& padding, int64_t s,
                                       int64_t d, Shape* out_shape) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  int64_t n = xs[0], h = xs[1], wd = xs[2], c = xs[3], kh = ws[0], kw = ws[1], m = ws[3];
  Extent ey = TfExtent(padding, h, (kh - 1) * d + 1, s), ex = TfExtent(padding, wd, (kw - 1) * d + 1, s);
  *out_shape = Shape{n, ey.out, ex.out, c * m};
  std::vector<double> xv = Values(x), wv = Values(w), out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < ey.out; ++oy)
      for (int64_t ox = 0; ox < ex.out; ++ox)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t j = 0; j < m; ++j) {
            double sum = 0;
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = oy * s - ey.pad_before + ky * d, ix = ox * s - ex.pad_before + kx * d;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                sum += xv[((b * h + iy) * wd + ix) * c + ch] * wv[((ky * kw + kx) * c + ch) * m + j];
              }
            out.push_back(sum);
          }
  return out;
}

TEST(DepthwiseConvTest, MatchesDefinitionAndGradients) {
  NDArray x = RandomArray(Shape{2, 5, 6, 3}, DType::kFloat64, 1),
          w = RandomArray(Shape{3, 2, 3, 2}, DType::kFloat64, 2);
  struct Case {
    std::string padding;
    int64_t stride, dilation;
  };
  for (const Case& c : {Case{"SAME", 1, 1}, Case{"VALID", 1, 1}, Case{"SAME", 2, 1}, Case{"VALID", 1, 2}}) {
    Attrs a{{"padding", c.padding},
            {"strides", "(" + std::to_string(c.stride) + ")"},
            {"dilations", "(" + std::to_string(c.dilation) + ")"}};
    Shape shape;
    std::vector<double> expected = DepthwiseReference(x, w, c.padding, c.stride, c.dilation, &shape);
    NDArray y = RunOp("depthwise_conv2d", a, {x, w})[0];
    EXPECT_EQ(y.shape(), shape) << c.padding;
    ExpectNear(y, expected, 1e-12);
    ExpectNear(RunOp("depthwise_conv2d", a, {F32(x), F32(w)})[0], expected, 1e-5);
    if (c.stride == 1 && c.dilation == 1) continue;  // the gradients on the strided and dilated cases
    CheckGradient("depthwise_conv2d", a, {x, w});
    NDArray dy = RandomArray(shape, DType::kFloat64, 3);
    CheckGradient("depthwise_conv2d_backprop_input", a, {dy, w, x}, GradCheckOptions{1e-6, 1e-6, 1e-4, {0, 1}});
    CheckGradient("depthwise_conv2d_backprop_filter", a, {x, dy, w}, GradCheckOptions{1e-6, 1e-6, 1e-4, {0, 1}});
  }
  // NCHW gives the NHWC result transposed.
  Attrs nchw{{"padding", "SAME"}, {"data_format", "NCHW"}};
  NDArray xt = RunOp("transpose", {{"axes", "(0,3,1,2)"}}, {x})[0];
  NDArray yt = RunOp("depthwise_conv2d", nchw, {xt, w})[0];
  ExpectNear(RunOp("transpose", {{"axes", "(0,2,3,1)"}}, {yt})[0],
             RunOp("depthwise_conv2d", {{"padding", "SAME"}}, {x, w})[0], 1e-12);
  EXPECT_ERROR(RunOp("depthwise_conv2d", {}, {x, RandomArray(Shape{3, 2, 4, 2}, DType::kFloat64, 2)}),
               "data has 3 channels but the weight has 4 input channels");
  EXPECT_ERROR(RunOp("depthwise_conv2d", {{"strides", "(2)"}, {"dilations", "(2)"}}, {x, w}), "cannot both exceed 1");
}

TEST(LRNTest, MatchesDefinitionAndGradient) {
  NDArray x = RandomArray(Shape{2, 2, 3, 7}, DType::kFloat64, 5);
  Attrs a{{"depth_radius", "2"}, {"bias", "1.5"}, {"alpha", "0.3"}, {"beta", "0.75"}};
  std::vector<double> v = Values(x), expected;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t d = i % 7;
    double s = 0;
    for (int64_t k = std::max<int64_t>(0, d - 2); k <= std::min<int64_t>(6, d + 2); ++k)
      s += v[i - d + k] * v[i - d + k];
    expected.push_back(v[i] / std::pow(1.5 + 0.3 * s, 0.75));
  }
  ExpectNear(RunOp("lrn", a, {x})[0], expected, 1e-12);
  CheckGradient("lrn", a, {x});
  CheckGradient("lrn", {}, {x});  // TensorFlow's defaults
  EXPECT_ERROR(RunOp("lrn", {}, {RandomArray(Shape{2, 3}, DType::kFloat64, 1)}), "input 0");
}

TEST(TopKTest, LargestFirstTiesByIndexAndGradient) {
  NDArray x = NDArray::FromVector<float>(Shape{2, 5}, {1, 3, 3, -1, 2, 5, 4, 5, 5, 0});
  std::vector<NDArray> r = RunOp("top_k", {{"k", "3"}}, {x});
  ExpectNear(r[0], {3, 3, 2, 5, 5, 5});
  EXPECT_EQ(r[1].dtype(), DType::kInt32);
  ExpectNear(r[1], {1, 2, 4, 0, 2, 3});
  NDArray i = NDArray::FromVector<int32_t>(Shape{1, 4}, {7, -2, 9, 0});
  ExpectNear(RunOp("top_k", {{"k", "2"}}, {i})[0], {9, 7});
  CheckGradient("top_k", {{"k", "2"}}, {RandomArray(Shape{3, 4}, DType::kFloat64, 7)});
  EXPECT_ERROR(RunOp("top_k", {{"k", "6"}}, {x}), "must have at least k = 6 columns");
}

TEST(InTopKTest, FollowsTensorFlow) {
  double nan = std::nan("");
  NDArray p = NDArray::FromVector<float>(Shape{4, 3}, {0.1f, 0.8f, 0.1f, 0.3f, 0.3f, 0.4f, 1, float(nan), 0, 2, 2, 1});
  NDArray t = NDArray::FromVector<int32_t>(Shape{4}, {1, 0, 1, 2});
  ExpectNear(RunOp("in_top_k", {{"k", "1"}}, {p, t})[0], {1, 0, 0, 0});
  ExpectNear(RunOp("in_top_k", {{"k", "2"}}, {p, t})[0], {1, 1, 0, 0});
  NDArray t64 = NDArray::FromVector<int64_t>(Shape{4}, {2, 1, 0, 5});  // 5 is out of range
  ExpectNear(RunOp("in_top_k", {{"k", "3"}}, {p, t64})[0], {1, 1, 1, 0});
  EXPECT_ERROR(RunOp("in_top_k", {{"k", "1"}}, {p, NDArray::FromVector<int32_t>(Shape{2}, {0, 0})}),
               "must have the same batch size");
}

TEST(MirrorPadTest, TensorFlowExamplesAndGradient) {
  NDArray t = F64(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  NDArray reflect = RunOp("mirror_pad", {{"paddings", "(1,1,2,2)"}, {"mode", "REFLECT"}}, {t})[0];
  EXPECT_EQ(reflect.shape(), (Shape{4, 7}));
  ExpectNear(reflect, {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1});
  ExpectNear(RunOp("mirror_pad", {{"paddings", "(1,1,2,2)"}, {"mode", "SYMMETRIC"}}, {t})[0],
             {2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5});
  // MirrorPadGrad of ones counts how often each element is mirrored.
  NDArray ones = F64(Shape{4, 7}, std::vector<double>(28, 1));
  ExpectNear(RunOp("mirror_pad_grad", {{"paddings", "(1,1,2,2)"}, {"mode", "REFLECT"}}, {ones})[0], {4, 6, 4, 4, 6, 4});
  NDArray x = RandomArray(Shape{3, 4}, DType::kFloat64, 8);
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    CheckGradient("mirror_pad", {{"paddings", "(2,1,0,3)"}, {"mode", mode}}, {x});
  }
  EXPECT_ERROR(RunOp("mirror_pad", {{"paddings", "(2,0,0,0)"}, {"mode", "REFLECT"}}, {t}), "must be at most 1");
  EXPECT_ERROR(RunOp("mirror_pad", {{"paddings", "(1,1)"}, {"mode", "REFLECT"}}, {t}), "input 0");
  EXPECT_ERROR(RunOp("mirror_pad", {{"paddings", "(0,0,0,0)"}, {"mode", "EDGE"}}, {t}), "mode must be");
}

TEST(SpaceBatchTest, TensorFlowExamplesRoundTripAndGradients) {
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = i + 1;
  NDArray x = F64(Shape{1, 4, 4, 1}, v);
  NDArray b = RunOp("space_to_batch_nd", {{"block_shape", "(2,2)"}, {"paddings", "(0,0,0,0)"}}, {x})[0];
  EXPECT_EQ(b.shape(), (Shape{4, 2, 2, 1}));
  ExpectNear(b, {1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16});
  ExpectNear(RunOp("batch_to_space_nd", {{"block_shape", "(2,2)"}, {"paddings", "(0,0,0,0)"}}, {b})[0], x);
  // TensorFlow's example with padding: x [2, 2, 4, 1], paddings [[0, 0], [2, 0]].
  NDArray x2 = F64(Shape{2, 2, 4, 1}, v);
  Attrs pad{{"block_shape", "(2,2)"}, {"paddings", "(0,0,2,0)"}};
  NDArray b2 = RunOp("space_to_batch_nd", pad, {x2})[0];
  EXPECT_EQ(b2.shape(), (Shape{8, 1, 3, 1}));
  ExpectNear(b2, {0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16});
  ExpectNear(RunOp("batch_to_space_nd", pad, {b2})[0], x2);
  NDArray r = RandomArray(Shape{2, 3, 5, 2}, DType::kFloat64, 9);
  Attrs a{{"block_shape", "(2,3)"}, {"paddings", "(1,0,0,1)"}};
  CheckGradient("space_to_batch_nd", a, {r});
  NDArray rb = RunOp("space_to_batch_nd", a, {r})[0];
  CheckGradient("batch_to_space_nd", a, {rb});
  EXPECT_ERROR(RunOp("space_to_batch_nd", {{"block_shape", "(2,2)"}, {"paddings", "(0,0,0,1)"}}, {x}),
               "is not divisible by block 2");
  EXPECT_ERROR(RunOp("space_to_batch_nd", {{"block_shape", "(2)"}, {"paddings", "(0,0,0,1)"}}, {x}),
               "needs one (start, end) pair each");
}

}  // namespace
}  // namespace test
}  // namespace ir
