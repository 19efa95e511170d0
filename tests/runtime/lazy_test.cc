#include "ir/lazy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "ir/op.h"
#include "runtime/lazy_test_util.h"
#include "test_util.h"

namespace ir {
namespace {

using lazy::Array;

TEST_F(LazyTest, ValuesMatchReferences) {
  NDArray a = Ramp({2, 3}, 0.5f, -1), b = Ramp({3, 2}, 0.25f, 0.5f);
  std::vector<float> av = a.ToVector<float>(), bv = b.ToVector<float>();
  Array x(a), y(b);
  Array prod = lazy::matmul(x * 2.0f, y);
  Array total = lazy::sum(lazy::exp(x) - x, {1});
  std::vector<float> mm(4, 0), sums(2, 0);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 3; ++k) mm[i * 2 + j] += 2 * av[i * 3 + k] * bv[k * 2 + j];
    }
    for (int k = 0; k < 3; ++k) sums[i] += std::exp(av[i * 3 + k]) - av[i * 3 + k];
  }
  EXPECT_TRUE(prod.is_pending());
  ExpectNear(prod.Eval().ToVector<float>(), mm);
  EXPECT_FALSE(prod.is_pending());
  ExpectNear(total.ToNDArray().ToVector<float>(), sums);
  EXPECT_EQ(total.Eval().shape(), Shape({2}));
}

TEST_F(LazyTest, ElementwiseIntoReductionIsOneKernelMatmulOfSumIsTwo) {
  Array a(Ramp({64, 32}, 0.01f)), b(Ramp({64, 32}, 0.02f, 1)), c(Ramp({32, 16}, 0.03f));
  lazy::sum(a * b).Eval();
  EXPECT_EQ(stats().kernels_launched, 1u);
  context_.ResetStats();
  lazy::matmul(a + b, c).Eval();
  EXPECT_EQ(stats().kernels_launched, 2u);
  context_.ResetStats();
  Array x(Ramp({1000}, 0.01f, -5));
  Array sigmoid = 1.0f / (1.0f + lazy::exp(-x));
  std::vector<float> got = sigmoid.Eval().ToVector<float>(), xs = x.Eval().ToVector<float>();
  EXPECT_EQ(stats().kernels_launched, 1u);
  std::vector<float> expected;
  for (float v : xs) expected.push_back(1.0f / (1.0f + std::exp(-v)));
  ExpectNear(got, expected);
}

TEST_F(LazyTest, NewDataAndChangingScalarsHitTheCache) {
  Array w(Ramp({8, 4}, 0.0f));
  auto step = [&](int i) {
    Array x(Ramp({16, 8}, 0.01f * static_cast<float>(i)));
    Array lr(0.1f / static_cast<float>(i + 1));  // a learning rate: a parameter, not part of the key
    Array grad = lazy::matmul(x, lazy::matmul(x, w), true, false);
    w.Assign(w - lr * grad);
  };
  step(0);
  lazy::Stats first = stats();
  EXPECT_EQ(first.cache_misses, 1u);
  EXPECT_EQ(first.traces_compiled, 1u);
  for (int i = 1; i <= 100; ++i) step(i);
  EXPECT_EQ(stats().traces_compiled, first.traces_compiled) << "recompiled with new data or a new learning rate";
  EXPECT_EQ(stats().cache_misses, 1u);
  EXPECT_EQ(stats().cache_hits, first.cache_hits + 100);
  EXPECT_EQ(context_.cache_size(), 1u);
  // A new shape is a new trace: it misses once, then hits.
  Array v(Ramp({3, 4}, 1));
  (v * 3.0f).Eval();
  (v * 4.0f).Eval();
  EXPECT_EQ(stats().cache_misses, 2u);
  EXPECT_EQ(stats().traces_compiled, 2u);
}

TEST_F(LazyTest, ArraysNobodyHoldsAreNeverComputed) {
  Array a(Ramp({256}, 1)), b(Ramp({256}, 2));
  { Array dropped = lazy::exp(a) * b; }  // its last handle is gone: never computed
  Array wanted = lazy::log(a + 1.0f);
  lazy::Materialize({wanted, wanted});
  EXPECT_EQ(stats().kernels_launched, 1u);
  EXPECT_FALSE(wanted.is_pending());
  // Once materialized, a value is a leaf: using it again does not recompute it.
  context_.ResetStats();
  EXPECT_FLOAT_EQ((wanted * 2.0f).Eval().ToVector<float>()[3], 2 * std::log(4.0f));
  EXPECT_EQ(stats().kernels_launched, 1u);
}

TEST_F(LazyTest, ShapeOfInfersWithoutComputing) {
  Array a(Ramp({2, 3}, 1)), b(Ramp({3, 4}, 1));
  Array m = lazy::matmul(a * 2.0f, b);
  Array s = lazy::sum(m, {1});
  EXPECT_EQ(lazy::ShapeOf(m), Shape({2, 4}));
  EXPECT_EQ(lazy::ShapeOf(s), Shape({2}));
  EXPECT_EQ(lazy::DTypeOf(s), DType::kFloat32);
  EXPECT_EQ(lazy::DTypeOf(Array::Scalar(3, DType::kInt32) * Array::Scalar(2, DType::kInt32)), DType::kInt32);
  EXPECT_TRUE(s.is_pending());
  EXPECT_EQ(stats().kernels_launched, 0u);
  EXPECT_EQ(stats().cache_misses, 0u);
  Array bad = lazy::matmul(a, a);
  EXPECT_ERROR(lazy::ShapeOf(bad), "matmul");
  EXPECT_ERROR(lazy::ShapeOf(bad), "[2,3] float32, [2,3] float32");
  EXPECT_ERROR(lazy::DTypeOf(lazy::exp(bad)), "[2,3] float32, [2,3] float32");  // names the invalid node
  // A held invalid array is left out of other materializations (it fails when requested).
  EXPECT_EQ(s.Eval().shape(), Shape({2}));
  EXPECT_TRUE(bad.is_pending());
}

TEST_F(LazyTest, AssignWritesTheHoldersBufferAndKeepsEarlierReadersValues) {
  NDArray buffer = Ramp({4}, 1);
  Array a(buffer);
  Array alias = a;
  Array before = a * 10.0f;  // recorded before the assignment: reads the old value
  a += 1.0f;
  EXPECT_EQ(buffer.ToVector<float>(), std::vector<float>({1, 2, 3, 4}));
  EXPECT_EQ(alias.Eval().ToVector<float>(), std::vector<float>({1, 2, 3, 4}));
  EXPECT_EQ(before.Eval().ToVector<float>(), std::vector<float>({0, 10, 20, 30}));
  a.Assign(Array(Ramp({4}, 2)));
  EXPECT_EQ(alias.Eval().ToVector<float>(), std::vector<float>({0, 2, 4, 6}));  // copies of an Array share its value
  EXPECT_EQ(buffer.ToVector<float>(), std::vector<float>({0, 2, 4, 6}));
  Array fresh;
  fresh.Assign(Array(buffer) * 2.0f);
  EXPECT_EQ(fresh.Eval().ToVector<float>(), std::vector<float>({0, 4, 8, 12}));
}

TEST_F(LazyTest, ShapeErrorAtMaterializationNamesTheNode) {
  Array a(Ramp({2, 3}, 1)), b(Ramp({4, 5}, 1));
  Array bad = lazy::matmul(a, b);  // recording checks nothing
  EXPECT_ERROR(bad.Eval(), "matmul_0");
  EXPECT_ERROR(bad.Eval(), "[2,3] float32, [4,5] float32");
  EXPECT_ERROR(lazy::Apply("no_such_op", {a}), "no_such_op");
}

TEST_F(LazyTest, AFailingHeldArrayDoesNotFailUnrelatedReads) {
  Array x(Ramp({4}, 1));
  NDArray index(Shape({1}), DType::kInt32);
  *index.data<int32_t>() = 10;                           // out of range: the run fails (inference cannot tell)
  Array bad = lazy::Apply("gather", {x, Array(index)});  // held: a live array of every later barrier
  Array held = x * 3.0f;                                 // an innocent live array beside it
  for (int i = 0; i < 3; ++i) {
    Array y = Array(Ramp({3}, 1)) + static_cast<float>(i);
    EXPECT_EQ(y.Eval().ToVector<float>(), std::vector<float>({0.0f + i, 1.0f + i, 2.0f + i})) << "read " << i;
  }
  EXPECT_TRUE(bad.is_pending());
  EXPECT_ERROR(bad.Eval(), "index 10");  // the error stays with the failing value
  EXPECT_ERROR(bad.Eval(), "gather_0");
  EXPECT_EQ(held.Eval().ToVector<float>(), std::vector<float>({0, 3, 6, 9}));
  Array w(Ramp({4}, 1));
  w += 1.0f;  // an assignment's trace is not poisoned either
  EXPECT_EQ(w.Eval().ToVector<float>(), std::vector<float>({1, 2, 3, 4}));
}

TEST_F(LazyTest, RecordingCostPerOp) {
  Array a(Ramp({4}, 1)), b(Ramp({4}, 2));
  constexpr int kOps = 20000;
  auto start = std::chrono::steady_clock::now();
  Array chain = a;
  for (int i = 0; i < kOps; ++i) chain = chain * b + a;
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::cout << "lazy recording: " << ns / (2 * kOps)
            << " ns per op (stats: " << stats().record_ns / stats().ops_recorded << " ns inside Apply)\n";
  EXPECT_EQ(stats().ops_recorded, static_cast<size_t>(2 * kOps));
  EXPECT_EQ(stats().kernels_launched, 0u);  // nothing requested, nothing computed
}

TEST_F(LazyTest, ApplyByOpPointerRecordsWhatApplyByNameDoes) {
  NDArray data = Ramp({2, 3}, 1);
  Array x(data);
  const Op* sum = Op::Get("sum");
  Array by_name = lazy::Apply("sum", {x}, {{"axis", "[1]"}});
  Array by_op = std::move(lazy::ApplyN(sum, {x}, {{"axis", "[1]"}}, 1)[0]);  // the attribute is honoured
  Array all = std::move(lazy::ApplyN(sum, {x}, {}, 1)[0]);
  EXPECT_EQ(stats().ops_recorded, 3u);  // each counted, with its time
  EXPECT_GT(stats().record_ns, 0u);
  EXPECT_EQ(by_op.Eval().shape(), Shape({2}));
  EXPECT_EQ(by_op.Eval().ToVector<float>(), by_name.Eval().ToVector<float>());
  EXPECT_EQ(all.Eval().shape(), Shape::Scalar());
  EXPECT_EQ(all.Eval().ToVector<float>(), std::vector<float>({15}));
  context_.ResetStats();
  for (int i = 0; i < 2; ++i) {  // by name and by pointer: one trace (the same hash)
    Array y(Ramp({2, 3}, 2));
    (i == 0 ? lazy::Apply("exp", {y}) : std::move(lazy::ApplyN(Op::Get("exp"), {y}, {}, 1)[0])).Eval();
  }
  EXPECT_EQ(stats().cache_misses, 1u);
  EXPECT_EQ(stats().cache_hits, 1u);
  EXPECT_ERROR(lazy::ApplyN(static_cast<const Op*>(nullptr), {x}, {}, 1), "null op");
}

}  // namespace
}  // namespace ir
