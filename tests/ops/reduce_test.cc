#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "ops/reduce/reduce_kernels.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

using Combine = std::function<double(double, double)>;

struct ReduceCase {
  std::string op;
  double init;
  Combine combine;
};

std::vector<ReduceCase> Reductions() {
  return {
      {"sum", 0, [](double a, double b) { return a + b; }},
      {"mean", 0, [](double a, double b) { return a + b; }},
      {"max", -INFINITY, [](double a, double b) { return std::max(a, b); }},
      {"min", INFINITY, [](double a, double b) { return std::min(a, b); }},
      {"prod", 1, [](double a, double b) { return a * b; }},
  };
}

/*! \brief A straightforward reference: every input element combined into its output slot. */
std::vector<double> Reference(const ReduceCase& c, const NDArray& x, std::vector<int> axes) {
  const std::vector<int64_t> s = x.shape().dims();
  int nd = static_cast<int>(s.size());
  std::vector<bool> reduced(nd, axes.empty());
  for (int a : axes) reduced[a < 0 ? a + nd : a] = true;
  int64_t out_size = 1, count = 1;
  for (int d = 0; d < nd; ++d) (reduced[d] ? count : out_size) *= s[d];
  std::vector<double> out(out_size, c.init), values = Values(x);
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
    int64_t rest = i, o = 0, stride = 1;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t coord = rest % s[d];
      rest /= s[d];
      if (!reduced[d]) {
        o += coord * stride;
        stride *= s[d];
      }
    }
    out[o] = c.combine(out[o], values[i]);
  }
  if (c.op == "mean") {
    for (double& v : out) v /= count;
  }
  return out;
}

std::string AxisText(const std::vector<int>& axes) {
  std::string text = "(";
  for (size_t i = 0; i < axes.size(); ++i) text += (i ? "," : "") + std::to_string(axes[i]);
  return text + ")";
}

Shape ReducedShape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  std::vector<bool> reduced(s.ndim(), axes.empty());
  for (int a : axes) reduced[a < 0 ? a + s.ndim() : a] = true;
  std::vector<int64_t> dims;
  for (int d = 0; d < s.ndim(); ++d) {
    if (!reduced[d]) dims.push_back(s[d]);
    if (reduced[d] && keepdims) dims.push_back(1);
  }
  return Shape(dims);
}

/*!
 * \brief Each reduction against the float64 reference: a sum (or mean) within the bound of a sum
 * of its count of terms in any order, gamma_count times the sum of magnitudes (one more rounding
 * for the mean's division); a product within gamma_count of its magnitude; max and min exact.
 */
void CheckReductions(const Shape& shape, const std::vector<std::vector<int>>& axis_sets, DType dtype) {
  for (const ReduceCase& c : Reductions()) {
    NDArray x = RandomArray(shape, dtype, 17, c.op == "prod" ? 0.5 : -3, c.op == "prod" ? 1.5 : 3);
    for (const auto& axes : axis_sets) {
      for (bool keepdims : {false, true}) {
        SCOPED_TRACE(c.op + " " + shape.ToString() + " axis " + AxisText(axes) + " keepdims " +
                     std::to_string(keepdims) + " " + DTypeName(dtype));
        NDArray y = RunOp(c.op, {{"axis", AxisText(axes)}, {"keepdims", keepdims ? "1" : "0"}}, {x})[0];
        EXPECT_EQ(y.shape(), ReducedShape(shape, axes, keepdims));
        EXPECT_EQ(y.dtype(), dtype);
        std::vector<double> want = Reference(c, x, axes), magnitude(want.size(), 0.0);
        if (dtype == DType::kInt32 && c.op == "mean") {
          for (double& v : want) v = std::trunc(v);
        }
        if (c.op == "sum" || c.op == "mean") magnitude = Reference(c, RunOp("abs", {}, {x})[0], axes);
        int64_t count = x.Size() / std::max<int64_t>(1, y.Size()), k = count + (c.op == "mean");
        if (c.op == "prod") {
          // Below the normal range (44,400 factors in [0.5, 1.5] underflow) a product keeps no
          // relative accuracy, only an absolute one: the smallest normal number.
          double normal =
              dtype == DType::kFloat32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
          for (size_t i = 0; i < want.size(); ++i) {
            bool underflow = Gamma(k, dtype) > 0 && std::fabs(want[i]) < normal;
            magnitude[i] = underflow ? normal / Gamma(k, dtype) : std::fabs(want[i]);
          }
        }
        ExpectWithinSumBound(y, want, magnitude, k);
      }
    }
  }
}

TEST(ReduceOpTest, SmallShapesOverEveryAxisSetMatchReference) {
  std::vector<std::vector<int>> axis_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, -1}, {-3, 1}, {0, 1, 2}};
  CheckReductions(Shape{2, 3, 5}, axis_sets, DType::kFloat32);
  CheckReductions(Shape{2, 3, 5}, axis_sets, DType::kFloat64);
  CheckReductions(Shape{2, 3, 5}, axis_sets, DType::kInt32);
}

TEST(ReduceOpTest, LargerShapesUseBothLayoutsAndParallelSplits) {
  // Inner axis reduced and kept, size-1 axes, wide rows (several tiles) and long reductions.
  CheckReductions(Shape{3, 1, 400, 37}, {{2}, {0, 2}, {3}, {1, 3}, {}}, DType::kFloat64);
  CheckReductions(Shape{5000, 3}, {{0}, {1}}, DType::kFloat64);
  CheckReductions(Shape{2, 150, 300}, {{1}, {0, 2}}, DType::kFloat32);
}

TEST(ReduceOpTest, Float32SumsArePairwiseAccurate) {
  NDArray ones = NDArray::FromVector<float>(Shape{1000000}, std::vector<float>(1000000, 1.0f));
  EXPECT_EQ(RunOp("mean", {}, {ones})[0].data<float>()[0], 1.0f);
  // A running float32 sum of a million 0.1f is off by about 1%; pairwise summation is within
  // gamma_k of the sum (all terms positive), k the roundings on one path: a lane's share of a leaf
  // summed in order, the tree over the lanes (inner axis reduced) and the pairwise tree over the
  // leaves, at most log2 of the count (src/ops/reduce/reduce_kernels.h).
  NDArray tenths = NDArray::FromVector<float>(Shape{1000, 1000}, std::vector<float>(1000000, 0.1f));
  double exact = 1e6 * static_cast<double>(0.1f), depth = std::ceil(std::log2(1e6));
  int64_t runs = op::reduce::kLeafElements / op::reduce::kLanes + static_cast<int64_t>(std::log2(op::reduce::kLanes));
  double gamma = Gamma(std::max(runs, op::reduce::kLeafRows) + static_cast<int64_t>(depth), DType::kFloat32);
  EXPECT_NEAR(RunOp("sum", {}, {tenths})[0].data<float>()[0], exact, exact * gamma);
  EXPECT_NEAR(RunOp("sum", {{"axis", "0"}}, {tenths.Reshape(Shape{1000000, 1})})[0].data<float>()[0], exact,
              exact * gamma);
  std::vector<double> columns = Values(RunOp("sum", {{"axis", "0"}}, {tenths.Reshape(Shape{500000, 2})})[0]);
  for (double v : columns) EXPECT_NEAR(v, exact / 2, exact / 2 * gamma);
  EXPECT_LT(gamma, 1e-4);  // still far below a running sum's 1%
}

TEST(ReduceOpTest, ParallelSplitGivesTheSerialBits) {
  // Several outputs reduce serially each; a single output splits its pairwise tree across
  // threads. Both must give the same bits, so results do not depend on the thread count.
  NDArray rows = RandomArray(Shape{4, 100000}, DType::kFloat32, 8);
  std::vector<float> per_row = RunOp("sum", {{"axis", "1"}}, {rows})[0].ToVector<float>();
  NDArray cols = RandomArray(Shape{2, 30000, 3}, DType::kFloat32, 9);
  std::vector<float> per_block = RunOp("sum", {{"axis", "1"}}, {cols})[0].ToVector<float>();
  for (int r = 0; r < 4; ++r) {
    NDArray row = rows.Slice(r, r + 1).Reshape(Shape{100000});
    EXPECT_EQ(RunOp("sum", {}, {row})[0].ToVector<float>()[0], per_row[r]) << "row " << r;
  }
  for (int b = 0; b < 2; ++b) {
    NDArray block = cols.Slice(b, b + 1).Reshape(Shape{30000, 3});
    std::vector<float> sums = RunOp("sum", {{"axis", "0"}}, {block})[0].ToVector<float>();
    for (int j = 0; j < 3; ++j) EXPECT_EQ(sums[j], per_block[b * 3 + j]) << "block " << b << " column " << j;
  }
}

TEST(ReduceOpTest, EmptyReductionsGiveIdentities) {
  NDArray x(Shape{3, 0}, DType::kFloat32);
  ExpectNear(RunOp("sum", {{"axis", "1"}}, {x})[0], {0, 0, 0});
  ExpectNear(RunOp("prod", {{"axis", "1"}}, {x})[0], {1, 1, 1});
  ExpectNear(RunOp("max", {{"axis", "1"}}, {x})[0], {-INFINITY, -INFINITY, -INFINITY});
  EXPECT_TRUE(std::isnan(RunOp("mean", {{"axis", "1"}}, {x})[0].data<float>()[0]));
  EXPECT_EQ(RunOp("sum", {{"axis", "0"}}, {x})[0].shape(), Shape{0});
}

TEST(ReduceOpTest, AliasesAndAttributes) {
  for (const char* name : {"sum", "mean", "max", "min", "prod"}) {
    const Op* op = Op::Get(name);
    EXPECT_EQ(Op::Get(std::string("reduce_") + name), op);
    EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[op], kCommReduce);
    EXPECT_EQ(Op::GetAttr<TReduceKind>("TReduceKind")[op], name);
  }
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get("argmax")], kOpaque);
  NodeAttrs attrs =
      Node::Create(Op::Get("sum"), "s", {{"axis", "(-1,0)"}}, {NodeEntry{Node::CreateVariable("x"), 0}})->attrs;
  EXPECT_EQ(Op::GetAttr<FReduceAxes>("FReduceAxes")[Op::Get("sum")](attrs, 3), (std::vector<int>{0, 2}));
}

TEST(ReduceOpTest, BadAxesNameTheNode) {
  NDArray x = RandomArray(Shape{2, 3}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("sum", {{"axis", "(1,-1)"}}, {x}), "node 'sum' (op sum): axis -1 is repeated in axis (1,-1)");
  EXPECT_ERROR(RunOp("max", {{"axis", "2"}}, {x}), "node 'max' (op max): axis 2 is out of range for rank 2");
  EXPECT_ERROR(RunOp("argmax", {{"axis", "-3"}}, {x}), "node 'argmax' (op argmax): axis -3 is out of range for rank 2");
  EXPECT_ERROR(RunOp("sum", {}, {RandomArray(Shape{2}, DType::kBool, 1)}), "input dtype bool is not supported");
}

// ---------------------------------------------------------------- partial shapes

std::vector<Shape> Infer(const std::string& op, const Attrs& attrs, std::vector<Shape> in, Shape out = Shape()) {
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < in.size(); ++i) inputs.push_back(NodeEntry{Node::CreateVariable("v"), 0});
  NodePtr node = Node::Create(Op::Get(op), op, attrs, inputs);
  std::vector<Shape> outs = {out};
  Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in, &outs);
  in.push_back(outs[0]);
  return in;  // inputs, then the output
}

TEST(ReduceOpTest, PartialShapesRefineBothWays) {
  const int64_t u = kUnknownDim;
  EXPECT_EQ(Infer("sum", {{"axis", "1"}}, {Shape{u, 3, 4}})[1], (Shape{u, 4}));
  EXPECT_EQ(Infer("sum", {{"axis", "-1"}, {"keepdims", "1"}}, {Shape{2, u}})[1], (Shape{2, 1}));
  // Unknown rank: only a reduction of every axis without keepdims has a known result.
  EXPECT_EQ(Infer("sum", {}, {Shape()})[1], Shape::Scalar());
  EXPECT_FALSE(Infer("sum", {{"axis", "0"}}, {Shape()})[1].rank_known());
  EXPECT_FALSE(Infer("sum", {{"keepdims", "1"}}, {Shape()})[1].rank_known());
  // The result gives the data's rank and kept dims.
  EXPECT_EQ(Infer("max", {{"axis", "1"}, {"keepdims", "1"}}, {Shape()}, Shape{2, 1, 5})[0], (Shape{2, u, 5}));
  EXPECT_EQ(Infer("max", {{"axis", "(0,-1)"}}, {Shape()}, Shape{3})[0], (Shape{u, 3, u}));
  EXPECT_EQ(Infer("mean", {{"axis", "0"}}, {Shape{u, u}}, Shape{7})[0], (Shape{u, 7}));
  EXPECT_EQ(Infer("argmax", {{"axis", "1"}}, {Shape{2, u, 4}})[1], (Shape{2, 4}));
  EXPECT_ERROR(Infer("sum", {{"axis", "0"}}, {Shape{2, 3}}, Shape{2}),
               "node 'sum' (op sum): output 0 has shape [2] but must be [3]");
  EXPECT_ERROR(Infer("argmin", {{"axis", "1"}}, {Shape{2, 0}}), "cannot search axis 1 of size 0 in shape [2,0]");
}

// ---------------------------------------------------------------- argmax / argmin

TEST(ArgReduceOpTest, FirstOfTiesAlongEachAxis) {
  NDArray x = NDArray::FromVector<float>(Shape{2, 3}, {1, 5, 5, 7, 0, 7});
  NDArray y = RunOp("argmax", {{"axis", "1"}}, {x})[0];
  EXPECT_EQ(y.dtype(), DType::kInt64);
  ExpectNear(y, {1, 0});
  ExpectNear(RunOp("argmin", {{"axis", "-1"}}, {x})[0], {0, 1});
  NDArray y0 = RunOp("argmax", {{"axis", "0"}, {"keepdims", "1"}}, {x})[0];
  EXPECT_EQ(y0.shape(), (Shape{1, 3}));
  ExpectNear(y0, {1, 0, 1});
  ExpectNear(RunOp("argmin", {}, {NDArray::FromVector<int32_t>(Shape{4}, {3, -2, 9, -2})})[0], {1});
}

TEST(ArgReduceOpTest, MatchesReferenceOnWideInput) {
  NDArray x = RandomArray(Shape{3, 50, 600}, DType::kFloat64, 5);
  std::vector<double> v = Values(x), want;
  for (int o = 0; o < 3; ++o) {
    for (int j = 0; j < 600; ++j) {
      int best = 0;
      for (int i = 1; i < 50; ++i) best = v[(o * 50 + i) * 600 + j] < v[(o * 50 + best) * 600 + j] ? i : best;
      want.push_back(best);
    }
  }
  ExpectNear(RunOp("argmin", {{"axis", "1"}}, {x})[0], want);
}

// ---------------------------------------------------------------- gradients

TEST(ReduceGradientTest, MatchesFiniteDifferences) {
  NDArray x = RandomArray(Shape{3, 4, 5}, DType::kFloat64, 23, 0.5, 2);  // distinct values, no zeros
  for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
    for (const Attrs& attrs : std::vector<Attrs>{
             {}, {{"axis", "1"}}, {{"axis", "(0,-1)"}, {"keepdims", "1"}}, {{"axis", "2"}, {"keepdims", "1"}}}) {
      SCOPED_TRACE(std::string(op) + " axis " + (attrs.count("axis") ? attrs.at("axis") : "()"));
      CheckGradient(op, attrs, {x});
    }
  }
}

TEST(ReduceGradientTest, TiedExtremaShareTheGradient) {
  NodeEntry x{Node::CreateVariable("x"), 0}, og{Node::CreateVariable("og"), 0};
  NodePtr max = Node::Create(Op::Get("max"), "max", {{"axis", "1"}}, {x});
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[max->op()](max, {og});
  std::map<const Node*, NDArray> feeds = {{x.node.get(), NDArray::FromVector<double>(Shape{2, 3}, {1, 3, 3, 4, 4, 4})},
                                          {og.node.get(), NDArray::FromVector<double>(Shape{2}, {2, 6})}};
  ExpectNear(EvalGraph(grads, feeds)[0], {0, 1, 1, 2, 2, 2});
}

TEST(ReduceGradientTest, GradBroadcastIsDifferentiable) {
  NDArray like = RandomArray(Shape{2, 3, 4}, DType::kFloat64, 3);
  CheckGradient("_reduce_grad_broadcast", {{"axis", "(0,2)"}}, {RandomArray(Shape{3}, DType::kFloat64, 4), like},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  CheckGradient("_reduce_grad_broadcast", {{"axis", "1"}, {"keepdims", "1"}, {"normalize", "1"}},
                {RandomArray(Shape{2, 1, 4}, DType::kFloat64, 4), like}, GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  ExpectNear(RunOp("_reduce_grad_broadcast", {{"axis", "1"}, {"normalize", "1"}},
                   {NDArray::FromVector<double>(Shape{2}, {3, 6}), like.Reshape(Shape{2, 12})})[0]
                 .Reshape(Shape{24}),
             std::vector<double>{0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                                 0.5,  0.5,  0.5,  0.5,  0.5,  0.5,  0.5,  0.5,  0.5,  0.5,  0.5,  0.5});
  EXPECT_ERROR(Infer("_reduce_grad_broadcast", {{"axis", "0"}}, {Shape{3}, Shape{2, 4}}),
               "node '_reduce_grad_broadcast' (op _reduce_grad_broadcast): input 0 has shape [3] but must be [4]");
}

TEST(ArgReduceOpTest, HasNoGradient) {
  NodeEntry x{Node::CreateVariable("x"), 0};
  NodePtr node = Node::Create(Op::Get("argmax"), "am", {}, {x});
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[node->op()](node, {x});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].node, nullptr);
}

}  // namespace
}  // namespace test
}  // namespace ir
