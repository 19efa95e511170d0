/*!
 * \file control_flow_tf2_test.cc
 * \brief TF2 functional control flow (If, Case, While and their Stateless forms): the real
 * TensorFlow-written graphs against their NumPy oracles, handwritten graphs for branch shapes,
 * Case's out-of-range index, tensor loop variables and nesting, the gradient through an imported
 * While, and the errors for recursive, missing and mismatched functions.
 */
#include <dmlc/json.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "ir/autodiff.h"
#include "ir/pass.h"
#include "ir/runtime.h"
#include "ir_tf/import.h"
#include "ir_tf/npy.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ExpectClose;
using test::RunText;
using test::ToDoubles;
namespace pb = test::pbtxt;
using pb::FuncAttr;
using pb::Function;
using pb::Library;

const std::string kControlFlowDir = std::string(IR_TF_TEST_DATA_DIR) + "/graphs/control_flow/";

/*! \brief One case of oracles/manifest.json: TF tensor names -> .npy files. */
struct OracleCase {
  std::string graph, name;
  std::map<std::string, std::string> inputs, outputs;
  void Load(dmlc::JSONReader* reader) {
    dmlc::JSONObjectReadHelper helper;
    helper.DeclareField("graph", &graph);
    helper.DeclareField("case", &name);
    helper.DeclareField("inputs", &inputs);
    helper.DeclareField("outputs", &outputs);
    helper.ReadAllFields(reader);
  }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<OracleCase> OracleCases(const std::string& graph) {
  std::istringstream json(ReadFile(kControlFlowDir + "oracles/manifest.json"));
  dmlc::JSONReader reader(&json);
  std::vector<OracleCase> all, cases;
  reader.Read(&all);
  for (const OracleCase& c : all) {
    if (c.graph == graph) cases.push_back(c);
  }
  return cases;
}

/*! \brief Runs every oracle case of `graph` and compares each output within 1e-5. */
void ExpectMatchesOracles(const std::string& graph) {
  std::vector<OracleCase> cases = OracleCases(graph);
  ASSERT_FALSE(cases.empty()) << "no oracle for " << graph;
  std::string text = ReadFile(kControlFlowDir + graph);
  for (const OracleCase& c : cases) {
    SCOPED_TRACE(graph + " " + c.name);
    std::map<std::string, NDArray> feeds;
    for (const auto& kv : c.inputs) feeds[kv.first] = ReadNpy(kControlFlowDir + kv.second);
    std::vector<std::string> fetches;
    std::vector<NDArray> expected;
    for (const auto& kv : c.outputs) {
      fetches.push_back(kv.first);
      expected.push_back(ReadNpy(kControlFlowDir + kv.second));
    }
    for (bool fusion : {false, true}) {
      std::vector<NDArray> got = RunText(text, feeds, fetches, fusion);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].shape(), expected[i].shape()) << fetches[i];
        ExpectClose(got[i], ToDoubles(expected[i]), fetches[i]);
      }
    }
  }
}

TEST(TFControlFlowTF2Test, FunctionalWhileMatchesOracles) { ExpectMatchesOracles("tf2_functional_while.pbtxt"); }

TEST(TFControlFlowTF2Test, FunctionalIfMatchesOracles) { ExpectMatchesOracles("tf2_functional_if.pbtxt"); }

// ---------------------------------------------------------------- handwritten graphs

/*! \brief f(x) = op(x) over floats, one function of one node. */
std::string Unary(const std::string& name, const std::string& op) {
  return Function(name, {"x:DT_FLOAT"}, {"y:DT_FLOAT"}, pb::Node("r", op, {"x"}, pb::Type()), {{"y", "r:y:0"}});
}

std::string IfNode(const std::string& name, const std::vector<std::string>& inputs, const std::string& then_fn,
                   const std::string& else_fn, const std::string& op = "If") {
  return pb::Node(name, op, inputs, FuncAttr("then_branch", then_fn) + FuncAttr("else_branch", else_fn));
}

NDArray Floats(const std::vector<float>& values, const Shape& shape) {
  return NDArray::FromVector<float>(shape, values);
}

TEST(TFControlFlowTF2Test, IfBranchesOfDifferentShapes) {
  // then: x [2,3]; else: concat([x, x], 0) [4,3]. The output's first dimension is unknown until
  // the predicate is: the executor binds the graph dynamically and finds it as the cond runs.
  std::string axis = pb::Ints("axis", {0}, true);
  std::string twice = pb::Node("cat", "ConcatV2", {"x", "x", "axis:output:0"},
                               pb::Type() + pb::Attr("N", "i: 2") + pb::Type("DT_INT32", "Tidx"));
  std::string library = Library({Unary("same", "Identity"), Function("twice", {"x:DT_FLOAT"}, {"y:DT_FLOAT"},
                                                                     axis + twice, {{"y", "cat:output:0"}})});
  std::string graph = pb::Placeholder("p", {}, "DT_BOOL") + pb::Placeholder("x", {2, 3}) +
                      IfNode("if", {"p", "x"}, "same", "twice") + library;
  ImportOptions options;
  options.outputs = {"if"};
  Graph g = ApplyPass(ImportGraphDef(test::TextModel(graph).graph_def, options), "InferShape");
  EXPECT_EQ(g.GetAttr<ShapeVector>("shape")[g.indexed_graph().entry_id(g.outputs[0])].ToString(), "[?,3]");
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  for (bool p : {true, false}) {
    NDArray out = RunText(graph, {{"p", NDArray::Scalar<bool>(p)}, {"x", Floats(x, Shape{2, 3})}}, {"if"})[0];
    std::vector<double> expected(x.begin(), x.end());
    if (!p) expected.insert(expected.end(), x.begin(), x.end());
    EXPECT_EQ(out.shape(), p ? Shape({2, 3}) : Shape({4, 3}));
    ExpectClose(out, expected, p ? "same" : "twice");
  }
}

TEST(TFControlFlowTF2Test, IfOnAConstantNonScalarPredicateKeepsIntegerBranches) {
  // TF's If: a non-scalar predicate is true when it has elements. Known here, the cond is inlined
  // (FoldConstants): its int32 values must stay int32 for the InferType after it.
  auto int_fn = [](const std::string& name, const std::string& op, const std::string& out) {
    return Function(name, {"x:DT_INT32"}, {"y:DT_INT32"}, pb::Node("r", op, {"x"}, pb::Type("DT_INT32")),
                    {{"y", "r:" + out + ":0"}});
  };
  std::string library = Library({int_fn("same", "Identity", "output"), int_fn("neg", "Neg", "y")});
  for (bool empty : {false, true}) {
    std::string pred =
        empty ? pb::Const("p", {0}, {}, "DT_BOOL", "bool_val") : pb::Const("p", {2}, {0, 0}, "DT_BOOL", "bool_val");
    std::string graph = pred + pb::Ints("x", {3, -4}) + IfNode("if", {"p", "x"}, "same", "neg") + library;
    NDArray out = RunText(graph, {}, {"if"})[0];
    EXPECT_EQ(out.dtype(), DType::kInt32);
    EXPECT_EQ(out.ToVector<int32_t>(), empty ? (std::vector<int32_t>{-3, 4}) : (std::vector<int32_t>{3, -4}));
  }
}

TEST(TFControlFlowTF2Test, CaseRunsTheIndexedBranchAndTheLastOutOfRange) {
  std::string graph = pb::Placeholder("i", {}, "DT_INT32") + pb::Placeholder("x", {3}) +
                      pb::Node("case", "Case", {"i", "x"},
                               pb::Attr("branches",
                                        "list { func { name: 'neg' } func { name: 'sq' } "
                                        "func { name: 'ex' } }")) +
                      Library({Unary("neg", "Neg"), Unary("sq", "Square"), Unary("ex", "Exp")});
  std::vector<float> x{0.5f, -1.0f, 2.0f};
  for (int index : {0, 1, 2, 3, 7, -1}) {
    NDArray out = RunText(graph, {{"i", NDArray::Scalar<int32_t>(index)}, {"x", Floats(x, Shape{3})}}, {"case"})[0];
    std::vector<double> expected;
    for (float v : x) expected.push_back(index == 0 ? -v : index == 1 ? v * v : std::exp(v));
    ExpectClose(out, expected, StrCat("index ", index));
  }
}

/*! \brief cond(i, x, y): i < 4 (the limit a Const inside the function). */
std::string LessThanFour() {
  return Function("less4", {"i:DT_INT32", "x:DT_FLOAT", "y:DT_FLOAT"}, {"c:DT_BOOL"},
                  pb::Ints("four", {4}, true) + pb::Node("lt", "Less", {"i", "four:output:0"}, pb::Type("DT_INT32")),
                  {{"c", "lt:z:0"}});
}

std::string WhileNode(const std::string& body, const std::string& op = "While") {
  return pb::Node("loop", op, {"i0", "x", "y"},
                  FuncAttr("cond", "less4") + FuncAttr("body", body) + pb::Attr("parallel_iterations", "i: 10") +
                      pb::Attr("T", "list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT }"));
}

std::string LoopInputs() { return pb::Ints("i0", {0}, true) + pb::Placeholder("x", {3}) + pb::Placeholder("y", {3}); }

std::map<std::string, NDArray> LoopFeeds(const std::vector<float>& x, const std::vector<float>& y) {
  return {{"x", Floats(x, Shape{3})}, {"y", Floats(y, Shape{3})}};
}

TEST(TFControlFlowTF2Test, WhileOverTensorLoopVariables) {
  // body(i, x, y) = (i + 1, x * y + 1, y): y is a captured value passed through as a loop variable.
  std::string body =
      Function("step", {"i:DT_INT32", "x:DT_FLOAT", "y:DT_FLOAT"}, {"i2:DT_INT32", "x2:DT_FLOAT", "y2:DT_FLOAT"},
               pb::Ints("one_i", {1}, true) + pb::Const("one", {}, {1}) +
                   pb::Node("inc", "AddV2", {"i", "one_i:output:0"}, pb::Type("DT_INT32")) +
                   pb::Node("xy", "Mul", {"x", "y"}, pb::Type()) +
                   pb::Node("next", "AddV2", {"xy:z:0", "one:output:0"}, pb::Type()),
               {{"i2", "inc:z:0"}, {"x2", "next:z:0"}, {"y2", "y"}});
  std::vector<float> x{0.5f, -1.0f, 2.0f}, y{0.5f, 2.0f, -0.25f};
  for (const char* op : {"While", "StatelessWhile"}) {
    std::string graph = LoopInputs() + WhileNode("step", op) + Library({LessThanFour(), body});
    std::vector<NDArray> out = RunText(graph, LoopFeeds(x, y), {"loop", "loop:1", "loop:2"}, true);
    EXPECT_EQ(out[0].ToVector<int32_t>()[0], 4);
    std::vector<double> expected;
    for (size_t k = 0; k < x.size(); ++k) {
      double v = x[k];
      for (int it = 0; it < 4; ++it) v = v * y[k] + 1;
      expected.push_back(v);
    }
    ExpectClose(out[1], expected, op);
    ExpectClose(out[2], std::vector<double>(y.begin(), y.end()), op);
  }
}

TEST(TFControlFlowTF2Test, IfNestedInAWhileBody) {
  // body(i, x, y) = (i + 1, If(i < 2, dbl, inc)(x), y): x doubles twice, then grows by one twice.
  std::string body =
      Function("step", {"i:DT_INT32", "x:DT_FLOAT", "y:DT_FLOAT"}, {"i2:DT_INT32", "x2:DT_FLOAT", "y2:DT_FLOAT"},
               pb::Ints("one", {1}, true) + pb::Ints("two", {2}, true) +
                   pb::Node("inc", "AddV2", {"i", "one:output:0"}, pb::Type("DT_INT32")) +
                   pb::Node("early", "Less", {"i", "two:output:0"}, pb::Type("DT_INT32")) +
                   IfNode("pick", {"early:z:0", "x"}, "dbl", "plus1", "StatelessIf"),
               {{"i2", "inc:z:0"}, {"x2", "pick:output:0"}, {"y2", "y"}});
  std::string dbl =
      Function("dbl", {"x:DT_FLOAT"}, {"y:DT_FLOAT"}, pb::Node("r", "AddV2", {"x", "x"}, pb::Type()), {{"y", "r:z:0"}});
  std::string plus1 =
      Function("plus1", {"x:DT_FLOAT"}, {"y:DT_FLOAT"},
               pb::Const("c", {}, {1}) + pb::Node("r", "AddV2", {"x", "c:output:0"}, pb::Type()), {{"y", "r:z:0"}});
  std::string graph = LoopInputs() + WhileNode("step") + Library({LessThanFour(), body, dbl, plus1});
  std::vector<float> x{0.5f, -1.0f, 2.0f};
  NDArray out = RunText(graph, LoopFeeds(x, {0, 0, 0}), {"loop:1"})[0];
  std::vector<double> expected;
  for (float v : x) expected.push_back(v * 4.0 + 2.0);
  ExpectClose(out, expected, "nested");
}

TEST(TFControlFlowTF2Test, GradientThroughAnImportedWhile) {
  ImportOptions options;
  options.outputs = {"StatelessWhile:1"};
  options.feed_shapes = {{"iter", Shape::Scalar()}, {"val", Shape{3}}};
  Graph graph =
      ImportGraphDef(test::TextModel(ReadFile(kControlFlowDir + "tf2_functional_while.pbtxt")).graph_def, options);
  NodeEntry val;
  PostOrderDFSVisit(graph.outputs, [&](const NodePtr& node) {
    if (node->is_variable() && node->attrs.name == "val") val = NodeEntry{node, 0};
  });
  ASSERT_NE(val.node, nullptr);
  NodeEntry loss = MakeNode("sum", "loss", {MakeNode("multiply", "sq", {graph.outputs[0], graph.outputs[0]})});
  NodeEntry grad = Gradients({loss}, {val})[0];
  Session sess;
  std::vector<float> v0{0.3f, -0.7f, 1.1f};
  for (int iter : {0, 3}) {
    auto feeds = [&](const std::vector<float>& v) {
      return std::unordered_map<std::string, NDArray>{{"iter", NDArray::Scalar<int32_t>(iter)},
                                                      {"val", Floats(v, Shape{3})}};
    };
    std::vector<double> analytic = ToDoubles(sess.Run({grad}, feeds(v0))[0]);
    const float eps = 1e-2f;
    for (size_t k = 0; k < v0.size(); ++k) {
      std::vector<float> up = v0, down = v0;
      up[k] += eps;
      down[k] -= eps;
      double numeric =
          (ToDoubles(sess.Run({loss}, feeds(up))[0])[0] - ToDoubles(sess.Run({loss}, feeds(down))[0])[0]) / (2 * eps);
      EXPECT_NEAR(analytic[k], numeric, 1e-2 * std::max(1.0, std::fabs(numeric))) << "iter " << iter << " k " << k;
    }
  }
}

// ---------------------------------------------------------------- errors

/*! \brief The import error of a text graph importing everything ("" when it imports). */
std::string ImportError(const std::string& graph) {
  try {
    ImportGraphDef(test::TextModel(graph).graph_def);
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

void ExpectImportError(const std::string& graph, const std::vector<std::string>& fragments) {
  std::string error = ImportError(graph);
  ASSERT_FALSE(error.empty()) << "imported without an error";
  for (const std::string& f : fragments) EXPECT_NE(error.find(f), std::string::npos) << f << "\n" << error;
}

TEST(TFControlFlowTF2Test, RecursiveFunctionsAreErrorsNamingTheCycle) {
  // f's then_branch is f itself; g and h call each other through a While body.
  std::string self =
      pb::Placeholder("p", {}, "DT_BOOL") + pb::Placeholder("x", {2}) + IfNode("if", {"p", "x"}, "f", "id") +
      Library(
          {Function("f", {"x:DT_FLOAT"}, {"y:DT_FLOAT"},
                    pb::Const("t", {}, {1}, "DT_BOOL", "bool_val") + IfNode("again", {"t:output:0", "x"}, "f", "id"),
                    {{"y", "again:output:0"}}),
           Unary("id", "Identity")});
  ExpectImportError(self, {"function 'f' calls itself", "f -> f", "node 'if'"});
  std::string loop_of = pb::Const("t", {}, {1}, "DT_BOOL", "bool_val");
  auto calls = [&](const std::string& name, const std::string& callee) {
    return Function(name, {"x:DT_FLOAT"}, {"y:DT_FLOAT"}, loop_of + IfNode("call", {"t:output:0", "x"}, callee, callee),
                    {{"y", "call:output:0"}});
  };
  std::string mutual = pb::Placeholder("p", {}, "DT_BOOL") + pb::Placeholder("x", {2}) +
                       IfNode("if", {"p", "x"}, "g", "g") + Library({calls("g", "h"), calls("h", "g")});
  ExpectImportError(mutual, {"g -> h -> g", "recursive functions are not supported"});
}

TEST(TFControlFlowTF2Test, MissingAndMismatchedFunctionsAreErrors) {
  std::string inputs = pb::Placeholder("p", {}, "DT_BOOL") + pb::Placeholder("x", {2});
  std::string library = Library({Unary("id", "Identity")});
  ExpectImportError(inputs + IfNode("if", {"p", "x"}, "id", "nowhere") + library,
                    {"node 'if'", "else_branch", "'nowhere'", "does not define"});
  ExpectImportError(inputs + IfNode("if", {"p", "x"}, "", "id") + library, {"then_branch", "names no function"});
  ExpectImportError(inputs + IfNode("if", {"p", "x", "x"}, "id", "id") + library,
                    {"function 'id' takes 1 argument(s), but the node passes 2"});
  // A resource loop variable is passed by value: only a body returning it unchanged keeps that right.
  std::string other =
      Function("other", {"r:DT_RESOURCE"}, {"y:DT_RESOURCE"},
               pb::Node("w", "VarHandleOp", {}, pb::Type("DT_FLOAT", "dtype") + pb::Attr("shape", pb::ShapeProto({2}))),
               {{"y", "w:resource:0"}});
  std::string resource_loop =
      pb::Node("v", "VarHandleOp", {}, pb::Type("DT_FLOAT", "dtype") + pb::Attr("shape", pb::ShapeProto({2}))) +
      pb::Node("loop", "While", {"v"},
               FuncAttr("cond", "id") + FuncAttr("body", "other") + pb::Attr("T", "list { type: DT_RESOURCE }"));
  ExpectImportError(resource_loop + Library({Unary("id", "Identity"), other}),
                    {"loop variable 0 ('v') is a resource (a variable handle) the body does not return unchanged"});
  ExpectImportError(
      pb::Const("c", {2}, {1, 2}) +
          pb::Node("loop", "While", {"c"},
                   FuncAttr("cond", "id") + FuncAttr("body", "id") + pb::Attr("T", "list { type: DT_RESOURCE }")) +
          library,
      {"loop variable 0 ('c') is a resource", "must be a variable"});
  // A branch assigning to the variable passed in would update a copy: an error, not a silent no-op.
  std::string handle =
      pb::Node("v", "VarHandleOp", {}, pb::Type("DT_FLOAT", "dtype") + pb::Attr("shape", pb::ShapeProto({2})));
  std::string update =
      Function("update", {"r:DT_RESOURCE"}, {"y:DT_FLOAT"},
               pb::Const("c", {2}, {1, 2}) +
                   pb::Node("set", "AssignVariableOp", {"r", "c:output:0"}, pb::Type("DT_FLOAT", "dtype")) +
                   " control_ret { key: 'set' value: 'set' }",
               {{"y", "c:output:0"}});
  ExpectImportError(
      pb::Placeholder("p", {}, "DT_BOOL") + handle + IfNode("if", {"p", "v"}, "update", "update") + Library({update}),
      {"then_branch function 'update' updates its argument 0"});
}

}  // namespace
}  // namespace tf
}  // namespace ir
