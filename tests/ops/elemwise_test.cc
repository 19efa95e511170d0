#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ir/op.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

struct UnaryCase {
  std::string op;
  std::function<double(double)> reference;
  double lo, hi;  // input range where the op is defined and smooth
  bool differentiable;
};

std::vector<UnaryCase> FloatCases() {
  return {
      {"negative", [](double x) { return -x; }, -2, 2, true},
      {"abs", [](double x) { return std::fabs(x); }, -2, 2, true},
      {"square", [](double x) { return x * x; }, -2, 2, true},
      {"relu", [](double x) { return x > 0 ? x : 0; }, -2, 2, true},
      {"exp", [](double x) { return std::exp(x); }, -2, 2, true},
      {"log", [](double x) { return std::log(x); }, 0.1, 3, true},
      {"log1p", [](double x) { return std::log1p(x); }, -0.5, 2, true},
      {"expm1", [](double x) { return std::expm1(x); }, -2, 2, true},
      {"sqrt", [](double x) { return std::sqrt(x); }, 0.1, 3, true},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.1, 3, true},
      {"reciprocal", [](double x) { return 1 / x; }, 0.2, 3, true},
      {"sin", [](double x) { return std::sin(x); }, -3, 3, true},
      {"cos", [](double x) { return std::cos(x); }, -3, 3, true},
      {"tanh", [](double x) { return std::tanh(x); }, -3, 3, true},
      {"erf", [](double x) { return std::erf(x); }, -3, 3, true},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -5, 5, true},
      {"softplus", [](double x) { return std::log(1 + std::exp(x)); }, -5, 5, true},
      {"floor", [](double x) { return std::floor(x); }, -3, 3, false},
      {"ceil", [](double x) { return std::ceil(x); }, -3, 3, false},
      {"round", [](double x) { return std::nearbyint(x); }, -3, 3, false},
      {"sign", [](double x) { return (x > 0) - (x < 0); }, -3, 3, false},
  };
}

std::vector<double> Map(const NDArray& x, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (double v : Values(x)) out.push_back(f(v));
  return out;
}

TEST(UnaryOpTest, ForwardMatchesReferenceInBothFloatTypes) {
  for (const UnaryCase& c : FloatCases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      NDArray x = RandomArray(Shape{3, 70}, dtype, 7, c.lo, c.hi);
      NDArray y = RunOp(c.op, {}, {x})[0];
      EXPECT_EQ(y.dtype(), dtype) << c.op;
      SCOPED_TRACE(c.op + " " + DTypeName(dtype));
      ExpectNear(y, Map(x, c.reference), dtype == DType::kFloat32 ? 1e-6 : 1e-12,
                 dtype == DType::kFloat32 ? 1e-6 : 1e-12);
    }
  }
}

TEST(UnaryOpTest, GradientsMatchFiniteDifferences) {
  for (const UnaryCase& c : FloatCases()) {
    SCOPED_TRACE(c.op);
    CheckGradient(c.op, {}, {RandomArray(Shape{4, 5}, DType::kFloat64, 11, c.lo, c.hi)});
  }
}

TEST(UnaryOpTest, CodeGenMatchesKernel) {
  for (const UnaryCase& c : FloatCases()) {
    SCOPED_TRACE(c.op);
    CheckCodeGen(c.op, {}, {RandomArray(Shape{2, 9}, DType::kFloat32, 3, c.lo, c.hi)});
    CheckCodeGen(c.op, {}, {RandomArray(Shape{9}, DType::kFloat64, 4, c.lo, c.hi)}, 1e-12);
  }
}

TEST(UnaryOpTest, RoundHalvesToEven) {
  NDArray x = NDArray::FromVector<float>(Shape{5}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f});
  ExpectNear(RunOp("round", {}, {x})[0], {0, 2, 2, -0, -2});
}

TEST(UnaryOpTest, SoftplusIsStableForLargeInputs) {
  NDArray x = NDArray::FromVector<float>(Shape{3}, {100.f, -100.f, 0.f});
  ExpectNear(RunOp("softplus", {}, {x})[0], {100, 3.7200759760208e-44, std::log(2.0)}, 1e-6);
}

TEST(UnaryOpTest, IntegerOpsAndTypeErrors) {
  NDArray x = NDArray::FromVector<int32_t>(Shape{4}, {-3, 0, 2, -1});
  ExpectNear(RunOp("negative", {}, {x})[0], {3, 0, -2, 1});
  ExpectNear(RunOp("abs", {}, {x})[0], {3, 0, 2, 1});
  ExpectNear(RunOp("square", {}, {x})[0], {9, 0, 4, 1});
  ExpectNear(RunOp("sign", {}, {x})[0], {-1, 0, 1, -1});
  ExpectNear(RunOp("relu", {}, {x})[0], {0, 0, 2, 0});
  CheckCodeGen("abs", {}, {x});
  CheckCodeGen("sign", {}, {x});
  EXPECT_ERROR(RunOp("exp", {}, {x}),
               "node 'exp' (op exp): input dtype int32 is not supported (expected float32, float64)");
}

TEST(UnaryOpTest, LogicalNot) {
  NDArray x = NDArray::FromVector<bool>(Shape{3}, {true, false, true});
  ExpectNear(RunOp("logical_not", {}, {x})[0], {0, 1, 0});
  CheckCodeGen("logical_not", {}, {x});
  EXPECT_ERROR(RunOp("logical_not", {}, {RandomArray(Shape{2}, DType::kFloat32, 1)}), "dtype float32 is not supported");
}

TEST(ActivationGradOpTest, ForwardGradientAndCodeGen) {
  NDArray y = RandomArray(Shape{3, 4}, DType::kFloat64, 5, -0.9, 0.9);
  NDArray dy = RandomArray(Shape{3, 4}, DType::kFloat64, 6);
  std::vector<double> yv = Values(y), dv = Values(dy), relu, sig, tanh;
  for (size_t i = 0; i < yv.size(); ++i) {
    relu.push_back(yv[i] > 0 ? dv[i] : 0);
    sig.push_back(dv[i] * yv[i] * (1 - yv[i]));
    tanh.push_back(dv[i] * (1 - yv[i] * yv[i]));
  }
  ExpectNear(RunOp("relu_grad", {}, {dy, y})[0], relu);
  ExpectNear(RunOp("sigmoid_grad", {}, {y, dy})[0], sig);
  ExpectNear(RunOp("tanh_grad", {}, {y, dy})[0], tanh);
  for (const char* op : {"sigmoid_grad", "tanh_grad"}) {
    CheckGradient(op, {}, {y, dy});
    CheckCodeGen(op, {}, {y, dy}, 1e-12);
  }
  CheckGradient("relu_grad", {}, {dy, y}, GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  CheckCodeGen("relu_grad", {}, {dy, y}, 1e-12);
}

TEST(UnaryOpTest, ShapeMismatchOfBackwardOpIsAnError) {
  EXPECT_ERROR(RunOp("tanh_grad", {},
                     {RandomArray(Shape{2, 3}, DType::kFloat32, 1), RandomArray(Shape{3, 2}, DType::kFloat32, 2)}),
               "node 'tanh_grad' (op tanh_grad): inputs and outputs must have one shape, got inputs [2,3], [3,2]");
}

}  // namespace
}  // namespace test
}  // namespace ir
