// The gradient tape over lazy arrays: gradients equal graph mode's ir::Gradients on the same
// model, flow through values materialized inside the tape, follow TF's rules (persistent,
// watched, None), and a whole training step runs as one cached trace.
#include "ir/lazy_tape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <unordered_map>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/node.h"

namespace ir {
namespace {

using lazy::Array;
using lazy::GradientTape;
using Attrs = std::map<std::string, std::string>;

NDArray Wave(const Shape& shape, float scale, float phase) {
  NDArray out(shape, DType::kFloat32);
  for (int64_t i = 0; i < out.Size(); ++i)
    out.data<float>()[i] = scale * std::sin(0.7f * static_cast<float>(i) + phase);
  return out;
}

/*! \brief One-hot labels [n, classes]. */
NDArray Labels(int64_t n, int64_t classes) {
  NDArray out(Shape({n, classes}), DType::kFloat32);
  for (int64_t i = 0; i < n * classes; ++i) out.data<float>()[i] = (i % classes == (i / classes) % classes) ? 1 : 0;
  return out;
}

/*!
 * \brief The model once, for lazy arrays and for graph nodes: `op(name, inputs, attrs)` records
 * or builds. Softmax regression when `params` holds W, b; an MLP (relu hidden layer) with 4.
 */
template <typename T>
T Loss(const std::function<T(const std::string&, std::vector<T>, Attrs)>& op, const T& x, const T& y,
       const std::vector<T>& params) {
  T h = x;
  for (size_t i = 0; i + 1 < params.size(); i += 2) {
    h = op("add", {op("matmul", {h, params[i]}, {}), params[i + 1]}, {});
    if (i + 2 < params.size()) h = op("relu", {h}, {});
  }
  T ce = op("sum", {op("multiply", {y, op("log_softmax", {h}, {})}, {})}, {{"axis", "[1]"}});
  return op("negative", {op("mean", {ce}, {})}, {});
}

Array LazyLoss(const Array& x, const Array& y, const std::vector<Array>& params) {
  return Loss<Array>(
      [](const std::string& name, std::vector<Array> in, Attrs attrs) { return lazy::Apply(name, in, attrs); }, x, y,
      params);
}

/*! \brief Graph mode: ir::Gradients of the same model, run by an Executor. */
std::vector<NDArray> GraphGradients(const NDArray& x, const NDArray& y, const std::vector<NDArray>& params) {
  std::unordered_map<std::string, NDArray> feeds{{"x", x}, {"y", y}};
  std::vector<NodeEntry> vars;
  for (size_t i = 0; i < params.size(); ++i) {
    feeds["p" + std::to_string(i)] = params[i];
    vars.push_back(NodeEntry{Node::CreateVariable("p" + std::to_string(i)), 0});
  }
  int count = 0;
  NodeEntry loss =
      Loss<NodeEntry>([&](const std::string& name, std::vector<NodeEntry> in,
                          Attrs attrs) { return MakeNode(name, name + std::to_string(count++), std::move(in), attrs); },
                      NodeEntry{Node::CreateVariable("x"), 0}, NodeEntry{Node::CreateVariable("y"), 0}, vars);
  Executor executor(Graph(Gradients({loss}, vars)), SessionOptions(), std::make_shared<VariableStore>());
  return executor.Run(feeds);
}

void ExpectClose(const NDArray& actual, const NDArray& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  std::vector<float> a = actual.ToVector<float>(), e = expected.ToVector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], 1e-5f + 1e-4f * std::fabs(e[i])) << "at " << i;
}

class LazyTapeTest : public ::testing::Test {
 protected:
  lazy::Context context_;
  lazy::Context::Scope scope_{&context_};
  NDArray x_ = Wave({8, 5}, 1.0f, 0.3f), y_ = Labels(8, 3);
};

TEST_F(LazyTapeTest, SoftmaxRegressionAndMlpGradientsEqualGraphMode) {
  std::vector<std::vector<NDArray>> models = {
      {Wave({5, 3}, 0.5f, 0.1f), Wave({3}, 0.2f, 0.4f)},
      {Wave({5, 6}, 0.6f, 0.2f), Wave({6}, 0.1f, 1.0f), Wave({6, 3}, 0.5f, 0.7f), Wave({3}, 0.2f, 0.9f)}};
  for (const std::vector<NDArray>& values : models) {
    SCOPED_TRACE(values.size() == 2 ? "softmax regression" : "MLP");
    std::vector<Array> params(values.begin(), values.end());
    GradientTape tape;
    for (const Array& p : params) tape.Watch(p);
    Array loss = LazyLoss(x_, y_, params);
    tape.Stop();
    std::vector<Array> grads = tape.Gradient({loss}, params);
    std::vector<NDArray> expected = GraphGradients(x_, y_, values);
    ASSERT_EQ(grads.size(), values.size());
    for (const Array& grad : grads) EXPECT_TRUE(grad.is_pending()) << "gradients are pending, to fuse with the update";
    for (size_t i = 0; i < grads.size(); ++i) ExpectClose(grads[i].Eval(), expected[i]);
  }
}

TEST_F(LazyTapeTest, GradientsFlowThroughValuesMaterializedInsideTheTape) {
  Array w(Wave({5, 3}, 0.5f, 0.1f)), b(Wave({3}, 0.2f, 0.4f));
  GradientTape tape;
  tape.Watch(w);
  tape.Watch(b);
  Array loss = LazyLoss(x_, y_, {w, b});
  float printed = loss.Eval().ToVector<float>()[0];  // like print(loss.numpy()) inside the tape
  EXPECT_TRUE(std::isfinite(printed));
  size_t misses = context_.stats().cache_misses;
  std::vector<Array> grads = tape.Gradient({loss}, {w, b});
  ASSERT_TRUE(grads[0].defined());
  ExpectClose(grads[0].Eval(), GraphGradients(x_, y_, {w.Eval(), b.Eval()})[0]);
  EXPECT_EQ(context_.stats().cache_misses, misses + 1) << "the backward pass is one trace";
}

TEST_F(LazyTapeTest, NonPersistentTapeAnswersOncePersistentOneAgain) {
  Array w(Wave({3}, 1.0f, 0.5f));
  for (bool persistent : {false, true}) {
    GradientTape tape(persistent);
    tape.Watch(w);
    Array y = lazy::sum(w * w);
    Array z = lazy::sum(lazy::exp(w));
    tape.Stop();  // evaluating y's gradient below computes z too (a live array): z stays differentiable
    ExpectClose(tape.Gradient({y}, {w})[0].Eval(), (w * 2.0f).Eval());
    if (persistent) {
      ExpectClose(tape.Gradient({z}, {w})[0].Eval(), lazy::exp(w).Eval());
    } else {
      try {
        tape.Gradient({z}, {w});
        FAIL() << "a second gradient of a non-persistent tape must throw";
      } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("can only be called once on non-persistent tapes"), std::string::npos)
            << err.what();
      }
    }
  }
}

TEST_F(LazyTapeTest, UnwatchedOrUnusedSourcesHaveNoGradient) {
  Array w(Wave({3}, 1.0f, 0.5f)), unused(Wave({3}, 1.0f, 0.1f)), unwatched(Wave({3}, 1.0f, 0.2f));
  GradientTape tape;
  tape.Watch(w);
  tape.Watch(unused);
  Array y = lazy::sum(w * unwatched);
  std::vector<Array> grads = tape.Gradient({y}, {w, unused, unwatched});
  ASSERT_TRUE(grads[0].defined());
  ExpectClose(grads[0].Eval(), unwatched.Eval());
  EXPECT_FALSE(grads[1].defined());
  EXPECT_FALSE(grads[2].defined());
}

TEST_F(LazyTapeTest, TrainingStepIsOneCachedTrace) {
  Array w(Wave({5, 3}, 0.5f, 0.1f)), b(Wave({3}, 0.2f, 0.4f));
  float first_loss = 0, last_loss = 0;
  for (int step = 0; step < 3; ++step) {
    lazy::Stats before = context_.stats();
    Array loss;
    std::vector<Array> updates;
    {
      GradientTape tape;
      tape.Watch(w);
      tape.Watch(b);
      loss = LazyLoss(x_, y_, {w, b});
      tape.Stop();
      std::vector<Array> grads = tape.Gradient({loss}, {w, b});
      Array lr(0.5f / static_cast<float>(step + 1));  // a changing learning rate is a parameter
      updates = {w - lr * grads[0], b - lr * grads[1]};
    }
    lazy::Materialize({loss, updates[0], updates[1]});
    lazy::AssignAll({w, b}, updates);
    const lazy::Stats& after = context_.stats();
    EXPECT_EQ(after.cache_hits + after.cache_misses - before.cache_hits - before.cache_misses, 1u)
        << "forward, backward and update are one trace (step " << step << ")";
    if (step > 0) {
      EXPECT_EQ(after.cache_hits, before.cache_hits + 1) << "step " << step;
      EXPECT_EQ(after.traces_compiled, before.traces_compiled) << "step " << step;
    }
    (step == 0 ? first_loss : last_loss) = loss.Eval().ToVector<float>()[0];
  }
  EXPECT_LT(last_loss, first_loss) << "SGD with the tape's gradients lowers the loss";
}

NDArray Copy(const NDArray& a) { return NDArray::FromVector<float>(a.shape(), a.ToVector<float>()); }

/*! \brief Empties this thread's tape cache, then sets its limit (0 disables it) until destroyed. */
class TapeCacheLimit {
 public:
  explicit TapeCacheLimit(size_t limit) : saved_(GradientTape::CacheLimit()) {
    GradientTape::SetCacheLimit(0);
    GradientTape::SetCacheLimit(limit);
  }
  ~TapeCacheLimit() { GradientTape::SetCacheLimit(saved_); }

 private:
  size_t saved_;
};

/*! \brief One SGD step of the model on the tape; returns the gradients it applied. */
std::vector<NDArray> TapeStep(std::vector<Array>* params, const NDArray& x, const NDArray& y) {
  GradientTape tape;
  for (const Array& p : *params) tape.Watch(p);
  Array loss = LazyLoss(x, y, *params);
  tape.Stop();
  std::vector<Array> grads = tape.Gradient({loss}, *params);
  std::vector<Array> updates;
  for (size_t i = 0; i < params->size(); ++i) {
    EXPECT_TRUE(grads[i].is_pending()) << "gradient " << i;
    updates.push_back((*params)[i] - Array(0.5f) * grads[i]);
  }
  lazy::AssignAll(*params, updates);  // computes the held gradients in the update's trace
  std::vector<NDArray> out;
  for (const Array& g : grads) out.push_back(Copy(g.Eval()));
  return out;
}

TEST_F(LazyTapeTest, TrainingLoopReplaysTheCachedBackwardPass) {
  TapeCacheLimit clear(64);
  std::vector<std::vector<NDArray>> models = {
      {Wave({5, 3}, 0.5f, 0.1f), Wave({3}, 0.2f, 0.4f)},
      {Wave({5, 6}, 0.6f, 0.2f), Wave({6}, 0.1f, 1.0f), Wave({6, 3}, 0.5f, 0.7f), Wave({3}, 0.2f, 0.9f)}};
  for (const std::vector<NDArray>& values : models) {
    SCOPED_TRACE(values.size() == 2 ? "softmax regression" : "MLP");
    // The reference: the same steps in a fresh Context with the tape cache off (ir::Gradients each step).
    std::vector<std::vector<NDArray>> expected;
    {
      TapeCacheLimit off(0);
      lazy::Context fresh;
      lazy::Context::Scope scope(&fresh);
      std::vector<Array> params;
      for (const NDArray& v : values) params.emplace_back(Copy(v));
      for (int step = 0; step < 3; ++step) expected.push_back(TapeStep(&params, x_, y_));
      EXPECT_EQ(fresh.stats().tape_cache_hits, 0u);
      EXPECT_EQ(fresh.stats().tape_cache_misses, 3u);
    }
    std::vector<Array> params;
    for (const NDArray& v : values) params.emplace_back(Copy(v));
    for (int step = 0; step < 3; ++step) {
      lazy::Stats stats = context_.stats();
      std::vector<NDArray> grads = TapeStep(&params, x_, y_);
      const lazy::Stats& after = context_.stats();
      EXPECT_EQ(after.tape_cache_hits - stats.tape_cache_hits, step > 0 ? 1u : 0u) << "step " << step;
      EXPECT_EQ(after.tape_cache_misses - stats.tape_cache_misses, step > 0 ? 0u : 1u) << "step " << step;
      EXPECT_EQ(after.cache_hits + after.cache_misses - stats.cache_hits - stats.cache_misses, 1u)
          << "forward, backward and update stay one trace (step " << step << ")";
      for (size_t i = 0; i < grads.size(); ++i) ExpectClose(grads[i], expected[step][i]);
    }
  }
}

TEST_F(LazyTapeTest, StructurallyDifferentRegionsMissTheTapeCache) {
  TapeCacheLimit clear(64);
  Array w(Wave({5, 3}, 0.5f, 0.1f)), b(Wave({3}, 0.2f, 0.4f));
  auto misses = [&](const std::function<Array()>& loss, const std::vector<Array>& sources,
                    const std::vector<Array>& heads) {
    size_t before = context_.stats().tape_cache_misses;
    GradientTape tape;
    tape.Watch(w);
    tape.Watch(b);
    Array target = loss();
    std::vector<Array> grads = tape.Gradient({target}, sources, heads);
    for (const Array& g : grads) EXPECT_TRUE(!g.defined() || g.is_pending());
    return context_.stats().tape_cache_misses - before;
  };
  auto linear = [&]() { return lazy::sum(lazy::matmul(x_, w) + b); };
  EXPECT_EQ(misses(linear, {w, b}, {}), 1u);
  EXPECT_EQ(misses(linear, {w, b}, {}), 0u) << "the same region hits";
  EXPECT_EQ(misses([&]() { return lazy::sum(lazy::matmul(x_, w) * b); }, {w, b}, {}), 1u) << "another op";
  EXPECT_EQ(misses([&]() { return lazy::sum(lazy::matmul(x_, w) + b, {1}); }, {w, b}, {}), 1u) << "other attributes";
  EXPECT_EQ(misses([&]() { return lazy::sum(lazy::matmul(x_, w) + b, {1}); }, {w, b},
                   {NDArray::FromVector<float>(Shape({8}), std::vector<float>(8, 1.0f))}),
            1u)
      << "output gradients given";
  EXPECT_EQ(misses(linear, {w}, {}), 1u) << "another set of sources";
  EXPECT_EQ(misses(
                [&]() {
                  return lazy::sum(lazy::matmul(Wave({4, 5}, 1.0f, 0.0f), w) + b);
                },
                {w, b}, {}),
            1u)
      << "a constant of another shape";
}

}  // namespace
}  // namespace ir
