// Converters of reductions, matmul, bias, softmax and losses, batch norm, dropout, random and
// state ops: every stacked/unstacked mix equals the loop; stateful ops draw per iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/autodiff.h"
#include "passes/vectorize_harness.h"

namespace ir {
namespace {

using pfor_test::Arg;
using pfor_test::Check;
using pfor_test::ExpectLikeLoop;
using pfor_test::Op;
using Attrs = std::map<std::string, std::string>;

/*! \brief A body of one node of `op` over all the args, returning its first `outputs` outputs. */
pfor_test::Body OneOp(const std::string& op, const Attrs& attrs, uint32_t outputs = 1) {
  return [=](const std::vector<NodeEntry>& x) {
    NodeEntry e = Op(op, "op", x, attrs);
    std::vector<NodeEntry> outs;
    for (uint32_t j = 0; j < outputs; ++j) outs.push_back(NodeEntry{e.node, j});
    return outs;
  };
}

TEST(VectorizeNnTest, ReductionsOverEveryAxisSpec) {
  for (const char* axis : {"()", "(0)", "(-1)", "(0,2)", "(-2)"}) {
    for (const char* keep : {"0", "1"}) {
      ExpectLikeLoop(StrCat("sum axis ", axis, " keepdims ", keep), {Arg{Shape{2, 3, 4}}},
                     OneOp("sum", {{"axis", axis}, {"keepdims", keep}}));
    }
  }
  for (const char* op : {"mean", "max", "min", "prod"}) {
    ExpectLikeLoop(StrCat(op, " axis -1"), {Arg{Shape{2, 3}}}, OneOp(op, {{"axis", "(-1)"}}));
    ExpectLikeLoop(StrCat(op, " all, keepdims"), {Arg{Shape{2, 3}}}, OneOp(op, {{"keepdims", "1"}}));
  }
  ExpectLikeLoop("sum of a scalar", {Arg{Shape::Scalar()}}, OneOp("sum", {}));
  ExpectLikeLoop("integer mean", {Arg{Shape{3, 2}, DType::kInt32, -9, 9}}, OneOp("mean", {{"axis", "(0)"}}));
}

TEST(VectorizeNnTest, ArgReductions) {
  for (const char* op : {"argmax", "argmin"}) {
    for (const char* axis : {"0", "1", "-1"}) {
      ExpectLikeLoop(StrCat(op, " axis ", axis), {Arg{Shape{3, 4}}}, OneOp(op, {{"axis", axis}}));
    }
    ExpectLikeLoop(StrCat(op, " keepdims"), {Arg{Shape{3, 4}}}, OneOp(op, {{"axis", "-1"}, {"keepdims", "1"}}));
  }
}

TEST(VectorizeNnTest, ReduceGradBroadcast) {
  struct Case {
    const char* axis;
    bool keepdims;
    Shape og;
  };
  for (const Case& c : {Case{"(1)", false, Shape{2, 4}}, Case{"()", false, Shape::Scalar()},
                        Case{"(-1)", true, Shape{2, 3, 1}}, Case{"(0,2)", false, Shape{3}}}) {
    for (const char* normalize : {"0", "1"}) {
      ExpectLikeLoop(StrCat("_reduce_grad_broadcast axis ", c.axis, " normalize ", normalize),
                     {Arg{c.og}, Arg{Shape{2, 3, 4}}},
                     OneOp("_reduce_grad_broadcast",
                           {{"axis", c.axis}, {"keepdims", c.keepdims ? "1" : "0"}, {"normalize", normalize}}));
    }
  }
  ExpectLikeLoop("_reduce_grad_broadcast of a scalar", {Arg{Shape::Scalar()}, Arg{Shape::Scalar()}},
                 OneOp("_reduce_grad_broadcast", {{"normalize", "1"}}));
}

/*! \brief a's shape [.., m, k] or [.., k, m] when transposed. */
Shape Operand(std::vector<int64_t> batch, int64_t rows, int64_t cols, bool transposed) {
  batch.push_back(transposed ? cols : rows);
  batch.push_back(transposed ? rows : cols);
  return Shape(batch);
}

TEST(VectorizeNnTest, MatmulEveryMixAndTransposeFlags) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Attrs attrs{{"transpose_a", ta ? "1" : "0"}, {"transpose_b", tb ? "1" : "0"}};
      std::string flags = StrCat(" ta ", ta, " tb ", tb);
      ExpectLikeLoop("matmul 2x2" + flags, {Arg{Operand({}, 2, 3, ta)}, Arg{Operand({}, 3, 4, tb)}},
                     OneOp("matmul", attrs));
      ExpectLikeLoop("matmul outer product" + flags, {Arg{Operand({}, 4, 1, ta)}, Arg{Operand({}, 1, 3, tb)}},
                     OneOp("matmul", attrs));
      ExpectLikeLoop("matmul batched a" + flags, {Arg{Operand({2}, 2, 3, ta)}, Arg{Operand({}, 3, 4, tb)}},
                     OneOp("matmul", attrs));
      ExpectLikeLoop("matmul batched b" + flags, {Arg{Operand({}, 2, 3, ta)}, Arg{Operand({2}, 3, 4, tb)}},
                     OneOp("matmul", attrs));
      ExpectLikeLoop("matmul broadcast batches" + flags, {Arg{Operand({2, 1}, 2, 3, ta)}, Arg{Operand({3}, 3, 4, tb)}},
                     OneOp("matmul", attrs));
    }
  }
  ExpectLikeLoop("matmul float64", {Arg{Shape{2, 3}, DType::kFloat64}, Arg{Shape{3, 2}, DType::kFloat64}},
                 OneOp("matmul", {}));
}

TEST(VectorizeNnTest, BiasAddBothFormats) {
  ExpectLikeLoop("bias_add NHWC", {Arg{Shape{2, 3, 4}}, Arg{Shape{4}}}, OneOp("bias_add", {}));
  ExpectLikeLoop("bias_add NHWC rank 1", {Arg{Shape{4}}, Arg{Shape{4}}}, OneOp("bias_add", {}));
  ExpectLikeLoop("bias_add NCHW", {Arg{Shape{2, 4, 3}}, Arg{Shape{4}}}, OneOp("bias_add", {{"data_format", "NCHW"}}));
  ExpectLikeLoop("bias_add NCHW rank 2", {Arg{Shape{2, 4}}, Arg{Shape{4}}},
                 OneOp("bias_add", {{"data_format", "NCHW"}}));
  for (const char* format : {"NHWC", "NCHW"}) {
    ExpectLikeLoop(StrCat("bias_add_grad ", format), {Arg{Shape{2, 4, 3, 4}}},
                   OneOp("bias_add_grad", {{"data_format", format}}));
  }
  ExpectLikeLoop("bias_add_grad of a vector", {Arg{Shape{4}}}, OneOp("bias_add_grad", {}));
}

TEST(VectorizeNnTest, SoftmaxAxes) {
  for (const char* op : {"softmax", "log_softmax"}) {
    for (const char* axis : {"-1", "0", "1"}) {
      ExpectLikeLoop(StrCat(op, " axis ", axis), {Arg{Shape{2, 3, 4}, DType::kFloat32, -3, 3}},
                     OneOp(op, {{"axis", axis}}));
    }
  }
}

TEST(VectorizeNnTest, CrossEntropyLosses) {
  ExpectLikeLoop("softmax_cross_entropy_with_logits",
                 {Arg{Shape{2, 3}, DType::kFloat32, -3, 3}, Arg{Shape{2, 3}, DType::kFloat32, 0, 1}},
                 OneOp("softmax_cross_entropy_with_logits", {}, 2));
  for (DType labels : {DType::kInt32, DType::kInt64}) {
    ExpectLikeLoop("sparse_softmax_cross_entropy_with_logits",
                   {Arg{Shape{2, 3}, DType::kFloat32, -3, 3}, Arg{Shape{2}, labels, 0, 3}},
                   OneOp("sparse_softmax_cross_entropy_with_logits", {}, 2));
  }
}

TEST(VectorizeNnTest, BatchNormKeepsPerIterationStatistics) {
  Check check;
  check.atol = 1e-4;
  check.rtol = 1e-4;
  for (const char* format : {"NHWC", "NCHW"}) {
    Shape x = std::string(format) == "NHWC" ? Shape{4, 2, 3} : Shape{4, 3, 2};
    for (const char* training : {"1", "0"}) {
      Attrs attrs{{"data_format", format}, {"is_training", training}};
      ExpectLikeLoop(StrCat("batch_norm ", format, " training ", training),
                     {Arg{x}, Arg{Shape{3}}, Arg{Shape{3}}, Arg{Shape{3}}, Arg{Shape{3}, DType::kFloat32, 0.5, 1.5}},
                     OneOp("batch_norm", attrs, 3), check);
      Check some = check;
      some.masks = {0b0000001, 0b0000010, 0b0000011, 0b0000100, 0b0011000, 0b1100000, 0b1111111};
      ExpectLikeLoop(StrCat("batch_norm_grad ", format, " training ", training),
                     {Arg{x}, Arg{x}, Arg{Shape{3}}, Arg{Shape{3}}, Arg{Shape{3}, DType::kFloat32, 0.5, 1.5},
                      Arg{Shape{3}}, Arg{Shape{3}}},
                     OneOp("batch_norm_grad", attrs, 3), some);
    }
  }
  // Empty statistics are loop-invariant in practice (stacked ones decline: a counted loop).
  check.masks = {0b00001, 0b00010, 0b00111};
  ExpectLikeLoop("batch_norm training without running statistics",
                 {Arg{Shape{4, 3}}, Arg{Shape{3}}, Arg{Shape{3}}, Arg{Shape{0}}, Arg{Shape{0}}},
                 OneOp("batch_norm", {}, 3), check);
}

TEST(VectorizeNnTest, TokensAndStateUpdates) {
  ExpectLikeLoop("group", {Arg{Shape{2}}, Arg{Shape{3}}}, OneOp("group", {}));
  // A stacked value written into a variable has no batched form: a counted loop, not a silent copy.
  NodeEntry var{Node::CreateVariable("v"), 0}, xs{Node::CreateVariable("xs"), 0};
  std::vector<NodeEntry> outs = Pfor(3, [&](const NodeEntry& i) {
    return std::vector<NodeEntry>{Op("assign_add", "add", {var, Op("gather", "row", {xs, i})})};
  });
  Session sess;
  sess.variables().Set("v", NDArray::FromVector<float>(Shape{2}, {0, 0}));
  NDArray sums = sess.Run(outs, {{"xs", NDArray::FromVector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6})}})[0];
  EXPECT_EQ(sums.ToVector<float>(), std::vector<float>({1, 2, 4, 6, 9, 12}));  // in iteration order
  EXPECT_EQ(sess.variables().Get("v").ToVector<float>(), std::vector<float>({9, 12}));
  std::vector<std::string> fallbacks = sess.last_stats().pfor_fallbacks;
  ASSERT_EQ(fallbacks.size(), 1u);
  EXPECT_NE(fallbacks[0].find("(assign_add)"), std::string::npos) << fallbacks[0];
}

/*! \brief Mean and variance of `values`. */
std::pair<double, double> Moments(const std::vector<double>& values) {
  double mean = 0, var = 0;
  for (double v : values) mean += v;
  mean /= values.size();
  for (double v : values) var += (v - mean) * (v - mean);
  return {mean, var / values.size()};
}

/*! \brief The vectorized pfor (n rows) of `body`, run once; expects no fallback loop. */
NDArray RunVectorized(int64_t n, const std::function<NodeEntry(const NodeEntry& index)>& body,
                      const std::unordered_map<std::string, NDArray>& feeds = {}) {
  std::vector<NodeEntry> outs = Pfor(n, [&](const NodeEntry& i) { return std::vector<NodeEntry>{body(i)}; });
  Session sess;
  NDArray out = sess.Run(outs, feeds)[0];
  EXPECT_TRUE(sess.last_stats().pfor_fallbacks.empty());
  return out;
}

/*! \brief Rows of a [n, m] result are different draws: no two rows are equal. */
void ExpectRowsDiffer(const NDArray& a) {
  std::vector<double> v = pfor_test::AsDoubles(a);
  int64_t n = a.shape()[0], m = a.Size() / n;
  for (int64_t r = 1; r < n; ++r) {
    EXPECT_FALSE(std::equal(v.begin(), v.begin() + m, v.begin() + r * m)) << "rows 0 and " << r << " are equal";
  }
}

TEST(VectorizeNnTest, RandomOpsDrawPerIteration) {
  struct Case {
    const char* op;
    double mean, var;
  };
  // truncated_normal: the variance of a standard normal cut at 2 stddevs is 0.7737.
  for (const Case& c :
       {Case{"random_uniform", 0.5, 1.0 / 12}, Case{"random_normal", 0, 1}, Case{"truncated_normal", 0, 0.7737}}) {
    SCOPED_TRACE(c.op);
    NDArray a = RunVectorized(4, [&](const NodeEntry& i) {
      // The control dependency on the index keeps the draw inside the loop (one per iteration).
      NodeEntry r = Op(c.op, "draw", {}, {{"shape", "(50,20)"}});
      r.node->control_deps.push_back(Op("cast", "tick", {i}, {{"dtype", "float32"}}).node);
      return r;
    });
    ASSERT_EQ(a.shape(), (Shape{4, 50, 20}));
    std::pair<double, double> m = Moments(pfor_test::AsDoubles(a));
    EXPECT_NEAR(m.first, c.mean, 0.05);
    EXPECT_NEAR(m.second, c.var, 0.08 * std::max(c.var, 0.1));
    ExpectRowsDiffer(a);
  }
}

TEST(VectorizeNnTest, DropoutMasksPerIteration) {
  ExpectLikeLoop("dropout keep_prob 1", {Arg{Shape{2, 3}}}, OneOp("dropout", {{"keep_prob", "1"}}, 2));
  for (bool stacked : {true, false}) {
    SCOPED_TRACE(stacked ? "stacked input" : "loop-invariant input");
    NodeEntry x{Node::CreateVariable("x"), 0};
    Shape shape = stacked ? Shape{4, 1000} : Shape{1000};
    NDArray ones = NDArray::FromVector<float>(shape, std::vector<float>(shape.Size(), 1.f));
    NDArray y = RunVectorized(
        4,
        [&](const NodeEntry& i) {
          NodeEntry y = Op("dropout", "drop", {stacked ? Op("gather", "row", {x, i}) : x}, {{"keep_prob", "0.25"}});
          // A loop-invariant input: the control dependency on the index keeps the dropout in the loop.
          if (!stacked) y.node->control_deps.push_back(Op("cast", "tick", {i}, {{"dtype", "float32"}}).node);
          return y;
        },
        {{"x", ones}});
    std::vector<double> v = pfor_test::AsDoubles(y);
    double kept = std::count(v.begin(), v.end(), 4.0) / static_cast<double>(v.size());
    EXPECT_EQ(std::count(v.begin(), v.end(), 0.0) + std::count(v.begin(), v.end(), 4.0), static_cast<long>(v.size()));
    EXPECT_NEAR(kept, 0.25, 0.04);
    ExpectRowsDiffer(y);
  }
}

using LossFn =
    std::function<NodeEntry(const NodeEntry& x, const NodeEntry& labels, const std::vector<NodeEntry>& params)>;

/*!
 * \brief Per-example gradients of `loss` (examples [n, features], one-hot labels [n, classes])
 * with respect to params of `shapes`: the vectorized graph equals the loop, and none of the
 * ops converted in this branch falls back to a loop.
 */
void ExpectPerExampleLikeLoop(const LossFn& loss, const std::vector<Shape>& shapes, int64_t features, int64_t classes) {
  const int64_t n = 4;
  std::mt19937 rng(7);
  std::unordered_map<std::string, NDArray> feeds;
  feeds["x"] = pfor_test::RandomArray(Shape{n, features}, DType::kFloat32, -1, 1, &rng);
  std::vector<float> one_hot(n * classes, 0.f);
  for (int64_t i = 0; i < n; ++i) one_hot[i * classes + (i * 3) % classes] = 1.f;
  feeds["labels"] = NDArray::FromVector<float>(Shape{n, classes}, one_hot);
  std::vector<NodeEntry> params;
  for (size_t k = 0; k < shapes.size(); ++k) {
    params.push_back(NodeEntry{Node::CreateVariable(StrCat("p", k)), 0});
    feeds[StrCat("p", k)] = pfor_test::RandomArray(shapes[k], DType::kFloat32, -0.5, 0.5, &rng);
  }
  NodeEntry x{Node::CreateVariable("x"), 0}, labels{Node::CreateVariable("labels"), 0};
  std::vector<NodeEntry> grads = PerExampleGradients(
      [&](const std::vector<NodeEntry>& rows) { return loss(rows[0], rows[1], params); }, {x, labels}, params, n);
  SessionOptions looped;
  looped.passes = {"InferShape", "InferType", "PlanMemory"};
  Session loop_sess(looped), vec_sess;
  std::vector<NDArray> expected = loop_sess.Run(grads, feeds), actual = vec_sess.Run(grads, feeds);
  for (const std::string& f : vec_sess.last_stats().pfor_fallbacks) ADD_FAILURE() << "fallback loop: " << f;
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t j = 0; j < expected.size(); ++j) {
    ASSERT_EQ(expected[j].shape(), actual[j].shape());
    EXPECT_EQ(expected[j].shape()[0], n);
    std::vector<double> a = pfor_test::AsDoubles(expected[j]), b = pfor_test::AsDoubles(actual[j]);
    for (size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(a[e], b[e], 1e-5 + 1e-5 * std::fabs(a[e])) << "gradient " << j;
  }
}

NodeEntry Dense(const std::string& name, const NodeEntry& x, const NodeEntry& w, const NodeEntry& b) {
  return Op("bias_add", name + "_bias", {Op("matmul", name, {x, w}), b});
}

NodeEntry CrossEntropy(const NodeEntry& logits, const NodeEntry& labels) {
  NodeEntry ce = Op("softmax_cross_entropy_with_logits", "ce", {logits, labels});
  return Op("mean", "loss", {ce});
}

TEST(VectorizeNnTest, PerExampleGradientsOfSoftmaxRegressionAndMlp) {
  ExpectPerExampleLikeLoop(
      [](const NodeEntry& x, const NodeEntry& labels, const std::vector<NodeEntry>& p) {
        return CrossEntropy(Dense("fc", x, p[0], p[1]), labels);
      },
      {Shape{32, 5}, Shape{5}}, 32, 5);
  ExpectPerExampleLikeLoop(
      [](const NodeEntry& x, const NodeEntry& labels, const std::vector<NodeEntry>& p) {
        NodeEntry hidden = Op("relu", "relu", {Dense("fc1", x, p[0], p[1])});
        return CrossEntropy(Dense("fc2", hidden, p[2], p[3]), labels);
      },
      {Shape{32, 8}, Shape{8}, Shape{8, 5}, Shape{5}}, 32, 5);
}

}  // namespace
}  // namespace ir
