// A graph whose entries are too large to count in bytes fails to plan, naming the node.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/pass.h"
#include "test_util.h"

namespace ir {
namespace {

TEST(PlanMemorySizeTest, EntryWhoseSizeOverflowsNamesTheNode) {
  NodeEntry x{Node::CreateVariable("x"), 0};
  Graph g(std::vector<NodeEntry>{MakeNode("exp", "e", {x}, {})});
  g.SetAttr("shape_inputs", ShapeVector{Shape{(int64_t{1} << 62) + 1, 4}});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32});
  EXPECT_ERROR(ApplyPasses(g, {"InferShape", "InferType", "PlanMemory"}),
               "node 'x' (variable): output 0 of shape [4611686018427387905,4] has more elements than a 64-bit");
}

}  // namespace
}  // namespace ir
