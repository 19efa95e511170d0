// Converters of the shape ops (src/ops/array/, beside each op) against the loop, every stacked mix.
#include <gtest/gtest.h>

#include "passes/vectorize_harness.h"

namespace ir {
namespace {

using pfor_test::Arg;
using pfor_test::ExpectLikeLoop;
using pfor_test::Op;

pfor_test::Body Unary(const std::string& op, std::map<std::string, std::string> attrs) {
  return [op, attrs](const std::vector<NodeEntry>& x) { return std::vector<NodeEntry>{Op(op, "y", {x[0]}, attrs)}; };
}

pfor_test::Body Binary(const std::string& op, std::map<std::string, std::string> attrs = {}) {
  return [op, attrs](const std::vector<NodeEntry>& x) {
    return std::vector<NodeEntry>{Op(op, "y", {x[0], x[1]}, attrs)};
  };
}

/*! \brief gather_grad(dy, indices, like) along `axis`; dy's shape must fit (see the callers). */
pfor_test::Body Binary3(const std::string& op, int axis) {
  return [op, axis](const std::vector<NodeEntry>& x) {
    return std::vector<NodeEntry>{Op(op, "y", {x[0], x[1], x[2]}, {{"axis", std::to_string(axis)}})};
  };
}

TEST(VectorizeShapeTest, ReshapeFamily) {
  ExpectLikeLoop("reshape -1", {Arg{Shape{2, 3}}}, Unary("reshape", {{"shape", "(3,-1)"}}));
  ExpectLikeLoop("reshape 0", {Arg{Shape{2, 3}}}, Unary("reshape", {{"shape", "(0,3,1)"}}));
  ExpectLikeLoop("reshape to scalar", {Arg{Shape{1}}}, Unary("reshape", {{"shape", "()"}}));
  ExpectLikeLoop("reshape_like", {Arg{Shape{2, 3}}, Arg{Shape{3, 2}}}, Binary("reshape_like"));
  for (int axis : {0, 1, -1, -3}) {
    ExpectLikeLoop("expand_dims " + std::to_string(axis), {Arg{Shape{2, 3}}},
                   Unary("expand_dims", {{"axis", std::to_string(axis)}}));
  }
  ExpectLikeLoop("squeeze all", {Arg{Shape{1, 3, 1}}}, Unary("squeeze", {}));
  ExpectLikeLoop("squeeze -1", {Arg{Shape{1, 3, 1}}}, Unary("squeeze", {{"axis", "(-1)"}}));
  ExpectLikeLoop("transpose reversed", {Arg{Shape{2, 3, 4}}}, Unary("transpose", {}));
  ExpectLikeLoop("transpose perm", {Arg{Shape{2, 3, 4}}}, Unary("transpose", {{"axes", "(1,-1,0)"}}));
}

TEST(VectorizeShapeTest, BroadcastsAndTheirGradients) {
  ExpectLikeLoop("broadcast_to higher rank", {Arg{Shape{3}}}, Unary("broadcast_to", {{"shape", "(2,3)"}}));
  ExpectLikeLoop("broadcast_to ones", {Arg{Shape{2, 1}}}, Unary("broadcast_to", {{"shape", "(2,4)"}}));
  ExpectLikeLoop("broadcast_like", {Arg{Shape{1, 3}}, Arg{Shape{2, 2, 3}}}, Binary("broadcast_like"));
  ExpectLikeLoop("collapse_sum_like", {Arg{Shape{2, 4, 3}}, Arg{Shape{1, 3}}}, Binary("collapse_sum_like"));
  ExpectLikeLoop("collapse_sum_like to scalar", {Arg{Shape{2, 3}}, Arg{Shape::Scalar()}}, Binary("collapse_sum_like"));
  ExpectLikeLoop("collapse_sum_like same", {Arg{Shape{2, 3}}, Arg{Shape{2, 3}}}, Binary("collapse_sum_like"));
}

TEST(VectorizeShapeTest, GatherGradScattersPerIteration) {
  for (int axis : {0, 1, -1}) {
    ExpectLikeLoop("gather_grad scalar index axis " + std::to_string(axis),
                   {Arg{Shape{3}}, Arg{Shape::Scalar(), DType::kInt32, 0, 3}, Arg{Shape{3, 3}}},
                   Binary3("gather_grad", axis));
    ExpectLikeLoop("gather_grad index vector axis " + std::to_string(axis),
                   {Arg{axis == 0 ? Shape{2, 3} : Shape{3, 2}}, Arg{Shape{2}, DType::kInt32, 0, 3}, Arg{Shape{3, 3}}},
                   Binary3("gather_grad", axis));
  }
}

pfor_test::Body Variadic(const std::string& op, std::map<std::string, std::string> attrs, int outputs = 1) {
  return [op, attrs, outputs](const std::vector<NodeEntry>& x) {
    NodePtr node = MakeNode(op, "y", x, attrs).node;
    std::vector<NodeEntry> outs;
    for (int i = 0; i < outputs; ++i) outs.push_back(NodeEntry{node, static_cast<uint32_t>(i)});
    return outs;
  };
}

TEST(VectorizeShapeTest, JoinsCutsAndPads) {
  for (int axis : {0, 1, -1}) {
    std::string a = std::to_string(axis);
    ExpectLikeLoop("concat " + a, {Arg{Shape{2, 2}}, Arg{Shape{2, 2}}, Arg{Shape{2, 2}}},
                   Variadic("concat", {{"axis", a}}));
    ExpectLikeLoop("split " + a, {Arg{Shape{2, 4}}}, Variadic("split", {{"axis", a}, {"num_outputs", "2"}}, 2));
    ExpectLikeLoop("concat_grad " + a, {Arg{axis == 0 ? Shape{4, 2} : Shape{2, 4}}, Arg{Shape{2, 2}}, Arg{Shape{2, 2}}},
                   Variadic("concat_grad", {{"axis", a}, {"num_outputs", "2"}}, 2), {});
  }
  ExpectLikeLoop("slice", {Arg{Shape{3, 4}}}, Unary("slice", {{"begin", "(1,0)"}, {"size", "(-1,2)"}}));
  ExpectLikeLoop("pad", {Arg{Shape{2, 3}}}, Unary("pad", {{"paddings", "(1,0,0,2)"}, {"constant_value", "7"}}));
  ExpectLikeLoop("tile", {Arg{Shape{2, 3}}}, Unary("tile", {{"reps", "(2,1)"}}));
  ExpectLikeLoop("tile_grad", {Arg{Shape{4, 3}}, Arg{Shape{2, 3}}}, Binary("tile_grad", {{"reps", "(2,1)"}}));
  std::map<std::string, std::string> ss{
      {"begin", "(0,1)"}, {"end", "(0,3)"}, {"strides", "(1,2)"}, {"begin_mask", "1"}, {"end_mask", "1"}};
  ExpectLikeLoop("strided_slice", {Arg{Shape{3, 4}}}, Unary("strided_slice", ss));
  ExpectLikeLoop("strided_slice shrink", {Arg{Shape{3, 4}}},
                 Unary("strided_slice", {{"begin", "(1)"}, {"end", "(2)"}, {"shrink_axis_mask", "1"}}));
  ExpectLikeLoop("strided_slice_grad", {Arg{Shape{3, 1}}, Arg{Shape{3, 4}}}, Binary("strided_slice_grad", ss));
  ExpectLikeLoop("one_hot last", {Arg{Shape{2}, DType::kInt32, 0, 4}}, Unary("one_hot", {{"depth", "4"}}));
  ExpectLikeLoop("one_hot axis 0", {Arg{Shape{2}, DType::kInt32, 0, 4}},
                 Unary("one_hot", {{"depth", "4"}, {"axis", "0"}}));
  for (const char* op : {"shape", "size", "rank"}) ExpectLikeLoop(op, {Arg{Shape{2, 3}}}, Unary(op, {}));
}

}  // namespace
}  // namespace ir
