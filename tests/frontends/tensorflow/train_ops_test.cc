/*!
 * \file train_ops_test.cc
 * \brief Variables and optimizer updates: TF1 refs and TF2 resources, ApplyGradientDescent,
 * ApplyMomentum and ApplyAdam against their formulas.
 */
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

/*! \brief A float variable `name` of shape [n] initialized by `name`/init to `values`. */
std::string InitializedVariable(const std::string& name, const std::vector<double>& values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Variable(name, {n}) + Const(name + "/value", {n}, values) +
         Node(name + "/init", "Assign", {name, name + "/value"}, Type());
}

std::string Scalar(const std::string& name, double value) { return Const(name, {}, {value}); }

TFSession Session(const std::string& graph) {
  SessionOptions options;
  options.fusion = false;
  return TFSession(test::TextModel(graph), options);
}

TEST(TFTrainOpsTest, AppliesGradientDescentToRefsAndResources) {
  std::string graph = InitializedVariable("w", {1, 2}) + Scalar("lr", 0.5) + Const("g", {2}, {4, -2}) +
                      Node("step", "ApplyGradientDescent", {"w", "lr", "g"}, Type()) +
                      Node("h", "VarHandleOp", {}, Type("DT_FLOAT", "dtype") + Attr("shape", ShapeProto({2}))) +
                      Const("h/value", {2}, {3, 3}) +
                      Node("h/init", "AssignVariableOp", {"h", "h/value"}, Type("DT_FLOAT", "dtype")) +
                      Node("h/step", "ResourceApplyGradientDescent", {"h", "lr", "g"}, Type()) +
                      Node("h/read", "ReadVariableOp", {"h"}, Type("DT_FLOAT", "dtype")) +
                      Node("h/inc", "AssignAddVariableOp", {"h", "g"}, Type("DT_FLOAT", "dtype"));
  TFSession s = Session(graph);
  s.Run({}, {}, {"w/init", "h/init"});
  s.Run({}, {}, {"step", "h/step"});
  s.Run({}, {}, {"step", "h/step"});
  std::vector<NDArray> out = s.Run({}, {"w", "h/read"});
  ExpectClose(out[0], {1 - 4, 2 + 2}, "w after two steps", 0, 0);
  ExpectClose(out[1], {3 - 4, 3 + 2}, "h after two steps", 0, 0);
  s.Run({}, {}, {"h/inc"});
  ExpectClose(s.Run({}, {"h/read"})[0], {-1 + 4, 5 - 2}, "h after AssignAddVariableOp", 0, 0);
}

TEST(TFTrainOpsTest, AppliesMomentumWithAndWithoutNesterov) {
  for (bool nesterov : {false, true}) {
    std::string graph = InitializedVariable("w", {1, -1}) + InitializedVariable("acc", {0.5, 0}) + Scalar("lr", 0.1) +
                        Scalar("mu", 0.9) + Const("g", {2}, {2, 3}) +
                        Node("step", "ApplyMomentum", {"w", "acc", "lr", "g", "mu"},
                             Type() + Attr("use_nesterov", nesterov ? "b: true" : "b: false"));
    TFSession s = Session(graph);
    s.Run({}, {}, {"w/init", "acc/init"});
    std::vector<double> w{1, -1}, acc{0.5, 0};
    const double g[] = {2, 3};
    for (int step = 0; step < 3; ++step) {
      s.Run({}, {}, {"step"});
      for (int i = 0; i < 2; ++i) {
        acc[i] = acc[i] * 0.9 + g[i];
        w[i] -= nesterov ? 0.1 * g[i] + 0.1 * 0.9 * acc[i] : 0.1 * acc[i];
      }
    }
    std::vector<NDArray> out = s.Run({}, {"w", "acc"});
    ExpectClose(out[0], w, nesterov ? "nesterov w" : "momentum w");
    ExpectClose(out[1], acc, "accumulator");
  }
}

TEST(TFTrainOpsTest, AppliesAdamLikeTensorFlow) {
  std::string graph = InitializedVariable("w", {1, -2, 3}) + InitializedVariable("m", {0, 0, 0}) +
                      InitializedVariable("v", {0, 0, 0}) + Scalar("b1p", 0.9) + Scalar("b2p", 0.999) +
                      Scalar("lr", 0.01) + Scalar("b1", 0.9) + Scalar("b2", 0.999) + Scalar("eps", 1e-8) +
                      Const("g", {3}, {0.5, -1, 2}) +
                      Node("step", "ApplyAdam", {"w", "m", "v", "b1p", "b2p", "lr", "b1", "b2", "eps", "g"}, Type());
  TFSession s = Session(graph);
  s.Run({}, {}, {"w/init", "m/init", "v/init"});
  s.Run({}, {}, {"step"});
  s.Run({}, {}, {"step"});
  std::vector<double> w{1, -2, 3}, m{0, 0, 0}, v{0, 0, 0};
  const double g[] = {0.5, -1, 2};
  double lr_t = 0.01 * std::sqrt(1 - 0.999) / (1 - 0.9);  // the powers are constants here
  for (int step = 0; step < 2; ++step) {
    for (int i = 0; i < 3; ++i) {
      m[i] += (g[i] - m[i]) * 0.1;
      v[i] += (g[i] * g[i] - v[i]) * 0.001;
      w[i] -= lr_t * m[i] / (std::sqrt(v[i]) + 1e-8);
    }
  }
  std::vector<NDArray> out = s.Run({}, {"w", "m", "v"});
  ExpectClose(out[0], w, "w");
  ExpectClose(out[1], m, "m");
  ExpectClose(out[2], v, "v");
}

TEST(TFTrainOpsTest, ReadsVariablesBeforeTheUpdateThatWritesThem) {
  // loss gradient g = 2 * w is computed from w, then w is updated: g must see the old w.
  std::string graph = InitializedVariable("w", {3}) + Node("w/read", "Identity", {"w"}, Type()) + Scalar("two", 2) +
                      Node("g", "Mul", {"two", "w/read"}, Type()) + Scalar("lr", 0.25) +
                      Node("step", "ApplyGradientDescent", {"w", "lr", "g"}, Type());
  TFSession s = Session(graph);
  s.Run({}, {}, {"w/init"});
  s.Run({}, {}, {"step"});
  ExpectClose(s.Run({}, {"w"})[0], {3 - 0.25 * 6}, "w", 0, 0);
}

TEST(TFTrainOpsTest, NamesUninitializedVariables) {
  TFSession s = Session(InitializedVariable("w", {1}) + Node("r", "Identity", {"w"}, Type()));
  EXPECT_ERROR(s.Run({}, {"r"}), "variable 'w' is not initialized");
}

}  // namespace
}  // namespace tf
}  // namespace ir
