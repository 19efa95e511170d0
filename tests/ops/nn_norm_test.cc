#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/op_kernel.h"
#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "ops/random_utils.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

// ---------------------------------------------------------------- dropout

TEST(DropoutTest, KeepsAboutKeepProbAndScalesTheRest) {
  NDArray x = RandomArray(Shape{40, 50}, DType::kFloat32, 1);
  std::vector<NDArray> out = RunOp("dropout", {{"keep_prob", "0.25"}}, {x});
  std::vector<double> xv = Values(x), y = Values(out[0]), mask = Values(out[1]);
  int kept = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    ASSERT_TRUE(mask[i] == 0 || mask[i] == 4) << "mask[" << i << "] = " << mask[i];
    kept += mask[i] != 0;
    EXPECT_FLOAT_EQ(y[i], xv[i] * mask[i]);
  }
  EXPECT_NEAR(kept / 2000.0, 0.25, 0.03);
}

TEST(DropoutTest, MaskDependsOnlyOnTheSeeds) {
  NDArray x = RandomArray(Shape{1000}, DType::kFloat64, 2);
  NDArray first = RunOp("dropout", {{"seed", "3"}}, {x})[1];
  ExpectNear(RunOp("dropout", {{"seed", "3"}}, {x})[1], first, 0, 0);
  std::vector<double> a = Values(first), b = Values(RunOp("dropout", {{"seed", "4"}}, {x})[1]);
  EXPECT_NE(a, b);
}

TEST(DropoutTest, EachElementKeepsItsScalarDraw) {
  // The vectorized kernel must draw element i's uniform as random::UniformAt does (seeds
  // reproduce across versions); an odd size covers vector tails and the split across threads.
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    NDArray x = RandomArray(Shape{37, 1801}, dtype, 8);
    NodePtr node = Node::Create(Op::Get("dropout"), "drop", {{"keep_prob", "0.3"}, {"seed", "5"}},
                                {{Node::CreateVariable("x"), 0}});
    std::vector<NDArray> out = {NDArray(x.shape(), dtype), NDArray(x.shape(), dtype)};
    OpContext ctx;
    ctx.seed = 11;
    Op::GetAttr<FCompute>("FCompute")[node->op()](ctx, node->attrs, {x}, out);
    uint64_t key = op::random::CombineSeeds(11, 5);
    std::vector<double> xv = Values(x), y = Values(out[0]), mask = Values(out[1]);
    int64_t wrong = 0;
    for (size_t i = 0; i < xv.size(); ++i) {
      bool kept = dtype == DType::kFloat32 ? op::random::UniformAt<float>(key, i) < 0.3
                                           : op::random::UniformAt<double>(key, i) < 0.3;
      double m = kept ? (dtype == DType::kFloat32 ? static_cast<double>(static_cast<float>(1 / 0.3)) : 1 / 0.3) : 0;
      double expected =
          dtype == DType::kFloat32 ? static_cast<double>(static_cast<float>(xv[i]) * static_cast<float>(m)) : xv[i] * m;
      wrong += mask[i] != m || y[i] != expected;
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST(DropoutTest, IsTheIdentityOutsideTraining) {
  NDArray x = RandomArray(Shape{3, 4}, DType::kFloat32, 3);
  NodePtr node = Node::Create(Op::Get("dropout"), "drop", {{"keep_prob", "0.5"}}, {{Node::CreateVariable("x"), 0}});
  std::vector<NDArray> out = {NDArray(x.shape(), DType::kFloat32), NDArray(x.shape(), DType::kFloat32)};
  OpContext ctx;
  ctx.is_train = false;
  ctx.seed = 7;
  Op::GetAttr<FCompute>("FCompute")[node->op()](ctx, node->attrs, {x}, out);
  ExpectNear(out[0], x, 0, 0);
  ExpectNear(out[1], std::vector<double>(12, 1.0), 0, 0);
  // keep_prob 1 keeps everything even in training.
  ExpectNear(RunOp("dropout", {{"keep_prob", "1"}}, {x})[0], x, 0, 0);
}

TEST(DropoutTest, GradientIsOgradTimesMask) {
  // y = x * mask is linear in x for a fixed mask; evaluate the gradient in the same run as the
  // mask (a seeded op draws another mask in another graph).
  NodeEntry x{Node::CreateVariable("x"), 0}, og{Node::CreateVariable("og"), 0};
  NodeEntry y = MakeNode("dropout", "drop", {x}, {{"keep_prob", "0.6"}});
  NodeEntry mask{y.node, 1};
  std::vector<NodeEntry> grads =
      Op::GetAttr<FGradient>("FGradient")[y.node->op()](y.node, {og, MakeNode("zeros_like", "zeros", {mask})});
  NDArray og_value = RandomArray(Shape{5, 6}, DType::kFloat64, 4);
  std::vector<NDArray> out = EvalGraph(
      {mask, grads[0]}, {{x.node.get(), RandomArray(Shape{5, 6}, DType::kFloat64, 5)}, {og.node.get(), og_value}});
  std::vector<double> expected = Values(og_value), m = Values(out[0]);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] *= m[i];
  ExpectNear(out[1], expected, 0, 0);
  // With every element kept the mask is fixed, so finite differences apply.
  CheckGradient("dropout", {{"keep_prob", "1"}}, {RandomArray(Shape{5, 6}, DType::kFloat64, 6)});
}

TEST(DropoutTest, ReportsBadKeepProb) {
  NDArray x = RandomArray(Shape{2}, DType::kFloat32, 5);
  EXPECT_ERROR(RunOp("dropout", {{"keep_prob", "0"}}, {x}),
               "node 'dropout' (op dropout): keep_prob 0 must be in (0, 1]");
  EXPECT_ERROR(RunOp("dropout", {{"keep_prob", "1.5"}}, {x}), "keep_prob 1.5 must be in (0, 1]");
}

// ---------------------------------------------------------------- batch norm

/*! \brief Channel of flat element i of a 4-D activation. */
int64_t ChannelOf(const Shape& shape, const std::string& format, int64_t i) {
  return format == "NHWC" ? i % shape[3] : (i / (shape[2] * shape[3])) % shape[1];
}

struct BatchNormReference {
  std::vector<double> y, mean, variance;  // variance: biased
};

/*! \brief TensorFlow FusedBatchNorm by plain loops, with the given statistics or (when empty) the batch's. */
BatchNormReference ReferenceBatchNorm(const NDArray& x, const std::string& format, const std::vector<double>& gamma,
                                      const std::vector<double>& beta, std::vector<double> mean,
                                      std::vector<double> variance, double epsilon) {
  std::vector<double> xv = Values(x);
  size_t channels = gamma.size();
  double count = static_cast<double>(xv.size() / channels);
  if (mean.empty()) {
    mean.assign(channels, 0);
    variance.assign(channels, 0);
    for (size_t i = 0; i < xv.size(); ++i) mean[ChannelOf(x.shape(), format, i)] += xv[i] / count;
    for (size_t i = 0; i < xv.size(); ++i) {
      int64_t c = ChannelOf(x.shape(), format, i);
      variance[c] += (xv[i] - mean[c]) * (xv[i] - mean[c]) / count;
    }
  }
  BatchNormReference r{{}, mean, variance};
  for (size_t i = 0; i < xv.size(); ++i) {
    int64_t c = ChannelOf(x.shape(), format, i);
    r.y.push_back(gamma[c] * (xv[i] - mean[c]) / std::sqrt(variance[c] + epsilon) + beta[c]);
  }
  return r;
}

Shape InputShape(const std::string& format) { return format == "NHWC" ? Shape{2, 3, 4, 5} : Shape{2, 5, 3, 4}; }

TEST(BatchNormTest, TrainingNormalizesWithBatchStatistics) {
  for (const std::string format : {"NHWC", "NCHW"}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      SCOPED_TRACE(format + " " + DTypeName(dtype));
      NDArray x = RandomArray(InputShape(format), dtype, 1, -2, 3);
      NDArray gamma = RandomArray(Shape{5}, dtype, 2, 0.5, 2), beta = RandomArray(Shape{5}, dtype, 3);
      // TensorFlow passes empty mean and variance when training.
      NDArray empty(Shape{0}, dtype);
      std::vector<NDArray> out =
          RunOp("batch_norm", {{"data_format", format}, {"epsilon", "0.01"}}, {x, gamma, beta, empty, empty});
      BatchNormReference r = ReferenceBatchNorm(x, format, Values(gamma), Values(beta), {}, {}, 0.01);
      double tol = dtype == DType::kFloat32 ? 1e-5 : 1e-12;
      ExpectNear(out[0], r.y, tol, tol);
      ExpectNear(out[1], r.mean, tol, tol);
      // batch_variance is the unbiased estimate (TensorFlow's running-variance input): n / (n - 1) = 24 / 23.
      for (double& v : r.variance) v *= 24.0 / 23.0;
      ExpectNear(out[2], r.variance, tol, tol);
    }
  }
}

TEST(BatchNormTest, InferenceUsesTheGivenStatistics) {
  for (const std::string format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    NDArray x = RandomArray(InputShape(format), DType::kFloat32, 4);
    NDArray gamma = RandomArray(Shape{5}, DType::kFloat32, 5), beta = RandomArray(Shape{5}, DType::kFloat32, 6);
    NDArray mean = RandomArray(Shape{5}, DType::kFloat32, 7),
            variance = RandomArray(Shape{5}, DType::kFloat32, 8, 0.5, 2);
    std::vector<NDArray> out =
        RunOp("batch_norm", {{"data_format", format}, {"is_training", "false"}}, {x, gamma, beta, mean, variance});
    BatchNormReference r =
        ReferenceBatchNorm(x, format, Values(gamma), Values(beta), Values(mean), Values(variance), 1e-3);
    ExpectNear(out[0], r.y, 1e-5, 1e-5);
    ExpectNear(out[1], mean, 0, 0);
    ExpectNear(out[2], variance, 0, 0);
  }
}

TEST(BatchNormTest, GradientsMatchFiniteDifferences) {
  for (const std::string format : {"NHWC", "NCHW"}) {
    for (const char* training : {"true", "false"}) {
      SCOPED_TRACE(format + " training " + training);
      Shape shape = format == "NHWC" ? Shape{2, 2, 3, 3} : Shape{2, 3, 2, 3};
      NDArray x = RandomArray(shape, DType::kFloat64, 9, -2, 2);
      NDArray gamma = RandomArray(Shape{3}, DType::kFloat64, 10, 0.5, 2),
              beta = RandomArray(Shape{3}, DType::kFloat64, 11);
      NDArray mean = RandomArray(Shape{3}, DType::kFloat64, 12),
              variance = RandomArray(Shape{3}, DType::kFloat64, 13, 0.5, 2);
      // Every output is weighted, so batch_mean and batch_variance contribute to x's gradient too.
      CheckGradient("batch_norm", {{"data_format", format}, {"is_training", training}},
                    {x, gamma, beta, mean, variance}, GradCheckOptions{1e-6, 1e-6, 1e-4, {0, 1, 2}, 48});
    }
  }
}

TEST(BatchNormTest, InfersPerChannelShapes) {
  std::vector<Shape> in = {Shape{kUnknownDim, 8, 8, 16}, Shape(), Shape(), Shape{0}, Shape{0}}, out;
  EXPECT_FALSE(InferShapes("batch_norm", {}, &in, &out));
  EXPECT_EQ(in[1], (Shape{16}));
  EXPECT_EQ(in[3], (Shape{0}));
  EXPECT_EQ(out[0], (Shape{kUnknownDim, 8, 8, 16}));
  EXPECT_EQ(out[2], (Shape{16}));
  // The channel count reaches x's channel axis from gamma; empty statistics are for training only.
  in = {Shape{2, kUnknownDim, 4, 4}, Shape{6}, Shape(), Shape(), Shape()};
  EXPECT_TRUE(InferShapes("batch_norm", {{"data_format", "NCHW"}, {"is_training", "false"}}, &in, &out));
  EXPECT_EQ(in[0], (Shape{2, 6, 4, 4}));
  EXPECT_EQ(in[4], (Shape{6}));
  in = {Shape{2, 6}, Shape{6}, Shape{6}, Shape{0}, Shape{6}};
  EXPECT_ERROR(InferShapes("batch_norm", {{"is_training", "false"}}, &in, &out),
               "input 3 (mean) has shape [0] but must be [6]");
}

TEST(BatchNormTest, ReportsBadShapesAndAttributes) {
  NDArray x = RandomArray(Shape{2, 3, 3, 5}, DType::kFloat32, 1), c4 = RandomArray(Shape{4}, DType::kFloat32, 2);
  NDArray c5 = RandomArray(Shape{5}, DType::kFloat32, 3);
  EXPECT_ERROR(RunOp("batch_norm", {}, {x, c4, c5, c5, c5}),
               "node 'batch_norm' (op batch_norm): input 1 (gamma) has shape [4] but must be [5]");
  EXPECT_ERROR(RunOp("batch_norm", {}, {c5, c5, c5, c5, c5}), "input 0 (x) has shape [5] but must have rank 2 or more");
  EXPECT_ERROR(RunOp("batch_norm", {{"data_format", "NC"}}, {x, c5, c5, c5, c5}),
               "data_format must be \"NHWC\" or \"NCHW\", got \"NC\"");
}

}  // namespace
}  // namespace test
}  // namespace ir
