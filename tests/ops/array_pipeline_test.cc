#include <gtest/gtest.h>

#include <memory>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/runtime.h"
#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

NodeEntry Apply(const std::string& op, std::vector<NodeEntry> inputs, const Attrs& attrs = {}, uint32_t index = 0) {
  static int counter = 0;
  return MakeNode(op, op + std::to_string(counter++), std::move(inputs), attrs, index);
}

NodeEntry Input(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

std::vector<NDArray> RunExecutor(const std::vector<NodeEntry>& outputs,
                                 const std::unordered_map<std::string, NDArray>& feeds, bool fusion,
                                 RunStats* stats = nullptr) {
  SessionOptions options;
  options.fusion = fusion;
  options.simplify = false;  // the array ops themselves are under test: no rule may remove them
  Executor exec(Graph(outputs), options, std::make_shared<VariableStore>());
  std::vector<NDArray> result = exec.Run(feeds);
  if (stats != nullptr) *stats = exec.last_stats();
  return result;
}

TEST(ArrayPipelineTest, ExecutorAgreesWithReferenceFusedOrNot) {
  NodeEntry x = Input("x"), row = Input("row"), index = Input("index");
  NodeEntry r = Apply("reshape", {x}, {{"shape", "(0,2,3)"}});
  NodeEntry t = Apply("transpose", {r}, {{"axes", "(0,2,1)"}});
  NodeEntry s = Apply("strided_slice", {t},
                      {{"begin", "(1,0,-1)"}, {"end", "(4,0,0)"}, {"strides", "(1,1,-1)"}, {"end_mask", "6"}});
  NodeEntry m = Apply("multiply", {Apply("exp", {s}), Apply("broadcast_to", {row}, {{"shape", "(3,3,2)"}})});
  NodeEntry c = Apply("concat", {m, Apply("negative", {m})}, {{"axis", "2"}});
  NodeEntry p = Apply("pad", {c}, {{"paddings", "(0,0,1,0,0,1)"}, {"constant_value", "0.5"}});
  NodeEntry g = Apply("gather", {p, index}, {{"axis", "1"}});
  NodeEntry first = Apply("split", {g}, {{"axis", "0"}, {"sizes", "(1,-1)"}}, 0);
  NodeEntry second{first.node, 1};
  NodeEntry tiled = Apply("tile", {Apply("squeeze", {first}, {{"axis", "(0)"}})}, {{"reps", "(2,1)"}});
  std::vector<NodeEntry> outputs = {second, tiled, Apply("expand_dims", {c}, {{"axis", "-1"}})};

  NDArray xv = RandomArray(Shape{4, 6}, DType::kFloat32, 1);
  NDArray rowv = RandomArray(Shape{2}, DType::kFloat32, 2);
  NDArray indexv = NDArray::FromVector<int32_t>(Shape{3}, {3, 0, 2});
  std::vector<NDArray> want =
      EvalGraph(outputs, {{x.node.get(), xv}, {row.node.get(), rowv}, {index.node.get(), indexv}});
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    std::vector<NDArray> got = RunExecutor(outputs, {{"x", xv}, {"row", rowv}, {"index", indexv}}, fusion);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ExpectNear(got[i], want[i], 1e-6, 1e-6);
  }
}

TEST(ArrayPipelineTest, MetadataOpsShareTheirInputsBuffer) {
  NodeEntry x = Input("x");
  NodeEntry chain = Apply("exp", {x});
  chain = Apply("reshape", {chain}, {{"shape", "(-1,8)"}});
  chain = Apply("expand_dims", {chain}, {{"axis", "0"}});
  chain = Apply("squeeze", {chain}, {});
  chain = Apply("reshape_like", {chain, x});
  NodeEntry y = Apply("exp", {chain});
  NDArray xv = RandomArray(Shape{16, 64}, DType::kFloat32, 3);
  RunStats stats;
  std::vector<NDArray> got = RunExecutor({y}, {{"x", xv}}, false, &stats);
  ExpectNear(got[0], EvalGraph({y}, {{x.node.get(), xv}})[0]);
  // Without aliasing, two 4 KiB buffers must be live at each copy; with it, the exp's output
  // buffer serves the whole chain.
  EXPECT_LE(stats.bytes_allocated, xv.nbytes());
  EXPECT_LT(stats.bytes_allocated, stats.bytes_without_reuse);
}

TEST(ArrayPipelineTest, SplitGradientFillsUnusedOutputsWithZeros) {
  NodeEntry x = Input("x");
  NodeEntry pieces = Apply("split", {x}, {{"axis", "1"}, {"num_outputs", "3"}});
  NodeEntry used{pieces.node, 1};
  std::vector<NodeEntry> grads = Gradients({Apply("square", {used})}, {x});
  NDArray xv = Iota(Shape{2, 3}, DType::kFloat64);
  // d/dx sum(x[:, 1]^2) = 2 x in column 1, zeros elsewhere.
  ExpectNear(EvalGraph(grads, {{x.node.get(), xv}})[0], {0, 2, 0, 0, 8, 0});
}

TEST(ArrayPipelineTest, GatherGradientThroughThePass) {
  NodeEntry params = Input("params"), index = Input("index");
  NodeEntry picked = Apply("gather", {params, index});
  std::vector<NodeEntry> grads = Gradients({picked}, {params});
  NDArray pv = RandomArray(Shape{4, 2}, DType::kFloat32, 4);
  NDArray iv = NDArray::FromVector<int64_t>(Shape{2, 2}, {3, 3, 0, 3});
  ExpectNear(EvalGraph(grads, {{params.node.get(), pv}, {index.node.get(), iv}})[0], {1, 1, 0, 0, 0, 0, 3, 3});
}

}  // namespace
}  // namespace test
}  // namespace ir
