/*!
 * \file mnist_train_test.cc
 * \brief The "MNIST for ML beginners" training graph TensorFlow wrote (mnist_00/model.txt)
 * trains on real MNIST digits: step by step like the textbook update, and to >= 90% accuracy.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

/*! \brief $IR_MNIST_DIR, else the directory scripts/fetch_mnist.py prints (it fetches once); "" when unavailable. */
std::string MnistDir() {
  const char* env = std::getenv("IR_MNIST_DIR");
  if (env != nullptr && *env != '\0') return env;
  std::string command = std::string("python3 ") + IR_TEST_SOURCE_DIR + "/scripts/fetch_mnist.py 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char line[4096] = {0};
  std::string dir = std::fgets(line, sizeof(line), pipe) ? line : "";
  if (pclose(pipe) != 0) return "";
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  return dir;
}

uint32_t BigEndian32(std::ifstream& in) {
  unsigned char b[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(b), 4);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

/*! \brief Images scaled to [0, 1] ([n, 784]) and one-hot labels ([n, 10]) from IDX files. */
struct Digits {
  std::vector<float> images, labels;
  int64_t count = 0;

  static Digits Read(const std::string& images_path, const std::string& labels_path) {
    Digits d;
    std::ifstream images(images_path, std::ios::binary), labels(labels_path, std::ios::binary);
    EXPECT_EQ(BigEndian32(images), 0x803u) << images_path;
    EXPECT_EQ(BigEndian32(labels), 0x801u) << labels_path;
    d.count = BigEndian32(images);
    EXPECT_EQ(BigEndian32(labels), d.count);
    EXPECT_EQ(BigEndian32(images), 28u);
    EXPECT_EQ(BigEndian32(images), 28u);
    std::vector<unsigned char> pixels(d.count * 784), digits(d.count);
    images.read(reinterpret_cast<char*>(pixels.data()), pixels.size());
    labels.read(reinterpret_cast<char*>(digits.data()), digits.size());
    for (unsigned char p : pixels) d.images.push_back(p / 255.0f);
    d.labels.assign(d.count * 10, 0);
    for (int64_t i = 0; i < d.count; ++i) d.labels[i * 10 + digits[i]] = 1;
    return d;
  }

  std::map<std::string, NDArray> Batch(int64_t begin, int64_t size) const {
    std::vector<float> x(images.begin() + begin * 784, images.begin() + (begin + size) * 784);
    std::vector<float> t(labels.begin() + begin * 10, labels.begin() + (begin + size) * 10);
    return {{"input", NDArray::FromVector<float>(Shape{size, 784}, x)},
            {"target", NDArray::FromVector<float>(Shape{size, 10}, t)}};
  }
};

/*! \brief The textbook step: W -= lr * x^T (softmax(xW + b) - t) / n; b -= lr * mean(softmax - t). */
void ReferenceStep(const std::map<std::string, NDArray>& batch, std::vector<double>* w, std::vector<double>* b) {
  std::vector<float> x = batch.at("input").ToVector<float>(), t = batch.at("target").ToVector<float>();
  int64_t n = batch.at("input").shape()[0];
  std::vector<double> gw(784 * 10, 0), gb(10, 0);
  for (int64_t r = 0; r < n; ++r) {
    double logits[10], top = -1e300, total = 0;
    for (int c = 0; c < 10; ++c) {
      logits[c] = (*b)[c];
      for (int k = 0; k < 784; ++k) logits[c] += x[r * 784 + k] * (*w)[k * 10 + c];
      top = std::max(top, logits[c]);
    }
    for (double& l : logits) total += (l = std::exp(l - top));
    for (int c = 0; c < 10; ++c) {
      double d = (logits[c] / total - t[r * 10 + c]) / n;
      gb[c] += d;
      for (int k = 0; k < 784; ++k) gw[k * 10 + c] += x[r * 784 + k] * d;
    }
  }
  for (size_t i = 0; i < gw.size(); ++i) (*w)[i] -= 0.5 * gw[i];
  for (int c = 0; c < 10; ++c) (*b)[c] -= 0.5 * gb[c];
}

TEST(MnistTrainingTest, TrainsTensorFlowsGraphToNinetyPercent) {
  IR_TF_REQUIRE(path, "dl4j-test-resources/mnist_00/model.txt");
  std::string dir = MnistDir();
  if (dir.empty()) GTEST_SKIP() << "MNIST is not available: set IR_MNIST_DIR or make scripts/fetch_mnist.py work";
  Digits train = Digits::Read(dir + "/train-images-idx3-ubyte", dir + "/train-labels-idx1-ubyte");
  Digits test = Digits::Read(dir + "/t10k-images-idx3-ubyte", dir + "/t10k-labels-idx1-ubyte");
  ASSERT_GE(train.count, 1000);
  SessionOptions options;
  options.fusion =
      false;  // the fused pipeline is checked on the same graph in ir_tf_run's test; this one is about learning
  TFSession session(LoadModel(path), options);
  session.Run({}, {}, {"init"});

  // The first steps follow the textbook update exactly (zero-initialized weights).
  std::vector<double> w(784 * 10, 0), b(10, 0);
  for (int step = 0; step < 3; ++step) {
    auto batch = train.Batch(step * 100, 100);
    session.Run(batch, {}, {"GradientDescent"});
    ReferenceStep(batch, &w, &b);
  }
  std::vector<NDArray> wb = session.Run({}, {"Variable", "Variable_1"});
  test::ExpectClose(wb[0], w, "W after 3 steps", 1e-5, 1e-4);
  test::ExpectClose(wb[1], b, "b after 3 steps", 1e-5, 1e-4);

  // Epochs in batches of 100 (the tutorial's batch size and learning rate).
  const int kEpochs = 6;
  int64_t steps = train.count / 100;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    for (int64_t step = epoch == 0 ? 3 : 0; step < steps; ++step)
      session.Run(train.Batch(step * 100, 100), {}, {"GradientDescent"});
  }
  double accuracy = session.Run(test.Batch(0, test.count), {"Mean_1"})[0].ToVector<float>()[0];
  std::printf("MNIST test accuracy after %d epochs: %.4f (%lld test digits)\n", kEpochs, accuracy,
              static_cast<long long>(test.count));
  EXPECT_GE(accuracy, 0.90);
}

}  // namespace
}  // namespace tf
}  // namespace ir
