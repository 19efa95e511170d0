#include <gtest/gtest.h>

#include <cmath>

#include "ir/op_kernel.h"
#include "ops/array_test_util.h"
#include "ops/random_utils.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

namespace rnd = op::random;

/*! \brief Runs a random op's kernel directly with a chosen OpContext::seed. */
NDArray Sample(const std::string& op, const Attrs& attrs, uint64_t context_seed) {
  NodePtr node = MakeOpNode(op, attrs, 0);
  std::vector<Shape> in, out(1);
  std::vector<DType> in_types, out_types(1, DType::kUnknown);
  Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in, &out);
  Op::GetAttr<FInferType>("FInferType")[node->op()](node->attrs, &in_types, &out_types);
  NDArray result(out[0], out_types[0]);
  OpContext ctx;
  ctx.seed = context_seed;
  Op::GetAttr<FCompute>("FCompute")[node->op()](ctx, node->attrs, {}, {result});
  return result;
}

struct Moments {
  double mean = 0, stddev = 0, min = 1e300, max = -1e300;
};

Moments MomentsOf(const NDArray& a) {
  Moments m;
  std::vector<double> v = Values(a);
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= v.size();
  for (double x : v) m.stddev += (x - m.mean) * (x - m.mean);
  m.stddev = std::sqrt(m.stddev / v.size());
  return m;
}

TEST(PhiloxTest, MatchesPublishedKnownAnswers) {
  // Known-answer vectors of Random123 (kat_vectors, philox4x32_10).
  EXPECT_EQ(rnd::Philox4x32({0, 0, 0, 0}, 0), (rnd::Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(rnd::Philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffffffffffull),
            (rnd::Words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(rnd::Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0x299f31d0a4093822ull),
            (rnd::Words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(RandomTest, SameSeedsGiveSameValuesOtherSeedsOthers) {
  for (const char* op : {"random_uniform", "random_normal", "truncated_normal"}) {
    SCOPED_TRACE(op);
    Attrs attrs = {{"shape", "(4,5)"}, {"seed", "3"}};
    std::vector<double> a = Values(Sample(op, attrs, 11)), b = Values(Sample(op, attrs, 11));
    EXPECT_EQ(a, b);
    std::vector<double> other_context = Values(Sample(op, attrs, 12));
    std::vector<double> other_attr = Values(Sample(op, {{"shape", "(4,5)"}, {"seed", "4"}}, 11));
    int same_context = 0, same_attr = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      same_context += a[i] == other_context[i];
      same_attr += a[i] == other_attr[i];
    }
    EXPECT_EQ(same_context, 0);
    EXPECT_EQ(same_attr, 0);
    // Element i does not depend on the shape around it.
    std::vector<double> longer = Values(Sample(op, {{"shape", "(30)"}, {"seed", "3"}}, 11));
    EXPECT_EQ(std::vector<double>(longer.begin(), longer.begin() + 20), a);
  }
}

TEST(RandomTest, ValuesEqualASequentialRecomputation) {
  // Large enough to be split across threads; each element must be its own counter's value.
  uint64_t key = rnd::CombineSeeds(5, 7);
  Attrs attrs = {{"shape", "(300,401)"}, {"seed", "7"}, {"dtype", "float64"}};
  std::vector<double> uniform = Values(Sample("random_uniform", attrs, 5));
  std::vector<double> normal = Values(Sample("random_normal", attrs, 5));
  std::vector<double> truncated = Values(Sample("truncated_normal", attrs, 5));
  int mismatches = 0;
  for (size_t i = 0; i < uniform.size(); ++i) {
    mismatches += uniform[i] != rnd::UniformAt<double>(key, i);
    mismatches += normal[i] != rnd::NormalAt(key, i);
    mismatches += truncated[i] != rnd::TruncatedNormalAt(key, i);
  }
  EXPECT_EQ(mismatches, 0);
  std::vector<double> single = Values(Sample("random_uniform", {{"shape", "(300,401)"}, {"seed", "7"}}, 5));
  for (size_t i = 0; i < single.size(); i += 997) EXPECT_EQ(single[i], rnd::UniformAt<float>(key, i));
}

TEST(RandomTest, UniformCoversTheRange) {
  Moments m = MomentsOf(Sample("random_uniform", {{"shape", "(100000)"}, {"minval", "-2"}, {"maxval", "4"}}, 1));
  EXPECT_NEAR(m.mean, 1.0, 0.03);
  EXPECT_NEAR(m.stddev, 6 / std::sqrt(12.0), 0.02);
  EXPECT_GE(m.min, -2);
  EXPECT_LT(m.max, 4);
  EXPECT_LT(m.min, -1.99);
  EXPECT_GT(m.max, 3.99);
}

TEST(RandomTest, NormalHasItsMeanAndStddev) {
  for (const char* dtype : {"float32", "float64"}) {
    Moments m = MomentsOf(
        Sample("random_normal", {{"shape", "(100001)"}, {"mean", "3"}, {"stddev", "2"}, {"dtype", dtype}}, 2));
    EXPECT_NEAR(m.mean, 3, 0.03) << dtype;
    EXPECT_NEAR(m.stddev, 2, 0.03) << dtype;
  }
}

TEST(RandomTest, TruncatedNormalStaysWithinTwoStddevs) {
  NDArray t = Sample("truncated_normal", {{"shape", "(100000)"}, {"mean", "1"}, {"stddev", "0.5"}}, 3);
  Moments m = MomentsOf(t);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LE(m.max, 2.0);
  EXPECT_NEAR(m.mean, 1, 0.01);
  // A standard normal truncated to [-2, 2] has stddev 0.8796.
  EXPECT_NEAR(m.stddev, 0.5 * 0.8796, 0.01);
  // Resampled elements differ from the untruncated normal of the same key; the others equal it.
  NDArray n = Sample("random_normal", {{"shape", "(100000)"}, {"mean", "1"}, {"stddev", "0.5"}}, 3);
  std::vector<double> tv = Values(t), nv = Values(n);
  int resampled = 0;
  for (size_t i = 0; i < tv.size(); ++i) {
    bool outside = std::fabs(nv[i] - 1) > 1.0;
    resampled += outside;
    if (!outside) {
      EXPECT_EQ(tv[i], nv[i]);
    }
  }
  EXPECT_NEAR(resampled / 100000.0, 0.0455, 0.004);
}

TEST(RandomTest, InferenceAndAttributes) {
  Inferred shapes = InferShapes("random_normal", {{"shape", "(2,3)"}}, {});
  EXPECT_EQ(shapes.out[0], (Shape{2, 3}));
  EXPECT_TRUE(shapes.complete);
  EXPECT_EQ(InferTypes("truncated_normal", {{"shape", "(2)"}, {"dtype", "float64"}}, {}),
            std::vector<DType>{DType::kFloat64});
  EXPECT_ERROR(InferTypes("random_uniform", {{"shape", "(2)"}, {"dtype", "int32"}}, {}),
               "node 'random_uniform' (op random_uniform): attribute 'dtype' dtype int32 is not supported");
  EXPECT_ERROR(InferShapes("random_normal", {{"shape", "(2,-1)"}}, {}), "shape [2,-1] has a negative dimension");
  for (const char* op : {"random_uniform", "random_normal", "truncated_normal"}) {
    EXPECT_TRUE(Op::GetAttr<TIsStateful>("TIsStateful")[Op::Get(op)]) << op;
    EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get(op)], kOpaque) << op;
  }
  // Through the harness: the same graph and run seed give the same values.
  std::vector<double> a = Values(RunOp("random_uniform", {{"shape", "(8)"}}, {})[0]);
  EXPECT_EQ(a, Values(RunOp("random_uniform", {{"shape", "(8)"}}, {})[0]));
}

TEST(RandomTest, UniformLikeDrawsRandomUniformsValuesInItsInputsShape) {
  Attrs attrs = {{"seed", "5"}, {"minval", "-2"}, {"maxval", "3"}};
  NDArray like = Iota(Shape{3, 4}, DType::kFloat64);
  std::vector<NDArray> out = RunOp("random_uniform_like", attrs, {like});
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  // The same generator and key as random_uniform of that shape, for one run seed.
  NodePtr node = MakeOpNode("random_uniform_like", attrs, 1);
  NDArray direct(Shape{3, 4}, DType::kFloat64);
  OpContext ctx;
  ctx.seed = 9;
  Op::GetAttr<FCompute>("FCompute")[node->op()](ctx, node->attrs, {like}, {direct});
  Attrs fixed = attrs;
  fixed.insert({{"shape", "(3,4)"}, {"dtype", "float64"}});
  EXPECT_EQ(Values(direct), Values(Sample("random_uniform", fixed, 9)));
  for (double v : Values(direct)) EXPECT_TRUE(v >= -2 && v < 3) << v;
  EXPECT_EQ(InferShapes("random_uniform_like", {}, {Shape{2, 5}}).out[0], (Shape{2, 5}));
  EXPECT_ERROR(InferTypes("random_uniform_like", {}, {DType::kInt32}), "input 'like' dtype int32 is not supported");
  EXPECT_TRUE(Op::GetAttr<TIsStateful>("TIsStateful")[Op::Get("random_uniform_like")]);
}

}  // namespace
}  // namespace test
}  // namespace ir
