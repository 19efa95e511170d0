#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "ir/ast.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/dnnl_utils.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

Attrs Flags(bool ta, bool tb) { return {{"transpose_a", ta ? "1" : "0"}, {"transpose_b", tb ? "1" : "0"}}; }

/*! \brief Straightforward matmul over broadcast batch dims, in double. */
std::vector<double> ReferenceMatmul(const NDArray& a, const NDArray& b, bool ta, bool tb, Shape* out_shape) {
  const Shape &sa = a.shape(), &sb = b.shape();
  int ra = sa.ndim(), rb = sb.ndim(), nbatch = std::max(ra, rb) - 2;
  int64_t m = ta ? sa[ra - 1] : sa[ra - 2], k = ta ? sa[ra - 2] : sa[ra - 1], n = tb ? sb[rb - 2] : sb[rb - 1];
  std::vector<int64_t> batch(nbatch);
  for (int i = 0; i < nbatch; ++i) {
    int ia = i - (nbatch - (ra - 2)), ib = i - (nbatch - (rb - 2));
    batch[i] = std::max(ia >= 0 ? sa[ia] : 1, ib >= 0 ? sb[ib] : 1);
  }
  std::vector<int64_t> dims = batch;
  dims.push_back(m);
  dims.push_back(n);
  *out_shape = Shape(dims);
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  std::vector<double> va = Values(a), vb = Values(b), out;
  for (int64_t t = 0; t < batches; ++t) {
    // Matrix index of each operand: coordinates of t, with broadcast (size-1) dims pinned to 0.
    int64_t rest = t, ma = 0, mb = 0, stride_a = 1, stride_b = 1;
    for (int i = nbatch - 1; i >= 0; --i) {
      int64_t coord = rest % batch[i];
      rest /= batch[i];
      int ia = i - (nbatch - (ra - 2)), ib = i - (nbatch - (rb - 2));
      if (ia >= 0) {
        ma += (sa[ia] == 1 ? 0 : coord) * stride_a;
        stride_a *= sa[ia];
      }
      if (ib >= 0) {
        mb += (sb[ib] == 1 ? 0 : coord) * stride_b;
        stride_b *= sb[ib];
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = va[ma * m * k + (ta ? p * m + i : i * k + p)];
          double y = vb[mb * k * n + (tb ? j * k + p : p * n + j)];
          acc += x * y;
        }
        out.push_back(acc);
      }
    }
  }
  return out;
}

/*! \brief Operand shape [batch..., rows, cols], swapped when transposed. */
Shape Operand(std::vector<int64_t> batch, int64_t rows, int64_t cols, bool transposed) {
  batch.push_back(transposed ? cols : rows);
  batch.push_back(transposed ? rows : cols);
  return Shape(batch);
}

struct MatmulCase {
  std::vector<int64_t> batch_a, batch_b;
  int64_t m, k, n;
};

std::vector<MatmulCase> Cases() {
  return {
      {{}, {}, 3, 4, 5},
      {{}, {}, 1, 7, 1},
      {{2}, {2}, 3, 4, 5},
      {{}, {3}, 2, 5, 4},
      {{2, 1}, {3}, 3, 2, 4},
      {{4}, {}, 5, 3, 2},
      {{2, 1, 3}, {1, 4, 1}, 2, 3, 2},
      {{}, {}, 5, 150, 530},
      {{3}, {1}, 17, 129, 20},
  };
}

/*! \brief Every element's absolute value, in the same dtype. */
NDArray Abs(const NDArray& x) { return RunOp("abs", {}, {x})[0]; }

/*! \brief Each product against the float64 reference: within the error bound of its k-term sum. */
void CheckMatmul(DType dtype) {
  uint64_t seed = 1;
  for (const MatmulCase& c : Cases()) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        NDArray a = RandomArray(Operand(c.batch_a, c.m, c.k, ta), dtype, seed++, -2, 2);
        NDArray b = RandomArray(Operand(c.batch_b, c.k, c.n, tb), dtype, seed++, -2, 2);
        SCOPED_TRACE(StrCat(DTypeName(dtype), " a ", a.shape(), " b ", b.shape(), " ta ", ta, " tb ", tb));
        Shape want_shape;
        std::vector<double> want = ReferenceMatmul(a, b, ta, tb, &want_shape);
        NDArray y = RunOp("matmul", Flags(ta, tb), {a, b})[0];
        EXPECT_EQ(y.shape(), want_shape);
        EXPECT_EQ(y.dtype(), dtype);
        ExpectWithinSumBound(y, want, ReferenceMatmul(Abs(a), Abs(b), ta, tb, &want_shape), c.k);
      }
    }
  }
}

TEST(MatmulOpTest, Float32MatchesReference) { CheckMatmul(DType::kFloat32); }
TEST(MatmulOpTest, Float64MatchesReference) { CheckMatmul(DType::kFloat64); }
TEST(MatmulOpTest, IntegersMatchReference) {  // exactly: the bound of integers is 0
  CheckMatmul(DType::kInt32);
  CheckMatmul(DType::kInt64);
}

TEST(MatmulOpTest, EmptyInnerDimensionGivesZeros) {
  NDArray y = RunOp("matmul", {}, {NDArray(Shape{2, 0}, DType::kFloat32), NDArray(Shape{0, 3}, DType::kFloat32)})[0];
  ExpectNear(y, std::vector<double>(6, 0.0));
}

TEST(MatmulOpTest, ShapeErrorsNameNodeAndShapes) {
  NDArray a = RandomArray(Shape{2, 3}, DType::kFloat32, 1), b = RandomArray(Shape{4, 5}, DType::kFloat32, 2);
  EXPECT_ERROR(RunOp("matmul", {}, {a, b}),
               "node 'matmul' (op matmul): inner dimensions 3 and 4 do not match (a [2,3], b [4,5])");
  EXPECT_ERROR(RunOp("matmul", Flags(true, false), {a, b}),
               "inner dimensions 2 and 4 do not match (a [2,3], b [4,5], transpose_a)");
  EXPECT_ERROR(
      RunOp("matmul", {},
            {RandomArray(Shape{2, 2, 3}, DType::kFloat32, 1), RandomArray(Shape{3, 3, 5}, DType::kFloat32, 2)}),
      "batch dimensions do not broadcast together (a [2,2,3], b [3,3,5])");
  EXPECT_ERROR(RunOp("matmul", {}, {RandomArray(Shape{3}, DType::kFloat32, 1), b}),
               "operands must have rank >= 2 (a [3], b [4,5])");
  EXPECT_ERROR(
      RunOp("matmul", {}, {RandomArray(Shape{2, 2}, DType::kBool, 1), RandomArray(Shape{2, 2}, DType::kBool, 1)}),
      "dtype bool is not supported");
}

std::vector<Shape> Infer(const std::string& op, const Attrs& attrs, std::vector<Shape> in, Shape out = Shape()) {
  std::vector<NodeEntry> inputs(in.size(), NodeEntry{Node::CreateVariable("v"), 0});
  NodePtr node = Node::Create(Op::Get(op), op, attrs, inputs);
  std::vector<Shape> outs = {out};
  Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in, &outs);
  in.push_back(outs[0]);
  return in;
}

TEST(MatmulOpTest, PartialShapes) {
  const int64_t u = kUnknownDim;
  std::vector<Shape> s = Infer("matmul", {}, {Shape{u, 3}, Shape{u, 5}});
  EXPECT_EQ(s[1], (Shape{3, 5}));
  EXPECT_EQ(s[2], (Shape{u, 5}));
  s = Infer("matmul", Flags(false, true), {Shape{u, 2, 3}, Shape{4, u}}, Shape{7, 2, 4});
  EXPECT_EQ(s[0], (Shape{7, 2, 3}));
  EXPECT_EQ(s[1], (Shape{4, 3}));
  EXPECT_FALSE(Infer("matmul", {}, {Shape(), Shape{3, 4}})[2].rank_known());
  EXPECT_ERROR(Infer("matmul", {}, {Shape{u, 3}, Shape{4, u}}),
               "inner dimensions 3 and 4 do not match (a [?,3], b [4,?])");
}

TEST(MatmulOpTest, Float32IsFastAndReusesPrimitives) {
  NDArray a = RandomArray(Shape{256, 256}, DType::kFloat32, 1), b = RandomArray(Shape{256, 256}, DType::kFloat32, 2);
  RunOp("matmul", {}, {a, b});  // creates and caches the primitive
  size_t created = op::dnnl_utils::PrimitiveCache::Global().num_created();
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    auto start = std::chrono::steady_clock::now();
    RunOp("matmul", {}, {a, b});
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  EXPECT_LT(best, 50.0) << "256x256x256 float32 matmul took " << best << " ms";
  EXPECT_EQ(op::dnnl_utils::PrimitiveCache::Global().num_created(), created);
}

TEST(MatmulOpTest, Attributes) {
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get("matmul")], kOutEWiseFusable);
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get("bias_add")], kBroadcast);
}

TEST(MatmulGradientTest, MatchesFiniteDifferences) {
  struct GradCase {
    Shape a, b;
    bool ta, tb;
  };
  std::vector<GradCase> cases = {
      {{3, 4}, {4, 5}, false, false},        {{4, 3}, {4, 5}, true, false},        {{3, 4}, {5, 4}, false, true},
      {{4, 3}, {5, 4}, true, true},          {{2, 3, 4}, {2, 4, 5}, false, false}, {{3, 4}, {2, 4, 5}, false, false},
      {{2, 1, 4, 3}, {3, 5, 4}, true, true}, {{2, 3, 4}, {5, 4}, false, true},
  };
  uint64_t seed = 40;
  for (const GradCase& c : cases) {
    SCOPED_TRACE(StrCat("a ", c.a, " b ", c.b, " ta ", c.ta, " tb ", c.tb));
    CheckGradient("matmul", Flags(c.ta, c.tb),
                  {RandomArray(c.a, DType::kFloat64, seed), RandomArray(c.b, DType::kFloat64, seed + 1)});
    seed += 2;
  }
}

// ---------------------------------------------------------------- bias_add

TEST(BiasAddOpTest, AddsAlongTheChannelAxis) {
  NDArray x = RandomArray(Shape{2, 3, 4}, DType::kFloat32, 1);
  std::vector<double> xv = Values(x), nhwc, nchw;
  NDArray bias4 = NDArray::FromVector<float>(Shape{4}, {1, 2, 3, 4});
  NDArray bias3 = NDArray::FromVector<float>(Shape{3}, {10, 20, 30});
  for (int64_t i = 0; i < 24; ++i) {
    nhwc.push_back(xv[i] + (i % 4 + 1));
    nchw.push_back(xv[i] + 10 * (i / 4 % 3 + 1));
  }
  ExpectNear(RunOp("bias_add", {}, {x, bias4})[0], nhwc);
  ExpectNear(RunOp("bias_add", {{"data_format", "NCHW"}}, {x, bias3})[0], nchw);
  ExpectNear(RunOp("bias_add", {},
                   {NDArray::FromVector<int64_t>(Shape{2, 2}, {1, 2, 3, 4}),
                    NDArray::FromVector<int64_t>(Shape{2}, {10, 20})})[0],
             {11, 22, 13, 24});
}

TEST(BiasAddOpTest, GradAndCodeGen) {
  NDArray dy = RandomArray(Shape{2, 3, 4}, DType::kFloat64, 2);
  std::vector<double> v = Values(dy), last(4, 0.0), axis1(3, 0.0);
  for (int64_t i = 0; i < 24; ++i) {
    last[i % 4] += v[i];
    axis1[i / 4 % 3] += v[i];
  }
  ExpectNear(RunOp("bias_add_grad", {}, {dy})[0], last, 1e-12);
  ExpectNear(RunOp("bias_add_grad", {{"data_format", "NCHW"}}, {dy})[0], axis1, 1e-12);
  for (const char* format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    NDArray bias = RandomArray(Shape{std::string(format) == "NHWC" ? 4 : 3}, DType::kFloat64, 3);
    CheckGradient("bias_add", {{"data_format", format}}, {dy, bias});
    CheckGradient("bias_add_grad", {{"data_format", format}}, {dy});
  }
  CheckCodeGen("bias_add", {},
               {RandomArray(Shape{2, 3, 4}, DType::kFloat32, 4), RandomArray(Shape{4}, DType::kFloat32, 5)});
  CheckCodeGen("bias_add", {},
               {RandomArray(Shape{5, 3}, DType::kInt32, 4, -9, 9), RandomArray(Shape{3}, DType::kInt32, 5, -9, 9)});
  // NCHW bias does not broadcast the NumPy way, so it is left to the kernel.
  NodeAttrs nchw = Node::Create(Op::Get("bias_add"), "b", {{"data_format", "NCHW"}},
                                {NodeEntry{Node::CreateVariable("x"), 0}, NodeEntry{Node::CreateVariable("b"), 0}})
                       ->attrs;
  std::vector<ast::Expr> vars = {ast::Var("in0", DType::kFloat32), ast::Var("in1", DType::kFloat32)};
  EXPECT_TRUE(Op::GetAttr<FCodeGen>("FCodeGen")[Op::Get("bias_add")](nchw, vars).empty());
}

TEST(BiasAddOpTest, ShapeInferenceAndErrors) {
  const int64_t u = kUnknownDim;
  std::vector<Shape> s = Infer("bias_add", {{"data_format", "NCHW"}}, {Shape{2, u, 5}, Shape{3}});
  EXPECT_EQ(s[0], (Shape{2, 3, 5}));
  EXPECT_EQ(s[2], (Shape{2, 3, 5}));
  EXPECT_EQ(Infer("bias_add", {}, {Shape{2, 4}, Shape()})[1], Shape{4});
  EXPECT_EQ(Infer("bias_add_grad", {}, {Shape{u, u, 6}})[1], Shape{6});
  EXPECT_EQ(Infer("bias_add_grad", {{"data_format", "NCHW"}}, {Shape{2, u}}, Shape{9})[0], (Shape{2, 9}));
  EXPECT_EQ(Infer("bias_add_grad", {}, {Shape()})[1], Shape::UnknownDims(1));
  NDArray x = RandomArray(Shape{2, 3}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("bias_add", {}, {x, RandomArray(Shape{2}, DType::kFloat32, 1)}),
               "node 'bias_add' (op bias_add): bias [2] does not match the 3 channels of x [2,3] (data_format NHWC)");
  EXPECT_ERROR(RunOp("bias_add", {{"data_format", "NWC"}}, {x, RandomArray(Shape{3}, DType::kFloat32, 1)}),
               "data_format must be NHWC or NCHW, got 'NWC'");
  EXPECT_ERROR(RunOp("bias_add", {{"data_format", "NCHW"}}, {RandomArray(Shape{3}, DType::kFloat32, 1), x}),
               "data_format NCHW needs rank >= 2, got rank 1");
}

}  // namespace
}  // namespace test
}  // namespace ir
