/*!
 * \file gradient_loop_tf1_test.cc
 * \brief TF1 training graphs of a dynamic_rnn, with the gradient while loop TensorFlow builds
 * (stacks pushed in the forward loop and popped in the gradient loop, TensorArrayGradV3,
 * ControlTrigger, loop invariants' accumulators), in TF's node layout of versions 1.1, 1.4 and
 * 1.15 (graphs/control_flow/make_tf1_training.py): the train op's step must equal a step with
 * the gradients of central finite differences of the forward loss (NumPy, float64), and a
 * forward-only fetch must need nothing of the gradient loop.
 */
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ir_tf/import.h"
#include "ir_tf/npy.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ExpectClose;
using test::ToDoubles;

std::string Dir() { return std::string(IR_TF_TEST_DATA_DIR) + "/graphs/control_flow/"; }

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

NDArray Oracle(const std::string& name) { return ReadNpy(Dir() + "oracles/tf1_rnn_train/" + name + ".npy"); }

class TrainingGraphTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TrainingGraphTest, TrainStepMatchesFiniteDifferences) {
  const std::string file = GetParam();
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(file + (fusion ? " fused" : ""));
    SessionOptions options;
    options.fusion = fusion;
    TFSession s(test::TextModel(ReadText(Dir() + file)), options);
    NDArray x = Oracle("x");
    s.Run({}, {}, {"init"});
    ExpectClose(s.Run({{"x", x}}, {"loss"})[0], ToDoubles(Oracle("loss")), "loss", 1e-5, 1e-5);
    s.Run({{"x", x}}, {}, {"GradientDescent"});
    for (const char* var : {"input_bias", "rnn/basic_rnn_cell/kernel", "rnn/basic_rnn_cell/bias"}) {
      std::string key = var;
      for (size_t at = key.find('/'); at != std::string::npos; at = key.find('/', at + 2)) key.replace(at, 1, "__");
      ExpectClose(s.Run({}, {var})[0], ToDoubles(Oracle(key)), var, 1e-5, 1e-4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TF1Versions, TrainingGraphTest,
                         ::testing::Values("tf1_rnn_train_v1_4.pbtxt", "tf1_rnn_train_v1_15.pbtxt",
                                           "tf1_rnn_train_v1_1.pbtxt"));

}  // namespace
}  // namespace tf
}  // namespace ir
