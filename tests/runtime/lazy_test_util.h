/*!
 * \file lazy_test_util.h
 * \brief What the lazy-array tests share: deterministic arrays and a fixture with its own Context.
 */
#ifndef IR_TESTS_RUNTIME_LAZY_TEST_UTIL_H_
#define IR_TESTS_RUNTIME_LAZY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ir/lazy.h"

namespace ir {

/*! \brief A float32 array of `shape` holding i * scale + offset at position i. */
inline NDArray Ramp(const Shape& shape, float scale, float offset = 0) {
  NDArray out(shape, DType::kFloat32);
  float* data = out.data<float>();
  for (int64_t i = 0; i < out.Size(); ++i) data[i] = static_cast<float>(i) * scale + offset;
  return out;
}

/*! \brief Each test gets a fresh Context (its own cache and stats) made current. */
class LazyTest : public ::testing::Test {
 protected:
  lazy::Context context_;
  lazy::Context::Scope scope_{&context_};
  lazy::Stats stats() const { return context_.stats(); }
};

inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-4f * (1 + std::fabs(expected[i])));
}

}  // namespace ir

#endif  // IR_TESTS_RUNTIME_LAZY_TEST_UTIL_H_
