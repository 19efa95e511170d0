// An elementwise op written once: FInferShape, FInferType, FGradient and FCodeGen, no
// FCompute. It runs on the CPU unfused (a kernel generated from FCodeGen), fused, and inside
// a fused node that runs member by member (issue 9 item 20).
#include <gtest/gtest.h>

#include <cmath>

#include "ir/ast.h"
#include "ir/autodiff.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;
using test::ExpectNear;
using test::RandomArray;
using test::Var;

bool SameShapeAsInput(const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  (*out)[0] = (*in)[0];
  return (*in)[0].is_known();
}

bool SameTypeAsInput(const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out) {
  (*out)[0] = (*in)[0];
  return (*in)[0] != DType::kUnknown;
}

// d(x^3)/dx = 3 x^2, written with built-in ops.
std::vector<NodeEntry> CubeGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  const NodeEntry& x = node->inputs[0];
  NodeEntry square = MakeNode("multiply", node->attrs.name + "_square", {x, x});
  NodeEntry slope = MakeNode("multiply_scalar", node->attrs.name + "_slope", {square}, {{"scalar", "3"}});
  return {MakeNode("multiply", node->attrs.name + "_grad", {slope, ograds[0]})};
}

IR_REGISTER_OP(test_codegen_only_cube)
    .describe("x^3, defined by FCodeGen alone (no FCompute).")
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", SameShapeAsInput)
    .set_attr<FInferType>("FInferType", SameTypeAsInput)
    .set_attr<FGradient>("FGradient", CubeGradient)
    .set_attr<FCodeGen>("FCodeGen",
                        [](const NodeAttrs&, const std::vector<ast::Expr>& in) -> std::vector<ast::Expr> {
                          if (!DTypeIsFloat(in[0]->dtype)) return {};
                          return {in[0] * in[0] * in[0]};
                        })
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

std::vector<NDArray> RunCube(const std::vector<NodeEntry>& fetches, const NDArray& x, bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  return Session(options).Run(fetches, {{"x", x}});
}

TEST(CodeGenOnlyOpTest, RunsUnfusedAndFusedOnTheCpuWithItsGradient) {
  NodeEntry x = Var("x");
  NodeEntry cube = Apply("test_codegen_only_cube", "cube", {x});
  NodeEntry y = Apply("sin", "y", {cube});  // a neighbour to fuse with
  NodeEntry dx = Gradients({y}, {x})[0];
  NDArray feed = RandomArray(Shape{5, 7}, DType::kFloat32, 3);
  std::vector<float> xs = feed.ToVector<float>();
  std::vector<double> want_y, want_dx;
  for (float v : xs) {
    double c = static_cast<double>(v) * v * v;
    want_y.push_back(std::sin(c));
    want_dx.push_back(std::cos(c) * 3.0 * v * v);
  }
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    std::vector<NDArray> got = RunCube({cube, y, dx}, feed, fusion);
    ExpectNear(got[1], want_y, 1e-5, 1e-5);
    ExpectNear(got[2], want_dx, 1e-5, 1e-4);
  }
}

TEST(CodeGenOnlyOpTest, FusedNodeRunsItMemberByMember) {
  NodeEntry x = Var("x");
  NodeEntry y = Apply("sin", "y", {Apply("test_codegen_only_cube", "cube", {x})});
  std::map<std::string, NDArray> feeds = {{"x", RandomArray(Shape{9}, DType::kFloat32, 4)}};
  Graph graph = test::InferFromFeeds({y}, feeds);
  // No CodeGen/RTCGen: the "_fused" node's own FCompute interprets its members.
  std::vector<NDArray> got = test::EvalGraphWithKernels(test::Fuse(graph), feeds);
  std::vector<double> want;
  for (float v : feeds.at("x").ToVector<float>()) want.push_back(std::sin(static_cast<double>(v) * v * v));
  ExpectNear(got[0], want, 1e-5, 1e-5);
}

}  // namespace
}  // namespace ir
