/*!
 * \file lazy_assign_test.cc
 * \brief Assignments inside the trace: the fused update writes the old buffers in place, held
 * readers of the old values are computed first, the copy path where a target does not qualify.
 */
#include <gtest/gtest.h>

#include <cmath>

#include "ir/lazy.h"
#include "runtime/lazy_test_util.h"
#include "test_util.h"

namespace ir {
namespace {

using lazy::Array;

/*! \brief Adam's m, v and w after one step from m0, v0, w0 with gradient g (host reference). */
struct AdamReference {
  std::vector<float> m, v, w;
  AdamReference(const std::vector<float>& m0, const std::vector<float>& v0, const std::vector<float>& w0,
                const std::vector<float>& g, float b1, float b2, float lr, float eps, float c1, float c2) {
    for (size_t i = 0; i < g.size(); ++i) {
      m.push_back(b1 * m0[i] + (1 - b1) * g[i]);
      v.push_back(b2 * v0[i] + (1 - b2) * g[i] * g[i]);
      w.push_back(w0[i] - lr * (m.back() / c1) / (std::sqrt(v.back() / c2) + eps));
    }
  }
};

TEST_F(LazyTest, AdamUpdateIsOneKernelWritingTheOldBuffers) {
  const int n = 1000;
  NDArray m_buffer = Ramp({n}, 0.001f), v_buffer = Ramp({n}, 0.002f, 0.5f), w_buffer = Ramp({n}, -0.003f, 1);
  NDArray g_data = Ramp({n}, 0.0005f, -0.2f);
  AdamReference ref(m_buffer.ToVector<float>(), v_buffer.ToVector<float>(), w_buffer.ToVector<float>(),
                    g_data.ToVector<float>(), 0.9f, 0.999f, 0.01f, 1e-7f, 0.1f, 0.001f);
  Array m(m_buffer), v(v_buffer), w(w_buffer), grad(g_data);
  // 6 scalar parameters and 4 arrays: the 0-d inputs do not count toward F_max (8 on the CPU).
  Array b1(0.9f), b2(0.999f), lr(0.01f), eps(1e-7f), c1(0.1f), c2(0.001f);
  Array m1 = grad + b1 * (m - grad);  // b1 * m + (1 - b1) * grad
  Array v1 = grad * grad + b2 * (v - grad * grad);
  Array w1 = w - lr * (m1 / c1) / (lazy::Apply("sqrt", {v1 / c2}) + eps);
  lazy::AssignAll({m, v, w}, {m1, v1, w1});
  // The fused update and the no_op token that roots the assignments (fetching them would copy).
  EXPECT_EQ(stats().kernels_launched, 2u);
  EXPECT_EQ(stats().cache_misses, 1u);
  ExpectNear(m_buffer.ToVector<float>(), ref.m);
  ExpectNear(v_buffer.ToVector<float>(), ref.v);
  ExpectNear(w_buffer.ToVector<float>(), ref.w);
  // No copy: the targets and the assigned values hold the old buffers themselves.
  EXPECT_EQ(w.Eval().data<float>(), w_buffer.data<float>());
  EXPECT_EQ(w1.Eval().data<float>(), w_buffer.data<float>());
  EXPECT_EQ(m.Eval().data<float>(), m_buffer.data<float>());
}

TEST_F(LazyTest, HeldReaderOfTheOldValueIsComputedBeforeTheWrite) {
  NDArray buffer = Ramp({64}, 0.5f, 1);
  std::vector<float> old = buffer.ToVector<float>();
  Array w(buffer);
  Array loss = lazy::sum(w * w);  // held: computed in the update's trace, from the old w
  w -= Array(0.1f) * w;
  EXPECT_EQ(stats().cache_misses + stats().cache_hits, 1u);
  EXPECT_FALSE(loss.is_pending());
  double expected = 0;
  for (float x : old) expected += static_cast<double>(x) * x;
  EXPECT_NEAR(loss.Eval().ToVector<float>()[0], expected, 1e-5 * expected);
  std::vector<float> updated;
  for (float x : old) updated.push_back(x - 0.1f * x);
  ExpectNear(buffer.ToVector<float>(), updated);
}

TEST_F(LazyTest, AssignedValueHeldAcrossTheNextAssignmentKeepsItsValue) {
  NDArray buffer = Ramp({8}, 1);
  Array w(buffer);
  Array w1 = w + 1.0f;
  w.Assign(w1);  // in place: w1 now shares w's buffer
  EXPECT_EQ(w1.Eval().data<float>(), buffer.data<float>());
  w += 10.0f;  // w1 is still held: it keeps its value (a snapshot), the buffer gets the new one
  EXPECT_EQ(w1.Eval().ToVector<float>(), std::vector<float>({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(buffer.ToVector<float>(), std::vector<float>({11, 12, 13, 14, 15, 16, 17, 18}));
}

TEST_F(LazyTest, SwapInOneAssignAllReadsBothOldValues) {
  NDArray a_buffer = Ramp({16}, 1), b_buffer = Ramp({16}, -1, 100);
  std::vector<float> a0 = a_buffer.ToVector<float>(), b0 = b_buffer.ToVector<float>();
  Array a(a_buffer), b(b_buffer);
  lazy::AssignAll({a, b}, {b * 1.0f, a * 1.0f});
  EXPECT_EQ(a_buffer.ToVector<float>(), b0);
  EXPECT_EQ(b_buffer.ToVector<float>(), a0);
}

TEST_F(LazyTest, TrainingLoopUpdatingInPlaceCompilesOnce) {
  NDArray buffer = Ramp({32}, 0.01f, 1);
  Array w(buffer);
  std::vector<float> expected = buffer.ToVector<float>();
  for (int step = 0; step < 1000; ++step) {
    float lr = 0.001f / static_cast<float>(step + 1);
    w -= Array(lr) * w;
    for (float& x : expected) x -= lr * x;
  }
  EXPECT_EQ(stats().cache_misses, 1u);
  EXPECT_EQ(stats().traces_compiled, 1u);
  EXPECT_EQ(w.Eval().data<float>(), buffer.data<float>());
  ExpectNear(buffer.ToVector<float>(), expected);
}

TEST_F(LazyTest, TargetsThatDoNotQualifyAreAssignedByCopy) {
  NDArray buffer = Ramp({4}, 1);
  Array a(buffer), b(buffer);                     // two arrays over one buffer: writing it in place would race
  lazy::AssignAll({a, b}, {a + 1.0f, b + 2.0f});  // both values read the old buffer, b is written last
  EXPECT_EQ(buffer.ToVector<float>(), std::vector<float>({2, 3, 4, 5}));
  EXPECT_EQ(a.Eval().ToVector<float>(), std::vector<float>({2, 3, 4, 5}));
}

TEST_F(LazyTest, AssignmentsKeepTheTargetsShapeAndDType) {
  // tf.Variable.assign and NumPy's a[...] = b reject another shape; the error names both, and
  // nothing is written (the other target of the same AssignAll neither).
  Array c(Ramp({4}, 1)), d(Ramp({4}, 1));
  EXPECT_ERROR(c.Assign(lazy::sum(c)), "[4] float32 but its value is [] float32");
  EXPECT_ERROR(lazy::AssignAll({d, c}, {d * 2.0f, Array(Ramp({3, 3}, 1))}), "[3,3] float32");
  EXPECT_ERROR(c.Assign(lazy::Apply("cast", {c}, {{"dtype", "int32"}})), "[4] float32 but its value is [4] int32");
  EXPECT_ERROR(c += Array(Ramp({2, 4}, 1)), "[4] float32 but its value is [2,4] float32");  // broadcast grows it
  EXPECT_EQ(c.Eval().ToVector<float>(), std::vector<float>({0, 1, 2, 3}));
  EXPECT_EQ(d.Eval().ToVector<float>(), std::vector<float>({0, 1, 2, 3}));
  c += 1.0f;  // a scalar broadcasts to the target's shape, as NumPy's +=
  EXPECT_EQ(c.Eval().ToVector<float>(), std::vector<float>({1, 2, 3, 4}));
  Array fresh;  // an undefined array takes its first value's shape
  fresh.Assign(Array(Ramp({2}, 1)));
  EXPECT_EQ(fresh.Eval().shape(), Shape({2}));
}

}  // namespace
}  // namespace ir
