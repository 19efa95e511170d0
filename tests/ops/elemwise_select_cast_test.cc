#include <gtest/gtest.h>

#include <cmath>

#include "ir/ast.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

NodeEntry Var(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

std::vector<NodeEntry> GradientOf(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  return Op::GetAttr<FGradient>("FGradient")[node->op()](node, ograds);
}

TEST(AddNTest, SumsAnyNumberOfInputs) {
  std::vector<NDArray> in;
  for (uint64_t k = 0; k < 4; ++k) in.push_back(RandomArray(Shape{3, 5000}, DType::kFloat32, k + 1));
  std::vector<double> expected(in[0].Size(), 0.0);
  for (const NDArray& a : in) {
    std::vector<double> v = Values(a);
    for (size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
  }
  ExpectNear(RunOp("add_n", {}, in)[0], expected, 1e-5);
  ExpectNear(RunOp("add_n", {}, {in[0]})[0], in[0]);
  NDArray i = NDArray::FromVector<int64_t>(Shape{2}, {1, -7});
  ExpectNear(RunOp("add_n", {}, {i, i, i})[0], {3, -21});
}

TEST(AddNTest, GradientCodeGenAndErrors) {
  std::vector<NDArray> in = {RandomArray(Shape{2, 3}, DType::kFloat64, 1), RandomArray(Shape{2, 3}, DType::kFloat64, 2),
                             RandomArray(Shape{2, 3}, DType::kFloat64, 3)};
  CheckGradient("add_n", {}, in);
  CheckCodeGen("add_n", {}, in, 1e-12);
  EXPECT_ERROR(RunOp("add_n", {}, {in[0], RandomArray(Shape{3, 2}, DType::kFloat64, 4)}),
               "node 'add_n' (op add_n): inputs and outputs must have one shape, got inputs [2,3], [3,2]");
  EXPECT_ERROR(RunOp("add_n", {}, {in[0], RandomArray(Shape{2, 3}, DType::kFloat32, 4)}),
               "node 'add_n' (op add_n): input 1 has dtype");
  EXPECT_ERROR(RunOp("add_n", {}, {}), "node 'add_n' (op add_n): needs at least one input");
  EXPECT_ERROR(RunOp("add_n", {}, {RandomArray(Shape{2}, DType::kBool, 1)}), "input dtype bool is not supported");
}

/*! \brief where(c, x, y) by coordinates, as NumPy broadcasts it (independent of the kernel's strides). */
std::vector<double> WhereReference(const NDArray& c, const NDArray& x, const NDArray& y, const Shape& out) {
  auto at = [&](const NDArray& a, int64_t flat) {
    int offset = out.ndim() - a.shape().ndim();
    std::vector<int64_t> coord(out.ndim());
    for (int d = out.ndim() - 1; d >= 0; --d) {
      coord[d] = flat % out[d];
      flat /= out[d];
    }
    int64_t index = 0;
    for (int d = 0; d < a.shape().ndim(); ++d)
      index = index * a.shape()[d] + (a.shape()[d] == 1 ? 0 : coord[d + offset]);
    return ValueAt(a, index);
  };
  std::vector<double> result(out.Size());
  for (int64_t i = 0; i < out.Size(); ++i) result[i] = at(c, i) != 0 ? at(x, i) : at(y, i);
  return result;
}

TEST(WhereTest, SelectsWithBroadcasting) {
  struct Case {
    Shape c, x, y, out;
  };
  for (const Case& s : {Case{Shape{4, 5}, Shape{4, 5}, Shape{4, 5}, Shape{4, 5}},
                        Case{Shape{3, 1}, Shape{1, 4}, Shape::Scalar(), Shape{3, 4}},
                        Case{Shape{2, 1, 3}, Shape{5, 3}, Shape{2, 5, 1}, Shape{2, 5, 3}}}) {
    SCOPED_TRACE(s.out.ToString());
    NDArray c = RandomArray(s.c, DType::kBool, 1), x = RandomArray(s.x, DType::kFloat32, 2),
            y = RandomArray(s.y, DType::kFloat32, 3);
    NDArray out = RunOp("where", {}, {c, x, y})[0];
    EXPECT_EQ(out.shape(), s.out);
    ExpectNear(out, WhereReference(c, x, y, s.out));
    CheckCodeGen("where", {}, {c, x, y});
    CheckGradient("where", {}, {c, RandomArray(s.x, DType::kFloat64, 4), RandomArray(s.y, DType::kFloat64, 5)});
  }
  NDArray c = NDArray::FromVector<bool>(Shape{3}, {true, false, true});
  NDArray xi = NDArray::FromVector<int32_t>(Shape{3}, {1, 2, 3}), yi = NDArray::FromVector<int32_t>(Shape{1}, {-1});
  ExpectNear(RunOp("select", {}, {c, xi, yi})[0], {1, -1, 3});
  EXPECT_EQ(Op::Get("select"), Op::Get("where"));
}

TEST(WhereTest, TypeAndShapeErrorsNameTheNode) {
  NDArray f = RandomArray(Shape{2, 3}, DType::kFloat32, 1);
  NDArray c = RandomArray(Shape{2, 3}, DType::kBool, 2);
  EXPECT_ERROR(RunOp("where", {}, {f, f, f}),
               "node 'where' (op where): input 0 (condition) has dtype float32 but must be bool");
  EXPECT_ERROR(RunOp("where", {}, {c, f, RandomArray(Shape{2, 3}, DType::kFloat64, 3)}),
               "node 'where' (op where): input 2 has dtype float64 but must be float32");
  EXPECT_ERROR(RunOp("where", {}, {c, f, RandomArray(Shape{4}, DType::kFloat32, 3)}), "cannot be broadcast together");
}

TEST(CastTest, ConvertsBetweenAllDTypes) {
  NDArray f = NDArray::FromVector<float>(Shape{5}, {-1.7f, 2.9f, 0.f, 0.25f, -0.f});
  NDArray i = RunOp("cast", {{"dtype", "int32"}}, {f})[0];
  EXPECT_EQ(i.dtype(), DType::kInt32);
  ExpectNear(i, {-1, 2, 0, 0, 0});
  NDArray b = RunOp("cast", {{"dtype", "bool"}}, {f})[0];
  ExpectNear(b, {1, 1, 0, 1, 0});
  ExpectNear(RunOp("cast", {{"dtype", "float64"}}, {b})[0], {1, 1, 0, 1, 0});
  ExpectNear(RunOp("cast", {{"dtype", "int64"}}, {i})[0], {-1, 2, 0, 0, 0});
  ExpectNear(RunOp("cast", {{"dtype", "float32"}}, {f})[0], f);
  for (DType from : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}) {
    for (const char* to : {"float32", "float64", "int32", "int64", "bool"}) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " to " + to);
      CheckCodeGen("cast", {{"dtype", to}}, {RandomArray(Shape{7}, from, 3, -3, 3)});
    }
  }
  EXPECT_ERROR(RunOp("cast", {{"dtype", "float16"}}, {f}), "op 'cast' (node 'cast'): invalid parameters");
  EXPECT_ERROR(RunOp("cast", {}, {f}), "op 'cast' (node 'cast'): invalid parameters");
}

TEST(CastTest, GradientIsCastBackToTheInputDType) {
  NodeEntry x = Var("x"), og = Var("og");
  NodePtr n = Node::Create(Op::Get("cast"), "c", {{"dtype", "float32"}}, {x});
  std::vector<NodeEntry> g = GradientOf(n, {og});
  ASSERT_EQ(g.size(), 1u);
  NDArray ogv = NDArray::FromVector<float>(Shape{2}, {0.5f, -2.f});
  NDArray dx = EvalGraph(g, {{x.node.get(), RandomArray(Shape{2}, DType::kFloat64, 1)}, {og.node.get(), ogv}})[0];
  EXPECT_EQ(dx.dtype(), DType::kFloat64);
  ExpectNear(dx, {0.5, -2});
  GradCheckOptions loose;
  loose.eps = 1e-3;
  loose.atol = 1e-3;
  CheckGradient("cast", {{"dtype", "float32"}}, {RandomArray(Shape{3, 4}, DType::kFloat64, 2)}, loose);
  CheckGradient("cast_like", {},
                {RandomArray(Shape{3}, DType::kFloat64, 3), RandomArray(Shape{3}, DType::kFloat64, 4)});
}

TEST(CastTest, CastLikeTakesTheDTypeOfLike) {
  NDArray f = NDArray::FromVector<double>(Shape{2}, {2.5, -3.5});
  NDArray y = RunOp("cast_like", {}, {f, RandomArray(Shape{2}, DType::kInt64, 1)})[0];
  EXPECT_EQ(y.dtype(), DType::kInt64);
  ExpectNear(y, {2, -3});
  CheckCodeGen("cast_like", {}, {f, RandomArray(Shape{2}, DType::kInt32, 1)});
  EXPECT_ERROR(RunOp("cast_like", {}, {f, RandomArray(Shape{3}, DType::kInt64, 1)}), "must have one shape");
}

TEST(ClipTest, LimitsToInclusiveBoundsAndKeepsNaN) {
  double nan = std::nan("");
  NDArray x = NDArray::FromVector<double>(Shape{6}, {-3, -1, 0.5, 2, 7, nan});
  Attrs bounds = {{"a_min", "-1"}, {"a_max", "2"}};
  ExpectNear(RunOp("clip", bounds, {x})[0], {-1, -1, 0.5, 2, 2, nan});
  CheckCodeGen("clip", bounds, {x}, 1e-12);
  NDArray i = NDArray::FromVector<int32_t>(Shape{5}, {-5, -1, 0, 1, 5});
  Attrs fractional = {{"a_min", "-1.5"}, {"a_max", "0.5"}};
  ExpectNear(RunOp("clip", fractional, {i})[0], {-1, -1, 0, 0, 0});
  CheckCodeGen("clip", fractional, {i});
  Attrs open = {{"a_min", "-inf"}, {"a_max", "1e300"}};
  ExpectNear(RunOp("clip", open, {i})[0], {-5, -1, 0, 1, 5});
  CheckCodeGen("clip", open, {i});
  CheckCodeGen("clip", open, {RandomArray(Shape{4}, DType::kFloat32, 1)});
}

TEST(ClipTest, GradientPassesInsideTheBounds) {
  CheckGradient("clip", {{"a_min", "-0.5"}, {"a_max", "0.3"}}, {RandomArray(Shape{5, 6}, DType::kFloat64, 9)});
  NodeEntry x = Var("x"), og = Var("og");
  NodePtr n = Node::Create(Op::Get("clip"), "c", {{"a_min", "0"}, {"a_max", "1"}}, {x});
  NDArray xv = NDArray::FromVector<double>(Shape{4}, {-1, 0, 1, 2});
  NDArray dx = EvalGraph(GradientOf(n, {og}),
                         {{x.node.get(), xv}, {og.node.get(), NDArray::FromVector<double>(Shape{4}, {1, 1, 1, 1})}})[0];
  ExpectNear(dx, {0, 1, 1, 0});
}

TEST(ClipTest, BoundsAreChecked) {
  NDArray x = RandomArray(Shape{2}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("clip", {{"a_min", "2"}, {"a_max", "1"}}, {x}),
               "node 'clip' (op clip): a_min 2 is greater than a_max 1");
  EXPECT_ERROR(RunOp("clip", {{"a_min", "0"}}, {x}), "op 'clip' (node 'clip'): invalid parameters");
  EXPECT_ERROR(RunOp("clip", {{"a_min", "0"}, {"a_max", "1"}}, {RandomArray(Shape{2}, DType::kBool, 1)}),
               "input dtype bool is not supported");
}

TEST(IdentityTest, CopiesAndStopGradientBlocksGradients) {
  NDArray x = RandomArray(Shape{3, 2}, DType::kInt64, 1, -5, 5);
  for (const char* op : {"identity", "stop_gradient"}) {
    SCOPED_TRACE(op);
    ExpectNear(RunOp(op, {}, {x})[0], x);
    CheckCodeGen(op, {}, {RandomArray(Shape{3}, DType::kBool, 2)});
  }
  CheckGradient("identity", {}, {RandomArray(Shape{4}, DType::kFloat64, 3)});
  NodePtr n = Node::Create(Op::Get("stop_gradient"), "s", {}, {Var("x")});
  std::vector<NodeEntry> g = GradientOf(n, {Var("og")});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].node, nullptr);
}

TEST(ElemwiseMiscTest, PatternsAndInplaceOptions) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  const auto& inplace = Op::GetAttr<FInplaceOption>("FInplaceOption");
  for (const char* op : {"add_n", "cast", "cast_like", "clip", "identity", "stop_gradient"}) {
    EXPECT_EQ(pattern[Op::Get(op)], kElemWise) << op;
  }
  EXPECT_EQ(pattern[Op::Get("where")], kBroadcast);
  for (const char* op : {"add_n", "clip", "identity", "where"}) EXPECT_EQ(inplace.count(Op::Get(op)), 1) << op;
  // A cast's output has another element type than its input: no shared buffer.
  EXPECT_EQ(inplace.count(Op::Get("cast")), 0);
}

}  // namespace
}  // namespace test
}  // namespace ir
