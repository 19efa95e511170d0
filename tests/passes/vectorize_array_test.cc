// FVectorize converters of the elementwise, broadcast and array ops: each equals the loop for
// every stacked/unstacked combination of its inputs, without fallback loops.
#include <gtest/gtest.h>

#include "passes/vectorize_harness.h"

namespace ir {
namespace {

using pfor_test::Arg;
using pfor_test::Check;
using Attrs = std::map<std::string, std::string>;

const DType kI32 = DType::kInt32;

/*! \brief Without fusion: the converters are under test, and compiling fused kernels is slow on a cold cache. */
Check Unfused() {
  Check check;
  check.fusion = false;
  return check;
}

void LikeLoop(const std::string& what, const std::vector<Arg>& args, const pfor_test::Body& body) {
  pfor_test::ExpectLikeLoop(what, args, body, Unfused());
}
/*! \brief Expects `op` (with `attrs`, `outputs` outputs) applied to the args to vectorize like its loop. */
void Expect(const std::string& op, const std::vector<Arg>& args, const Attrs& attrs = {}, int outputs = 1) {
  std::string what = op;
  for (const auto& kv : attrs) what += " " + kv.first + "=" + kv.second;
  LikeLoop(what, args, [&](const std::vector<NodeEntry>& x) {
    NodeEntry e = pfor_test::Op(op, "v", x, attrs);
    std::vector<NodeEntry> outs;
    for (int k = 0; k < outputs; ++k) outs.push_back(NodeEntry{e.node, static_cast<uint32_t>(k)});
    return outs;
  });
}

TEST(VectorizeArrayTest, BinaryBroadcastOps) {
  const std::vector<std::vector<Arg>> shapes = {{Arg{Shape{2, 3}}, Arg{Shape{3}}},
                                                {Arg{Shape::Scalar()}, Arg{Shape{2, 3}}},
                                                {Arg{Shape{1, 3}}, Arg{Shape{2, 1}}}};
  for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum", "greater", "less_equal", "not_equal"}) {
    for (const auto& args : shapes) Expect(op, args);
  }
  Expect("divide", {Arg{Shape{2, 3}}, Arg{Shape{3}, DType::kFloat32, 1, 2}});
  Expect("power", {Arg{Shape{2}, DType::kFloat32, 0.5, 2}, Arg{Shape{3, 1}}});
  Expect("floor_mod", {Arg{Shape{2, 3}, kI32, -9, 9}, Arg{Shape{3}, kI32, 1, 4}});
  Expect("logical_and", {Arg{Shape{2, 3}, DType::kBool, 0, 2}, Arg{Shape::Scalar(), DType::kBool, 0, 2}});
}

TEST(VectorizeArrayTest, ElementwiseOps) {
  Expect("where", {Arg{Shape{2, 3}, DType::kBool, 0, 2}, Arg{Shape{3}}, Arg{Shape{2, 1}}});
  Expect("where", {Arg{Shape::Scalar(), DType::kBool, 0, 2}, Arg{Shape{2}}, Arg{Shape{2}}});
  Expect("add_n", {Arg{Shape{2, 3}}, Arg{Shape{2, 3}}, Arg{Shape{2, 3}}});
  Expect("cast", {Arg{Shape{4}, DType::kFloat32, -3, 3}}, {{"dtype", "int32"}});
  Expect("cast_like", {Arg{Shape{4}, kI32, -3, 3}, Arg{Shape{4}}});
  Expect("clip", {Arg{Shape{2, 3}, DType::kFloat32, -2, 2}}, {{"a_min", "-1"}, {"a_max", "0.5"}});
  for (const char* op : {"identity", "stop_gradient", "exp", "tanh"}) Expect(op, {Arg{Shape{3}}});
  Expect("check_int_operand", {Arg{Shape{3}, kI32, 0, 5}}, {{"require", "nonnegative"}, {"message", "negative"}});
  for (const char* op : {"add_scalar", "rsubtract_scalar", "multiply_scalar", "greater_scalar"}) {
    Expect(op, {Arg{Shape{2, 2}}}, {{"scalar", "0.5"}});
  }
  for (const char* op : {"relu_grad", "sigmoid_grad", "tanh_grad"}) Expect(op, {Arg{Shape{2, 3}}, Arg{Shape{2, 3}}});
}

TEST(VectorizeArrayTest, ReshapeFamily) {
  for (const char* shape : {"(0,-1)", "(-1)", "(3,-1)", "(1,6)"})
    Expect("reshape", {Arg{Shape{2, 3}}}, {{"shape", shape}});
  Expect("reshape", {Arg{Shape::Scalar()}}, {{"shape", "(1,1)"}});
  Expect("reshape", {Arg{Shape{1}}}, {{"shape", "()"}});
  Expect("reshape_like", {Arg{Shape{2, 3}}, Arg{Shape{3, 2}}});
  for (const char* axis : {"0", "2", "-1", "-3"}) Expect("expand_dims", {Arg{Shape{2, 3}}}, {{"axis", axis}});
  Expect("expand_dims", {Arg{Shape::Scalar()}}, {{"axis", "-1"}});
  for (const char* axis : {"()", "(0)", "(-1)"}) Expect("squeeze", {Arg{Shape{1, 3, 1}}}, {{"axis", axis}});
  Expect("squeeze", {Arg{Shape{1}}});
}

TEST(VectorizeArrayTest, TransposeAndBroadcast) {
  for (const char* axes : {"(2,0,1)", "(-1,0,-2)", "()"}) Expect("transpose", {Arg{Shape{2, 3, 4}}}, {{"axes", axes}});
  Expect("transpose", {Arg{Shape{3}}});
  Expect("broadcast_to", {Arg{Shape{3}}}, {{"shape", "(2,3)"}});
  Expect("broadcast_to", {Arg{Shape::Scalar()}}, {{"shape", "(2,3)"}});
  Expect("broadcast_to", {Arg{Shape{2, 1}}}, {{"shape", "(2,3)"}});
  Expect("broadcast_like", {Arg{Shape{1, 3}}, Arg{Shape{2, 3}}});
  Expect("broadcast_like", {Arg{Shape{3}}, Arg{Shape{4, 2, 3}}});
}

TEST(VectorizeArrayTest, Slices) {
  Expect("slice", {Arg{Shape{4, 3}}}, {{"begin", "(1,0)"}, {"size", "(2,-1)"}});
  Expect("slice", {Arg{Shape{5}}}, {{"begin", "(3)"}, {"size", "(-1)"}});
  const std::vector<Attrs> strided = {
      {{"begin", "(1,-1)"}, {"end", "(3,0)"}, {"strides", "(1,-2)"}},
      {{"begin", "(0,2)"}, {"end", "(0,3)"}, {"shrink_axis_mask", "2"}, {"begin_mask", "1"}, {"end_mask", "1"}},
      {{"begin", "(0,1)"}, {"end", "(0,3)"}, {"ellipsis_mask", "1"}},
      {{"begin", "(0,1)"}, {"end", "(0,2)"}, {"new_axis_mask", "1"}},
      {{"begin", "(-1)"}, {"end", "(0)"}, {"shrink_axis_mask", "1"}}};
  for (const Attrs& a : strided) {
    Expect("strided_slice", {Arg{Shape{4, 5}}}, a);
    Attrs grad = a;
    LikeLoop("strided_slice_grad", {Arg{Shape{4, 5}}, Arg{Shape{4, 5}}}, [&](const std::vector<NodeEntry>& x) {
      NodeEntry dy = pfor_test::Op("strided_slice", "s", {x[0]}, a);
      return std::vector<NodeEntry>{pfor_test::Op("strided_slice_grad", "g", {dy, x[1]}, grad)};
    });
  }
  Expect("pad", {Arg{Shape{2, 3}}}, {{"paddings", "(1,0,0,2)"}, {"constant_value", "0.5"}});
  Expect("pad", {Arg{Shape::Scalar()}}, {{"paddings", "()"}});
}

TEST(VectorizeArrayTest, ConcatSplitTile) {
  Expect("concat", {Arg{Shape{2, 3}}, Arg{Shape{1, 3}}, Arg{Shape{4, 3}}}, {{"axis", "0"}});
  Expect("concat", {Arg{Shape{2, 1}}, Arg{Shape{2, 2}}}, {{"axis", "-1"}});
  Expect("concat_grad", {Arg{Shape{2, 5}}, Arg{Shape{2, 2}}, Arg{Shape{2, 3}}}, {{"axis", "1"}, {"num_outputs", "2"}},
         2);
  Expect("concat_grad", {Arg{Shape{5}}, Arg{Shape{4}}, Arg{Shape{1}}}, {{"axis", "-1"}, {"num_outputs", "2"}}, 2);
  Expect("split", {Arg{Shape{4, 6}}}, {{"axis", "1"}, {"num_outputs", "3"}}, 3);
  Expect("split", {Arg{Shape{4, 6}}}, {{"axis", "-2"}, {"sizes", "(1,-1)"}}, 2);
  Expect("tile", {Arg{Shape{2, 3}}}, {{"reps", "(2,1)"}});
  Expect("tile", {Arg{Shape{3}}}, {{"reps", "(3)"}});
  Expect("tile_grad", {Arg{Shape{4, 3}}, Arg{Shape{2, 3}}}, {{"reps", "(2,1)"}});
}

TEST(VectorizeArrayTest, GatherGradAndOneHot) {
  const Shape like{4, 3};
  for (int axis : {0, 1, -1}) {
    const int a = axis < 0 ? axis + 2 : axis;
    const Attrs attrs{{"axis", std::to_string(axis)}};
    // Scalar indices (one-hot product), then a vector with repeats (a scatter-add).
    Shape dy0{a == 0 ? 3 : 4};
    Expect("gather_grad", {Arg{dy0}, Arg{Shape::Scalar(), kI32, 0, static_cast<double>(like[a])}, Arg{like}}, attrs);
    Shape dy1 = a == 0 ? Shape{5, 3} : Shape{4, 5};
    Expect("gather_grad", {Arg{dy1}, Arg{Shape{5}, kI32, 0, 3}, Arg{like}}, attrs);
  }
  Expect("gather_grad", {Arg{Shape{2, 2, 3}}, Arg{Shape{2, 2}, kI32, 0, 4}, Arg{like}});
  Expect("gather_grad", {Arg{Shape{2, 2, 2}}, Arg{Shape{2}, kI32, 0, 3}, Arg{Shape{2, 3, 2}}}, {{"axis", "1"}});
  for (const char* axis : {"-1", "0", "1"}) {
    Expect("one_hot", {Arg{Shape{3}, kI32, -1, 5}}, {{"depth", "4"}, {"axis", axis}});
  }
  Expect("one_hot", {Arg{Shape::Scalar(), kI32, 0, 4}}, {{"depth", "4"}, {"axis", "0"}});
}

TEST(VectorizeArrayTest, ShapeOnlyOps) {
  for (const char* op : {"shape", "size", "rank", "zeros_like", "ones_like"}) {
    Expect(op, {Arg{Shape{2, 3}}});
    Expect(op, {Arg{Shape::Scalar()}});
  }
  LikeLoop("shape of a value with its own dtype", {Arg{Shape{4}, kI32, 0, 5}}, [](const std::vector<NodeEntry>& x) {
    return std::vector<NodeEntry>{pfor_test::Op("shape", "s", {x[0]}, {{"out_type", "int64"}}),
                                  pfor_test::Op("zeros_like", "z", {x[0]})};
  });
}

TEST(VectorizeArrayTest, CollapseSumLike) {
  Expect("collapse_sum_like", {Arg{Shape{2, 3}}, Arg{Shape{3}}});
  Expect("collapse_sum_like", {Arg{Shape{2, 3}}, Arg{Shape{2, 1}}});
  Expect("collapse_sum_like", {Arg{Shape{2, 3}}, Arg{Shape::Scalar()}});
  Expect("collapse_sum_like", {Arg{Shape{4, 2, 3}}, Arg{Shape{1, 3}}});
  Expect("collapse_sum_like", {Arg{Shape{2, 3}}, Arg{Shape{2, 3}}});
}

TEST(VectorizeArrayTest, JacobianThroughGatherHasNoFallback) {
  // The jacobian's pfor gathers one element of y per iteration: its gradient is a gather_grad
  // with the loop index (a one-hot product, no scatter loop).
  NodeEntry x{Node::CreateVariable("x"), 0};
  NodeEntry y = pfor_test::Op("multiply", "sq", {x, x});
  NodeEntry jac = Jacobian(y, {x}, 3)[0];
  Session sess;
  NDArray xv = NDArray::FromVector<float>(Shape{3}, {1, -2, 0.5f});
  NDArray j = sess.Run({jac}, {{"x", xv}})[0];
  EXPECT_TRUE(sess.last_stats().pfor_fallbacks.empty());
  ASSERT_EQ(j.shape(), (Shape{3, 3}));
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(j.data<float>()[r * 3 + c], r == c ? 2 * xv.data<float>()[r] : 0);
  }
}

}  // namespace
}  // namespace ir
