#include <gtest/gtest.h>

#include <set>

#include "codegen/epilogue_kernels.h"
#include "cuda_test_util.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ops/op_harness.h"
#include "runtime/device/kernel_selection.h"

namespace ir {
namespace {

/*! \brief Op nodes of `graph` whose op has no CUDA kernel (they would run as host fallbacks). */
std::set<std::string> OpsWithoutCUDAKernels(const Graph& graph) {
  const device::DeviceTarget& target = device::GetDeviceTarget("cuda");
  std::set<std::string> missing;
  const IndexedGraph& idx = graph.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) continue;
    runtime::NodeKernel kernel = device::SelectKernel(target, node->op());
    if (!kernel.kernel || kernel.on_host) missing.insert(node->op()->name);
  }
  return missing;
}

TEST(CUDALeNetTest, EveryOpOfTheTrainingStepHasACUDAKernel) {
  test::LeNet net = test::BuildLeNet(8);
  Graph graph = test::InferFromFeeds(net.outputs, net.feeds);
  std::set<std::string> missing = OpsWithoutCUDAKernels(graph);
  EXPECT_TRUE(missing.empty()) << "host fallbacks in the unfused LeNet step: " << Join(missing, ", ");
  graph.SetAttr("fusion.fmax", 4);
  missing = OpsWithoutCUDAKernels(ApplyPasses(graph, {"Fusion"}));
  EXPECT_TRUE(missing.empty()) << "host fallbacks in the fused LeNet step: " << Join(missing, ", ");
}

TEST(CUDALeNetTest, FusedTrainingStepKernelsCompileAndAssemble) {
  test::LeNet net = test::BuildLeNet(64);
  Graph graph = test::InferFromFeeds(net.outputs, net.feeds);
  for (int fmax : {2, 8}) {
    SCOPED_TRACE(StrCat("fmax ", fmax));
    std::string source = test::FusedCUDASource(graph, fmax);
    ASSERT_NE(source.find("__global__"), std::string::npos) << "no fused kernels in the LeNet step";
    test::ExpectCompilesAndAssembles(source, StrCat("LeNet training step, F_max ", fmax));
  }
}

TEST(CUDALeNetTest, EpilogueKernelsOfTheTrainingStepCompileAndAssemble) {
  // Epilogue groups (conv/matmul + bias + relu, relu_grad after a matmul gradient) compile
  // their epilogue when they first run; each is one in-place map kernel.
  test::LeNet net = test::BuildLeNet(64);
  Graph graph = test::InferFromFeeds(net.outputs, net.feeds);
  graph.SetAttr("target", std::string("cuda"));
  std::vector<Kernel> kernels = codegen::EpilogueKernels(ApplyPasses(graph, {"Fusion"}));
  ASSERT_GE(kernels.size(), 4u) << "both convolutions and both dense layers anchor an epilogue";
  test::ExpectCompilesAndAssembles(KernelPrinter::Get("cuda").Print(kernels), "LeNet epilogue kernels");
}

}  // namespace
}  // namespace ir
