// cond and while_loop: bodies as node attributes, inference through them, execution by the
// executor (only the taken branch; loops with data-dependent and zero trip counts), gradients
// (against finite differences), JSON and text forms, fused bodies.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/autodiff.h"
#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir/runtime.h"

namespace ir {
namespace {

NodeEntry V(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }
NodeEntry Op(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
             std::map<std::string, std::string> attrs = {}) {
  return MakeNode(op, name, std::move(in), attrs);
}
NodeEntry Scalar(const std::string& op, const std::string& name, NodeEntry x, double s) {
  return Op(op, name, {x}, {{"scalar", std::to_string(s)}});
}

/*! \brief A body over fresh params named `prefix`/p<i>, returning fn(params). */
std::shared_ptr<const Subgraph> MakeBody(const std::string& prefix, size_t n,
                                         const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& fn) {
  auto body = std::make_shared<Subgraph>();
  std::vector<NodeEntry> params;
  for (size_t i = 0; i < n; ++i) {
    NodeEntry p = V(prefix + "/p" + std::to_string(i));
    body->params.push_back(p.node);
    params.push_back(p);
  }
  body->graph.outputs = fn(params);
  return body;
}

NodePtr ControlFlow(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
                    std::vector<std::shared_ptr<const Subgraph>> bodies,
                    std::map<std::string, std::string> attrs = {}) {
  return Node::Create(Op::Get(op), name, attrs, std::move(inputs), std::move(bodies));
}

NDArray F(std::vector<float> v, Shape shape) { return NDArray::FromVector<float>(shape, v); }
NDArray I(int32_t v) { return NDArray::Scalar<int32_t>(v); }
NDArray B(bool v) { return NDArray::Scalar<bool>(v); }

SessionOptions Options(bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  return options;
}

/*! \brief while (i < n) { i += 1; x = x * x * 0.5 + x } : x's value depends on every iteration. */
NodePtr PowerLoop(NodeEntry i0, NodeEntry n, NodeEntry x0, const std::string& name = "loop") {
  auto cond = MakeBody(name + "/cond", 3, [&](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("less", name + "/less", {p[0], p[1]})};
  });
  auto body = MakeBody(name + "/body", 3, [&](std::vector<NodeEntry> p) {
    NodeEntry sq = Op("multiply", name + "/sq", {p[2], p[2]});
    NodeEntry next = Op("add", name + "/next", {Scalar("multiply_scalar", name + "/half", sq, 0.5), p[2]});
    return std::vector<NodeEntry>{Scalar("add_scalar", name + "/inc", p[0], 1), p[1], next};
  });
  return ControlFlow("while_loop", name, {i0, n, x0}, {cond, body});
}

double PowerLoopRef(double x, int n) {
  for (int k = 0; k < n; ++k) x = x * x * 0.5 + x;
  return x;
}

TEST(ControlFlowTest, WhileLoopRunsDataDependentAndZeroTrips) {
  for (bool fusion : {false, true}) {
    Session sess(Options(fusion));
    NodePtr loop = PowerLoop(V("i0"), V("n"), V("x"));
    for (int n : {0, 1, 4}) {
      std::vector<NDArray> out =
          sess.Run({{loop, 0}, {loop, 2}}, {{"i0", I(0)}, {"n", I(n)}, {"x", F({0.5f, -0.25f}, Shape{2})}});
      EXPECT_EQ(out[0].ToVector<int32_t>()[0], n);
      std::vector<float> x = out[1].ToVector<float>();
      EXPECT_NEAR(x[0], PowerLoopRef(0.5, n), 1e-5) << "n=" << n << " fusion=" << fusion;
      EXPECT_NEAR(x[1], PowerLoopRef(-0.25, n), 1e-5);
    }
  }
}

TEST(ControlFlowTest, ZeroTripLoopOutputOutlivesItsPooledInput) {
  // The loop returns its input a (a pooled intermediate); d, computed later, may reuse a's slot.
  NodeEntry x = V("x");
  NodeEntry a = Scalar("multiply_scalar", "a", x, 2);
  NodePtr loop = PowerLoop(V("i0"), V("n"), a);
  NodeEntry d = Scalar("add_scalar", "d", Scalar("multiply_scalar", "c", x, 3), 1);
  Session sess(Options(false));
  std::vector<NDArray> out = sess.Run({{loop, 2}, d}, {{"i0", I(0)}, {"n", I(0)}, {"x", F({1, 2}, Shape{2})}});
  EXPECT_EQ(out[0].ToVector<float>(), std::vector<float>({2, 4}));
  EXPECT_EQ(out[1].ToVector<float>(), std::vector<float>({4, 7}));
}

TEST(ControlFlowTest, DonatedArgumentsAreUpdatedInPlace) {
  // A loop body's arguments are donated: its last reader writes the result there, output or not.
  for (bool donate : {false, true}) {
    NodeEntry p = V("p");
    Graph g({Scalar("add_scalar", "next", Scalar("multiply_scalar", "scaled", p, 2), 1)});
    g.SetAttr("shape_inputs", ShapeVector{Shape{1000}});
    g.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32});
    if (donate) g.SetAttr("memory.donated_inputs", std::vector<std::string>{"p"});
    g = ApplyPasses(g, {"InferShape", "InferType", "PlanMemory"});
    const IndexedGraph& idx = g.indexed_graph();
    const auto& sid = g.GetAttr<std::vector<int>>("storage_id");
    EXPECT_EQ(sid[idx.entry_id(g.outputs[0])], donate ? -1 : -2) << "donate=" << donate;
    EXPECT_EQ(g.GetAttr<int64_t>("memory_plan_bytes"), donate ? 0 : 4000);
  }
}

TEST(ControlFlowTest, MaximumIterationsBoundsTheLoop) {
  Session sess(Options(true));
  NodePtr loop = PowerLoop(V("i0"), V("n"), V("x"));
  loop->attrs.dict["maximum_iterations"] = "2";
  loop->ReparseAttrs();
  std::vector<NDArray> out = sess.Run({{loop, 0}}, {{"i0", I(0)}, {"n", I(10)}, {"x", F({1}, Shape{1})}});
  EXPECT_EQ(out[0].ToVector<int32_t>()[0], 2);
}

TEST(ControlFlowTest, MaximumIterationsBelowMinusOneIsAnError) {
  // -1 is "no bound"; a frontend gives TensorFlow's negative bounds (no iteration) as 0.
  NodePtr loop = PowerLoop(V("i0"), V("n"), V("x"));
  loop->attrs.dict["maximum_iterations"] = "-3";
  try {
    loop->ReparseAttrs();
    FAIL() << "maximum_iterations -3 was accepted";
  } catch (const Error& err) {
    std::string what = err.what();
    EXPECT_NE(what.find("node 'loop'"), std::string::npos) << what;
    EXPECT_NE(what.find("maximum_iterations must be at least 0"), std::string::npos) << what;
  }
}

TEST(ControlFlowTest, BranchThatCannotRunOnTheShapesFailsOnlyWhenTaken) {
  // TF's cond checks only the branch it runs: reshaping 3 elements into [7] is an error only when
  // the else branch is taken; the cond's output shape is the then branch's.
  auto then_branch = MakeBody(
      "r/then", 1, [](std::vector<NodeEntry> p) { return std::vector<NodeEntry>{Op("sum", "r/sum", {p[0]})}; });
  auto else_branch = MakeBody("r/else", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("sum", "r/sum7", {Op("reshape", "r/reshape", {p[0]}, {{"shape", "(7,)"}})})};
  });
  NodePtr c = ControlFlow("cond", "r", {V("p"), V("x")}, {then_branch, else_branch});
  for (bool fusion : {true, false}) {
    Session sess(Options(fusion));
    NDArray x = F({1, 2, 3}, Shape{3});
    EXPECT_EQ(sess.Run({{c, 0}}, {{"p", B(true)}, {"x", x}})[0].ToVector<float>()[0], 6);
    try {
      sess.Run({{c, 0}}, {{"p", B(false)}, {"x", x}});
      FAIL() << "the else branch ran on 3 elements";
    } catch (const Error& err) {
      std::string what = err.what();
      for (const char* part : {"node 'r'", "else_branch", "[3]", "r/reshape"}) {
        EXPECT_NE(what.find(part), std::string::npos) << part << " missing from: " << what;
      }
    }
  }
  // Neither branch can run on [3]: the inference error stands.
  auto bad_then = MakeBody("q/then", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("reshape", "q/r5", {p[0]}, {{"shape", "(5,)"}})};
  });
  NodePtr neither = ControlFlow("cond", "q", {V("p"), V("x")}, {bad_then, else_branch});
  Graph g({{neither, 0}});
  g.SetAttr("shape_inputs", ShapeVector{Shape::Scalar(), Shape{3}});
  EXPECT_THROW(ApplyPass(g, "InferShape"), Error);
}

TEST(ControlFlowTest, FusedBodyLaunchesFewerKernelsEveryIteration) {
  size_t launched[2];
  for (bool fusion : {false, true}) {
    Session sess(Options(fusion));
    NodePtr loop = PowerLoop(V("i0"), V("n"), V("x"));
    sess.Run({{loop, 2}}, {{"i0", I(0)}, {"n", I(10)}, {"x", F({0.1f, 0.2f, 0.3f}, Shape{3})}});
    launched[fusion] = sess.last_stats().kernels_launched;
  }
  EXPECT_LT(launched[1], launched[0]) << "the body's multiply, multiply_scalar and add fuse";
}

/*! \brief cond(pred, a, b): then a // b (integer division, an error when b is 0), else a - b. */
NodePtr DivideOrSubtract(NodeEntry pred, NodeEntry a, NodeEntry b) {
  auto then_branch = MakeBody("c/then", 2, [](std::vector<NodeEntry> p) {
    NodeEntry divisor =
        Op("check_int_operand", "c/check", {p[1]}, {{"require", "nonzero"}, {"message", "Integer division by zero"}});
    return std::vector<NodeEntry>{Op("floor_divide", "c/div", {p[0], divisor})};
  });
  auto else_branch = MakeBody("c/else", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("subtract", "c/sub", {p[0], p[1]})};
  });
  return ControlFlow("cond", "c", {pred, a, b}, {then_branch, else_branch});
}

TEST(ControlFlowTest, CondRunsOnlyTheTakenBranch) {
  Session sess(Options(true));
  NodePtr c = DivideOrSubtract(V("pred"), V("a"), V("b"));
  EXPECT_EQ(sess.Run({{c, 0}}, {{"pred", B(true)}, {"a", I(7)}, {"b", I(2)}})[0].ToVector<int32_t>()[0], 3);
  // b = 0: the division would fail, but it is in the branch not taken.
  EXPECT_EQ(sess.Run({{c, 0}}, {{"pred", B(false)}, {"a", I(7)}, {"b", I(0)}})[0].ToVector<int32_t>()[0], 7);
  EXPECT_THROW(sess.Run({{c, 0}}, {{"pred", B(true)}, {"a", I(7)}, {"b", I(0)}}), Error);
}

TEST(ControlFlowTest, StateUpdatesRunOnlyInTheTakenBranch) {
  // A moving average updated only when training: then assigns to the session's variable "avg".
  NodeEntry avg = V("avg");
  avg.node->attrs.dict["__kind__"] = "variable";
  auto then_branch = MakeBody("t/then", 2, [&](std::vector<NodeEntry> p) {
    NodeEntry blend =
        Op("add", "t/blend",
           {Scalar("multiply_scalar", "t/keep", p[0], 0.5), Scalar("multiply_scalar", "t/take", p[1], 0.5)});
    return std::vector<NodeEntry>{Op("assign", "t/update", {avg, blend})};
  });
  auto else_branch = MakeBody("t/else", 2, [](std::vector<NodeEntry> p) { return std::vector<NodeEntry>{p[0]}; });
  NodePtr c = ControlFlow("cond", "t", {V("training"), avg, V("batch")}, {then_branch, else_branch});
  Session sess(Options(true));
  sess.variables().Set("avg", F({2}, Shape{1}));
  sess.Run({{c, 0}}, {{"training", B(false)}, {"batch", F({10}, Shape{1})}});
  EXPECT_EQ(sess.variables().Get("avg").ToVector<float>()[0], 2);
  sess.Run({{c, 0}}, {{"training", B(true)}, {"batch", F({10}, Shape{1})}});
  EXPECT_EQ(sess.variables().Get("avg").ToVector<float>()[0], 6);
}

TEST(ControlFlowTest, InferenceSeesThroughBodiesAndRejectsMismatchedBranches) {
  NodePtr loop = PowerLoop(V("i0"), V("n"), V("x"));
  Graph g({{loop, 2}});
  g.SetAttr("shape_inputs", ShapeVector{Shape::Scalar(), Shape::Scalar(), Shape{4, 3}});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kInt32, DType::kInt32, DType::kFloat32});
  g = ApplyPasses(g, {"InferShape", "InferType"});
  const IndexedGraph& idx = g.indexed_graph();
  EXPECT_EQ(g.GetAttr<ShapeVector>("shape")[idx.entry_id(NodeEntry{loop, 2})], (Shape{4, 3}));
  EXPECT_EQ(g.GetAttr<DTypeVector>("dtype")[idx.entry_id(NodeEntry{loop, 0})], DType::kInt32);

  auto then_branch = MakeBody("m/then", 1, [](std::vector<NodeEntry> p) { return p; });
  auto else_branch = MakeBody("m/else", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("cast", "m/cast", {p[0]}, {{"dtype", "int32"}})};
  });
  NodePtr bad = ControlFlow("cond", "m", {V("p"), V("x")}, {then_branch, else_branch});
  Graph h({{bad, 0}});
  h.SetAttr("dtype_inputs", DTypeVector{DType::kBool, DType::kFloat32});
  try {
    ApplyPass(h, "InferType");
    FAIL() << "branches of different dtypes were accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("node 'm'"), std::string::npos) << err.what();
  }
}

TEST(ControlFlowTest, LoopVariableChangingShapeBecomesUnknown) {
  auto cond = MakeBody("g/cond", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Scalar("less_scalar", "g/less", Op("size", "g/size", {p[0]}), 8)};
  });
  auto body = MakeBody("g/body", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("concat", "g/cat", {p[0], p[0]}, {{"axis", "0"}})};
  });
  NodePtr grow = ControlFlow("while_loop", "g", {V("x")}, {cond, body});
  Graph g({{grow, 0}});
  g.SetAttr("shape_inputs", ShapeVector{Shape{1, 2}});
  g = ApplyPass(g, "InferShape");
  EXPECT_EQ(g.GetAttr<ShapeVector>("shape")[g.indexed_graph().entry_id(NodeEntry{grow, 0})].ToString(), "[?,2]");
}

TEST(ControlFlowTest, LoopVariableChangingShapeRunsAndFeedsLaterOps) {
  // x doubles its rows until it has at least 8 elements; the sum reads the grown array.
  auto cond = MakeBody("h/cond", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Scalar("less_scalar", "h/less", Op("size", "h/size", {p[0]}), 8)};
  });
  auto body = MakeBody("h/body", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{
        Op("concat", "h/cat", {p[0], Scalar("multiply_scalar", "h/twice", p[0], 2)}, {{"axis", "0"}})};
  });
  NodePtr grow = ControlFlow("while_loop", "h", {V("x")}, {cond, body});
  NodeEntry total = Op("sum", "total", {Scalar("add_scalar", "shift", {grow, 0}, 1)});
  Session sess(Options(true));
  std::vector<NDArray> out = sess.Run({{grow, 0}, total}, {{"x", F({1, 2}, Shape{1, 2})}});
  EXPECT_EQ(out[0].shape(), (Shape{4, 2}));
  EXPECT_EQ(out[0].ToVector<float>(), std::vector<float>({1, 2, 2, 4, 2, 4, 4, 8}));
  EXPECT_EQ(out[1].ToVector<float>()[0], 27 + 8);
  out = sess.Run({{grow, 0}}, {{"x", F({1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2})}});
  EXPECT_EQ(out[0].shape(), (Shape{4, 2})) << "zero trips";
}

TEST(ControlFlowTest, FillDimsTakesItsShapeFromATensorAtRunTime) {
  // zeros of x's shape + 2, added to x: the shape is a value, so the plan is dynamic.
  NodeEntry x = V("x");
  NodeEntry filled = Op("fill_dims", "filled", {Op("shape", "dims", {x}), V("value")});
  NodeEntry y = Op("add", "y", {x, filled});
  Session sess(Options(true));
  for (int64_t rows : {2, 3}) {
    std::vector<float> xs(static_cast<size_t>(rows * 2), 1.0f);
    NDArray out = sess.Run({y}, {{"x", F(xs, Shape{rows, 2})}, {"value", NDArray::Scalar<float>(2)}})[0];
    EXPECT_EQ(out.shape(), (Shape{rows, 2}));
    EXPECT_EQ(out.ToVector<float>(), std::vector<float>(xs.size(), 3.0f));
  }
  NodeEntry negative = Op("fill_dims", "neg", {V("d"), V("value")});
  try {
    sess.Run({negative},
             {{"d", NDArray::FromVector<int32_t>(Shape{2}, {2, -1})}, {"value", NDArray::Scalar<float>(0)}});
    FAIL() << "a negative dimension was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("dimension 1 is -1"), std::string::npos) << err.what();
  }
}

TEST(ControlFlowTest, AnArrayMadeBeforeItsElementShapeIsKnownAdoptsTheFirstWrite) {
  // ta [3, 0] enters the loop unwritten (its element dimension known only at run time): the
  // first write makes it [3, 2]; the loop variable's shape changes, so the plan is dynamic.
  auto cond = MakeBody("a/cond", 3, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("less", "a/less", {p[0], p[1]})};
  });
  auto body = MakeBody("a/body", 3, [](std::vector<NodeEntry> p) {
    NodeEntry row = Op("add_scalar", "a/row", {Op("zeros", "a/zeros", {}, {{"shape", "(2,)"}, {"dtype", "float32"}})},
                       {{"scalar", "1"}});
    return std::vector<NodeEntry>{Scalar("add_scalar", "a/inc", p[0], 1), p[1],
                                  Op("tensor_array_write", "a/write", {p[2], p[0], row})};
  });
  NodePtr loop = ControlFlow("while_loop", "a", {V("i0"), V("n"), V("ta")}, {cond, body});
  Session sess(Options(true));
  NDArray empty = NDArray::FromVector<float>(Shape{3, 0}, {});
  NDArray out = sess.Run({{loop, 2}}, {{"i0", I(0)}, {"n", I(3)}, {"ta", empty}})[0];
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(out.ToVector<float>(), std::vector<float>(6, 1.0f));
}

/*! \brief d(sum(f(x)))/dx by the Gradient pass and by central differences, compared. */
void ExpectGradientMatches(const NodeEntry& y, const std::string& x_name, NodeEntry x, std::vector<float> x0,
                           const std::unordered_map<std::string, NDArray>& feeds) {
  NodeEntry loss = Op("sum", "loss", {y});
  NodeEntry grad = Gradients({loss}, {x})[0];
  Session sess(Options(true));
  auto with_x = [&](const std::vector<float>& value) {
    auto all = feeds;
    all[x_name] = F(value, Shape{static_cast<int64_t>(value.size())});
    return all;
  };
  std::vector<float> analytic = sess.Run({grad}, with_x(x0))[0].ToVector<float>();
  const float eps = 1e-2f;
  for (size_t i = 0; i < x0.size(); ++i) {
    std::vector<float> up = x0, down = x0;
    up[i] += eps;
    down[i] -= eps;
    double numeric = (sess.Run({loss}, with_x(up))[0].ToVector<float>()[0] -
                      sess.Run({loss}, with_x(down))[0].ToVector<float>()[0]) /
                     (2 * eps);
    EXPECT_NEAR(analytic[i], numeric, 2e-2 * std::max(1.0, std::fabs(numeric))) << "element " << i;
  }
}

TEST(ControlFlowTest, WhileLoopGradientMatchesFiniteDifferences) {
  NodeEntry x = V("x");
  NodePtr loop = PowerLoop(V("i0"), V("n"), x);
  ExpectGradientMatches({loop, 2}, "x", x, {0.3f, -0.4f, 0.1f}, {{"i0", I(0)}, {"n", I(3)}});
  ExpectGradientMatches({loop, 2}, "x", x, {0.3f, -0.4f}, {{"i0", I(0)}, {"n", I(0)}});
}

TEST(ControlFlowTest, CondGradientFollowsTheTakenBranch) {
  NodeEntry x = V("x");
  auto then_branch = MakeBody("d/then", 1, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("multiply", "d/sq", {p[0], p[0]})};
  });
  auto else_branch = MakeBody(
      "d/else", 1, [](std::vector<NodeEntry> p) { return std::vector<NodeEntry>{Op("exp", "d/exp", {p[0]})}; });
  NodePtr c = ControlFlow("cond", "d", {V("pred"), x}, {then_branch, else_branch});
  ExpectGradientMatches({c, 0}, "x", x, {0.5f, -1.5f}, {{"pred", B(true)}});
  ExpectGradientMatches({c, 0}, "x", x, {0.5f, -1.5f}, {{"pred", B(false)}});
}

TEST(ControlFlowTest, BodiesRoundTripThroughJSONAndPrintNested) {
  NodePtr loop = PowerLoop(V("i0"), V("n"), V("x"));
  Graph g({{loop, 2}});
  std::string json = SaveJSON(g);
  Graph back = LoadJSON(json);
  EXPECT_EQ(SaveJSON(back), json);
  Session sess(Options(true));
  NDArray out = sess.Run(back.outputs, {{"i0", I(0)}, {"n", I(2)}, {"x", F({0.5f}, Shape{1})}})[0];
  EXPECT_NEAR(out.ToVector<float>()[0], PowerLoopRef(0.5, 2), 1e-6);
  std::string text = PrintGraphText(g);
  EXPECT_NE(text.find("body 1 ("), std::string::npos) << text;
  EXPECT_NE(text.find("loop/next"), std::string::npos) << text;
}

TEST(ControlFlowTest, VerifierRejectsBodiesReadingOutsideValues) {
  NodeEntry outside = V("outside");
  auto body = MakeBody("v/then", 1, [&](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{Op("add", "v/add", {p[0], outside})};
  });
  NodePtr c = ControlFlow("cond", "v", {V("p"), V("x")}, {body, body});
  try {
    VerifyGraph(Graph({{c, 0}}));
    FAIL() << "a body reading a value that is not a param was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("outside"), std::string::npos) << err.what();
  }
  EXPECT_THROW(ControlFlow("while_loop", "w", {V("x")}, {body}), Error) << "one body for while_loop";
}

}  // namespace
}  // namespace ir
