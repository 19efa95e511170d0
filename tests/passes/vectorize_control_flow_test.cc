// Vectorizing control flow inside pfor bodies: cond with a stacked predicate runs each branch on
// its own iterations only; while_loop with per-iteration trip counts masks finished iterations;
// tensor arrays with stacked operands; gradients and hessians of vectorized pfors.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/autodiff.h"
#include "passes/vectorize_harness.h"

namespace ir {
namespace {

using pfor_test::Arg;
using pfor_test::Check;
using pfor_test::ExpectLikeLoop;
using pfor_test::Op;

NodeEntry V(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

/*! \brief The fallback loops listed, for failure messages. */
std::string List(const std::vector<std::string>& fallbacks) {
  std::string text;
  for (const std::string& f : fallbacks) text += f + "; ";
  return text;
}

/*! \brief A body over fresh params named `prefix`/p<i>, returning fn(params). */
std::shared_ptr<const Subgraph> MakeBody(const std::string& prefix, size_t n,
                                         const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& fn) {
  auto body = std::make_shared<Subgraph>();
  std::vector<NodeEntry> params;
  for (size_t i = 0; i < n; ++i) {
    body->params.push_back(Node::CreateVariable(prefix + "/p" + std::to_string(i)));
    params.push_back(NodeEntry{body->params.back(), 0});
  }
  body->graph.outputs = fn(params);
  return body;
}

/*! \brief cond(pred, args) with the given branches over the args. */
std::vector<NodeEntry> Cond(const NodeEntry& pred, const std::vector<NodeEntry>& args,
                            const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& then_fn,
                            const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& else_fn) {
  std::vector<NodeEntry> inputs{pred};
  inputs.insert(inputs.end(), args.begin(), args.end());
  NodePtr node = Node::Create(Op::Get("cond"), "cond", {}, std::move(inputs),
                              {MakeBody("then", args.size(), then_fn), MakeBody("else", args.size(), else_fn)});
  std::vector<NodeEntry> outs;
  for (uint32_t j = 0; j < node->num_outputs(); ++j) outs.push_back(NodeEntry{node, j});
  return outs;
}

Check FourIterations() {
  Check check;
  check.n = 4;
  return check;
}

/*! \brief x > 0 ? log(x) * y : sqrt(-x) + y: each branch gives NaN for the other's iterations. */
std::vector<NodeEntry> LogOrSqrt(const std::vector<NodeEntry>& a) {
  NodeEntry pred = Op("greater_scalar", "positive", {a[0]}, {{"scalar", "0"}});
  return Cond(
      pred, a,
      [](std::vector<NodeEntry> p) {
        return std::vector<NodeEntry>{Op("multiply", "ly", {Op("log", "l", {p[0]}), p[1]})};
      },
      [](std::vector<NodeEntry> p) {
        return std::vector<NodeEntry>{Op("add", "sy", {Op("sqrt", "s", {Op("negative", "nx", {p[0]})}), p[1]})};
      });
}

TEST(VectorizeControlFlowTest, CondMatchesLoopForEveryStackedMix) {
  ExpectLikeLoop("cond log/sqrt", {Arg{Shape::Scalar()}, Arg{Shape{2}}}, LogOrSqrt, FourIterations());
}

TEST(VectorizeControlFlowTest, StackedCondRunsEachBranchOnlyOnItsIterations) {
  NodeEntry x = V("x"), y = V("y");
  std::vector<NodeEntry> out = Pfor(4, [&](const NodeEntry& i) { return LogOrSqrt({Op("gather", "xi", {x, i}), y}); });
  Session sess;
  std::vector<float> xs{0.5f, -4.0f, 2.0f, -1.0f};
  std::vector<float> r = sess.Run(out, {{"x", NDArray::FromVector<float>(Shape{4}, xs)},
                                        {"y", NDArray::FromVector<float>(Shape{2}, {1.0f, 2.0f})}})[0]
                             .ToVector<float>();
  EXPECT_TRUE(sess.last_stats().pfor_fallbacks.empty()) << List(sess.last_stats().pfor_fallbacks);
  ASSERT_EQ(r.size(), 8u);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t k = 0; k < 2; ++k) {
      float expect = xs[i] > 0 ? std::log(xs[i]) * (k + 1.0f) : std::sqrt(-xs[i]) + (k + 1.0f);
      EXPECT_FALSE(std::isnan(r[2 * i + k])) << i;
      EXPECT_NEAR(r[2 * i + k], expect, 1e-5) << i << "," << k;
    }
  }
}

TEST(VectorizeControlFlowTest, StackedCondInNestedPforsRunsEachBranchOnlyOnItsIterations) {
  NodeEntry x = V("x"), y = V("y");
  std::vector<NodeEntry> out = Pfor(2, [&](const NodeEntry& i) {
    NodeEntry xi = Op("gather", "xi", {x, i});
    return Pfor(
        3,
        [&](const NodeEntry& j) {
          return LogOrSqrt({Op("gather", "xij", {xi, j}), y});
        },
        "inner");
  });
  Session sess;
  std::vector<float> xs{0.5f, -4.0f, 2.0f, -1.0f, 3.0f, -0.25f};
  std::vector<float> r = sess.Run(out, {{"x", NDArray::FromVector<float>(Shape{2, 3}, xs)},
                                        {"y", NDArray::FromVector<float>(Shape{2}, {1.0f, 2.0f})}})[0]
                             .ToVector<float>();
  EXPECT_TRUE(sess.last_stats().pfor_fallbacks.empty()) << List(sess.last_stats().pfor_fallbacks);
  ASSERT_EQ(r.size(), 12u);
  for (size_t i = 0; i < 6; ++i) {
    for (size_t k = 0; k < 2; ++k) {
      float expect = xs[i] > 0 ? std::log(xs[i]) * (k + 1.0f) : std::sqrt(-xs[i]) + (k + 1.0f);
      EXPECT_NEAR(r[2 * i + k], expect, 1e-5) << i << "," << k;
    }
  }
}

TEST(VectorizeControlFlowTest, StackedCondNeverDividesTheOtherIterationsByZero) {
  NodeEntry a = V("a"), b = V("b");
  std::vector<NodeEntry> out = Pfor(4, [&](const NodeEntry& i) {
    NodeEntry bi = Op("gather", "bi", {b, i});
    NodeEntry pred = Op("not_equal_scalar", "nonzero", {bi}, {{"scalar", "0"}});
    return Cond(
        pred, {a, bi},
        [](std::vector<NodeEntry> p) {
          NodeEntry d = Op("check_int_operand", "check", {p[1]},
                           {{"require", "nonzero"}, {"message", "Integer division by zero"}});
          return std::vector<NodeEntry>{Op("divide", "q", {p[0], d})};
        },
        [](std::vector<NodeEntry> p) { return std::vector<NodeEntry>{Op("negative", "na", {p[0]})}; });
  });
  Session sess;
  std::vector<NDArray> r;
  ASSERT_NO_THROW(r = sess.Run(out, {{"a", NDArray::Scalar<int32_t>(12)},
                                     {"b", NDArray::FromVector<int32_t>(Shape{4}, {3, 0, -4, 0})}}));
  EXPECT_EQ(r[0].ToVector<int32_t>(), std::vector<int32_t>({4, -12, -3, -12}));
  EXPECT_TRUE(sess.last_stats().pfor_fallbacks.empty()) << List(sess.last_stats().pfor_fallbacks);
}

/*! \brief while (i < limit) { i += 1; x = x * 0.5 + 1 }, from i = 0: `limit` iterations. */
std::vector<NodeEntry> CountedLoop(const std::vector<NodeEntry>& a, int maximum_iterations) {
  NodeEntry i0 = Op("zeros_like", "i0", {a[0]});
  auto cond = MakeBody("cond", 3, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("less", "less", {p[0], p[1]})};
  });
  auto body = MakeBody("body", 3, [](std::vector<NodeEntry> p) {
    NodeEntry x = Op("add_scalar", "x1", {Op("multiply_scalar", "xh", {p[2]}, {{"scalar", "0.5"}})}, {{"scalar", "1"}});
    return std::vector<NodeEntry>{Op("add_scalar", "inc", {p[0]}, {{"scalar", "1"}}), p[1], x};
  });
  NodePtr loop =
      Node::Create(Op::Get("while_loop"), "loop", {{"maximum_iterations", std::to_string(maximum_iterations)}},
                   {i0, a[0], a[1]}, {cond, body});
  return {NodeEntry{loop, 0}, NodeEntry{loop, 2}};
}

TEST(VectorizeControlFlowTest, WhileLoopWithPerIterationTripCountsMatchesLoop) {
  for (int maximum : {-1, 2}) {
    ExpectLikeLoop(
        "while, maximum_iterations " + std::to_string(maximum),
        {Arg{Shape::Scalar(), DType::kInt32, 0, 4}, Arg{Shape{2}}},
        [&](const std::vector<NodeEntry>& a) { return CountedLoop(a, maximum); }, FourIterations());
  }
}

TEST(VectorizeControlFlowTest, TensorArrayReadAndGatherMatchLoop) {
  ExpectLikeLoop("tensor_array_read", {Arg{Shape{4, 3}}, Arg{Shape::Scalar(), DType::kInt32, 0, 4}},
                 [](const std::vector<NodeEntry>& a) {
                   return std::vector<NodeEntry>{Op("tensor_array_read", "r", {a[0], a[1]})};
                 });
  ExpectLikeLoop("tensor_array_gather", {Arg{Shape{4, 3}}, Arg{Shape{5}, DType::kInt32, 0, 4}},
                 [](const std::vector<NodeEntry>& a) {
                   return std::vector<NodeEntry>{Op("tensor_array_gather", "g", {a[0], a[1]})};
                 });
}

TEST(VectorizeControlFlowTest, TensorArrayWriteAndScatterMatchLoop) {
  ExpectLikeLoop("tensor_array_write", {Arg{Shape{4, 3}}, Arg{Shape::Scalar(), DType::kInt32, 0, 4}, Arg{Shape{3}}},
                 [](const std::vector<NodeEntry>& a) {
                   return std::vector<NodeEntry>{Op("tensor_array_write", "w", {a[0], a[1], a[2]})};
                 });
  // Indices [i, i + 2] with i in {0, 1}: distinct, as a scatter needs.
  ExpectLikeLoop("tensor_array_scatter",
                 {Arg{Shape{4, 3}}, Arg{Shape::Scalar(), DType::kInt32, 0, 2}, Arg{Shape{2, 3}}},
                 [](const std::vector<NodeEntry>& a) {
                   NodeEntry evens = Op("range", "evens", {}, {{"limit", "4"}, {"delta", "2"}, {"dtype", "int32"}});
                   NodeEntry rows = Op("add", "rows", {evens, a[1]});
                   return std::vector<NodeEntry>{Op("tensor_array_scatter", "s", {a[0], rows, a[2]})};
                 });
}

std::vector<float> RunFloats(const std::vector<NodeEntry>& outs, const std::unordered_map<std::string, NDArray>& feeds,
                             bool vectorize, std::vector<std::string>* fallbacks = nullptr) {
  SessionOptions options;
  if (!vectorize) options.passes = {"InferShape", "InferType", "PlanMemory"};
  Session sess(options);
  std::vector<float> r = sess.Run(outs, feeds)[0].ToVector<float>();
  if (fallbacks) *fallbacks = sess.last_stats().pfor_fallbacks;
  return r;
}

TEST(VectorizeControlFlowTest, GradientOfPforIsTheSumOverIterations) {
  // loss = sum_i sum_k tanh(x[i, k] * w[k]): d/dw[k] = sum_i x[i, k] (1 - tanh^2(x[i, k] w[k])).
  NodeEntry x = V("x"), w = V("w");
  NodeEntry rows = Pfor(3, [&](const NodeEntry& i) {
    return std::vector<NodeEntry>{Op("tanh", "t", {Op("multiply", "xw", {Op("gather", "xi", {x, i}), w})})};
  })[0];
  NodeEntry grad = Gradients({Op("sum", "loss", {rows})}, {w})[0];
  std::vector<float> xs{0.1f, -0.5f, 0.7f, 1.2f, -0.3f, 0.4f}, ws{0.8f, -1.5f};
  std::unordered_map<std::string, NDArray> feeds{{"x", NDArray::FromVector<float>(Shape{3, 2}, xs)},
                                                 {"w", NDArray::FromVector<float>(Shape{2}, ws)}};
  std::vector<std::string> fallbacks;
  std::vector<float> vec = RunFloats({grad}, feeds, true, &fallbacks), loop = RunFloats({grad}, feeds, false);
  // Zero fallbacks here needs the converters of reductions, matmul and gradient ops (other files).
  EXPECT_TRUE(fallbacks.empty()) << List(fallbacks);
  for (size_t k = 0; k < 2; ++k) {
    double expect = 0;
    for (size_t i = 0; i < 3; ++i) {
      double t = std::tanh(xs[2 * i + k] * ws[k]);
      expect += xs[2 * i + k] * (1 - t * t);
    }
    EXPECT_NEAR(vec[k], expect, 1e-5) << k;
    EXPECT_NEAR(loop[k], expect, 1e-5) << k;
  }
}

TEST(VectorizeControlFlowTest, JacobianOfJacobianIsTheHessian) {
  // f(x) = sum(tanh(A x)), A [2, 3]: hessian = A^T diag(-2 t (1 - t^2)) A with t = tanh(A x).
  NodeEntry a = V("A"), x = V("x");
  NodeEntry ax = Op("matmul", "ax", {a, Op("reshape", "col", {x}, {{"shape", "(3,1)"}})});
  NodeEntry f = Op("sum", "f", {Op("tanh", "t", {ax})});
  NodeEntry grad = Jacobian(f, {x}, 1, "j1")[0];        // [1, 3]
  NodeEntry hessian = Jacobian(grad, {x}, 3, "j2")[0];  // [3, 3]
  std::vector<float> as{0.5f, -1.0f, 0.3f, 0.8f, 0.2f, -0.6f}, xs{0.4f, -0.7f, 1.1f};
  std::unordered_map<std::string, NDArray> feeds{{"A", NDArray::FromVector<float>(Shape{2, 3}, as)},
                                                 {"x", NDArray::FromVector<float>(Shape{3}, xs)}};
  std::vector<std::string> fallbacks;
  std::vector<float> h = RunFloats({hessian}, feeds, true, &fallbacks);
  EXPECT_TRUE(fallbacks.empty()) << List(fallbacks);
  ASSERT_EQ(h.size(), 9u);
  for (size_t p = 0; p < 3; ++p) {
    for (size_t q = 0; q < 3; ++q) {
      double expect = 0;
      for (size_t r = 0; r < 2; ++r) {
        double t = std::tanh(as[3 * r] * xs[0] + as[3 * r + 1] * xs[1] + as[3 * r + 2] * xs[2]);
        expect += as[3 * r + p] * (-2 * t * (1 - t * t)) * as[3 * r + q];
      }
      EXPECT_NEAR(h[3 * p + q], expect, 1e-5) << p << "," << q;
    }
  }
}

}  // namespace
}  // namespace ir
