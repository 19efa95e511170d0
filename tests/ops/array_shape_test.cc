#include <gtest/gtest.h>

#include "ir/ast.h"
#include "ir/op_kernel.h"
#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

/*! \brief out[i] = in[index of i with dimensions permuted by perm]. */
std::vector<double> ReferenceTranspose(const NDArray& x, const std::vector<int>& perm) {
  const Shape& in = x.shape();
  std::vector<int64_t> dims;
  for (int p : perm) dims.push_back(in[p]);
  Shape out(dims);
  std::vector<double> values = Values(x), result(values.size());
  for (int64_t i = 0; i < out.Size(); ++i) {
    std::vector<int64_t> oi = Unravel(i, out), ii(in.ndim());
    for (size_t d = 0; d < perm.size(); ++d) ii[perm[d]] = oi[d];
    result[i] = values[Ravel(ii, in)];
  }
  return result;
}

/*! \brief NumPy broadcasting of x to `out`, element by element. */
std::vector<double> ReferenceBroadcast(const NDArray& x, const Shape& out) {
  const Shape& in = x.shape();
  std::vector<double> values = Values(x), result;
  for (int64_t i = 0; i < out.Size(); ++i) {
    std::vector<int64_t> oi = Unravel(i, out), ii(in.ndim());
    for (int d = 0; d < in.ndim(); ++d) ii[d] = in[d] == 1 ? 0 : oi[out.ndim() - in.ndim() + d];
    result.push_back(values[Ravel(ii, in)]);
  }
  return result;
}

TEST(ReshapeTest, KeepsElementOrderAndInfersDimensions) {
  NDArray x = Iota(Shape{2, 3, 4});
  NDArray y = RunOp("reshape", {{"shape", "(0, -1)"}}, {x})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  ExpectNear(y, Values(x));
  EXPECT_EQ(RunOp("reshape", {{"shape", "(4,-1,2)"}}, {x})[0].shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(RunOp("reshape", {{"shape", "()"}}, {Iota(Shape{1, 1})})[0].shape(), Shape::Scalar());
  EXPECT_EQ(RunOp("reshape", {{"shape", "(0,0,0)"}}, {x})[0].shape(), (Shape{2, 3, 4}));
}

TEST(ReshapeTest, PropagatesPartialShapes) {
  EXPECT_EQ(InferShapes("reshape", {{"shape", "(0,2,-1)"}}, {Shape{U, 6}}).out[0], (Shape{U, 2, 3}));
  EXPECT_EQ(InferShapes("reshape", {{"shape", "(-1,784)"}}, {Shape{U, 28, 28}}).out[0], (Shape{U, 784}));
  EXPECT_EQ(InferShapes("reshape", {{"shape", "(0,3)"}}, {Shape()}).out[0], (Shape{U, 3}));
  EXPECT_EQ(InferShapes("reshape", {{"shape", "(-1)"}}, {Shape()}).out[0], (Shape{U}));
  // A known output fixes a single unknown input dimension.
  Inferred back = InferShapes("reshape", {{"shape", "(-1,6)"}}, {Shape{U, 3}}, {Shape{4, 6}});
  EXPECT_EQ(back.in[0], (Shape{8, 3}));
  EXPECT_TRUE(back.complete);
  EXPECT_FALSE(InferShapes("reshape", {{"shape", "(-1,6)"}}, {Shape{U, 3}}).complete);
}

TEST(ReshapeTest, ErrorsNameNodeAndShapes) {
  NDArray x = Iota(Shape{2, 3});
  EXPECT_ERROR(RunOp("reshape", {{"shape", "(4,-1)"}}, {x}),
               "node 'reshape' (op reshape): reshape [2,3] (6 elements) to [4,-1]: 6 is not divisible by 4");
  EXPECT_ERROR(RunOp("reshape", {{"shape", "(4,2)"}}, {x}),
               "node 'reshape' (op reshape): reshape [2,3] (6 elements) to [4,2] (8 elements)");
  EXPECT_ERROR(RunOp("reshape", {{"shape", "(-1,-1)"}}, {x}), "to [-1,-1]: more than one -1");
  EXPECT_ERROR(RunOp("reshape", {{"shape", "(0,0,0)"}}, {x}),
               "0 at position 2 copies a dimension the input does not have");
  EXPECT_ERROR(RunOp("reshape", {{"shape", "(-2,3)"}}, {x}), "dimension -2 is negative");
  EXPECT_ERROR(InferShapes("reshape", {{"shape", "(2,3)"}}, {Shape{2, 3}}, {Shape{3, 2}}),
               "node 'reshape' (op reshape): output 0 has shape [3,2] but must be [2,3]");
}

TEST(ReshapeTest, TargetWhoseSizeOverflowsIsAnErrorNamingTheNode) {
  EXPECT_ERROR(InferShapes("reshape", {{"shape", "(4611686018427387905,4)"}}, {Shape{4}}),
               "node 'reshape' (op reshape): reshape [4] to [4611686018427387905,4]: the target has more elements");
  EXPECT_ERROR(InferShapes("reshape", {{"shape", "(-1)"}}, {Shape{int64_t{1} << 62, 8}}),
               "node 'reshape' (op reshape): reshape [4611686018427387904,8] to [-1]: the input has more elements");
}

TEST(ReshapeTest, MetadataOpsMayAliasTheirInput) {
  const auto& inplace = Op::GetAttr<FInplaceOption>("FInplaceOption");
  const auto& compute = Op::GetAttr<FCompute>("FCompute");
  for (const char* op : {"reshape", "reshape_like", "expand_dims", "squeeze"}) {
    EXPECT_EQ(inplace[Op::Get(op)](NodeAttrs()), (std::vector<std::pair<int, int>>{{0, 0}})) << op;
  }
  NodeAttrs attrs = MakeOpNode("reshape", {{"shape", "(3,2)"}}, 1)->attrs;
  NDArray x = Iota(Shape{2, 3});
  NDArray alias = x.Reshape(Shape{3, 2});
  compute[Op::Get("reshape")](OpContext(), attrs, {x}, {alias});
  ExpectNear(alias, {0, 1, 2, 3, 4, 5});
  NDArray separate(Shape{3, 2}, DType::kFloat32);
  compute[Op::Get("reshape")](OpContext(), attrs, {x}, {separate});
  ExpectNear(separate, {0, 1, 2, 3, 4, 5});
}

TEST(ReshapeTest, GradientsReshapeBack) {
  NDArray x = RandomArray(Shape{2, 3, 2}, DType::kFloat64, 1);
  CheckGradient("reshape", {{"shape", "(3,-1)"}}, {x});
  CheckGradient("expand_dims", {{"axis", "1"}}, {x});
  CheckGradient("squeeze", {}, {RandomArray(Shape{2, 1, 3}, DType::kFloat64, 2)});
  CheckGradient("reshape_like", {}, {x, RandomArray(Shape{4, 3}, DType::kFloat64, 3)},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  // reshape_like is its own gradient's op, so second order works too.
  CheckGradient("reshape_like", {}, {RandomArray(Shape{4, 3}, DType::kFloat64, 4), x},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
}

TEST(ReshapeLikeTest, TakesTheShapeOfLike) {
  NDArray y = RunOp("reshape_like", {}, {Iota(Shape{2, 3}), Iota(Shape{3, 2}, DType::kInt32)})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  ExpectNear(y, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(InferShapes("reshape_like", {}, {Shape{U, 3}, Shape{3, 4}}).in[0], (Shape{4, 3}));
  EXPECT_ERROR(RunOp("reshape_like", {}, {Iota(Shape{2, 3}), Iota(Shape{5})}),
               "node 'reshape_like' (op reshape_like): cannot reshape data [2,3] (6 elements) like [5] (5 elements)");
}

TEST(ExpandDimsTest, InsertsUnitDimension) {
  NDArray x = Iota(Shape{2, 3});
  EXPECT_EQ(RunOp("expand_dims", {{"axis", "0"}}, {x})[0].shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(RunOp("expand_dims", {{"axis", "1"}}, {x})[0].shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(RunOp("expand_dims", {{"axis", "-1"}}, {x})[0].shape(), (Shape{2, 3, 1}));
  ExpectNear(RunOp("expand_dims", {{"axis", "2"}}, {x})[0], Values(x));
  EXPECT_ERROR(RunOp("expand_dims", {{"axis", "3"}}, {x}),
               "node 'expand_dims' (op expand_dims): axis 3 is out of range for rank 3");
  Inferred back = InferShapes("expand_dims", {{"axis", "1"}}, {Shape()}, {Shape{2, 1, 3}});
  EXPECT_EQ(back.in[0], (Shape{2, 3}));
  EXPECT_EQ(InferShapes("expand_dims", {{"axis", "0"}}, {Shape{U, 3}}).out[0], (Shape{1, U, 3}));
}

TEST(SqueezeTest, RemovesUnitDimensions) {
  NDArray x = Iota(Shape{1, 2, 1, 3});
  EXPECT_EQ(RunOp("squeeze", {}, {x})[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(RunOp("squeeze", {{"axis", "(2)"}}, {x})[0].shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(RunOp("squeeze", {{"axis", "(-4, 2)"}}, {x})[0].shape(), (Shape{2, 3}));
  ExpectNear(RunOp("squeeze", {}, {x})[0], Values(x));
  EXPECT_ERROR(RunOp("squeeze", {{"axis", "(1)"}}, {x}),
               "node 'squeeze' (op squeeze): cannot squeeze dimension 1 of size 2 (input [1,2,1,3])");
  Inferred named = InferShapes("squeeze", {{"axis", "(0)"}}, {Shape{U, 2}});
  EXPECT_EQ(named.in[0], (Shape{1, 2}));
  EXPECT_EQ(named.out[0], (Shape{2}));
  // Without axes, an unknown extent leaves the output's rank open.
  EXPECT_FALSE(InferShapes("squeeze", {}, {Shape{U, 2}}).out[0].rank_known());
}

TEST(TransposeTest, PermutesLikeReferenceLoop) {
  NDArray x = Iota(Shape{2, 3, 4});
  for (const std::vector<int>& perm : std::vector<std::vector<int>>{{1, 0, 2}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}}) {
    std::string axes =
        "(" + std::to_string(perm[0]) + "," + std::to_string(perm[1]) + "," + std::to_string(perm[2]) + ")";
    NDArray y = RunOp("transpose", {{"axes", axes}}, {x})[0];
    SCOPED_TRACE(axes);
    ExpectNear(y, ReferenceTranspose(x, perm), 0, 0);
  }
  ExpectNear(RunOp("transpose", {}, {x})[0], ReferenceTranspose(x, {2, 1, 0}), 0, 0);
  ExpectNear(RunOp("transpose", {{"axes", "(-1,0,1)"}}, {x})[0], ReferenceTranspose(x, {2, 0, 1}), 0, 0);
}

TEST(TransposeTest, LargeAndOddShapesTakeTheBlockedPath) {
  NDArray matrix = RandomArray(Shape{67, 131}, DType::kFloat32, 5);
  ExpectNear(RunOp("transpose", {}, {matrix})[0], ReferenceTranspose(matrix, {1, 0}), 0, 0);
  NDArray big = RandomArray(Shape{5, 33, 3, 40}, DType::kFloat64, 6);
  ExpectNear(RunOp("transpose", {{"axes", "(0,3,2,1)"}}, {big})[0], ReferenceTranspose(big, {0, 3, 2, 1}), 0, 0);
  ExpectNear(RunOp("transpose", {{"axes", "(3,1,0,2)"}}, {big})[0], ReferenceTranspose(big, {3, 1, 0, 2}), 0, 0);
  NDArray flags = Iota(Shape{9, 17}, DType::kBool);
  ExpectNear(RunOp("transpose", {}, {flags})[0], ReferenceTranspose(flags, {1, 0}), 0, 0);
  NDArray ints = Iota(Shape{300, 70}, DType::kInt64);
  ExpectNear(RunOp("transpose", {}, {ints})[0], ReferenceTranspose(ints, {1, 0}), 0, 0);
}

TEST(TransposeTest, ShapesErrorsAndGradient) {
  EXPECT_EQ(InferShapes("transpose", {{"axes", "(1,0)"}}, {Shape{U, 3}}).out[0], (Shape{3, U}));
  Inferred back = InferShapes("transpose", {{"axes", "(2,0,1)"}}, {Shape()}, {Shape{4, 2, 3}});
  EXPECT_EQ(back.in[0], (Shape{2, 3, 4}));
  EXPECT_EQ(InferShapes("transpose", {{"axes", "(1,0)"}}, {Shape()}).in[0], (Shape{U, U}));
  NDArray x = Iota(Shape{2, 3});
  EXPECT_ERROR(RunOp("transpose", {{"axes", "(0,0)"}}, {x}),
               "node 'transpose' (op transpose): axes (0,0) are not a permutation of 2 dimensions");
  EXPECT_ERROR(RunOp("transpose", {{"axes", "(0,1,2)"}}, {x}), "axes (0,1,2) do not match input rank 2");
  NDArray g = RandomArray(Shape{2, 3, 4}, DType::kFloat64, 7);
  CheckGradient("transpose", {{"axes", "(2,0,1)"}}, {g});
  CheckGradient("transpose", {{"axes", "(-1,0,1)"}}, {g});
  CheckGradient("transpose", {}, {g});
}

TEST(BroadcastToTest, RepeatsUnitDimensions) {
  NDArray x = Iota(Shape{3, 1});
  NDArray y = RunOp("broadcast_to", {{"shape", "(2,3,4)"}}, {x})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  ExpectNear(y, ReferenceBroadcast(x, Shape{2, 3, 4}), 0, 0);
  NDArray row = Iota(Shape{1, 5}, DType::kInt32);
  ExpectNear(RunOp("broadcast_to", {{"shape", "(4,5)"}}, {row})[0], ReferenceBroadcast(row, Shape{4, 5}), 0, 0);
  NDArray scalar = NDArray::Scalar<double>(2.5);
  ExpectNear(RunOp("broadcast_to", {{"shape", "(2,2)"}}, {scalar})[0], {2.5, 2.5, 2.5, 2.5});
  EXPECT_ERROR(RunOp("broadcast_to", {{"shape", "(4,3)"}}, {Iota(Shape{2, 3})}),
               "node 'broadcast_to' (op broadcast_to): cannot broadcast [2,3] to [4,3]");
  EXPECT_ERROR(RunOp("broadcast_to", {{"shape", "(3)"}}, {Iota(Shape{2, 3})}), "cannot broadcast [2,3] to [3]");
  EXPECT_TRUE(InferShapes("broadcast_to", {{"shape", "(2,3)"}}, {Shape{U}}).out[0] == (Shape{2, 3}));
}

TEST(BroadcastToTest, GradientAndCodeGen) {
  CheckGradient("broadcast_to", {{"shape", "(2,3,4)"}}, {RandomArray(Shape{3, 1}, DType::kFloat64, 8)});
  CheckCodeGen("broadcast_to", {{"shape", "(2,3,4)"}}, {RandomArray(Shape{3, 1}, DType::kFloat32, 9)});
  CheckCodeGen("broadcast_to", {{"shape", "(2,3)"}}, {Iota(Shape{3}, DType::kInt32)});
}

TEST(BroadcastLikeTest, TakesTheShapeOfLike) {
  NDArray x = Iota(Shape{1, 4});
  NDArray like = Iota(Shape{3, 4}, DType::kInt64);
  NDArray y = RunOp("broadcast_like", {}, {x, like})[0];
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  ExpectNear(y, ReferenceBroadcast(x, Shape{3, 4}), 0, 0);
  EXPECT_ERROR(RunOp("broadcast_like", {}, {Iota(Shape{2, 4}), like}),
               "node 'broadcast_like' (op broadcast_like): cannot broadcast [2,4] to [3,4]");
  EXPECT_EQ(InferShapes("broadcast_like", {}, {Shape{1, 4}, Shape{U, 4}}).out[0], (Shape{U, 4}));
  CheckGradient("broadcast_like", {},
                {RandomArray(Shape{4}, DType::kFloat64, 10), RandomArray(Shape{3, 4}, DType::kFloat64, 11)},
                GradCheckOptions{1e-6, 1e-6, 1e-4, {0}, 48});
  CheckCodeGen("broadcast_like", {},
               {RandomArray(Shape{4}, DType::kFloat64, 12), RandomArray(Shape{3, 4}, DType::kFloat64, 13)});
}

TEST(ArrayShapeOpsTest, PatternsAndTypes) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  for (const char* op : {"reshape", "reshape_like", "expand_dims", "squeeze", "transpose"}) {
    EXPECT_EQ(pattern[Op::Get(op)], kInjective) << op;
  }
  EXPECT_EQ(pattern[Op::Get("broadcast_to")], kBroadcast);
  EXPECT_EQ(pattern[Op::Get("broadcast_like")], kBroadcast);
  EXPECT_EQ(InferTypes("transpose", {}, {DType::kBool}), std::vector<DType>{DType::kBool});
  EXPECT_EQ(InferTypes("broadcast_like", {}, {DType::kInt32, DType::kFloat32}), std::vector<DType>{DType::kInt32});
}

}  // namespace
}  // namespace test
}  // namespace ir
