// The Vectorize pass: pfor bodies become batched graphs equal to the loop; fallbacks are reported.
#include <gtest/gtest.h>

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

TEST(VectorizeTest, OpWithoutConverterRunsAsCountedLoop) {
  std::vector<NodeEntry> xs{NodeEntry{Node::CreateVariable("x"), 0}};
  std::vector<NodeEntry> outs = Pfor(3, [&](const NodeEntry& i) {
    NodeEntry row = Op("gather", "row", {xs[0], i});
    return std::vector<NodeEntry>{Op("argmax", "am", {row}, {{"axis", "0"}})};
  });
  Graph g(outs);
  Session sess;
  NDArray x = NDArray::FromVector<float>(Shape{3, 2}, {1, 2, 4, 3, 5, 6});
  std::vector<NDArray> r = sess.Run(outs, {{"x", x}});
  std::vector<std::string> fallbacks = sess.last_stats().pfor_fallbacks;
  if (!fallbacks.empty()) {
    EXPECT_NE(fallbacks[0].find("(argmax)"), std::string::npos) << fallbacks[0];
  }
  EXPECT_EQ(r[0].shape(), (Shape{3}));
}

}  // namespace
}  // namespace ir
