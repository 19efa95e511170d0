// Control flow for the CUDA target without a GPU: a graph holding a while_loop (the RNN loop over
// tensor arrays) infers through its bodies, and the kernels its bodies fuse into, the forward
// body's and its gradient's, compile with NVRTC and assemble with ptxas. The emulated run of the
// same loops is in emulated/cuda_emulated_control_flow_test.cc; a real GPU run happens elsewhere.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "ir/graph_attr.h"
#include "ops/control_flow_graphs.h"

namespace ir {
namespace {

/*! \brief The RNN loop's feeds by name (ordered by loop variable), as the op harness wants them. */
std::vector<NDArray> RnnVars() {
  std::unordered_map<std::string, NDArray> feeds = test::RnnFeeds(5);
  std::vector<NDArray> vars;
  for (const char* name : {"t0", "n", "h0", "xs", "outs0", "W", "U"}) vars.push_back(feeds.at(name));
  return vars;
}

/*! \brief Expects `body`, fed `args` (one per param), to fuse into kernels that compile and assemble. */
void ExpectBodyCompiles(const Subgraph& body, const std::vector<NDArray>& args, const std::string& what) {
  ASSERT_EQ(body.params.size(), args.size());
  std::map<std::string, NDArray> feeds;
  for (size_t i = 0; i < args.size(); ++i) feeds[body.params[i]->attrs.name] = args[i];
  Graph graph = test::InferFromFeeds(body.graph.outputs, feeds);
  std::string source = test::FusedCUDASource(graph);
  ASSERT_NE(source.find("__global__"), std::string::npos) << "no fused kernels in " << what;
  test::ExpectCompilesAndAssembles(source, what);
}

TEST(CUDAControlFlowTest, WhileLoopInfersAndItsBodyKernelsCompile) {
  NodePtr loop = test::RnnLoop();
  std::vector<NDArray> vars = RnnVars();
  std::unordered_map<std::string, NDArray> named = test::RnnFeeds(5);
  Graph graph = test::InferFromFeeds({{loop, 2}, {loop, 4}}, {named.begin(), named.end()});
  const ShapeVector& shapes = graph.GetAttr<ShapeVector>("shape");
  const IndexedGraph& idx = graph.indexed_graph();
  EXPECT_EQ(shapes[idx.entry_id(graph.outputs[0])], (Shape{4, 6}));
  EXPECT_EQ(shapes[idx.entry_id(graph.outputs[1])], (Shape{7, 4, 6}));
  ExpectBodyCompiles(*loop->attrs.subgraphs[1], vars, "the RNN loop's body");
}

TEST(CUDAControlFlowTest, WhileLoopGradientBodyKernelsCompile) {
  NodePtr loop = test::RnnLoop();
  std::vector<NodeEntry> grads = test::RnnLossGradients(loop);
  NodePtr grad_loop;
  PostOrderDFSVisit(grads, [&](const NodePtr& node) {
    if (!node->is_variable() && node->op()->name == "_while_loop_grad") grad_loop = node;
  });
  ASSERT_NE(grad_loop, nullptr);
  std::vector<NDArray> args = RnnVars(), vars = args;  // the vars, then a gradient shaped like each
  args.insert(args.end(), vars.begin(), vars.end());
  ExpectBodyCompiles(*grad_loop->attrs.subgraphs.at(2), args, "the RNN loop's gradient body");
}

}  // namespace
}  // namespace ir
