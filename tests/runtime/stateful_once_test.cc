// Nodes with effects (assign_add, host callbacks) inside cond branches, loop bodies and pfor bodies
// run exactly once per taken branch / iteration in a run that also computes their gradients: the
// gradient takes what it needs of them from the forward node's record, and still matches finite
// differences. JSON round trips keep the links.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/autodiff.h"
#include "ir/fold_constants.h"
#include "ir/graph_io.h"
#include "ir/host_callback.h"
#include "ir/op.h"
#include "ir/runtime.h"
#include "ir/vectorize.h"
#include "ops/control_flow_graphs.h"

namespace ir {
namespace test {
namespace {

using Feeds = std::unordered_map<std::string, NDArray>;

NDArray F(std::vector<float> v) { return NDArray::FromVector<float>(Shape{static_cast<int64_t>(v.size())}, v); }
NDArray I(int32_t v) { return NDArray::Scalar<int32_t>(v); }
NodeEntry Scalar(const std::string& op, const std::string& name, NodeEntry x, double s) {
  return N(op, name, {x}, {{"scalar", std::to_string(s)}});
}

/*! \brief A session variable named `name`, set to `value` in `sess`. */
NodeEntry StateVar(Session* sess, const std::string& name, NDArray value) {
  NodeEntry v = Var(name);
  v.node->attrs.dict["__kind__"] = "variable";
  sess->variables().Set(name, std::move(value));
  return v;
}

/*! \brief A constant [1] holding 1 (a body may only write a session variable, not read it). */
NodeEntry One(const std::string& name) { return MakeConstantNode(name, F({1})); }

/*! \brief `value` once `effect` has run: an identity waiting on it. */
NodeEntry After(const NodeEntry& effect, const NodeEntry& value, const std::string& name) {
  NodeEntry out = N("identity", name, {value});
  out.node->control_deps.push_back(effect.node);
  return out;
}

/*! \brief A host_callback node returning float32 `shape` values: `fn` of its input, counting calls. */
NodeEntry Callback(const std::string& name, const NodeEntry& input, const std::string& shape, std::atomic<int>* calls,
                   std::function<float(float)> fn) {
  int64_t id = RegisterHostCallback([calls, fn](const std::vector<NDArray>& in, uint32_t) {
    ++*calls;
    NDArray x = in[0].dtype() == DType::kFloat32 ? in[0] : NDArray::Scalar<float>(in[0].ToVector<int32_t>()[0]);
    NDArray out(x.shape(), DType::kFloat32);
    for (int64_t k = 0; k < x.Size(); ++k) out.data<float>()[k] = fn(x.data<float>()[k]);
    return std::vector<NDArray>{out};
  });
  return N("host_callback", name, {input},
           {{"callback", std::to_string(id)}, {"dtypes", "float32"}, {"shapes", shape}});
}

/*! \brief d loss / d x by the Gradient pass, against central differences in the feed `x_name`. */
void ExpectGradientMatches(Session* sess, const NodeEntry& loss, const NodeEntry& grad, const std::string& x_name,
                           const std::vector<float>& x0, Feeds feeds) {
  feeds[x_name] = F(x0);
  std::vector<float> analytic = sess->Run({grad}, feeds)[0].ToVector<float>();
  const float eps = 1e-2f;
  for (size_t i = 0; i < x0.size(); ++i) {
    std::vector<float> up = x0, down = x0;
    up[i] += eps;
    down[i] -= eps;
    feeds[x_name] = F(up);
    double plus = sess->Run({loss}, feeds)[0].ToVector<float>()[0];
    feeds[x_name] = F(down);
    double numeric = (plus - sess->Run({loss}, feeds)[0].ToVector<float>()[0]) / (2 * eps);
    EXPECT_NEAR(analytic[i], numeric, 2e-2 * std::max(1.0, std::fabs(numeric))) << x_name << " element " << i;
  }
}

float CounterValue(Session* sess, const std::string& name) { return sess->variables().Get(name).ToVector<float>()[0]; }

TEST(StatefulOnceTest, AnAssignInATakenBranchRunsOnceWithTheGradient) {
  Session sess;
  NodeEntry counter = StateVar(&sess, "counter", F({0}));
  NodeEntry w = Var("w");
  auto then_branch = MakeBody("c/then", 2, [&](std::vector<NodeEntry> p) {
    NodeEntry count = N("assign_add", "c/count", {counter, One("c/one")});
    // tanh's gradient reads tanh's value, computed from a node that waits on the assign.
    return std::vector<NodeEntry>{N("tanh", "c/y", {After(count, N("multiply", "c/xw", {p[0], p[1]}), "c/xw_done")})};
  });
  auto else_branch = MakeBody("c/else", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("multiply", "c/e", {p[0], p[1]})};
  });
  NodePtr c = ControlFlow("cond", "c", {Var("pred"), Var("x"), w}, {then_branch, else_branch});
  NodeEntry loss = N("sum", "loss", {{c, 0}});
  NodeEntry grad = Gradients({loss}, {w})[0];
  Feeds feeds{{"pred", NDArray::Scalar<bool>(true)}, {"x", F({1, 2, 3})}};
  feeds["w"] = F({0.5f, -1, 2});
  std::vector<NDArray> out = sess.Run({loss, grad}, feeds);
  EXPECT_EQ(CounterValue(&sess, "counter"), 1);
  std::vector<float> x{1, 2, 3}, w0{0.5f, -1, 2}, got = out[1].ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    float t = std::tanh(x[i] * w0[i]);
    EXPECT_NEAR(got[i], x[i] * (1 - t * t), 1e-6) << "element " << i;
  }
  ExpectGradientMatches(&sess, loss, grad, "w", {0.5f, -1, 2}, feeds);
}

TEST(StatefulOnceTest, ABranchGradientReadsAHostCallbackValueComputedOnce) {
  std::atomic<int> calls{0};
  NodeEntry w = Var("w");
  auto then_branch = MakeBody("h/then", 2, [&](std::vector<NodeEntry> p) {
    NodeEntry doubled = Callback("h/cb", p[0], "[3]", &calls, [](float v) { return 2 * v; });
    return std::vector<NodeEntry>{N("multiply", "h/y", {doubled, N("multiply", "h/ww", {p[1], p[1]})})};
  });
  auto else_branch = MakeBody("h/else", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("multiply", "h/e", {p[0], p[1]})};
  });
  NodePtr c = ControlFlow("cond", "h", {Var("pred"), Var("x"), w}, {then_branch, else_branch});
  NodeEntry loss = N("sum", "loss", {{c, 0}});
  NodeEntry grad = Gradients({loss}, {w})[0];
  EXPECT_EQ(grad.node->op()->name, "_cond_grad") << "the branch gradient reads a saved value";
  // The program as a JSON round trip keeps the link from the gradient to the cond's record.
  for (bool reload : {false, true}) {
    Graph program = reload ? LoadJSON(SaveJSON(Graph({loss, grad}))) : Graph({loss, grad});
    Session sess;
    calls = 0;
    std::vector<NDArray> out =
        sess.Run(program.outputs, {{"pred", NDArray::Scalar<bool>(true)}, {"x", F({1, 2, 3})}, {"w", F({1, -1, 2})}});
    EXPECT_EQ(calls.load(), 1) << (reload ? "after JSON" : "built");
    EXPECT_EQ(out[1].ToVector<float>(), std::vector<float>({4, -8, 24})) << "2 * (2x) * w";
  }
}

/*! \brief while (i < n) { counter += 1; x = p(i) * x * x * 0.5 + x } with p from `gain`; loop vars (i, n, x). */
NodePtr CountingLoop(Session* sess, const NodeEntry& x0, const std::function<NodeEntry(NodeEntry i)>& gain) {
  NodeEntry counter = StateVar(sess, "counter", F({0}));
  auto cond = MakeBody("l/cond", 3, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("less", "l/less", {p[0], p[1]})};
  });
  auto body = MakeBody("l/body", 3, [&](std::vector<NodeEntry> p) {
    NodeEntry count = N("assign_add", "l/count", {counter, One("l/one")});
    NodeEntry sq = N("multiply", "l/sq", {N("multiply", "l/gain", {gain(p[0]), p[2]}), p[2]});
    NodeEntry next = After(count, N("add", "l/next", {Scalar("multiply_scalar", "l/half", sq, 0.5), p[2]}), "l/x");
    return std::vector<NodeEntry>{Scalar("add_scalar", "l/inc", p[0], 1), p[1], next};
  });
  return ControlFlow("while_loop", "l", {Var("i0"), Var("n"), x0}, {cond, body});
}

TEST(StatefulOnceTest, AnAssignInALoopBodyRunsOncePerIterationWithTheGradient) {
  Session sess;
  NodeEntry x = Var("x");
  NodePtr loop = CountingLoop(&sess, x, [](NodeEntry i) {
    return N("ones_like", "l/g", {N("cast", "l/fi", {i}, {{"dtype", "float32"}})});
  });
  NodeEntry loss = N("sum", "loss", {{loop, 2}});
  NodeEntry grad = Gradients({loss}, {x})[0];
  for (int n : {3, 0}) {
    float before = CounterValue(&sess, "counter");
    sess.Run({loss, grad}, {{"i0", I(0)}, {"n", I(n)}, {"x", F({0.3f, -0.4f})}});
    EXPECT_EQ(CounterValue(&sess, "counter") - before, n) << n << " iterations";
  }
  ExpectGradientMatches(&sess, loss, grad, "x", {0.3f, -0.4f, 0.1f}, {{"i0", I(0)}, {"n", I(3)}});
}

TEST(StatefulOnceTest, ALoopBodyGradientReadsHostCallbackValuesSavedPerIteration) {
  std::atomic<int> calls{0};
  Session sess;
  NodeEntry x = Var("x");
  NodePtr loop = CountingLoop(
      &sess, x, [&](NodeEntry i) { return Callback("l/cb", i, "[]", &calls, [](float k) { return 1 + 0.5f * k; }); });
  NodeEntry loss = N("sum", "loss", {{loop, 2}});
  NodeEntry grad = Gradients({loss}, {x})[0];
  Graph program = LoadJSON(SaveJSON(Graph({loss, grad})));
  sess.Run(program.outputs, {{"i0", I(0)}, {"n", I(4)}, {"x", F({0.3f, -0.4f})}});
  EXPECT_EQ(calls.load(), 4);
  EXPECT_EQ(CounterValue(&sess, "counter"), 4);
  ExpectGradientMatches(&sess, loss, grad, "x", {0.3f, -0.4f}, {{"i0", I(0)}, {"n", I(4)}});
}

TEST(StatefulOnceTest, ACondWithAnAssignNestedInADifferentiatedLoopBody) {
  Session sess;
  NodeEntry counter = StateVar(&sess, "counter", F({0}));
  NodeEntry x = Var("x");
  auto cond = MakeBody("o/cond", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{
        N("less", "o/less", {p[0], Scalar("add_scalar", "o/five", N("zeros_like", "o/z", {p[0]}), 5)})};
  });
  auto body = MakeBody("o/body", 2, [&](std::vector<NodeEntry> p) {
    auto update = MakeBody("o/in/then", 1, [&](std::vector<NodeEntry> q) {
      NodeEntry count = N("assign_add", "o/count", {counter, One("o/one")});
      return std::vector<NodeEntry>{After(count, N("tanh", "o/tanh", {q[0]}), "o/t")};
    });
    auto other = MakeBody("o/in/else", 1,
                          [](std::vector<NodeEntry> q) { return std::vector<NodeEntry>{N("sin", "o/sin", {q[0]})}; });
    NodeEntry early = N("less", "o/early", {p[0], Scalar("add_scalar", "o/two", N("zeros_like", "o/z2", {p[0]}), 2)});
    NodePtr inner = ControlFlow("cond", "o/in", {early, N("multiply", "o/xx", {p[1], p[1]})}, {update, other});
    return std::vector<NodeEntry>{Scalar("add_scalar", "o/inc", p[0], 1), NodeEntry{inner, 0}};
  });
  NodePtr loop = ControlFlow("while_loop", "o", {Var("i0"), x}, {cond, body});
  NodeEntry loss = N("sum", "loss", {{loop, 1}});
  NodeEntry grad = Gradients({loss}, {x})[0];
  sess.Run({loss, grad}, {{"i0", I(0)}, {"x", F({0.6f, -0.9f})}});
  EXPECT_EQ(CounterValue(&sess, "counter"), 2) << "iterations 0 and 1 take the branch";
  ExpectGradientMatches(&sess, loss, grad, "x", {0.6f, -0.9f}, {{"i0", I(0)}});
}

TEST(StatefulOnceTest, APforWithAStatefulFallbackNodeRunsItOncePerIterationWithTheGradient) {
  Session sess;
  NodeEntry acc = StateVar(&sess, "acc", F({0, 0}));
  NodeEntry x = Var("x"), w = Var("w");
  std::atomic<int> calls{0};
  std::vector<NodeEntry> rows = Pfor(3, [&](const NodeEntry& i) {
    NodeEntry row = N("gather", "p/row", {x, i});
    NodeEntry add = N("assign_add", "p/acc", {acc, row});  // no batched form: a fallback loop
    NodeEntry gain =
        Callback("p/cb", N("cast", "p/fi", {i}, {{"dtype", "float32"}}), "[]", &calls, [](float k) { return 1 + k; });
    return std::vector<NodeEntry>{After(add, N("multiply", "p/y", {N("multiply", "p/gw", {row, w}), gain}), "p/out")};
  });
  NodeEntry loss = N("sum", "loss", {N("multiply", "p/sq", {rows[0], rows[0]})});
  NodeEntry grad = Gradients({loss}, {w})[0];
  Feeds feeds{{"x", NDArray::FromVector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6})}, {"w", F({0.5f, -1})}};
  sess.Run({loss, grad}, feeds);
  EXPECT_EQ(sess.variables().Get("acc").ToVector<float>(), std::vector<float>({9, 12})) << "each row added once";
  EXPECT_EQ(calls.load(), 3);
  feeds.erase("w");
  ExpectGradientMatches(&sess, loss, grad, "w", {0.5f, -1}, feeds);
}

}  // namespace
}  // namespace test
}  // namespace ir
