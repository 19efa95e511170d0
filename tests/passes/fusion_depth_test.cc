// Inputs that control recursion depth: n-ary ops with thousands of terms, chains of 100,000
// nodes and deep expressions must build, fuse, print, run and free on the default stack
// (issue 9 item 5). Each test runs on a std::thread, whose stack is the 8 MiB default.
#include <gtest/gtest.h>

#include <cmath>
#include <exception>
#include <functional>
#include <thread>

#include "ir/ast.h"
#include "ir/fusion.h"
#include "ir/pass.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "passes/fusion_plan.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;
using test::ExpectNear;
using test::RandomArray;
using test::Var;

// Runs `body` on a new thread (default stack size) and rethrows what it throws there.
void OnDefaultStack(const std::function<void()>& body) {
  std::exception_ptr error;
  std::thread thread([&] {
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
  });
  thread.join();
  if (error) std::rethrow_exception(error);
}

// `length` nodes of negative after x: x itself when length is even.
NodeEntry NegationChain(const NodeEntry& x, int length) {
  NodeEntry y = x;
  for (int i = 0; i < length; ++i) y = Apply("negative", StrCat("neg", i), {y});
  return y;
}

TEST(FusionDepthTest, MillionDeepExpressionIsBoundedAndFreedWithoutRecursion) {
  OnDefaultStack([] {
    ast::Expr expr = ast::Var("x", DType::kFloat32);
    for (int i = 0; i < 1000000; ++i) expr = -expr;
    std::vector<ast::Expr> lets;
    ast::Expr bounded = ast::BoundDepth(expr, 8, [&lets](const ast::Expr& sub) {
      lets.push_back(sub);
      return ast::Var(StrCat("t", lets.size() - 1), sub->dtype);
    });
    EXPECT_GT(lets.size(), 1000000u / 8);
    auto depth_one_unary = [](const ast::Expr& e) {
      return ast::ToString(e).size() < 200;  // printing recurses only to the bound
    };
    EXPECT_TRUE(depth_one_unary(bounded));
    for (const ast::Expr& let : lets) ASSERT_TRUE(depth_one_unary(let));
    EXPECT_EQ(ast::Evaluate(lets[0], [](const std::string&, int64_t) { return 1.5; }), -1.5);
  });  // the million-deep tree and its bounded copy are freed here
}

TEST(FusionDepthTest, AddNOfTenThousandInputsFusedEqualsUnfused) {
  OnDefaultStack([] {
    NodeEntry x = Var("x");
    NodeEntry sum = Apply("add_n", "sum", std::vector<NodeEntry>(10000, x));
    NodeEntry out = Apply("tanh", "out", {Apply("multiply_scalar", "scaled", {sum}, {{"scalar", "1e-4"}})});
    std::unordered_map<std::string, NDArray> feeds = {{"x", RandomArray(Shape{3, 5}, DType::kFloat32, 1)}};
    std::vector<double> exact;  // tanh(1e-4 * 10000 x)
    for (float v : feeds.at("x").ToVector<float>()) exact.push_back(std::tanh(static_cast<double>(v)));
    SessionOptions options;
    options.fusion = false;
    // The unfused kernel adds the terms in order: float32 rounding grows with their number.
    ExpectNear(Session(options).Run({out}, feeds)[0], exact, 2e-4, 2e-4);
    options.fusion = true;
    Session fused(options);
    ExpectNear(fused.Run({out}, feeds)[0], exact, 1e-5, 1e-5);
    EXPECT_FALSE(fused.last_graph().GetAttr<std::string>("kernel_source").empty()) << "add_n was not fused";
  });
}

TEST(FusionDepthTest, TenThousandOpsInOneKernelRun) {
  OnDefaultStack([] {
    NodeEntry x = Var("x");
    NodeEntry y = Apply("tanh", "out", {NegationChain(x, 10000)});
    std::map<std::string, NDArray> feeds = {{"x", RandomArray(Shape{7}, DType::kFloat32, 2)}};
    Graph graph = test::InferFromFeeds({y}, feeds);
    graph.SetAttr("fusion.max_group_size", 20000);
    Graph compiled = ApplyPasses(ApplyPasses(graph, {"Fusion"}), {"CodeGen", "RTCGen"});
    EXPECT_EQ(compiled.GetAttr<std::vector<fusion::GroupRecord>>("fusion_groups").size(), 1u);
    ExpectNear(test::EvalGraphWithKernels(compiled, feeds)[0], test::EvalGraphWithKernels(graph, feeds)[0]);
  });
}

TEST(FusionDepthTest, HundredThousandOpChainBuildsFusesPrintsRunsAndFrees) {
  OnDefaultStack([] {
    NodeEntry x = Var("x");
    NodeEntry y = NegationChain(x, 100000);
    std::unordered_map<std::string, NDArray> feeds = {{"x", RandomArray(Shape{4, 3}, DType::kFloat32, 3)}};
    for (bool fusion : {false, true}) {
      SessionOptions options;
      options.fusion = fusion;
      Session session(options);
      std::vector<NDArray> got = session.Run({y}, feeds);
      ExpectNear(got[0], feeds.at("x"), 0, 0);
      Graph printed = session.last_graph();
      printed.SetAttr("print_graph.quiet", 1);
      EXPECT_FALSE(ApplyPasses(printed, {"PrintGraph"}).GetAttr<std::string>("ir_text").empty());
    }
  });  // the chain is freed here
}

}  // namespace
}  // namespace ir
