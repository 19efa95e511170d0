// FComputeEpilogue of matmul and conv2d: epilogues written by the ops' own FCodeGen become
// oneDNN post-ops (matmul: eltwise steps only) and give what running the op and then the epilogue's ops gives;
// epilogues with no post-op form are refused (the caller then runs a generated kernel).
#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using test::ExpectNear;
using test::RandomArray;
using test::RunOp;

/*! \brief One epilogue step: op(value, extra) (extra absent for unary and scalar ops). */
struct Step {
  std::string op;
  std::map<std::string, std::string> attrs;
  int extra = -1;  // index into the extra arrays
};

ast::Expr StepExpr(const Step& step, const ast::Expr& value, DType dtype) {
  std::vector<NodeEntry> inputs = {NodeEntry{Node::CreateVariable("v"), 0}};
  std::vector<ast::Expr> in = {value};
  if (step.extra >= 0) {
    inputs.push_back(NodeEntry{Node::CreateVariable("e"), 0});
    in.push_back(ast::Var(StrCat("in", step.extra + 1), dtype));
  }
  NodePtr node = Node::Create(Op::Get(step.op), step.op, step.attrs, inputs);
  return Op::GetAttr<FCodeGen>("FCodeGen")[node->op()](node->attrs, in)[0];
}

/*! \brief Runs `op` with the epilogue through FComputeEpilogue; checks it against op then each step. */
bool RunWithEpilogue(const std::string& op, const std::map<std::string, std::string>& attrs,
                     const std::vector<NDArray>& in, const std::vector<Step>& steps,
                     const std::vector<NDArray>& extra) {
  NDArray want = RunOp(op, attrs, in)[0];
  DType dtype = want.dtype();
  ast::Expr expr = ast::Var("in0", dtype);
  for (const Step& step : steps) {
    std::vector<NDArray> args = {want};
    if (step.extra >= 0) args.push_back(extra[step.extra]);
    want = RunOp(step.op, step.attrs, args)[0];
    expr = StepExpr(step, expr, dtype);
  }
  NDArray out(want.shape(), dtype, Device::CPU());
  NodePtr node = Node::Create(Op::Get(op), op, attrs,
                              {NodeEntry{Node::CreateVariable("a"), 0}, NodeEntry{Node::CreateVariable("b"), 0}});
  bool taken =
      Op::GetAttr<FComputeEpilogue>("FComputeEpilogue")[node->op()](OpContext(), node->attrs, in, expr, extra, out);
  if (taken) ExpectNear(out, want, 1e-5, 1e-5);
  return taken;
}

std::vector<NDArray> Dense(DType dtype = DType::kFloat32) {
  return {RandomArray(Shape{7, 33}, dtype, 1), RandomArray(Shape{33, 20}, dtype, 2)};
}

TEST(EpiloguePostOpsTest, MatmulTakesActivationsAndScalars) {
  std::vector<std::vector<Step>> epilogues = {
      {{"relu", {}}},
      {{"sigmoid", {}}},
      {{"multiply_scalar", {{"scalar", "0.5"}}}, {"add_scalar", {{"scalar", "2"}}}, {"exp", {}}},
      {{"relu", {}}, {"multiply_scalar", {{"scalar", "-0.5"}}}, {"relu", {}}},
      {{"tanh", {}}, {"tanh", {}}},
  };
  for (size_t i = 0; i < epilogues.size(); ++i) {
    SCOPED_TRACE(StrCat("epilogue ", i));
    EXPECT_TRUE(RunWithEpilogue("matmul", {}, Dense(), epilogues[i], {}));
  }
  EXPECT_TRUE(
      RunWithEpilogue("matmul", {{"transpose_b", "1"}},
                      {RandomArray(Shape{7, 33}, DType::kFloat32, 6), RandomArray(Shape{20, 33}, DType::kFloat32, 7)},
                      {{"relu", {}}}, {}));
}

TEST(EpiloguePostOpsTest, MatmulRefusesEpiloguesReadingArrays) {
  // Binary post-ops are slower in oneDNN's matmul than the generated in-place epilogue.
  std::vector<NDArray> extra = {RandomArray(Shape{20}, DType::kFloat32, 3),
                                RandomArray(Shape{7, 20}, DType::kFloat32, 4),
                                RandomArray(Shape{7, 1}, DType::kFloat32, 5)};
  std::vector<std::vector<Step>> epilogues = {
      {{"bias_add", {}, 0}, {"relu", {}}},
      {{"add", {}, 1}, {"tanh", {}}},
      {{"subtract", {}, 1}, {"multiply", {}, 2}, {"relu", {}}},
  };
  for (size_t i = 0; i < epilogues.size(); ++i) {
    SCOPED_TRACE(StrCat("epilogue ", i));
    EXPECT_FALSE(RunWithEpilogue("matmul", {}, Dense(), epilogues[i], extra));
  }
}

TEST(EpiloguePostOpsTest, EpiloguesWithoutPostOpsAreRefused) {
  std::vector<NDArray> extra = {RandomArray(Shape{7, 20}, DType::kFloat32, 3)};
  // relu_grad(in0, y) selects by another array; sqrt has no post-op here; float64 is no oneDNN type.
  EXPECT_FALSE(RunWithEpilogue("matmul", {}, Dense(), {{"relu_grad", {}, 0}}, extra));
  EXPECT_FALSE(RunWithEpilogue("matmul", {}, Dense(), {{"abs", {}}, {"sqrt", {}}}, extra));
  // Two linear steps apart: refused, as oneDNN 2.6 computed the second with the first's constants.
  EXPECT_FALSE(RunWithEpilogue(
      "matmul", {}, Dense(),
      {{"multiply_scalar", {{"scalar", "0.5"}}}, {"relu", {}}, {"add_scalar", {{"scalar", "2"}}}}, extra));
  EXPECT_FALSE(RunWithEpilogue("matmul", {}, Dense(DType::kFloat64), {{"relu", {}}}, {}));
}

TEST(EpiloguePostOpsTest, Conv2dTakesBiasReluInBothLayouts) {
  for (std::string format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    bool nhwc = format == "NHWC";
    NDArray x = RandomArray(nhwc ? Shape{2, 6, 5, 3} : Shape{2, 3, 6, 5}, DType::kFloat32, 1);
    NDArray w = RandomArray(Shape{3, 3, 3, 4}, DType::kFloat32, 2);
    std::map<std::string, std::string> attrs = {{"strides", "1"}, {"padding", "SAME"}, {"data_format", format}};
    std::vector<NDArray> extra = {RandomArray(Shape{4}, DType::kFloat32, 3),
                                  RandomArray(nhwc ? Shape{2, 6, 5, 4} : Shape{2, 4, 6, 5}, DType::kFloat32, 4)};
    if (nhwc) {  // bias_add has FCodeGen for NHWC only (NCHW bias is not NumPy broadcasting)
      EXPECT_TRUE(RunWithEpilogue("conv2d", attrs, {x, w}, {{"bias_add", {}, 0}, {"add", {}, 1}, {"relu", {}}}, extra));
    }
    EXPECT_TRUE(RunWithEpilogue("conv2d", attrs, {x, w}, {{"add", {}, 1}, {"relu", {}}}, extra));
  }
}

}  // namespace
}  // namespace ir
