// The Vectorize pass: pfor bodies become batched graphs equal to the loop; fallbacks are reported.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/op_kernel.h"
#include "ir/pass.h"
#include "passes/vectorize_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using pfor_test::Arg;
using pfor_test::Check;
using pfor_test::ExpectLikeLoop;
using pfor_test::Op;

TEST(VectorizeTest, ElementwiseMatchesLoop) {
  ExpectLikeLoop("exp", {Arg{Shape{4, 2}}},
                 [](const std::vector<NodeEntry>& x) { return std::vector<NodeEntry>{Op("exp", "e", {x[0]})}; });
}

TEST(VectorizeTest, GatherMatchesLoopForEveryAxis) {
  for (int axis : {0, 1, -1}) {
    ExpectLikeLoop("gather axis " + std::to_string(axis), {Arg{Shape{4, 3}}, Arg{Shape{2}, DType::kInt32, 0, 3}},
                   [&](const std::vector<NodeEntry>& x) {
                     return std::vector<NodeEntry>{Op("gather", "g", {x[0], x[1]}, {{"axis", std::to_string(axis)}})};
                   });
  }
}

/*! \brief An op without FVectorize: y = x + 1, opaque (so no generic converter applies). */
IR_REGISTER_OP(vectorize_test_opaque)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape",
                           [](const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
                             (*out)[0] = (*in)[0];
                             return (*in)[0].is_known();
                           })
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out) {
                            (*out)[0] = (*in)[0];
                            return (*in)[0] != DType::kUnknown;
                          })
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          for (int64_t i = 0; i < in[0].Size(); ++i)
                            out[0].data<float>()[i] = in[0].data<float>()[i] + 1;
                        })
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

TEST(VectorizeTest, OpWithoutConverterRunsAsCountedLoop) {
  NodeEntry x{Node::CreateVariable("x"), 0};
  std::vector<NodeEntry> outs = Pfor(
      3,
      [&](const NodeEntry& i) {
        NodeEntry row = Op("gather", "row", {x, i});
        return std::vector<NodeEntry>{Op("exp", "e", {Op("vectorize_test_opaque", "opaque", {row})})};
      },
      "loop");
  Session sess;
  NDArray value = NDArray::FromVector<float>(Shape{3, 2}, {1, 2, 4, 3, 5, 6});
  std::vector<float> r = sess.Run(outs, {{"x", value}})[0].ToVector<float>();
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(r[k], std::exp(value.data<float>()[k] + 1), 1e-4);
  EXPECT_EQ(sess.last_stats().pfor_fallbacks, std::vector<std::string>({"loop/opaque (vectorize_test_opaque)"}));
  const Graph& bound = sess.last_graph();
  EXPECT_EQ(bound.GetAttr<std::vector<std::string>>("vectorize.fallbacks").size(), 1u);
  EXPECT_NE(PrintGraphText(bound).find("vectorize.fallbacks"), std::string::npos);
}

}  // namespace
}  // namespace ir

namespace ir {
namespace {

std::shared_ptr<Subgraph> IndexOnlyBody() {
  auto body = std::make_shared<Subgraph>();
  NodePtr index = Node::CreateVariable("b/index");
  body->params.push_back(index);
  body->graph.outputs.push_back(pfor_test::Op("cast", "b/cast", {NodeEntry{index, 0}}, {{"dtype", "float32"}}));
  return body;
}

TEST(VectorizeTest, BadPforNodesAreClearErrors) {
  EXPECT_ERROR(Node::Create(Op::Get("pfor"), "p", {}, {}, {IndexOnlyBody()}), "needs n_from");
  EXPECT_ERROR(Node::Create(Op::Get("pfor"), "p", {{"n", "2"}}, {}, {}), "needs 1 body");
  EXPECT_ERROR(Node::Create(Op::Get("pfor"), "p", {{"n", "2"}, {"unroll", "1"}}, {}, {IndexOnlyBody()}), "unroll");
  EXPECT_ERROR(Pfor(-1, [](const NodeEntry& i) { return std::vector<NodeEntry>{i}; }), ">= 0");
}

TEST(VectorizeTest, IndexOnlyBodyAndZeroIterations) {
  for (int64_t n : {0, 1, 5}) {
    NodePtr loop = Node::Create(Op::Get("pfor"), "p", {{"n", std::to_string(n)}}, {}, {IndexOnlyBody()});
    for (bool vectorize : {false, true}) {
      SessionOptions options;
      if (!vectorize) options.passes = {"InferShape", "InferType", "PlanMemory"};
      Session sess(options);
      NDArray out = sess.Run({NodeEntry{loop, 0}}, {})[0];
      ASSERT_EQ(out.shape(), (Shape{n}));
      std::vector<float> v = out.ToVector<float>();
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(v[i], static_cast<float>(i));
    }
  }
}

TEST(VectorizeTest, IterationCountFromAnInputsLeadingDim) {
  NodeEntry x{Node::CreateVariable("x"), 0};
  auto body = std::make_shared<Subgraph>();
  NodePtr index = Node::CreateVariable("b/index"), param = Node::CreateVariable("b/x");
  body->params = {index, param};
  body->graph.outputs.push_back(
      pfor_test::Op("square", "b/sq", {pfor_test::Op("gather", "b/row", {NodeEntry{param, 0}, NodeEntry{index, 0}})}));
  NodePtr loop = Node::Create(Op::Get("pfor"), "p", {{"n", "-1"}, {"n_from", "0"}}, {x}, {body});
  Session sess;
  NDArray out = sess.Run({NodeEntry{loop, 0}}, {{"x", NDArray::FromVector<float>(Shape{4, 1}, {1, 2, 3, 4})}})[0];
  EXPECT_EQ(out.ToVector<float>(), std::vector<float>({1, 4, 9, 16}));
  EXPECT_TRUE(sess.last_stats().pfor_fallbacks.empty());
}

}  // namespace
}  // namespace ir
