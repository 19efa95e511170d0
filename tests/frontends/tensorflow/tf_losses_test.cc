/*!
 * \file tf_losses_test.cc
 * \brief The loss tf.losses.softmax_cross_entropy builds (graphs/tf_losses_mlp.pbtxt): its
 * shape arithmetic sits under control dependencies on no-op asserts and must still be known
 * once the placeholders are fed; an unfed placeholder is named as the thing to fix.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

const char* kLoss = "softmax_cross_entropy_loss/value";

TFModel LossModel() {
  std::ifstream in(std::string(IR_TF_TEST_DATA_DIR) + "/graphs/tf_losses_mlp.pbtxt");
  std::ostringstream text;
  text << in.rdbuf();
  return test::TextModel(text.str());
}

/*! \brief Row-major [rows, cols] product plus bias, optionally through relu. */
std::vector<double> Dense(const std::vector<double>& x, int64_t rows, const NDArray& w, const NDArray& b, bool relu) {
  int64_t in = w.shape()[0], out = w.shape()[1];
  std::vector<double> kernel = test::ToDoubles(w), bias = test::ToDoubles(b), y(rows * out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < out; ++j) {
      double s = bias[j];
      for (int64_t k = 0; k < in; ++k) s += x[r * in + k] * kernel[k * out + j];
      y[r * out + j] = relu ? std::max(s, 0.0) : s;
    }
  }
  return y;
}

/*! \brief mean over rows of -sum(labels * log_softmax(logits)), the classes being 3. */
double MeanCrossEntropy(const std::vector<double>& logits, const std::vector<double>& labels, int64_t rows) {
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double* z = &logits[r * 3];
    double m = std::max({z[0], z[1], z[2]});
    double log_sum = m + std::log(std::exp(z[0] - m) + std::exp(z[1] - m) + std::exp(z[2] - m));
    for (int c = 0; c < 3; ++c) total -= labels[r * 3 + c] * (z[c] - log_sum);
  }
  return total / static_cast<double>(rows);
}

TEST(TFLossesTest, SoftmaxCrossEntropyLossRunsWithFedPlaceholders) {
  TFSession session(LossModel());
  const int64_t rows = 5;
  std::vector<float> x{5.1f, 3.5f, 1.4f, 0.2f, 6.2f, 2.9f, 4.3f, 1.3f, 7.7f, 3.0f,
                       6.1f, 2.3f, 4.9f, 3.0f, 1.4f, 0.2f, 5.8f, 2.7f, 5.1f, 1.9f};
  std::vector<float> labels{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1};
  std::map<std::string, NDArray> feeds{{"input", NDArray::FromVector<float>(Shape{rows, 4}, x)},
                                       {"labels", NDArray::FromVector<float>(Shape{rows, 3}, labels)}};
  std::vector<NDArray> params = session.Run({}, {"dense/kernel", "dense/bias", "logits/kernel", "logits/bias"});
  std::vector<double> hidden = Dense(std::vector<double>(x.begin(), x.end()), rows, params[0], params[1], true);
  std::vector<double> logits = Dense(hidden, rows, params[2], params[3], false);
  double expected = MeanCrossEntropy(logits, std::vector<double>(labels.begin(), labels.end()), rows);
  NDArray loss = session.Run(feeds, {kLoss})[0];
  EXPECT_EQ(loss.shape(), Shape::Scalar());
  test::ExpectClose(loss, {expected}, "loss", 1e-5, 1e-5);
  // Another batch size is another import, with its own known shapes.
  feeds["input"] = NDArray::FromVector<float>(Shape{1, 4}, {x.begin(), x.begin() + 4});
  feeds["labels"] = NDArray::FromVector<float>(Shape{1, 3}, {labels.begin(), labels.begin() + 3});
  std::vector<double> one_logits(logits.begin(), logits.begin() + 3);
  test::ExpectClose(session.Run(feeds, {kLoss})[0], {MeanCrossEntropy(one_logits, {1, 0, 0}, 1)}, "loss of one row",
                    1e-5, 1e-5);
}

TEST(TFLossesTest, NewerSafeMeanDividesWithDivNoNan) {
  using namespace test::pbtxt;  // NOLINT
  std::string graph = Const("total", {3}, {1, 2, 3}) + Const("present", {3}, {2, 0, 4}) +
                      Node("value", "DivNoNan", {"total", "present"}, Type());
  test::ExpectClose(test::RunText(graph, {}, {"value"})[0], {0.5, 0, 0.75}, "DivNoNan", 0, 0);
}

TEST(TFLossesTest, UnfedPlaceholderIsNamedInsteadOfTheNodeThatNeedsItsShape) {
  TFSession session(LossModel());
  NDArray labels = NDArray::FromVector<float>(Shape{1, 3}, {0, 1, 0});
  EXPECT_ERROR(session.Run({{"labels", labels}}, {kLoss}), "placeholder 'input' must be fed");
  NDArray x = NDArray::FromVector<float>(Shape{1, 4}, {1, 2, 3, 4});
  EXPECT_ERROR(session.Run({{"input", x}}, {kLoss}), "placeholder 'labels' must be fed");
}

}  // namespace
}  // namespace tf
}  // namespace ir
