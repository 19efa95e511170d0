#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/test_ops.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;

IR_REGISTER_GRAPH_ATTR("core_test.node_tag")
    .describe("One int per node (test).")
    .set_index(AttrIndex::kNode)
    .set_type<std::vector<int>>();

IR_REGISTER_PASS(CoreTestTag)
    .describe("Tags every node with its id.")
    .set_body([](Graph g) {
      std::vector<int> tags(g.indexed_graph().num_nodes());
      for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<int>(i);
      g.SetAttr("core_test.node_tag", tags);
      return g;
    })
    .provide_graph_attr("core_test.node_tag");

IR_REGISTER_PASS(CoreTestNeedsTag).set_body([](Graph g) { return g; }).depend_graph_attr("core_test.node_tag");

IR_REGISTER_PASS(CoreTestNeedsUnprovided)
    .set_body([](Graph g) { return g; })
    .depend_graph_attr("core_test.nobody_provides");

IR_REGISTER_PASS(CoreTestLiar).set_body([](Graph g) { return g; }).provide_graph_attr("core_test.never_set");

IR_REGISTER_PASS(CoreTestNeedsShapeFn).set_body([](Graph g) { return g; }).depend_op_attr("FInferShape");

IR_REGISTER_PASS(CoreTestWrapOutput)
    .describe("Replaces output y by core_test_add(y, y).")
    .set_change_graph(true)
    .set_body([](Graph g) {
      NodeEntry out = g.outputs[0];
      g.outputs[0] = MakeNode("core_test_add", "wrapped", {out, out});
      return g;
    });

IR_REGISTER_PASS(CoreTestSneaky).set_body([](Graph g) {
  NodeEntry out = g.outputs[0];
  g.outputs[0] = MakeNode("core_test_add", "sneaky", {out, out});
  return g;
});

IR_REGISTER_PASS(CoreTestBadSize)
    .set_body([](Graph g) {
      g.SetAttr("core_test.node_tag", std::vector<int>{1});
      return g;
    })
    .provide_graph_attr("core_test.node_tag");

IR_REGISTER_PASS(CoreTestThrows).set_body([](Graph) -> Graph { throw Error("boom at node 'x'"); });

Graph SmallGraph() {
  Symbol x = Symbol::CreateVariable("x");
  return Graph(Apply("core_test_add", {x, x}, {}, "y").outputs);
}

TEST(PassManagerTest, AppliesPassesAndRecordsTimings) {
  Graph g = ApplyPasses(SmallGraph(), {"CoreTestTag", "CoreTestNeedsTag"});
  EXPECT_EQ(g.GetAttr<std::vector<int>>("core_test.node_tag"), (std::vector<int>{0, 1}));
  const auto& timings = g.GetAttr<std::vector<PassTiming>>("pass_timings");
  ASSERT_EQ(timings.size(), 2u);
  EXPECT_EQ(timings[0].pass, "CoreTestTag");
  EXPECT_EQ(timings[1].pass, "CoreTestNeedsTag");
  EXPECT_GE(timings[0].milliseconds, 0.0);
}

TEST(PassManagerTest, MissingGraphAttributeNamesItsProvider) {
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestNeedsTag"}),
               "pass 'CoreTestNeedsTag' needs graph attribute 'core_test.node_tag', provided by pass ");
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestNeedsTag"}), "'CoreTestTag'");
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestNeedsUnprovided"}), "which no registered pass provides");
}

TEST(PassManagerTest, MissingOpAttributeNamesOpAndNode) {
  Symbol x = Symbol::CreateVariable("x");
  Graph g(Apply("core_test_opaque", {x}, {}, "op_node").outputs);
  EXPECT_ERROR(ApplyPasses(g, {"CoreTestNeedsShapeFn"}),
               "needs op attribute 'FInferShape' of every op, but op 'core_test_opaque' (node 'op_node')");
  EXPECT_NO_THROW(ApplyPasses(SmallGraph(), {"CoreTestNeedsShapeFn"}));
}

TEST(PassManagerTest, PassThatDoesNotProvideIsAnError) {
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestLiar"}),
               "pass 'CoreTestLiar' declares it provides graph attribute 'core_test.never_set' but did not set it");
}

TEST(PassManagerTest, ChangingPassDropsStaleIndexedAttributes) {
  Graph g = SmallGraph();
  g.SetAttr("core_test.option", 5);
  g = ApplyPasses(g, {"CoreTestTag", "CoreTestWrapOutput"});
  EXPECT_FALSE(g.HasAttr("core_test.node_tag"));
  EXPECT_EQ(g.GetAttr<int>("core_test.option"), 5);
  EXPECT_EQ(g.indexed_graph().num_nodes(), 3u);
  EXPECT_ERROR(ApplyPasses(g, {"CoreTestNeedsTag"}), "'CoreTestTag'");
}

TEST(PassManagerTest, UndeclaredGraphChangeIsAnError) {
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestSneaky"}), "registered as not changing the graph");
}

TEST(PassManagerTest, VerifierChecksAttributeSizes) {
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestBadSize"}),
               "graph attribute 'core_test.node_tag' is indexed by node and has 1 elements, but the graph has 2 nodes");
}

TEST(PassManagerTest, ErrorsInPassesNameThePass) {
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"CoreTestThrows"}), "pass 'CoreTestThrows': boom at node 'x'");
  EXPECT_ERROR(ApplyPasses(SmallGraph(), {"NoSuchPass"}), "unknown pass 'NoSuchPass'");
}

TEST(PassManagerTest, PassOptionsTravelAsGraphAttributes) {
  Graph g = SmallGraph();
  EXPECT_EQ(GetPassOption<int>(g, "fusion.fmax", 4), 4);
  g.SetAttr("fusion.fmax", 6);
  EXPECT_EQ(GetPassOption<int>(g, "fusion.fmax", 4), 6);
  g.SetAttr("fusion.fmax", int64_t{8});
  EXPECT_EQ(GetPassOption<int>(g, "fusion.fmax", 4), 8);
}

TEST(VerifyGraphTest, RejectsWrongInputCount) {
  Graph g = SmallGraph();
  g.outputs[0].node->inputs.pop_back();
  EXPECT_ERROR(VerifyGraph(g), "node 'y' (core_test_add) has 1 inputs, its op takes 2");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "ir_dump_" + name + "_" + std::to_string(getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

TEST(IRDumpTest, WritesTextAndDotAfterEachPassInOrder) {
  std::string dir = TempDir("order");
  Graph g = SmallGraph();
  g.SetAttr("dump_dir", dir);
  ApplyPasses(g, {"CoreTestTag", "CoreTestWrapOutput"});
  std::string first = ReadFile(dir + "/000_CoreTestTag.txt");
  EXPECT_NE(first.find("core_test_add(%0, %0) name=\"y\""), std::string::npos) << first;
  EXPECT_NE(first.find("core_test.node_tag=1"), std::string::npos) << first;
  EXPECT_EQ(first.find("pass_timings"), std::string::npos) << "timings make dumps differ";
  std::string dot = ReadFile(dir + "/001_CoreTestWrapOutput.dot");
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("wrapped"), std::string::npos);
}

TEST(IRDumpTest, FilterSelectsPassesAndDumpsAreByteIdentical) {
  std::string dir1 = TempDir("a"), dir2 = TempDir("b");
  for (const std::string& dir : {dir1, dir2}) {
    Graph g = SmallGraph();
    g.SetAttr("dump_dir", dir);
    g.SetAttr("dump_filter", std::string("CoreTestWrapOutput"));
    ApplyPasses(g, {"CoreTestTag", "CoreTestWrapOutput"});
  }
  std::string a = ReadFile(dir1 + "/000_CoreTestWrapOutput.txt");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, ReadFile(dir2 + "/000_CoreTestWrapOutput.txt"));
  EXPECT_TRUE(ReadFile(dir1 + "/000_CoreTestTag.txt").empty());
}

TEST(IRDumpTest, EnvironmentVariableEnablesDumps) {
  std::string dir = TempDir("env");
  setenv("IR_DUMP_DIR", dir.c_str(), 1);
  ApplyPasses(SmallGraph(), {"CoreTestTag"});
  unsetenv("IR_DUMP_DIR");
  EXPECT_FALSE(ReadFile(dir + "/000_CoreTestTag.txt").empty());
}

}  // namespace
}  // namespace ir
