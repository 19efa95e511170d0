#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief softmax (or log_softmax) of `x` of `shape` along `axis`, by plain loops. */
std::vector<double> ReferenceSoftmax(const std::vector<double>& x, const Shape& shape, int axis, bool log) {
  int64_t outer = shape.ProdDims(0, axis), n = shape[axis], inner = shape.ProdDims(axis + 1, shape.ndim());
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      auto at = [&](int64_t j) { return (o * n + j) * inner + k; };
      double total = 0;
      for (int64_t j = 0; j < n; ++j) total += std::exp(x[at(j)]);
      for (int64_t j = 0; j < n; ++j) y[at(j)] = log ? x[at(j)] - std::log(total) : std::exp(x[at(j)]) / total;
    }
  }
  return y;
}

TEST(SoftmaxTest, MatchesReferenceAlongEveryAxis) {
  Shape shape{3, 4, 5};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    NDArray x = RandomArray(shape, dtype, 1, -3, 3);
    double tol = dtype == DType::kFloat32 ? 1e-5 : 1e-12;
    for (int axis : {-1, 0, 1, 2}) {
      SCOPED_TRACE(StrCat(DTypeName(dtype), " axis ", axis));
      Attrs attrs = {{"axis", std::to_string(axis)}};
      int positive = axis < 0 ? axis + 3 : axis;
      ExpectNear(RunOp("softmax", attrs, {x})[0], ReferenceSoftmax(Values(x), shape, positive, false), tol, tol);
      ExpectNear(RunOp("log_softmax", attrs, {x})[0], ReferenceSoftmax(Values(x), shape, positive, true), tol, tol);
    }
  }
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  NDArray x = NDArray::FromVector<float>(Shape{1, 3}, {1000, 1001, 1002});
  double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  ExpectNear(RunOp("softmax", {}, {x})[0], {std::exp(-2.0) / z, std::exp(-1.0) / z, 1 / z}, 1e-6);
  ExpectNear(RunOp("log_softmax", {}, {x})[0], {-2 - std::log(z), -1 - std::log(z), -std::log(z)}, 1e-5);
}

TEST(SoftmaxTest, GradientsMatchFiniteDifferences) {
  NDArray x = RandomArray(Shape{2, 3, 4}, DType::kFloat64, 2, -2, 2);
  for (const char* op : {"softmax", "log_softmax"}) {
    for (const char* axis : {"-1", "1", "0"}) {
      SCOPED_TRACE(StrCat(op, " axis ", axis));
      CheckGradient(op, {{"axis", axis}}, {x});
    }
  }
}

TEST(SoftmaxTest, ReportsBadAxisAndDType) {
  EXPECT_ERROR(RunOp("softmax", {{"axis", "2"}}, {RandomArray(Shape{2, 3}, DType::kFloat32, 1)}),
               "node 'softmax' (op softmax): axis 2 is out of range for rank 2");
  EXPECT_ERROR(RunOp("log_softmax", {}, {RandomArray(Shape{2, 3}, DType::kInt32, 1)}), "dtype int32 is not supported");
}

/*! \brief Rows of positive weights that sum to one. */
NDArray Distributions(const Shape& shape, uint64_t seed) {
  NDArray p = RandomArray(shape, DType::kFloat64, seed, 0.1, 1);
  double* v = p.data<double>();
  for (int64_t i = 0; i < shape[0]; ++i) {
    double total = 0;
    for (int64_t j = 0; j < shape[1]; ++j) total += v[i * shape[1] + j];
    for (int64_t j = 0; j < shape[1]; ++j) v[i * shape[1] + j] /= total;
  }
  return p;
}

/*! \brief Expected (loss, backprop) for logits against label distributions. */
std::pair<std::vector<double>, std::vector<double>> ReferenceCrossEntropy(const NDArray& logits,
                                                                          const std::vector<double>& probs) {
  int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  std::vector<double> log_p = ReferenceSoftmax(Values(logits), logits.shape(), 1, true), loss(rows, 0.0), backprop;
  for (int64_t i = 0; i < rows * classes; ++i) {
    loss[i / classes] -= probs[i] * log_p[i];
    backprop.push_back(std::exp(log_p[i]) - probs[i]);
  }
  return {loss, backprop};
}

TEST(CrossEntropyTest, DenseLabelsMatchReference) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    NDArray logits = RandomArray(Shape{4, 5}, dtype, 3, -3, 3);
    NDArray labels = Distributions(Shape{4, 5}, 4);
    if (dtype == DType::kFloat32) labels = RunOp("cast", {{"dtype", "float32"}}, {labels})[0];
    auto expected = ReferenceCrossEntropy(logits, Values(labels));
    std::vector<NDArray> out = RunOp("softmax_cross_entropy_with_logits", {}, {logits, labels});
    double tol = dtype == DType::kFloat32 ? 1e-5 : 1e-12;
    ExpectNear(out[0], expected.first, tol, tol);
    ExpectNear(out[1], expected.second, tol, tol);
  }
}

TEST(CrossEntropyTest, GeneralLabelsGiveTheTrueGradientForRowsOfAnySum) {
  // Rows summing to 2, 0.5 and 0: backprop is softmax * sum(y) - y, d loss / d logits.
  NDArray logits = RandomArray(Shape{3, 4}, DType::kFloat64, 5, -3, 3);
  NDArray labels = NDArray::FromVector<double>(Shape{3, 4}, {1, 0, 1, 0, 0.25, 0.25, 0, 0, 0, 0, 0, 0});
  std::vector<NDArray> out = RunOp("softmax_cross_entropy_with_logits", {{"general_labels", "true"}}, {logits, labels});
  NDArray p = RunOp("softmax", {}, {logits})[0];
  std::vector<double> pv = Values(p), yv = Values(labels), want(12);
  for (int r = 0; r < 3; ++r) {
    double mass = yv[r * 4] + yv[r * 4 + 1] + yv[r * 4 + 2] + yv[r * 4 + 3];
    for (int j = 0; j < 4; ++j) want[r * 4 + j] = pv[r * 4 + j] * mass - yv[r * 4 + j];
  }
  ExpectNear(out[1], want, 1e-12, 1e-12);
  ExpectNear(out[0], ReferenceCrossEntropy(logits, yv).first, 1e-12, 1e-12);
  CheckGradient("softmax_cross_entropy_with_logits", {{"general_labels", "true"}}, {logits, labels});
}

TEST(CrossEntropyTest, SparseLabelsMatchReference) {
  NDArray logits = RandomArray(Shape{4, 5}, DType::kFloat32, 5, -3, 3);
  std::vector<int64_t> classes = {2, 0, 4, 2};
  std::vector<double> one_hot(20, 0.0);
  for (int i = 0; i < 4; ++i) one_hot[i * 5 + classes[i]] = 1;
  auto expected = ReferenceCrossEntropy(logits, one_hot);
  for (DType label_type : {DType::kInt32, DType::kInt64}) {
    NDArray labels = label_type == DType::kInt32 ? NDArray::FromVector<int32_t>(Shape{4}, {2, 0, 4, 2})
                                                 : NDArray::FromVector<int64_t>(Shape{4}, classes);
    std::vector<NDArray> out = RunOp("sparse_softmax_cross_entropy_with_logits", {}, {logits, labels});
    EXPECT_EQ(out[0].dtype(), DType::kFloat32);
    ExpectNear(out[0], expected.first, 1e-5, 1e-5);
    ExpectNear(out[1], expected.second, 1e-5, 1e-5);
  }
}

TEST(CrossEntropyTest, LargeLogitsGiveFiniteLosses) {
  NDArray logits = NDArray::FromVector<float>(Shape{1, 2}, {1000, 0});
  std::vector<NDArray> out =
      RunOp("sparse_softmax_cross_entropy_with_logits", {}, {logits, NDArray::FromVector<int32_t>(Shape{1}, {1})});
  ExpectNear(out[0], {1000}, 1e-3);
  ExpectNear(out[1], {1, -1});
}

TEST(CrossEntropyTest, OutOfRangeLabelIsAnError) {
  NDArray logits = RandomArray(Shape{3, 5}, DType::kFloat32, 6);
  EXPECT_ERROR(RunOp("sparse_softmax_cross_entropy_with_logits", {},
                     {logits, NDArray::FromVector<int32_t>(Shape{3}, {0, 5, 1})}),
               "node 'sparse_softmax_cross_entropy_with_logits' (op sparse_softmax_cross_entropy_with_logits): "
               "label 5 of row 1 is outside [0, 5)");
  EXPECT_ERROR(RunOp("sparse_softmax_cross_entropy_with_logits", {},
                     {logits, NDArray::FromVector<int64_t>(Shape{3}, {0, 1, -1})}),
               "label -1 of row 2 is outside [0, 5)");
}

TEST(CrossEntropyTest, GradientsMatchFiniteDifferences) {
  NDArray logits = RandomArray(Shape{3, 4}, DType::kFloat64, 7, -2, 2);
  CheckGradient("softmax_cross_entropy_with_logits", {}, {logits, Distributions(Shape{3, 4}, 8)});
  CheckGradient("sparse_softmax_cross_entropy_with_logits", {},
                {logits, NDArray::FromVector<int64_t>(Shape{3}, {3, 0, 1})});
}

TEST(CrossEntropyTest, LossOnlyGradientIsOgradTimesBackprop) {
  // The gradient pass passes zeros_like for an output that got no gradient (here: backprop).
  NodeEntry logits{Node::CreateVariable("logits"), 0}, labels{Node::CreateVariable("labels"), 0};
  NodeEntry og{Node::CreateVariable("og"), 0};
  NodeEntry loss = MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {logits, labels});
  NodeEntry backprop{loss.node, 1};
  NodeEntry zeros = MakeNode("zeros_like", "zeros", {backprop});
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[loss.node->op()](loss.node, {og, zeros});
  EXPECT_EQ(grads[1].node, nullptr);
  NDArray og_value = NDArray::FromVector<double>(Shape{2}, {2, -1});
  std::vector<NDArray> out =
      EvalGraph({grads[0], backprop}, {{logits.node.get(), RandomArray(Shape{2, 3}, DType::kFloat64, 9)},
                                       {labels.node.get(), NDArray::FromVector<int32_t>(Shape{2}, {1, 2})},
                                       {og.node.get(), og_value}});
  std::vector<double> expected = Values(out[1]);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] *= i < 3 ? 2 : -1;
  ExpectNear(out[0], expected, 1e-12);
}

TEST(CrossEntropyTest, InfersShapesAndReportsMismatches) {
  std::vector<Shape> in = {Shape{kUnknownDim, 10}, Shape{32}}, out;
  EXPECT_TRUE(InferShapes("sparse_softmax_cross_entropy_with_logits", {}, &in, &out));
  EXPECT_EQ(in[0], (Shape{32, 10}));
  EXPECT_EQ(out[0], (Shape{32}));
  EXPECT_EQ(out[1], (Shape{32, 10}));
  in = {Shape(), Shape{kUnknownDim, 10}};
  EXPECT_FALSE(InferShapes("softmax_cross_entropy_with_logits", {}, &in, &out));
  EXPECT_EQ(in[0], (Shape{kUnknownDim, 10}));
  EXPECT_EQ(out[0], (Shape{kUnknownDim}));
  EXPECT_ERROR(RunOp("softmax_cross_entropy_with_logits", {},
                     {RandomArray(Shape{4, 5}, DType::kFloat32, 1), RandomArray(Shape{4, 6}, DType::kFloat32, 2)}),
               "input 1 (labels) has shape [4,6] but must be [4,5]");
  EXPECT_ERROR(RunOp("sparse_softmax_cross_entropy_with_logits", {},
                     {RandomArray(Shape{4, 5}, DType::kFloat32, 1), NDArray::FromVector<int32_t>(Shape{3}, {0, 1, 2})}),
               "input 1 (labels) has shape [3] but must be [4]");
  EXPECT_ERROR(RunOp("sparse_softmax_cross_entropy_with_logits", {},
                     {RandomArray(Shape{2, 5}, DType::kFloat32, 1), RandomArray(Shape{2}, DType::kFloat32, 2)}),
               "labels dtype float32 is not supported (expected int32, int64)");
}

}  // namespace
}  // namespace test
}  // namespace ir
