/*!
 * \file simd_kernels_test.cc
 * \brief The vectorized CPU kernels (src/ops/simd.h) against plain scalar loops: odd sizes (so
 * vector tails and thread chunk edges are hit), broadcast shapes, NaN, Inf and -0.0 placed
 * inside vector bodies, every dtype an op takes, and outputs that alias their input.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_common.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

using Fn1 = std::function<double(double)>;
using Fn2 = std::function<double(double, double)>;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

/*! \brief `n` values in [lo, hi); floats get NaN, +-Inf, +-0 and large values spread through them. */
std::vector<double> Inputs(int64_t n, DType dtype, uint64_t seed, double lo = -4, double hi = 4) {
  std::vector<double> v = Values(RandomArray(Shape{n}, dtype, seed, lo, hi));
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return v;
  const double special[] = {kNaN, kInf, -kInf, -0.0, 0.0, 100, -100, 1e-30};
  for (int64_t i = 0, k = 0; i < n; i += 37, ++k) v[(i + 5 * k) % n] = special[k % 8];
  return v;
}

NDArray Array(const Shape& shape, DType dtype, const std::vector<double>& v) {
  switch (dtype) {
    case DType::kFloat32:
      return NDArray::FromVector<float>(shape, std::vector<float>(v.begin(), v.end()));
    case DType::kFloat64:
      return NDArray::FromVector<double>(shape, v);
    case DType::kInt32:
      return NDArray::FromVector<int32_t>(shape, std::vector<int32_t>(v.begin(), v.end()));
    default:
      return NDArray::FromVector<int64_t>(shape, std::vector<int64_t>(v.begin(), v.end()));
  }
}

/*! \brief `x` rounded to `dtype` (the reference's value in the kernel's dtype; integers have no -0). */
double Round(double x, DType dtype) {
  if (dtype == DType::kFloat32) return static_cast<float>(x);
  return dtype == DType::kFloat64 ? x : x + 0.0;
}

/*! \brief Elementwise equality up to `tol` relative; NaN matches NaN, and zeros keep their sign. */
void ExpectSame(const NDArray& got, const std::vector<double>& want, double tol) {
  std::vector<double> g = Values(got);
  ASSERT_EQ(g.size(), want.size());
  int failures = 0;
  for (size_t i = 0; i < g.size() && failures < 5; ++i) {
    bool ok = std::isnan(want[i])   ? std::isnan(g[i])
              : want[i] == 0        ? g[i] == 0 && std::signbit(g[i]) == std::signbit(want[i])
              : std::isinf(want[i]) ? g[i] == want[i]
                                    : std::fabs(g[i] - want[i]) <= tol * (std::fabs(want[i]) + 1e-3);
    if (!ok) ADD_FAILURE() << "element " << i << " of " << g.size() << ": got " << g[i] << ", expected " << want[i];
    failures += !ok;
  }
}

double Tolerance(DType dtype) { return dtype == DType::kFloat32 ? 1e-5 : 1e-12; }

TEST(SimdKernelTest, UnaryFloatOpsMatchScalarLoops) {
  const std::vector<std::pair<std::string, Fn1>> ops = {
      {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log1p", [](double x) { return std::log1p(x); }},
      {"expm1", [](double x) { return std::expm1(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"softplus", [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"negative", [](double x) { return -x; }},
      {"floor", [](double x) { return std::floor(x); }},
      {"round", [](double x) { return std::nearbyint(x); }},
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (int64_t n : {1, 7, 1000003}) {
      std::vector<double> x = Inputs(n, dtype, n);
      NDArray in = Array(Shape{n}, dtype, x);
      for (const auto& [op, f] : ops) {
        SCOPED_TRACE(StrCat(op, " ", DTypeName(dtype), " n=", n));
        std::vector<double> want(n);
        // The reference rounds its input and output to the dtype, as the kernel sees them.
        for (int64_t i = 0; i < n; ++i) want[i] = Round(f(Round(x[i], dtype)), dtype);
        ExpectSame(RunOp(op, {}, {in})[0], want, Tolerance(dtype));
      }
    }
  }
}

TEST(SimdKernelTest, IntegerUnaryOpsMatchScalarLoops) {
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    std::vector<double> x = Inputs(1001, dtype, 3, -50, 50);
    NDArray in = Array(Shape{1001}, dtype, x);
    std::vector<double> relu(x.size()), square(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      relu[i] = x[i] > 0 ? x[i] : 0;
      square[i] = x[i] * x[i];
    }
    ExpectSame(RunOp("relu", {}, {in})[0], relu, 0);
    ExpectSame(RunOp("square", {}, {in})[0], square, 0);
  }
}

/*! \brief Unit roundoff of `dtype`: 2^-24 for float32, 2^-53 for float64. */
double UnitRoundoff(DType dtype) { return dtype == DType::kFloat32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }

/*! \brief Higham's gamma_k = k u / (1 - k u): the bound of k roundings. */
double Gamma(int k, double u) { return k * u / (1 - k * u); }

/*!
 * \brief Elementwise |got - want| <= bound[i] (NaN matches NaN, infinities and zeros exactly, with
 * their sign).
 */
void ExpectWithin(const NDArray& got, const std::vector<double>& want, const std::vector<double>& bound) {
  std::vector<double> g = Values(got);
  ASSERT_EQ(g.size(), want.size());
  int failures = 0;
  for (size_t i = 0; i < g.size() && failures < 5; ++i) {
    bool ok = std::isnan(want[i])   ? std::isnan(g[i])
              : want[i] == 0        ? g[i] == 0 && std::signbit(g[i]) == std::signbit(want[i])
              : std::isinf(want[i]) ? g[i] == want[i]
                                    : std::fabs(g[i] - want[i]) <= bound[i];
    if (!ok) {
      ADD_FAILURE() << "element " << i << " of " << g.size() << ": got " << g[i] << ", expected " << want[i]
                    << " within " << bound[i];
    }
    failures += !ok;
  }
}

TEST(SimdKernelTest, ActivationGradientsMatchScalarLoops) {
  // Each op's value and the same expression over magnitudes (|dy| |y| (1 + |y|) for dy y (1 - y)):
  // three roundings of a product-and-difference expression are within gamma_3 of the latter
  // (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1), however the kernel's
  // instruction set rounds (FMA or not). Near saturation (y -> 1) the result is a small
  // difference of numbers near 1, so a bound relative to the result itself would not hold.
  struct Grad {
    std::string op;
    Fn2 f, magnitude;
  };
  const std::vector<Grad> ops = {
      {"sigmoid_grad", [](double y, double dy) { return dy * y * (1 - y); },
       [](double y, double dy) { return std::fabs(dy) * std::fabs(y) * (1 + std::fabs(y)); }},
      {"tanh_grad", [](double y, double dy) { return dy * (1 - y * y); },
       [](double y, double dy) { return std::fabs(dy) * (1 + y * y); }},
      {"relu_grad", [](double dy, double y) { return y > 0 ? dy : 0.0; }, [](double, double) { return 0.0; }},
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const int64_t n = 100003;
    std::vector<double> a = Inputs(n, dtype, 1, -1, 1), b = Inputs(n, dtype, 2, -1, 1);
    // The kernel's three roundings, the float64 reference's own three, and rounding it to dtype.
    const double u = UnitRoundoff(dtype), k = Gamma(3, u) + Gamma(3, UnitRoundoff(DType::kFloat64)) + u;
    for (const auto& [op, f, magnitude] : ops) {
      SCOPED_TRACE(StrCat(op, " ", DTypeName(dtype)));
      std::vector<double> want(n), bound(n);
      for (int64_t i = 0; i < n; ++i) {
        want[i] = Round(f(a[i], b[i]), dtype);
        bound[i] = k * magnitude(a[i], b[i]);
      }
      ExpectWithin(RunOp(op, {}, {Array(Shape{n}, dtype, a), Array(Shape{n}, dtype, b)})[0], want, bound);
    }
  }
}

/*! \brief Index into an operand of `shape` of output element `i` of `out`, by NumPy's rules. */
int64_t SourceIndex(const Shape& shape, const Shape& out, int64_t i) {
  int64_t index = 0, stride = 1;
  for (int d = out.ndim() - 1, s = shape.ndim() - 1; s >= 0; --d, --s) {
    int64_t coord = (i % out[d]);
    i /= out[d];
    if (shape[s] != 1) index += coord * stride;
    stride *= shape[s];
  }
  return index;
}

TEST(SimdKernelTest, BroadcastBinaryOpsMatchScalarLoops) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape{1000003}, Shape{1000003}}, {Shape{301, 1}, Shape{1, 257}}, {Shape{257}, Shape{301, 257}},
      {Shape::Scalar(), Shape{7, 5}},   {Shape{7, 5}, Shape{1}},        {Shape{2, 1, 3, 5}, Shape{4, 1, 5}},
      {Shape{3, 1, 5}, Shape{3, 4, 1}}, {Shape{1}, Shape{1}},           {Shape{40000, 3}, Shape{40000, 1}},
  };
  const std::vector<std::pair<std::string, Fn2>> ops = {
      {"add", [](double a, double b) { return a + b; }},
      {"subtract", [](double a, double b) { return a - b; }},
      {"multiply", [](double a, double b) { return a * b; }},
      {"maximum", [](double a, double b) { return a >= b || std::isnan(a) ? a : b; }},
      {"greater", [](double a, double b) { return double(a > b); }},
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    for (const auto& [sa, sb] : shapes) {
      NodeAttrs attrs;
      Shape out = op::BroadcastShapes(attrs, sa, sb);
      std::vector<double> a = Inputs(sa.Size(), dtype, 7, -9, 9), b = Inputs(sb.Size(), dtype, 8, -9, 9);
      for (const auto& [op, f] : ops) {
        SCOPED_TRACE(StrCat(op, " ", DTypeName(dtype), " ", sa, " + ", sb));
        std::vector<double> want(out.Size());
        for (int64_t i = 0; i < out.Size(); ++i) {
          want[i] = Round(f(a[SourceIndex(sa, out, i)], b[SourceIndex(sb, out, i)]), dtype);
        }
        NDArray got = RunOp(op, {}, {Array(sa, dtype, a), Array(sb, dtype, b)})[0];
        EXPECT_EQ(got.shape(), out);
        ExpectSame(got, want, Tolerance(dtype));
      }
    }
  }
}

TEST(SimdKernelTest, FloatDivisionAndPowerKeepIeeeSpecialValues) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const int64_t n = 4099;
    std::vector<double> a = Inputs(n, dtype, 1), b = Inputs(n, dtype, 2, 0.5, 3);
    std::vector<double> div(n), pow(n), rdiv(n);
    for (int64_t i = 0; i < n; ++i) {
      double x = Round(a[i], dtype), y = Round(b[i], dtype);
      div[i] = Round(x / y, dtype);
      pow[i] = Round(std::pow(y, x), dtype);
      rdiv[i] = Round(2.0 / x, dtype);
    }
    SCOPED_TRACE(DTypeName(dtype));
    ExpectSame(RunOp("divide", {}, {Array(Shape{n}, dtype, a), Array(Shape{n}, dtype, b)})[0], div, Tolerance(dtype));
    ExpectSame(RunOp("power", {}, {Array(Shape{n}, dtype, b), Array(Shape{n}, dtype, a)})[0], pow, 1e-5);
    ExpectSame(RunOp("rdivide_scalar", {{"scalar", "2"}}, {Array(Shape{n}, dtype, a)})[0], rdiv, Tolerance(dtype));
  }
}

/*! \brief a / b truncated, 0 for b == 0, wrapping for the most negative a over -1. */
template <typename T>
T Divide(T a, T b) {
  if (b == 0) return 0;
  return b == -1 ? static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a)) : static_cast<T>(a / b);
}

TEST(SimdKernelTest, IntegerDivisionNeverTrapsInVectorLoops) {
  // Zero and -1 divisors and the most negative dividend inside long arrays: a vectorized loop
  // that divided speculatively would trap or give other values.
  auto check = [](auto tag) {
    using T = decltype(tag);
    const int64_t n = 1003;
    std::vector<T> a(n), b(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = i % 11 == 0 ? std::numeric_limits<T>::lowest() : static_cast<T>(i * 7919 % 201 - 100);
      b[i] = static_cast<T>(i % 5 - 2);  // -2, -1, 0, 1, 2
    }
    std::vector<double> div(n), floor_div(n), floor_mod(n);
    for (int64_t i = 0; i < n; ++i) {
      T q = Divide(a[i], b[i]), r = static_cast<T>(b[i] == 0 || b[i] == -1 ? 0 : a[i] % b[i]);
      bool fix = r != 0 && ((r < 0) != (b[i] < 0));
      div[i] = q;
      floor_div[i] = fix ? q - 1 : q;
      floor_mod[i] = fix ? r + b[i] : r;
    }
    NDArray x = NDArray::FromVector<T>(Shape{n}, a), y = NDArray::FromVector<T>(Shape{n}, b);
    ExpectSame(RunOp("divide", {}, {x, y})[0], div, 0);
    ExpectSame(RunOp("floor_divide", {}, {x, y})[0], floor_div, 0);
    ExpectSame(RunOp("floor_mod", {}, {x, y})[0], floor_mod, 0);
    ExpectSame(RunOp("divide_scalar", {{"scalar", "0"}}, {x})[0], std::vector<double>(n, 0.0), 0);
  };
  check(int32_t{});
  check(int64_t{});
}

TEST(SimdKernelTest, ScalarOpsMatchScalarLoops) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    const int64_t n = 100003;
    std::vector<double> x = Inputs(n, dtype, 4, -9, 9);
    std::vector<double> add(n), rsub(n), mul(n), max(n);
    for (int64_t i = 0; i < n; ++i) {
      add[i] = Round(x[i] + 3, dtype);
      rsub[i] = Round(3 - x[i], dtype);
      mul[i] = Round(x[i] * -2, dtype);
      max[i] = x[i] >= 1 || std::isnan(x[i]) ? x[i] : 1;
    }
    SCOPED_TRACE(DTypeName(dtype));
    NDArray in = Array(Shape{n}, dtype, x);
    ExpectSame(RunOp("add_scalar", {{"scalar", "3"}}, {in})[0], add, Tolerance(dtype));
    ExpectSame(RunOp("rsubtract_scalar", {{"scalar", "3"}}, {in})[0], rsub, Tolerance(dtype));
    ExpectSame(RunOp("multiply_scalar", {{"scalar", "-2"}}, {in})[0], mul, Tolerance(dtype));
    ExpectSame(RunOp("maximum_scalar", {{"scalar", "1"}}, {in})[0], max, 0);
  }
}

/*! \brief softmax or log_softmax rows of length n by plain loops (in double). */
std::vector<double> SoftmaxRows(const std::vector<double>& x, int64_t n, bool log) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    const double* row = x.data() + r * n;
    double m = row[0], s = 0;
    for (int64_t j = 0; j < n; ++j) m = std::isnan(row[j]) || std::isnan(m) ? kNaN : std::max(m, row[j]);
    for (int64_t j = 0; j < n; ++j) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = log ? (row[j] - m) - std::log(s) : std::exp(row[j] - m) / s;
  }
  return y;
}

/*! \brief Runs op's FCompute with its output in its input's buffer (as in-place planning does). */
NDArray RunInPlace(const std::string& op, NDArray copy) {
  NodeAttrs attrs;
  attrs.op = Op::Get(op);
  attrs.name = "in_place";
  if (attrs.op->attr_parser) attrs.op->attr_parser(&attrs);
  Op::GetAttr<FCompute>("FCompute")[attrs.op](OpContext(), attrs, {copy}, {copy});
  return copy;
}

TEST(SimdKernelTest, SoftmaxRowsMatchScalarLoopsAlsoInPlace) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (int64_t n : {1, 7, 1000, 1031}) {
      const int64_t rows = 13;
      std::vector<double> x = Values(RandomArray(Shape{rows * n}, dtype, n, -5, 5));
      if (n > 7) {  // a NaN row, an Inf row and a row of large logits, the others finite
        x[2 * n + 3] = kNaN;
        x[5 * n + n / 2] = kInf;
        for (int64_t j = 0; j < n; ++j) x[7 * n + j] += 1000;
      }
      NDArray in = Array(Shape{rows, n}, dtype, x);
      for (bool log : {false, true}) {
        std::string op = log ? "log_softmax" : "softmax";
        SCOPED_TRACE(StrCat(op, " ", DTypeName(dtype), " n=", n));
        std::vector<double> want = SoftmaxRows(Values(in), n, log);
        for (double& w : want) w = Round(w, dtype);
        ExpectSame(RunOp(op, {}, {in})[0], want, 1e-5);
        ExpectSame(RunInPlace(op, Array(Shape{rows, n}, dtype, x)), want, 1e-5);
      }
    }
  }
}

TEST(SimdKernelTest, CrossEntropyRowsMatchScalarLoops) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (int64_t n : {1, 7, 1001}) {
      const int64_t rows = 9;
      SCOPED_TRACE(StrCat(DTypeName(dtype), " classes=", n));
      NDArray logits = RandomArray(Shape{rows, n}, dtype, n, -5, 5);
      std::vector<double> x = Values(logits), log_p = SoftmaxRows(x, n, true);
      std::vector<int64_t> labels(rows);
      std::vector<double> probs(rows * n, 0.0), loss(rows, 0.0), backprop(rows * n);
      for (int64_t r = 0; r < rows; ++r) {
        labels[r] = (r * 5) % n;
        probs[r * n + labels[r]] = 1;
        loss[r] = -log_p[r * n + labels[r]];
        for (int64_t j = 0; j < n; ++j) backprop[r * n + j] = std::exp(log_p[r * n + j]) - probs[r * n + j];
      }
      std::vector<NDArray> sparse = RunOp("sparse_softmax_cross_entropy_with_logits", {},
                                          {logits, NDArray::FromVector<int64_t>(Shape{rows}, labels)});
      std::vector<NDArray> dense =
          RunOp("softmax_cross_entropy_with_logits", {}, {logits, Array(Shape{rows, n}, dtype, probs)});
      for (const auto& out : {sparse, dense}) {
        ExpectNear(out[0], loss, 1e-5, 1e-5);
        ExpectNear(out[1], backprop, 1e-6, 1e-5);
      }
    }
  }
}

TEST(BroadcastSpansTest, SpansCoverTheOutputWithNumPyOffsets) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape{5, 6}, Shape{5, 6}},  {Shape{5, 1}, Shape{1, 6}},          {Shape{6}, Shape{5, 6}},
      {Shape::Scalar(), Shape{4}}, {Shape{2, 1, 3, 5}, Shape{4, 1, 5}}, {Shape{3, 1, 5}, Shape{3, 4, 1}},
      {Shape{1, 1}, Shape{1}},
  };
  for (const auto& [sa, sb] : shapes) {
    SCOPED_TRACE(StrCat(sa, " + ", sb));
    NodeAttrs attrs;
    Shape out = op::BroadcastShapes(attrs, sa, sb);
    op::BroadcastSpans walk(sa, sb, out);
    // Every split of the output into two chunks, as threads get them.
    for (int64_t split = 0; split <= out.Size(); ++split) {
      int64_t next = 0;
      auto check = [&](int64_t at, int64_t ia, int64_t a_step, int64_t ib, int64_t b_step, int64_t len) {
        EXPECT_EQ(at, next);
        EXPECT_GT(len, 0);
        EXPECT_TRUE((a_step == 0 || a_step == 1) && (b_step == 0 || b_step == 1));
        for (int64_t k = 0; k < len; ++k) {
          EXPECT_EQ(ia + k * a_step, SourceIndex(sa, out, at + k));
          EXPECT_EQ(ib + k * b_step, SourceIndex(sb, out, at + k));
        }
        next = at + len;
      };
      walk.ForEach(0, split, check);
      walk.ForEach(split, out.Size(), check);
      EXPECT_EQ(next, out.Size());
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace ir
