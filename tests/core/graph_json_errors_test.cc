// Malformed graph JSON: every error names the node (index and name) and the field, never
// dmlc's "Error at Line 0, around ^``, Expect number"; indexed attributes must fit the graph.
#include <gtest/gtest.h>

#include <string>

#include "core/test_ops.h"
#include "ir/c_api.h"
#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "test_util.h"

namespace ir {
namespace {

// Two nodes: variable x (node 0) and core_test_add "a" (node 1) whose inputs are `inputs`.
std::string TwoNodes(const std::string& inputs, const std::string& extra = "") {
  return R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "core_test_add", "name": "a", "inputs": )" +
         inputs + R"(}], "heads": [[1, 0]])" + extra + "}";
}

std::string LoadError(const std::string& json) {
  try {
    LoadJSON(json);
  } catch (const Error& err) {
    return err.what();
  }
  return "(loaded)";
}

TEST(GraphJSONErrorsTest, WrongTypesAndNumbersNameTheNodeAndField) {
  EXPECT_ERROR(LoadJSON(TwoNodes(R"([[0, 0], ["0", 0]])")),
               "node 1 ('a') input 1: expected a node id (an integer from 0 to 4294967295), got a string");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0, -1]]")),
               "node 1 ('a') input 1: expected an output index (an integer from 0 to 4294967295), got -1");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [99999999999999999999, 0]]")), "got 99999999999999999999");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0.5, 0]]")), "node 1 ('a') input 1: expected a node id");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0, 0, 0]]")),
               "node 1 ('a') input 1: an entry must be [node_id, output_index]");
  EXPECT_ERROR(LoadJSON(TwoNodes("{}")), "node 1 ('a') field 'inputs': expected an array, got an object");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": [], "attrs": {"__shape__": 3}}],
                            "heads": [[0, 0]]})"),
               "node 0 ('x') attribute '__shape__': expected a string, got a number");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x", "input": []}], "heads": []})"),
               "node 0 ('x'): unknown field 'input'");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "inputs": []}], "heads": []})"), "node 0: missing field 'name'");
}

TEST(GraphJSONErrorsTest, SyntaxErrorsGiveThePathLineAndColumn) {
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0, ]]")),
               "at nodes[1].inputs[1][1] (line 2, column 84): expected a value, found ']'");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x" "inputs": []}]})"),
               "at nodes[0] (line 1, column 39): expected ',' or '}' in an object, found '\"'");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "op": "null", "name": "x", "inputs": []}], "heads": []})"),
               "key \"op\" appears twice");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "nu)"), "found the end of the input (truncated?)");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [], "heads": [01]})"), "a number without leading zeros");
}

TEST(GraphJSONErrorsTest, ReferencesMustPointBackwardsSoCyclesAreImpossible) {
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [1, 0]]")),
               "node 1 ('a') input 1: refers to node 1, which is not defined before it");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": [], "control_deps": [0]}],
                            "heads": [[0, 0]]})"),
               "node 0 ('x') control dependency 0: refers to node 0, which is not defined before it");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0, 0]]", R"(, "arg_nodes": [0, 0])")),
               "arg_nodes[1]: node 0 ('x') is listed twice");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0, 0]]", R"(, "arg_nodes": [1])")),
               "arg_nodes[0]: node 1 ('a') is not a variable");
}

TEST(GraphJSONErrorsTest, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep(100000, '[');
  EXPECT_ERROR(LoadJSON(deep), "nested deeper than 64 levels");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [], "heads": [], "attrs": {"k": )" + deep + "}"), "nested deeper than 64");
  EXPECT_ERROR(AttrFromJSON("shape", deep), "graph attribute 'shape'");
}

TEST(GraphJSONErrorsTest, NoDmlcReaderMessagesReachTheUser) {
  const char* cases[] = {
      R"({"nodes": [{"op": "null", "name": "x", "inputs": [[]]}], "heads": []})",
      R"({"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [["a", 0]]})",
      R"({"nodes": [], "heads": [], "attrs": {"k": ["int", "one"]}})",
      R"({"nodes": [], "heads": [], "attrs": {"k": ["list_int", [1, "2"]]}})",
      R"({"nodes": [], "heads": [], "attrs": {"k": ["int", 1.5]}})",
      R"({"nodes": [], "heads": [], "attrs": {"k": "int"}})",
      R"({"nodes": 5, "heads": []})",
      R"([1, 2])",
  };
  for (const char* json : cases) {
    std::string message = LoadError(json);
    EXPECT_EQ(message.find("Error at Line"), std::string::npos) << json << "\n" << message;
    EXPECT_EQ(message.find("Expect"), std::string::npos) << json << "\n" << message;
    EXPECT_NE(message.find("malformed graph JSON: "), std::string::npos) << json << "\n" << message;
  }
  EXPECT_ERROR(LoadJSON(R"({"nodes": [], "heads": [], "attrs": {"k": ["list_int", [1, "2"]]}})"),
               "graph attribute 'k': the value is not of type 'list_int'");
}

// A fused node's parameters come from JSON too: bad indices are errors, not std::stoi's "stoi".
TEST(GraphJSONErrorsTest, FusedNodeIndicesAreChecked) {
  auto fused = [](const std::string& variable, const std::string& mutated) {
    std::string sub = R"({"nodes": [{"op": "null", "name": ")" + variable +
                      R"(", "inputs": []}, {"op": "exp", "name": "e", "inputs": [[0, 0]]}], "heads": [[1, 0]]})";
    std::string escaped;
    for (char c : sub) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    return R"({"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "_fused", "name": "f", "attrs": )"
           R"({"kind": "map", "mutated_inputs": ")" +
           mutated + R"(", "subgraph": ")" + escaped + R"("}, "inputs": [[0, 0]]}], "heads": [[1, 0]]})";
  };
  EXPECT_NO_THROW(LoadJSON(fused("in0", "")));
  EXPECT_ERROR(LoadJSON(fused("inx", "")), "subgraph variable 'inx' number 'x' is not an index below 1");
  EXPECT_ERROR(LoadJSON(fused("in-1", "")), "is not an index below 1");
  EXPECT_ERROR(LoadJSON(fused("in0", "7")),
               "node 1 ('f'): node 'f' (op _fused): mutated input '7' is not an index below 1");
  EXPECT_ERROR(LoadJSON(fused("in0", "99999999999")), "mutated input '99999999999' is not an index below 1");
}

TEST(GraphAttrSizeTest, LoadRejectsIndexedAttributesOfTheWrongSize) {
  std::string two_entries = TwoNodes("[[0, 0], [0, 0]]", R"(, "attrs": {"shape": ["list_shape", ["[2]"]]})");
  EXPECT_ERROR(LoadJSON(two_entries),
               "graph attribute 'shape' is indexed by entry and has 1 elements, but the graph has 2 entries");
  std::string three = TwoNodes("[[0, 0], [0, 0]]", R"(, "attrs": {"kernel_names": ["list_str", ["", "", ""]]})");
  EXPECT_ERROR(LoadJSON(three),
               "graph attribute 'kernel_names' is indexed by node and has 3 elements, but the "
               "graph has 2 nodes");
  EXPECT_ERROR(LoadJSON(TwoNodes("[[0, 0], [0, 0]]", R"(, "attrs": {"dtype": ["int", 3]})")),
               "graph attribute 'dtype' is indexed by entry and must be a list");
  EXPECT_NO_THROW(LoadJSON(TwoNodes("[[0, 0], [0, 0]]", R"(, "attrs": {"shape": ["list_shape", ["[2]", "?"]]})")));
}

TEST(GraphAttrSizeTest, SetAttrJSONRejectsIndexedAttributesOfTheWrongSize) {
  IRGraphHandle graph = nullptr;
  ASSERT_EQ(IRGraphLoadJSON(TwoNodes("[[0, 0], [0, 0]]").c_str(), &graph), 0) << IRGetLastError();
  EXPECT_EQ(IRGraphSetAttrJSON(graph, "dtype", R"(["list_dtype", ["float32"]])"), -1);
  EXPECT_NE(std::string(IRGetLastError())
                .find("graph attribute 'dtype' is indexed by entry and has 1 elements, but the graph has 2 entries"),
            std::string::npos)
      << IRGetLastError();
  const char* text = nullptr;
  ASSERT_EQ(IRGraphPrint(graph, 0, &text), 0) << IRGetLastError();
  EXPECT_EQ(IRGraphSetAttrJSON(graph, "dtype", R"(["list_dtype", ["float32", "int32"]])"), 0) << IRGetLastError();
  IRGraphFree(graph);
}

TEST(GraphAttrSizeTest, PrintingNeverIndexesPastAnAttribute) {
  Graph g = LoadJSON(TwoNodes("[[0, 0], [0, 0]]"));
  g.SetAttr("shape", ShapeVector(1, Shape({2})));
  g.SetAttr("kernel_names", std::vector<std::string>());
  std::string text = PrintGraphText(g);
  EXPECT_NE(text.find("not shown: graph attribute 'shape' is indexed by entry and has 1 elements"), std::string::npos)
      << text;
  EXPECT_NE(text.find("not shown: graph attribute 'kernel_names'"), std::string::npos) << text;
  EXPECT_EQ(text.find("shape=["), std::string::npos) << text;
  EXPECT_NO_THROW(PrintGraphDot(g));
}

}  // namespace
}  // namespace ir
