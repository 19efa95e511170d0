#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

struct ScalarCase {
  std::string op;
  double scalar;
  std::function<double(double x, double s)> reference;
  double lo, hi;  // input range where the op is smooth
  bool numeric;   // arithmetic (result of the input's dtype, differentiable) rather than a predicate
};

double FloorMod(double a, double b) { return a - std::floor(a / b) * b; }

std::vector<ScalarCase> Cases() {
  return {
      {"add_scalar", 2, [](double x, double s) { return x + s; }, -2, 2, true},
      {"subtract_scalar", 2, [](double x, double s) { return x - s; }, -2, 2, true},
      {"rsubtract_scalar", 2, [](double x, double s) { return s - x; }, -2, 2, true},
      {"multiply_scalar", -3, [](double x, double s) { return x * s; }, -2, 2, true},
      {"divide_scalar", 4, [](double x, double s) { return x / s; }, -2, 2, true},
      {"rdivide_scalar", 3, [](double x, double s) { return s / x; }, 0.5, 3, true},
      {"power_scalar", 3, [](double x, double s) { return std::pow(x, s); }, 0.5, 3, true},
      {"rpower_scalar", 2, [](double x, double s) { return std::pow(s, x); }, -2, 3, true},
      {"maximum_scalar", 0, [](double x, double s) { return std::max(x, s); }, -2, 2, true},
      {"minimum_scalar", 0, [](double x, double s) { return std::min(x, s); }, -2, 2, true},
      {"floor_divide_scalar", 3, [](double x, double s) { return std::floor(x / s); }, -8, 8, true},
      {"rfloor_divide_scalar", 7, [](double x, double s) { return std::floor(s / x); }, 0.5, 4, true},
      {"floor_mod_scalar", 3, FloorMod, -8, 8, true},
      {"rfloor_mod_scalar", 7, [](double x, double s) { return FloorMod(s, x); }, 0.5, 4, true},
      {"equal_scalar", 1, [](double x, double s) { return x == s; }, -2, 2, false},
      {"not_equal_scalar", 1, [](double x, double s) { return x != s; }, -2, 2, false},
      {"greater_scalar", 0, [](double x, double s) { return x > s; }, -2, 2, false},
      {"greater_equal_scalar", 1, [](double x, double s) { return x >= s; }, -2, 2, false},
      {"less_scalar", 0, [](double x, double s) { return x < s; }, -2, 2, false},
      {"less_equal_scalar", 1, [](double x, double s) { return x <= s; }, -2, 2, false},
  };
}

Attrs ScalarAttr(double s) { return {{"scalar", std::to_string(s)}}; }

std::vector<double> Reference(const NDArray& x, const ScalarCase& c) {
  std::vector<double> out;
  for (double v : Values(x)) out.push_back(c.reference(v, c.scalar));
  return out;
}

TEST(ScalarOpTest, ForwardMatchesReferenceInEveryNumericType) {
  for (const ScalarCase& c : Cases()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
      bool integer = !DTypeIsFloat(dtype);
      if (integer && (c.op == "rpower_scalar" || c.op == "rdivide_scalar")) continue;  // fractional results
      SCOPED_TRACE(c.op + " " + DTypeName(dtype));
      NDArray x = RandomArray(Shape{3, 41}, dtype, 7, c.lo, c.hi);
      if (integer && c.op.rfind("rfloor", 0) == 0) x = RandomArray(Shape{3, 41}, dtype, 7, 1, 4);  // no zeros
      NDArray y = RunOp(c.op, ScalarAttr(c.scalar), {x})[0];
      EXPECT_EQ(y.dtype(), c.numeric ? dtype : DType::kBool);
      EXPECT_EQ(y.shape(), x.shape());
      double tol = dtype == DType::kFloat32 ? 2e-6 : 1e-12;
      std::vector<double> expected = Reference(x, c);
      if (integer && c.op == "divide_scalar") {
        for (double& v : expected) v = std::trunc(v);  // integer division truncates
      }
      ExpectNear(y, expected, tol, tol);
    }
  }
}

TEST(ScalarOpTest, IntegerFormsFollowBinaryOpSemantics) {
  NDArray x = NDArray::FromVector<int32_t>(Shape{4}, {7, -7, 0, 2});
  ExpectNear(RunOp("rfloor_divide_scalar", ScalarAttr(-7), {x})[0], {-1, 1, 0, -4});
  ExpectNear(RunOp("rfloor_mod_scalar", ScalarAttr(-7), {x})[0], {0, 0, 0, 1});
  ExpectNear(RunOp("rdivide_scalar", ScalarAttr(9), {x})[0], {1, -1, 0, 4});
  ExpectNear(RunOp("rpower_scalar", ScalarAttr(2), {x})[0], {128, 0, 1, 4});
  ExpectNear(RunOp("divide_scalar", ScalarAttr(0), {x})[0], {0, 0, 0, 0});
  NDArray p = NDArray::FromVector<bool>(Shape{2}, {true, false});
  ExpectNear(RunOp("logical_and_scalar", ScalarAttr(1), {p})[0], {1, 0});
  ExpectNear(RunOp("logical_or_scalar", ScalarAttr(0), {p})[0], {1, 0});
  ExpectNear(RunOp("logical_or_scalar", ScalarAttr(1), {p})[0], {1, 1});
  ExpectNear(RunOp("equal_scalar", ScalarAttr(0), {p})[0], {0, 1});
}

TEST(ScalarOpTest, GradientsMatchFiniteDifferences) {
  for (const ScalarCase& c : Cases()) {
    SCOPED_TRACE(c.op);
    CheckGradient(c.op, ScalarAttr(c.scalar), {RandomArray(Shape{4, 5}, DType::kFloat64, 11, c.lo, c.hi)});
  }
}

TEST(ScalarOpTest, CodeGenMatchesKernel) {
  for (const ScalarCase& c : Cases()) {
    SCOPED_TRACE(c.op);
    CheckCodeGen(c.op, ScalarAttr(c.scalar), {RandomArray(Shape{2, 9}, DType::kFloat32, 3, c.lo, c.hi)});
    CheckCodeGen(c.op, ScalarAttr(c.scalar), {RandomArray(Shape{9}, DType::kFloat64, 4, c.lo, c.hi)}, 1e-12);
    if (c.op == "power_scalar" || c.op == "rpower_scalar") continue;  // integer powers have no AST form
    CheckCodeGen(c.op, ScalarAttr(c.scalar), {RandomArray(Shape{12}, DType::kInt32, 5, -6, 6)});
  }
  for (const char* op : {"logical_and_scalar", "logical_or_scalar"}) {
    CheckCodeGen(op, ScalarAttr(1), {RandomArray(Shape{6}, DType::kBool, 1)});
  }
}

TEST(ScalarOpTest, ScalarMustFitTheInputDType) {
  NDArray i = NDArray::FromVector<int32_t>(Shape{2}, {1, 2});
  EXPECT_ERROR(RunOp("add_scalar", ScalarAttr(2.5), {i}),
               "node 'add_scalar' (op add_scalar): scalar 2.5 is not representable in the input's dtype int32");
  EXPECT_ERROR(RunOp("less_scalar", {{"scalar", "3e9"}}, {i}), "scalar 3000000000 is not representable");
  EXPECT_ERROR(RunOp("logical_and_scalar", ScalarAttr(2), {RandomArray(Shape{2}, DType::kBool, 1)}),
               "is not representable in the input's dtype bool");
  EXPECT_ERROR(RunOp("add_scalar", {}, {i}), "op 'add_scalar' (node 'add_scalar'): invalid parameters");
  EXPECT_ERROR(RunOp("logical_or_scalar", ScalarAttr(1), {i}), "input dtype int32 is not supported");
}

TEST(ScalarOpTest, PatternsAndInplaceOptions) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  const auto& inplace = Op::GetAttr<FInplaceOption>("FInplaceOption");
  for (const ScalarCase& c : Cases()) {
    EXPECT_EQ(pattern[Op::Get(c.op)], kElemWise) << c.op;
    EXPECT_EQ(inplace.count(Op::Get(c.op)), c.numeric ? 1 : 0) << c.op;
  }
}

}  // namespace
}  // namespace test
}  // namespace ir
