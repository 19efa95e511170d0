/*!
 * \file control_flow_tf1_test.cc
 * \brief TF1 dataflow control flow (Enter/Merge/Switch/LoopCond/NextIteration/Exit and
 * Switch/Merge conds) imported as our while_loop / cond: real TensorFlow graphs against their
 * NumPy oracles (graphs/control_flow), handwritten nesting cases, and malformed frames.
 */
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ir_tf/import.h"
#include "ir_tf/npy.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ExpectClose;
using test::RunText;
using test::ToDoubles;

std::string ControlFlowDir() { return std::string(IR_TF_TEST_DATA_DIR) + "/graphs/control_flow/"; }

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/*! \brief One oracle case of oracles/manifest.json: the .npy of tensor `name` is `/` -> `__`, `:` -> `.`. */
struct OracleCase {
  std::string graph, name;
  std::vector<std::string> inputs, outputs;
};

std::string OraclePath(const OracleCase& c, std::string tensor) {
  for (char& ch : tensor) ch = ch == ':' ? '.' : ch;
  for (size_t at = tensor.find('/'); at != std::string::npos; at = tensor.find('/', at + 2)) tensor.replace(at, 1, "__");
  return ControlFlowDir() + "oracles/" + c.graph + "/" + c.name + "/" + tensor + ".npy";
}

void RunOracle(const OracleCase& c, bool fusion) {
  SCOPED_TRACE(c.graph + " " + c.name + (fusion ? " fused" : ""));
  std::map<std::string, NDArray> feeds;
  for (const std::string& in : c.inputs) feeds[in] = ReadNpy(OraclePath(c, in));
  std::vector<NDArray> got = RunText(ReadText(ControlFlowDir() + c.graph + ".pbtxt"), feeds, c.outputs, fusion);
  ASSERT_EQ(got.size(), c.outputs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    NDArray expected = ReadNpy(OraclePath(c, c.outputs[i]));
    EXPECT_EQ(got[i].shape(), expected.shape()) << c.outputs[i];
    ExpectClose(got[i], ToDoubles(expected), c.outputs[i]);
  }
}

TEST(ControlFlowTF1Test, WhileCounterMatchesOracle) {
  for (bool fusion : {false, true}) RunOracle({"tf_while_counter", "default", {}, {"while/Exit"}}, fusion);
}

TEST(ControlFlowTF1Test, CondMergeMatchesOracle) {
  for (bool fusion : {false, true}) RunOracle({"tf_cond_merge", "default", {}, {"concat"}}, fusion);
}

TEST(ControlFlowTF1Test, Dl4jSimpleIfMatchesOracleInBothBranches) {
  for (const char* name : {"case0", "case1"}) {
    for (bool fusion : {false, true}) RunOracle({"dl4j_simpleif", name, {"input_0", "input_1"}, {"output"}}, fusion);
  }
}

TEST(ControlFlowTF1Test, Dl4jNestedWhileMatchesOracle) {
  for (const char* name : {"case0", "case1"}) {
    for (bool fusion : {false, true}) {
      RunOracle({"dl4j_nested_while", name, {"input_0", "input_1"}, {"output"}}, fusion);
    }
  }
}

}  // namespace
}  // namespace tf
}  // namespace ir
