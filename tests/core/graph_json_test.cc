#include <gtest/gtest.h>

#include "core/test_ops.h"
#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;

Graph RichGraph() {
  Symbol x = Symbol::CreateVariable("x", {{"__shape__", "[2,3]"}});
  Symbol w = Symbol::CreateVariable("w");
  Symbol s = Apply("core_test_split", {x}, {{"num_outputs", "2"}}, "s");
  Symbol a = Apply("core_test_add", {s[1], w}, {}, "a \"quoted\"");
  Symbol assign = Apply("core_test_assign", {w, a}, {}, "upd");
  assign.AddControlDeps(s);
  Graph g(Symbol::CreateGroup({a, assign, s[0]}).outputs);
  const IndexedGraph& idx = g.indexed_graph();
  g.SetAttr("shape", ShapeVector(idx.num_node_entries(), Shape({2, kUnknownDim})));
  g.SetAttr("dtype", DTypeVector(idx.num_node_entries(), DType::kFloat64));
  g.SetAttr("note", std::string("line1\nline2"));
  g.SetAttr("fmax", 4);
  g.SetAttr("ratios", std::vector<double>{0.1, 1e-30});
  return g;
}

TEST(GraphJSONTest, RoundTripIsExact) {
  Graph g = RichGraph();
  std::string json = SaveJSON(g);
  Graph loaded = LoadJSON(json);
  EXPECT_EQ(SaveJSON(loaded), json);
  EXPECT_EQ(loaded.GetAttr<ShapeVector>("shape")[0], Shape({2, kUnknownDim}));
  EXPECT_EQ(loaded.GetAttr<DTypeVector>("dtype")[3], DType::kFloat64);
  EXPECT_EQ(loaded.GetAttr<std::string>("note"), "line1\nline2");
  EXPECT_EQ(loaded.GetAttr<int>("fmax"), 4);
  EXPECT_EQ(loaded.GetAttr<std::vector<double>>("ratios")[1], 1e-30);
  const IndexedGraph& idx = loaded.indexed_graph();
  EXPECT_EQ(idx.num_nodes(), g.indexed_graph().num_nodes());
  EXPECT_EQ(idx.mutable_input_nodes().size(), 1u);
  const Node* upd = idx[loaded.outputs[1].node.get()].source;
  EXPECT_EQ(upd->control_deps.size(), 1u);
  EXPECT_EQ(upd->control_deps[0]->attrs.name, "s");
  EXPECT_EQ(idx[0u].source->attrs.dict.at("__shape__"), "[2,3]");
  EXPECT_FALSE(idx[1u].source->attrs.parsed.empty()) << "node attributes are parsed again";
}

// Found by the graph JSON fuzzer: dmlc's writer does not escape object keys.
TEST(GraphJSONTest, KeysWithQuotesAndNewlinesRoundTrip) {
  Graph g(Symbol::CreateVariable("x", {{"__a\"b\nc__", "v"}}).outputs);
  g.SetAttr("key \"quoted\"", 3);
  std::string json = SaveJSON(g);
  Graph loaded = LoadJSON(json);
  EXPECT_EQ(loaded.outputs[0].node->attrs.dict.at("__a\"b\nc__"), "v");
  EXPECT_EQ(loaded.GetAttr<int>("key \"quoted\""), 3);
  EXPECT_EQ(SaveJSON(loaded), json);
}

TEST(GraphJSONTest, AttributesWithoutCodecAreSkippedAndListed) {
  Graph g = RichGraph();
  struct Opaque {};
  g.SetAttr("opaque", Opaque{});
  std::string json = SaveJSON(g);
  EXPECT_NE(json.find("\"skipped_attrs\""), std::string::npos);
  EXPECT_FALSE(LoadJSON(json).HasAttr("opaque"));
}

TEST(GraphJSONTest, MalformedInputGivesClearErrors) {
  std::string json = SaveJSON(RichGraph());
  EXPECT_ERROR(LoadJSON(""), "malformed graph JSON");
  EXPECT_ERROR(LoadJSON(json.substr(0, json.size() / 2)), "truncated");
  EXPECT_ERROR(LoadJSON("{\"nodes\": [], \"heads\": [[0, 0]]}"), "head 0: refers to node 0");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "frobnicate", "name": "f", "inputs": []}], "heads": [[0,0]]})"),
               "unknown op 'frobnicate'");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                      {"op": "core_test_add", "name": "a", "inputs": [[0,0],[5,0]]}],
                            "heads": [[1,0]]})"),
               "node 1 ('a') input 1: refers to node 5");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                      {"op": "core_test_add", "name": "a", "inputs": [[0,0],[0,2]]}],
                            "heads": [[1,0]]})"),
               "refers to output 2 of node 0 ('x')");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                      {"op": "core_test_add", "name": "a", "inputs": [[0,0]]}],
                            "heads": [[1,0]]})"),
               "takes 2 inputs, got 1");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [], "heads": [], "attrs": {"k": ["no_such_type", 1]}})"),
               "unknown attribute type 'no_such_type'");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [], "heads": [], "bogus": 1})"), "unknown field 'bogus'");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [{"op": "null", "name": 3, "inputs": []}], "heads": []})"),
               "malformed graph JSON");
  EXPECT_ERROR(LoadJSON(R"({"nodes": [], "heads": []} trailing)"), "unexpected text after the JSON value");
}

TEST(GraphJSONTest, RandomMutationsNeverCrash) {
  std::string json = SaveJSON(RichGraph());
  uint64_t state = 12345;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string mutated = json;
    for (int k = 0; k < 3; ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t pos = (state >> 33) % mutated.size();
      const char alphabet[] = "{}[]\",:0123456789-ax \\";
      mutated[pos] = alphabet[(state >> 20) % (sizeof(alphabet) - 1)];
    }
    try {
      LoadJSON(mutated);
    } catch (const Error&) {
    }
  }
  SUCCEED();
}

TEST(PrintGraphTest, TextShowsNodesAttributesAndShapes) {
  Graph g = RichGraph();
  g.SetAttr("print_graph.quiet", 1);
  std::string text = PrintGraphText(g);
  EXPECT_NE(text.find("%0 = variable \"x\" __shape__=\"[2,3]\"  ; dtype=float64 shape=[2,?]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%1 = core_test_split(%0) name=\"s\" num_outputs=\"2\"  ; dtype=(float64, float64) "
                      "shape=([2,?], [2,?])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%3 = core_test_add(%1:1, %2) name=\"a \\\"quoted\\\"\""), std::string::npos) << text;
  EXPECT_NE(text.find("%4 = core_test_assign(%2, %3) name=\"upd\" after(%1)  ;"), std::string::npos) << text;
  EXPECT_NE(text.find("attr note:\n  | line1\n  | line2"), std::string::npos) << text;
  EXPECT_NE(text.find("attr ratios = [0.1, 1e-30]"), std::string::npos) << text;
  EXPECT_NE(text.find("return %3, %4, %1:0"), std::string::npos) << text;
  Graph printed = ApplyPass(g, "PrintGraph");
  EXPECT_EQ(printed.GetAttr<std::string>("ir_text"), text);
}

TEST(PrintGraphTest, DotLabelsEdgesWithShapes) {
  std::string dot = PrintGraphDot(RichGraph());
  EXPECT_NE(dot.find("n0 -> n1 [label=\"[2,?]\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("a \\\"quoted\\\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("style=dashed"), std::string::npos) << dot;
}

}  // namespace
}  // namespace ir
