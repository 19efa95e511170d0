/*!
 * \file lazy_step_test.cc
 * \brief Lazy arrays in training steps: live pending arrays synced into the update's trace,
 * RNG under cache hits, scalars of every dtype, the cache limit.
 */
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ir/lazy.h"
#include "runtime/lazy_test_util.h"
#include "test_util.h"

namespace ir {
namespace {

using lazy::Array;

TEST_F(LazyTest, HeldLossIsComputedInTheUpdatesTrace) {
  NDArray x_data = Ramp({16, 8}, 0.01f), w_data = Ramp({8, 4}, 0.02f, -0.1f);
  NDArray w_buffer = w_data.CopyTo(w_data.device());
  Array x(x_data), w(w_buffer);
  Array pred = lazy::matmul(x, w);
  Array loss = lazy::sum(pred * pred);  // held by the user, not requested by the update
  Array grad = lazy::matmul(x, pred, true, false);
  lazy::AssignAll({w}, {w - Array(0.01f) * grad});
  EXPECT_EQ(stats().cache_misses + stats().cache_hits, 1u) << "the loss needed a trace of its own";
  EXPECT_FALSE(loss.is_pending());
  EXPECT_FALSE(pred.is_pending());
  // The loss is the old weights' (computed before the update wrote them in place).
  std::vector<float> xv = x_data.ToVector<float>(), wv = w_data.ToVector<float>();
  double expected = 0;
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 4; ++j) {
      double p = 0;
      for (int k = 0; k < 8; ++k) p += xv[i * 8 + k] * wv[k * 4 + j];
      expected += p * p;
    }
  }
  EXPECT_NEAR(loss.Eval().ToVector<float>()[0], expected, 1e-4 * expected);
  EXPECT_EQ(stats().cache_misses + stats().cache_hits, 1u);
  EXPECT_NE(w_buffer.ToVector<float>(), wv) << "the holder of w's buffer does not see the update";
  EXPECT_EQ(w.Eval().ToVector<float>(), w_buffer.ToVector<float>());
}

TEST_F(LazyTest, ThousandStepsWithFreshDataLearningRateAndRngCompileOnce) {
  Array w(Ramp({4, 4}, 0.01f));
  std::vector<float> previous_noise;
  int same_draws = 0;
  for (int step = 0; step < 1000; ++step) {
    Array x(Ramp({4, 4}, 0.01f / static_cast<float>(step + 1)));  // fresh data
    Array lr = Array::Scalar(0.1 / (step + 1), DType::kFloat32);  // a changing learning rate
    Array noise = lazy::Apply("random_normal", {}, {{"shape", "[4,4]"}});
    lazy::AssignAll({w}, {w * 0.5f + lr * (lazy::matmul(x, w) + noise)});
    std::vector<float> drawn = noise.Eval().ToVector<float>();  // computed with the update (held)
    same_draws += drawn == previous_noise ? 1 : 0;
    previous_noise = std::move(drawn);
  }
  EXPECT_EQ(stats().cache_misses, 1u);
  EXPECT_EQ(stats().traces_compiled, 1u);
  EXPECT_EQ(stats().cache_hits, 999u);
  EXPECT_EQ(same_draws, 0) << "a cache hit replayed the previous random draw";
}

TEST_F(LazyTest, RandomInitializersOfDifferentTracesDrawDifferentStreams) {
  // Two initializers materialized apart (as tf.Variable does) are two traces whose random node has
  // the same name and run number: without a seed per trace the [4] draw is the [64]'s prefix.
  std::vector<float> big = lazy::Apply("random_normal", {}, {{"shape", "[64]"}}).Eval().ToVector<float>();
  std::vector<float> small = lazy::Apply("random_normal", {}, {{"shape", "[4]"}}).Eval().ToVector<float>();
  ASSERT_EQ(small.size(), 4u);
  EXPECT_NE(small, std::vector<float>(big.begin(), big.begin() + 4));
  lazy::Context again;
  lazy::Context::Scope scope(&again);
  std::vector<float> replayed = lazy::Apply("random_normal", {}, {{"shape", "[64]"}}).Eval().ToVector<float>();
  EXPECT_EQ(replayed, big) << "a program's draws are reproducible in a new Context";
}

TEST_F(LazyTest, ScalarsOfEveryDType) {
  EXPECT_EQ((Array::Scalar(7, DType::kInt64) + Array::Scalar(5, DType::kInt64)).Eval().ToVector<int64_t>(),
            std::vector<int64_t>({12}));
  EXPECT_EQ((Array::Scalar(2.5, DType::kFloat64) * Array::Scalar(2, DType::kFloat64)).Eval().ToVector<double>(),
            std::vector<double>({5.0}));
  EXPECT_EQ(Array::Scalar(-3.7, DType::kInt32).Eval().ToVector<int32_t>(), std::vector<int32_t>({-3}));
  EXPECT_EQ(lazy::DTypeOf(Array::Scalar(1, DType::kBool)), DType::kBool);
  EXPECT_ERROR(Array::Scalar(1, DType::kUnknown), "unknown");
}

TEST_F(LazyTest, CacheEvictsTheLeastRecentlyUsedTrace) {
  EXPECT_EQ(context_.cache_limit(), 256u);
  context_.set_cache_limit(2);
  auto run = [](int64_t n) { (Array(Ramp({n}, 1)) * 2.0f).Eval(); };
  run(1);
  run(2);
  run(1);  // hit: [1] becomes the most recently used
  run(3);  // evicts [2]
  EXPECT_EQ(stats().evictions, 1u);
  EXPECT_EQ(context_.cache_size(), 2u);
  EXPECT_EQ(stats().cache_hits, 1u);
  run(1);
  EXPECT_EQ(stats().cache_hits, 2u);
  run(2);
  EXPECT_EQ(stats().cache_misses, 4u);
  EXPECT_EQ(stats().evictions, 2u);
}

TEST_F(LazyTest, DumpDirGetsEachCompiledTraceAndMustBePrivate) {
  char dir[] = "/tmp/lazy_dump_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("IR_LAZY_DUMP_DIR", dir, 1);
  Array a(Ramp({8}, 1));
  (lazy::exp(a) * 3.0f).Eval();
  (lazy::exp(a) * 4.0f).Eval();  // a hit: nothing compiled, nothing dumped
  std::string written;
  for (int n = 0; n < 1000 && written.empty(); ++n) {  // the process numbers dumps across Contexts
    std::ifstream in(StrCat(dir, "/trace-", n, ".txt"));
    std::stringstream text;
    text << in.rdbuf();
    written = text.str();
    if (!written.empty()) unlink(StrCat(dir, "/trace-", n, ".txt").c_str());
  }
  EXPECT_NE(written.find("_fused"), std::string::npos) << written;
  EXPECT_NE(written.find("exp_0"), std::string::npos) << written;
  chmod(dir, 0777);  // another user could plant files: refused
  EXPECT_ERROR(lazy::log(a).Eval(), "IR_LAZY_DUMP_DIR");
  unsetenv("IR_LAZY_DUMP_DIR");
  EXPECT_EQ(lazy::log(a).Eval().shape(), Shape({8}));
  rmdir(dir);
}

}  // namespace
}  // namespace ir
