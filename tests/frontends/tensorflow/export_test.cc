/*!
 * \file export_test.cc
 * \brief The GraphDef exporter (ir_tf/export.h): a graph of our ops written as a GraphDef, text
 * and binary, is read back by the importer and computes what the graph does; ops it cannot
 * write are errors naming the node.
 */
#include "ir_tf/export.h"

#include <gtest/gtest.h>

#include "ir/fold_constants.h"
#include "ir/runtime.h"
#include "ir_tf/import.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

NodeEntry Placeholder(const std::string& name, const std::string& shape, const std::string& dtype) {
  NodePtr var = Node::CreateVariable(name);
  var->attrs.dict = {{"__kind__", "placeholder"}, {"__shape__", shape}, {"__dtype__", dtype}};
  return NodeEntry{var, 0};
}

/*! \brief out = [sum(relu(x W) * 2 - 1, axis 1, kept), argmax(x W) as float] and n = shape(x)[0] + 1. */
Graph Model() {
  NodeEntry x = Placeholder("x", "[?,3]", "float32");
  NodeEntry w = MakeConstantNode("W", NDArray::FromVector<float>(Shape{3, 2}, {0.5f, -1, 0.25f, 2, -0.5f, 1}));
  NodeEntry xw = MakeNode("matmul", "xw", {x, w});
  NodeEntry act = MakeNode("subtract_scalar", "shift",
                           {MakeNode("multiply_scalar", "scale", {MakeNode("relu", "relu", {xw})}, {{"scalar", "2"}})},
                           {{"scalar", "1"}});
  NodeEntry total = MakeNode("sum", "total", {act}, {{"axis", "(1,)"}, {"keepdims", "1"}});
  NodeEntry picked = MakeNode(
      "reshape", "picked",
      {MakeNode("cast", "as_float", {MakeNode("argmax", "best", {xw}, {{"axis", "1"}})}, {{"dtype", "float32"}})},
      {{"shape", "(-1,1)"}});
  NodeEntry out = MakeNode("concat", "out", {total, picked}, {{"axis", "1"}});
  NodeEntry rows = MakeNode("strided_slice", "rows", {MakeNode("shape", "shape", {x})},
                            {{"begin", "(0,)"}, {"end", "(1,)"}, {"strides", "(1,)"}, {"shrink_axis_mask", "1"}});
  return Graph({out, MakeNode("add_scalar", "n", {rows}, {{"scalar", "1"}})});
}

TEST(TFExportTest, WrittenGraphImportsAndComputesTheSameValues) {
  Graph g = Model();
  NDArray x = NDArray::FromVector<float>(Shape{2, 3}, {1, 2, 3, -1, 0.5f, 2});
  Session sess;
  std::vector<NDArray> want = sess.Run(g.outputs, {{"x", x}});
  std::string text = ExportGraphDef(g, true);
  EXPECT_NE(text.find("op: \"MatMul\""), std::string::npos) << text;
  std::vector<NDArray> from_text = test::RunText(text, {{"x", x}}, {"out", "n"});
  test::ExpectClose(from_text[0], test::ToDoubles(want[0]), "out (text)");
  EXPECT_EQ(from_text[1].ToVector<int32_t>(), want[1].ToVector<int32_t>());

  ImportOptions options;
  options.outputs = {"out", "n"};
  options.feed_shapes = {{"x", Shape{2, 3}}};
  Graph imported = ImportGraphDef(ExportGraphDef(g, false), options);
  std::vector<NDArray> from_binary = Session().Run(imported.outputs, {{"x", x}});
  test::ExpectClose(from_binary[0], test::ToDoubles(want[0]), "out (binary)");
  EXPECT_EQ(ExportGraphDef(g, false), ExportGraphDef(g, false)) << "the bytes must not depend on map order";
}

TEST(TFExportTest, OpsWithoutATensorFlowFormAreNamed) {
  NodeEntry x = Placeholder("x", "[3]", "float32");
  Graph g({MakeNode("relu_grad", "back", {x, x})});
  try {
    ExportGraphDef(g, true);
    FAIL() << "relu_grad was written";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("node 'back'"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace tf
}  // namespace ir
