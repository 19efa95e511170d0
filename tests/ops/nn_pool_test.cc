#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief A pooling: input (n, c, h, w) in `format`, a kh x kw window, strides and padding. */
struct PoolCase {
  std::string format;
  int64_t n, c, h, w, kh, kw, sh, sw;
  std::string padding;
  std::array<int64_t, 4> pads;  // top, bottom, left, right (EXPLICIT only)

  Attrs attrs() const {
    Attrs a = {{"data_format", format},
               {"ksize", "(" + std::to_string(kh) + "," + std::to_string(kw) + ")"},
               {"strides", "(" + std::to_string(sh) + "," + std::to_string(sw) + ")"},
               {"padding", padding}};
    if (padding == "EXPLICIT") {
      a["pads"] = "(" + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," + std::to_string(pads[2]) + "," +
                  std::to_string(pads[3]) + ")";
    }
    return a;
  }
  Extent rows() const { return TfExtent(padding, h, kh, sh, pads[0], pads[1]); }
  Extent cols() const { return TfExtent(padding, w, kw, sw, pads[2], pads[3]); }
  Activation input() const { return {format, n, c, h, w}; }
  Activation output() const { return {format, n, c, rows().out, cols().out}; }

  /*! \brief Calls f(output index, input indices of the window's cells inside the input, in row-major order). */
  template <typename F>
  void ForEachWindow(const F& f) const {
    Activation x = input(), y = output();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t oh = 0; oh < y.h; ++oh)
          for (int64_t ow = 0; ow < y.w; ++ow) {
            std::vector<int64_t> cells;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t ih = oh * sh - rows().pad_before + i, iw = ow * sw - cols().pad_before + j;
                if (ih >= 0 && ih < h && iw >= 0 && iw < w) cells.push_back(x.Index(b, ch, ih, iw));
              }
            f(y.Index(b, ch, oh, ow), cells);
          }
  }
};

std::vector<PoolCase> Cases() {
  std::vector<PoolCase> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    cases.push_back({format, 2, 3, 5, 6, 2, 2, 2, 2, "VALID", {}});
    cases.push_back({format, 1, 2, 5, 5, 3, 3, 2, 2, "SAME", {}});
    cases.push_back({format, 2, 2, 6, 5, 3, 2, 1, 1, "SAME", {}});
    cases.push_back({format, 1, 3, 5, 6, 3, 3, 2, 1, "EXPLICIT", {1, 2, 0, 1}});
    // Channel counts past one vector of floats (16) or doubles (8), with a scalar tail.
    cases.push_back({format, 2, 19, 7, 6, 3, 2, 2, 1, "SAME", {}});
    cases.push_back({format, 1, 35, 5, 5, 2, 2, 2, 2, "VALID", {}});
  }
  return cases;
}

std::string Describe(const PoolCase& c) {
  return StrCat(c.format, " ", c.padding, " input ", c.input().shape(), " ksize ", c.kh, ",", c.kw, " strides ", c.sh,
                ",", c.sw);
}

double Tolerance(DType dtype) { return dtype == DType::kFloat32 ? 1e-5 : 1e-12; }

/*! \brief The first cell holding the window's maximum (TensorFlow's tie rule). */
int64_t FirstMax(const std::vector<double>& x, const std::vector<int64_t>& cells) {
  int64_t best = cells[0];
  for (int64_t cell : cells) best = x[cell] > x[best] ? cell : best;
  return best;
}

TEST(PoolTest, ForwardMatchesReferenceLoops) {
  for (const PoolCase& c : Cases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      SCOPED_TRACE(Describe(c) + " " + DTypeName(dtype));
      NDArray x = RandomArray(c.input().shape(), dtype, 1);
      std::vector<double> xv = Values(x), max(c.output().shape().Size()), avg(max.size());
      c.ForEachWindow([&](int64_t out, const std::vector<int64_t>& cells) {
        max[out] = xv[FirstMax(xv, cells)];
        for (int64_t cell : cells) avg[out] += xv[cell] / static_cast<double>(cells.size());
      });
      NDArray y = RunOp("max_pool2d", c.attrs(), {x})[0];
      EXPECT_EQ(y.shape(), c.output().shape());
      ExpectNear(y, max, Tolerance(dtype), Tolerance(dtype));
      ExpectNear(RunOp("avg_pool2d", c.attrs(), {x})[0], avg, Tolerance(dtype), Tolerance(dtype));
    }
  }
}

TEST(PoolTest, BackwardOpsMatchReferenceLoops) {
  for (const PoolCase& c : Cases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      SCOPED_TRACE(Describe(c) + " " + DTypeName(dtype));
      NDArray x = RandomArray(c.input().shape(), dtype, 2), dy = RandomArray(c.output().shape(), dtype, 3);
      std::vector<double> xv = Values(x), dyv = Values(dy), dmax(x.Size()), davg(x.Size());
      c.ForEachWindow([&](int64_t out, const std::vector<int64_t>& cells) {
        dmax[FirstMax(xv, cells)] += dyv[out];
        for (int64_t cell : cells) davg[cell] += dyv[out] / static_cast<double>(cells.size());
      });
      NDArray y = RunOp("max_pool2d", c.attrs(), {x})[0];
      ExpectNear(RunOp("max_pool2d_grad", c.attrs(), {x, y, dy})[0], dmax, Tolerance(dtype), Tolerance(dtype));
      ExpectNear(RunOp("avg_pool2d_grad", c.attrs(), {dy, x})[0], davg, Tolerance(dtype), Tolerance(dtype));
    }
  }
}

TEST(PoolTest, SameAveragePoolingDividesByRealCells) {
  NDArray x = NDArray::FromVector<float>(Shape{1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Attrs attrs = {{"ksize", "2"}, {"padding", "SAME"}};
  ExpectNear(RunOp("avg_pool2d", attrs, {x})[0], {3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9});
  ExpectNear(RunOp("max_pool2d", attrs, {x})[0], {5, 6, 6, 8, 9, 9, 8, 9, 9});
  // Each cell collects dy / (real cells) of every window that covers it.
  NDArray dy = NDArray::FromVector<float>(Shape{1, 3, 3, 1}, {4, 4, 2, 4, 4, 2, 2, 2, 1});
  ExpectNear(RunOp("avg_pool2d_grad", attrs, {dy, x})[0], {1, 2, 2, 2, 4, 4, 2, 4, 4});
}

TEST(PoolTest, MaxGradientGoesToTheFirstOfTiedMaxima) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    NDArray x = RandomArray(Shape{1, 2, 2, 1}, dtype, 0, 1, 1);  // all ones
    NDArray dy = RandomArray(Shape{1, 1, 1, 1}, dtype, 0, 3, 3);
    NDArray y = RunOp("max_pool2d", {{"ksize", "2"}}, {x})[0];
    ExpectNear(RunOp("max_pool2d_grad", {{"ksize", "2"}}, {x, y, dy})[0], {3, 0, 0, 0});
  }
}

NDArray FromValues(const Shape& shape, DType dtype, const std::vector<double>& values) {
  NDArray a(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kFloat32) {
      a.data<float>()[i] = static_cast<float>(values[i]);
    } else {
      a.data<double>()[i] = values[i];
    }
  }
  return a;
}

TEST(PoolTest, MaxKeepsTheFirstOfTiesAndNaNRulesExactly) {
  // Few distinct values (many ties) and some NaNs: the first cell holding the maximum wins
  // (`>`: a NaN in a window's first cell stays, a later NaN never wins), forward and backward.
  for (const PoolCase& c : Cases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      if (c.format == "NCHW" && dtype == DType::kFloat32) continue;  // oneDNN's NaN rule
      SCOPED_TRACE(Describe(c) + " " + DTypeName(dtype));
      std::vector<double> xv = Values(RandomArray(c.input().shape(), DType::kFloat64, 6));
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = i % 11 == 3 ? std::nan("") : std::round(xv[i] * 2);
      std::vector<double> dyv = Values(RandomArray(c.output().shape(), DType::kFloat64, 7));
      for (double& d : dyv) d = std::round(d * 8);  // sums of integers are exact in float
      NDArray x = FromValues(c.input().shape(), dtype, xv), dy = FromValues(c.output().shape(), dtype, dyv);
      std::vector<double> max(dyv.size()), dmax(xv.size());
      c.ForEachWindow([&](int64_t out, const std::vector<int64_t>& cells) {
        max[out] = xv[FirstMax(xv, cells)];
        dmax[FirstMax(xv, cells)] += dyv[out];
      });
      NDArray y = RunOp("max_pool2d", c.attrs(), {x})[0];
      std::vector<double> yv = Values(y);
      for (size_t i = 0; i < max.size(); ++i) {
        ASSERT_TRUE(std::isnan(max[i]) ? std::isnan(yv[i]) : yv[i] == max[i]) << i << ": " << yv[i] << " vs " << max[i];
      }
      ExpectNear(RunOp("max_pool2d_grad", c.attrs(), {x, y, dy})[0], dmax, 0, 0);
    }
  }
}

TEST(PoolTest, GradientsMatchFiniteDifferences) {
  for (const PoolCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    NDArray x = RandomArray(c.input().shape(), DType::kFloat64, 4);
    CheckGradient("max_pool2d", c.attrs(), {x});
    CheckGradient("avg_pool2d", c.attrs(), {x});
    CheckGradient("avg_pool2d_grad", c.attrs(), {RandomArray(c.output().shape(), DType::kFloat64, 5), x},
                  GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  }
}

TEST(PoolTest, InfersShapesWithUnknownBatch) {
  std::vector<Shape> in = {Shape{kUnknownDim, 7, 7, 3}}, out;
  EXPECT_FALSE(InferShapes("max_pool2d", {{"ksize", "3"}, {"strides", "2"}, {"padding", "SAME"}}, &in, &out));
  EXPECT_EQ(out[0], (Shape{kUnknownDim, 4, 4, 3}));

  // max_pool2d_grad: x learns batch and channels from y; the result is shaped as x.
  in = {Shape(), Shape{2, 3, 4, 4}, Shape()};
  InferShapes("max_pool2d_grad", {{"ksize", "2"}, {"data_format", "NCHW"}}, &in, &out);
  EXPECT_EQ(out[0], (Shape{2, 3, kUnknownDim, kUnknownDim}));
  EXPECT_EQ(in[2], (Shape{2, 3, 4, 4}));

  in = {Shape{2, 3, 3, 5}, Shape{kUnknownDim, 6, 6, kUnknownDim}};
  EXPECT_TRUE(InferShapes("avg_pool2d_grad", {{"ksize", "2"}, {"strides", "2"}}, &in, &out));
  EXPECT_EQ(out[0], (Shape{2, 6, 6, 5}));
}

TEST(PoolTest, ReportsBadShapesAndAttributes) {
  NDArray x = RandomArray(Shape{1, 4, 4, 2}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("max_pool2d", {}, {x}), "ksize");
  EXPECT_ERROR(RunOp("max_pool2d", {{"ksize", "2"}, {"padding", "same"}}, {x}),
               "node 'max_pool2d' (op max_pool2d): padding must be \"SAME\", \"VALID\" or \"EXPLICIT\", got \"same\"");
  EXPECT_ERROR(RunOp("avg_pool2d", {{"ksize", "2"}, {"pads", "(2,0,0,0)"}}, {x}),
               "pads (2,0,0,0) must be smaller than the window (2)");
  EXPECT_ERROR(RunOp("max_pool2d", {{"ksize", "5"}}, {x}), "does not fit the height 4");
  EXPECT_ERROR(RunOp("avg_pool2d", {{"ksize", "2"}}, {RandomArray(Shape{4, 4, 2}, DType::kFloat32, 2)}),
               "input 0 (x) has shape [4,4,2] but must be [?,?,?,?]");
  EXPECT_ERROR(RunOp("avg_pool2d_grad", {{"ksize", "2"}}, {RandomArray(Shape{1, 2, 2, 2}, DType::kFloat32, 2), x}),
               "input 0 (dy) has shape [1,2,2,2] but must be [1,3,3,2]");
}

}  // namespace
}  // namespace test
}  // namespace ir
