#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <functional>

#include "ir/ast.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

using Fn = std::function<double(double, double)>;

struct BinaryCase {
  std::string op;
  Fn reference;
  double lo, hi;   // operand range where the op is smooth (and defined)
  bool predicate;  // bool result (comparisons) rather than arithmetic
};

double PyFloorMod(double a, double b) { return a - std::floor(a / b) * b; }

std::vector<BinaryCase> ArithmeticCases() {
  return {
      {"add", [](double a, double b) { return a + b; }, -2, 2, false},
      {"subtract", [](double a, double b) { return a - b; }, -2, 2, false},
      {"multiply", [](double a, double b) { return a * b; }, -2, 2, false},
      {"divide", [](double a, double b) { return a / b; }, 0.5, 2, false},
      {"power", [](double a, double b) { return std::pow(a, b); }, 0.5, 2, false},
      {"maximum", [](double a, double b) { return a >= b ? a : b; }, -2, 2, false},
      {"minimum", [](double a, double b) { return a <= b ? a : b; }, -2, 2, false},
      {"floor_divide", [](double a, double b) { return std::floor(a / b); }, 0.3, 3, false},
      {"floor_mod", PyFloorMod, 0.3, 3, false},
  };
}

std::vector<BinaryCase> PredicateCases() {
  return {
      {"equal", [](double a, double b) { return a == b; }, -2, 2, true},
      {"not_equal", [](double a, double b) { return a != b; }, -2, 2, true},
      {"greater", [](double a, double b) { return a > b; }, -2, 2, true},
      {"greater_equal", [](double a, double b) { return a >= b; }, -2, 2, true},
      {"less", [](double a, double b) { return a < b; }, -2, 2, true},
      {"less_equal", [](double a, double b) { return a <= b; }, -2, 2, true},
  };
}

/*! \brief Element `flat` of `out_shape` read from `a` under NumPy broadcasting (coordinates, no strides). */
double BroadcastAt(const NDArray& a, const Shape& out_shape, int64_t flat) {
  std::vector<int64_t> coord(out_shape.ndim());
  for (int d = out_shape.ndim() - 1; d >= 0; --d) {
    coord[d] = flat % out_shape[d];
    flat /= out_shape[d];
  }
  const Shape& s = a.shape();
  int offset = out_shape.ndim() - s.ndim();
  int64_t index = 0;
  for (int d = 0; d < s.ndim(); ++d) index = index * s[d] + (s[d] == 1 ? 0 : coord[d + offset]);
  return ValueAt(a, index);
}

std::vector<double> Reference(const NDArray& a, const NDArray& b, const Shape& out_shape, const Fn& f) {
  std::vector<double> out(out_shape.Size());
  for (int64_t i = 0; i < out_shape.Size(); ++i) out[i] = f(BroadcastAt(a, out_shape, i), BroadcastAt(b, out_shape, i));
  return out;
}

struct ShapePair {
  Shape lhs, rhs, out;
};

std::vector<ShapePair> BroadcastShapes() {
  return {{Shape{3, 70}, Shape{3, 70}, Shape{3, 70}},    {Shape{2, 3, 4}, Shape{3, 1}, Shape{2, 3, 4}},
          {Shape{4, 1, 5}, Shape{3, 5}, Shape{4, 3, 5}}, {Shape::Scalar(), Shape{2, 3}, Shape{2, 3}},
          {Shape{2, 3}, Shape{1}, Shape{2, 3}},          {Shape{1, 6}, Shape{5, 1}, Shape{5, 6}}};
}

NodeAttrs AttrsOf(const std::string& op, const Attrs& attrs, size_t num_inputs) {
  std::vector<NodeEntry> inputs(num_inputs, NodeEntry{Node::CreateVariable("v"), 0});
  return Node::Create(Op::Get(op), op, attrs, inputs)->attrs;
}

TEST(BroadcastOpTest, ArithmeticAndComparisonsMatchReferenceWithBroadcasting) {
  std::vector<BinaryCase> cases = ArithmeticCases();
  for (const BinaryCase& c : PredicateCases()) cases.push_back(c);
  for (const BinaryCase& c : cases) {
    for (const ShapePair& s : BroadcastShapes()) {
      for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
        SCOPED_TRACE(c.op + " " + s.lhs.ToString() + " " + s.rhs.ToString() + " " + DTypeName(dtype));
        NDArray a = RandomArray(s.lhs, dtype, 1, c.lo, c.hi), b = RandomArray(s.rhs, dtype, 2, c.lo, c.hi);
        NDArray y = RunOp(c.op, {}, {a, b})[0];
        EXPECT_EQ(y.shape(), s.out);
        EXPECT_EQ(y.dtype(), c.predicate ? DType::kBool : dtype);
        double tol = dtype == DType::kFloat32 ? 2e-6 : 1e-12;
        ExpectNear(y, Reference(a, b, s.out, c.reference), tol, tol);
      }
    }
  }
}

TEST(BroadcastOpTest, ComparisonsOfEqualValuesAndBools) {
  NDArray a = NDArray::FromVector<int32_t>(Shape{4}, {1, 2, 3, 4});
  NDArray b = NDArray::FromVector<int32_t>(Shape{1}, {3});
  ExpectNear(RunOp("equal", {}, {a, b})[0], {0, 0, 1, 0});
  ExpectNear(RunOp("greater_equal", {}, {a, b})[0], {0, 0, 1, 1});
  ExpectNear(RunOp("less", {}, {a, b})[0], {1, 1, 0, 0});
  NDArray p = NDArray::FromVector<bool>(Shape{2, 2}, {true, true, false, false});
  NDArray q = NDArray::FromVector<bool>(Shape{2}, {true, false});
  ExpectNear(RunOp("logical_and", {}, {p, q})[0], {1, 0, 0, 0});
  ExpectNear(RunOp("logical_or", {}, {p, q})[0], {1, 1, 1, 0});
  ExpectNear(RunOp("equal", {}, {p, q})[0], {1, 0, 0, 1});
  ExpectNear(RunOp("not_equal", {}, {p, q})[0], {0, 1, 1, 0});
}

TEST(BroadcastOpTest, IntegerDivisionFloorsTowardNegativeInfinity) {
  NDArray a = NDArray::FromVector<int32_t>(Shape{4}, {7, -7, 7, -7});
  NDArray b = NDArray::FromVector<int32_t>(Shape{4}, {2, 2, -2, -2});
  ExpectNear(RunOp("floor_divide", {}, {a, b})[0], {3, -4, -4, 3});
  ExpectNear(RunOp("floor_mod", {}, {a, b})[0], {1, 1, -1, -1});
  ExpectNear(RunOp("divide", {}, {a, b})[0], {3, -3, -3, 3});
  NDArray fa = NDArray::FromVector<double>(Shape{4}, {7.5, -7.5, 7.5, -7.5});
  NDArray fb = NDArray::FromVector<double>(Shape{4}, {2, 2, -2, -2});
  ExpectNear(RunOp("floor_divide", {}, {fa, fb})[0], {3, -4, -4, 3});
  ExpectNear(RunOp("floor_mod", {}, {fa, fb})[0], {1.5, 0.5, -0.5, -1.5});
  NDArray la = NDArray::FromVector<int64_t>(Shape{3}, {int64_t{1} << 40, -9, 9});
  NDArray lb = NDArray::FromVector<int64_t>(Shape{3}, {3, 4, -4});
  ExpectNear(RunOp("floor_divide", {}, {la, lb})[0], {366503875925.0, -3, -3});
  ExpectNear(RunOp("floor_mod", {}, {la, lb})[0], {1, 3, -3});
}

TEST(BroadcastOpTest, IntegerDivisionByZeroOrOverflowDoesNotTrap) {
  NDArray a = NDArray::FromVector<int32_t>(Shape{3}, {5, -5, 0});
  NDArray zero = NDArray::FromVector<int32_t>(Shape{1}, {0});
  for (const char* op : {"divide", "floor_divide", "floor_mod"}) {
    SCOPED_TRACE(op);
    ExpectNear(RunOp(op, {}, {a, zero})[0], {0, 0, 0});
  }
  NDArray min = NDArray::FromVector<int32_t>(Shape{2}, {INT_MIN, 6});
  NDArray minus_one = NDArray::FromVector<int32_t>(Shape{2}, {-1, -1});
  ExpectNear(RunOp("divide", {}, {min, minus_one})[0], {INT_MIN, -6});
  ExpectNear(RunOp("floor_divide", {}, {min, minus_one})[0], {INT_MIN, -6});
  ExpectNear(RunOp("floor_mod", {}, {min, minus_one})[0], {0, 0});
  NDArray lmin = NDArray::FromVector<int64_t>(Shape{1}, {LLONG_MIN});
  NDArray lzero = NDArray::FromVector<int64_t>(Shape{1}, {0});
  ExpectNear(RunOp("floor_mod", {}, {lmin, lzero})[0], {0});
  ExpectNear(RunOp("divide", {}, {lmin, NDArray::FromVector<int64_t>(Shape{1}, {-1})})[0],
             {static_cast<double>(LLONG_MIN)});
}

TEST(BroadcastOpTest, IntegerPowerIsExactAndTruncatesNegativeExponents) {
  NDArray base = NDArray::FromVector<int64_t>(Shape{7}, {2, 3, -2, 2, 1, -1, 0});
  NDArray exponent = NDArray::FromVector<int64_t>(Shape{7}, {62, 0, 3, -1, -3, -3, -2});
  ExpectNear(RunOp("power", {}, {base, exponent})[0], {4611686018427387904.0, 1, -8, 0, 1, -1, 0});
  EXPECT_EQ(RunOp("power", {}, {base, exponent})[0].ToVector<int64_t>()[0], int64_t{1} << 62);
}

TEST(BroadcastOpTest, MaximumAndMinimumPropagateNaN) {
  double nan = std::nan("");
  NDArray a = NDArray::FromVector<float>(Shape{3}, {static_cast<float>(nan), 1.f, 2.f});
  NDArray b = NDArray::FromVector<float>(Shape{3}, {1.f, static_cast<float>(nan), 3.f});
  ExpectNear(RunOp("maximum", {}, {a, b})[0], {nan, nan, 3});
  ExpectNear(RunOp("minimum", {}, {a, b})[0], {nan, nan, 2});
  CheckCodeGen("maximum", {}, {a, b});
  CheckCodeGen("minimum", {}, {a, b});
}

TEST(BroadcastOpTest, GradientsMatchFiniteDifferencesWithBroadcasting) {
  for (const BinaryCase& c : ArithmeticCases()) {
    for (const ShapePair& s : BroadcastShapes()) {
      if (s.out.Size() > 60) continue;  // keep finite differences fast
      SCOPED_TRACE(c.op + " " + s.lhs.ToString() + " " + s.rhs.ToString());
      CheckGradient(
          c.op, {},
          {RandomArray(s.lhs, DType::kFloat64, 3, c.lo, c.hi), RandomArray(s.rhs, DType::kFloat64, 4, c.lo, c.hi)});
    }
  }
  for (const BinaryCase& c : PredicateCases()) {
    SCOPED_TRACE(c.op);
    CheckGradient(c.op, {}, {RandomArray(Shape{2, 3}, DType::kFloat64, 3), RandomArray(Shape{3}, DType::kFloat64, 4)});
  }
}

TEST(BroadcastOpTest, MaximumGradientGoesToLhsOnTies) {
  NodeEntry a{Node::CreateVariable("a"), 0}, b{Node::CreateVariable("b"), 0}, og{Node::CreateVariable("og"), 0};
  for (const char* op : {"maximum", "minimum"}) {
    NodePtr n = Node::Create(Op::Get(op), op, {}, {a, b});
    std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[n->op()](n, {og});
    NDArray av = NDArray::FromVector<double>(Shape{3}, {1, 2, 3}),
            bv = NDArray::FromVector<double>(Shape{3}, {1, 5, 0});
    NDArray ogv = NDArray::FromVector<double>(Shape{3}, {10, 20, 30});
    std::vector<NDArray> g = EvalGraph(grads, {{a.node.get(), av}, {b.node.get(), bv}, {og.node.get(), ogv}});
    bool is_max = std::string(op) == "maximum";
    ExpectNear(g[0], {10, is_max ? 0.0 : 20.0, is_max ? 30.0 : 0.0});
    ExpectNear(g[1], {0, is_max ? 20.0 : 0.0, is_max ? 0.0 : 30.0});
  }
}

TEST(BroadcastOpTest, CodeGenMatchesKernel) {
  std::vector<BinaryCase> cases = ArithmeticCases();
  for (const BinaryCase& c : PredicateCases()) cases.push_back(c);
  for (const BinaryCase& c : cases) {
    SCOPED_TRACE(c.op);
    CheckCodeGen(c.op, {},
                 {RandomArray(Shape{2, 1, 5}, DType::kFloat32, 5, c.lo, c.hi),
                  RandomArray(Shape{3, 1}, DType::kFloat32, 6, c.lo, c.hi)});
    CheckCodeGen(
        c.op, {},
        {RandomArray(Shape{7}, DType::kFloat64, 7, c.lo, c.hi), RandomArray(Shape{7}, DType::kFloat64, 8, c.lo, c.hi)},
        1e-12);
    if (c.op == "power") continue;
    for (DType dtype : {DType::kInt32, DType::kInt64}) {
      // Integers in [-9, 9] with zeros and negative divisors.
      CheckCodeGen(c.op, {}, {RandomArray(Shape{6, 8}, dtype, 9, -9, 9), RandomArray(Shape{8}, dtype, 10, -3, 3)});
    }
  }
  for (const char* op : {"logical_and", "logical_or", "equal", "not_equal"}) {
    SCOPED_TRACE(op);
    CheckCodeGen(op, {}, {RandomArray(Shape{3, 4}, DType::kBool, 1), RandomArray(Shape{4}, DType::kBool, 2)});
  }
}

TEST(BroadcastOpTest, IntegerPowerHasNoCodeGen) {
  std::vector<ast::Expr> in = {ast::Var("a", DType::kInt32), ast::Var("b", DType::kInt32)};
  EXPECT_TRUE(Op::GetAttr<FCodeGen>("FCodeGen")[Op::Get("power")](AttrsOf("power", {}, 2), in).empty());
  std::vector<ast::Expr> mixed = {ast::Var("a", DType::kInt32), ast::Var("b", DType::kFloat32)};
  EXPECT_TRUE(Op::GetAttr<FCodeGen>("FCodeGen")[Op::Get("add")](AttrsOf("add", {}, 2), mixed).empty());
}

TEST(BroadcastOpTest, InferenceErrorsNameNodeOpAndShapes) {
  NDArray f = RandomArray(Shape{2, 3}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("add", {}, {f, RandomArray(Shape{4, 3}, DType::kFloat32, 2)}),
               "node 'add' (op add): shapes [2,3] and [4,3] cannot be broadcast together");
  EXPECT_ERROR(RunOp("multiply", {}, {f, RandomArray(Shape{2, 3}, DType::kInt32, 2)}),
               "node 'multiply' (op multiply): input 1 has dtype int32 but must be float32");
  EXPECT_ERROR(RunOp("logical_and", {}, {f, f}),
               "node 'logical_and' (op logical_and): input dtype float32 is not supported");
  NDArray p = RandomArray(Shape{2}, DType::kBool, 1);
  EXPECT_ERROR(RunOp("greater", {}, {p, p}), "input dtype bool is not supported");
  EXPECT_ERROR(RunOp("add", {}, {p, p}), "input dtype bool is not supported");
}

TEST(BroadcastOpTest, InfersPartialShapesAndTypesBothWays) {
  NodeAttrs attrs = AttrsOf("add", {}, 2);
  const auto& infer_shape = Op::GetAttr<FInferShape>("FInferShape")[Op::Get("add")];
  std::vector<Shape> in = {Shape{kUnknownDim, 3}, Shape{3}}, out(1);
  EXPECT_FALSE(infer_shape(attrs, &in, &out));
  EXPECT_EQ(out[0], (Shape{kUnknownDim, 3}));
  in = {Shape(), Shape{3}};
  out = {Shape()};
  EXPECT_FALSE(infer_shape(attrs, &in, &out));
  EXPECT_FALSE(out[0].rank_known());
  in = {Shape{2, 1}, Shape{4}};
  out = {Shape()};
  EXPECT_TRUE(infer_shape(attrs, &in, &out));
  EXPECT_EQ(out[0], (Shape{2, 4}));

  const auto& infer_type = Op::GetAttr<FInferType>("FInferType");
  std::vector<DType> types = {DType::kUnknown, DType::kUnknown}, out_types = {DType::kFloat64};
  EXPECT_TRUE(infer_type[Op::Get("add")](attrs, &types, &out_types));
  EXPECT_EQ(types, (std::vector<DType>{DType::kFloat64, DType::kFloat64}));
  types = {DType::kUnknown, DType::kInt64};
  out_types = {DType::kUnknown};
  EXPECT_TRUE(infer_type[Op::Get("less")](AttrsOf("less", {}, 2), &types, &out_types));
  EXPECT_EQ(types[0], DType::kInt64);
  EXPECT_EQ(out_types[0], DType::kBool);
  types = {DType::kUnknown, DType::kUnknown};
  out_types = {DType::kBool};
  EXPECT_FALSE(infer_type[Op::Get("less")](AttrsOf("less", {}, 2), &types, &out_types));
}

TEST(BroadcastOpTest, PatternsAndInplaceOptions) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  const auto* inplace = Op::FindAttr<FInplaceOption>("FInplaceOption");
  ASSERT_NE(inplace, nullptr);
  for (const char* op : {"add", "floor_mod", "less", "logical_or"}) EXPECT_EQ(pattern[Op::Get(op)], kBroadcast) << op;
  EXPECT_EQ(inplace->count(Op::Get("add")), 1);
  EXPECT_EQ(inplace->count(Op::Get("logical_and")), 1);
  // A bool result never shares a numeric operand's buffer.
  EXPECT_EQ(inplace->count(Op::Get("greater")), 0);
  EXPECT_EQ(inplace->count(Op::Get("equal")), 0);
}

}  // namespace
}  // namespace test
}  // namespace ir
