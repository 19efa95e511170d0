/*!
 * \file import_test.cc
 * \brief The TFImport pass on small GraphDefs: constants in every encoding, references,
 * control inputs, function inlining, feeds, and values folded from shapes.
 */
#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/pass.h"
#include "ir_tf/import.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT: the graph builders read best unqualified
using test::ExpectClose;
using test::RunText;

std::string Tensor(const std::string& dtype, const std::vector<int64_t>& dims, const std::string& values) {
  return Node("c", "Const", {},
              Type(dtype, "dtype") +
                  Attr("value", "tensor { dtype: " + dtype + " tensor_" + ShapeProto(dims) + " " + values + " }"));
}

NDArray ConstValue(const std::string& dtype, const std::vector<int64_t>& dims, const std::string& values) {
  return RunText(Tensor(dtype, dims, values), {}, {"c"})[0];
}

ImportOptions Unfed(const std::vector<std::string>& outputs) {
  ImportOptions options;
  options.outputs = outputs;
  return options;
}

TEST(TFImportTest, DecodesConstantsInEveryEncoding) {
  NDArray content = ConstValue("DT_FLOAT", {2}, "tensor_content: '\\000\\000\\200?\\000\\000\\000\\300'");
  ExpectClose(content, {1, -2}, "tensor_content", 0, 0);
  ExpectClose(ConstValue("DT_FLOAT", {2, 2}, "float_val: 7"), {7, 7, 7, 7}, "one value fills the shape", 0, 0);
  ExpectClose(ConstValue("DT_INT32", {4}, "int_val: 1 int_val: 2"), {1, 2, 2, 2}, "the last value repeats", 0, 0);
  ExpectClose(ConstValue("DT_FLOAT", {3}, ""), {0, 0, 0}, "no values are zeros", 0, 0);
  NDArray half = ConstValue("DT_HALF", {2}, "half_val: 15872 half_val: 49152");
  EXPECT_EQ(half.dtype(), DType::kFloat32);
  ExpectClose(half, {1.5, -2}, "half", 0, 0);
  NDArray half_bytes = ConstValue("DT_HALF", {1}, "tensor_content: '\\000<'");
  ExpectClose(half_bytes, {1}, "half tensor_content", 0, 0);
  NDArray flags = ConstValue("DT_BOOL", {3}, "bool_val: true bool_val: false");
  EXPECT_EQ(flags.dtype(), DType::kBool);
  ExpectClose(flags, {1, 0, 0}, "bool", 0, 0);
  NDArray big = ConstValue("DT_INT64", {}, "int64_val: 5000000000");
  EXPECT_EQ(big.dtype(), DType::kInt64);
  EXPECT_EQ(big.ToVector<int64_t>(), std::vector<int64_t>{5000000000});
  ExpectClose(ConstValue("DT_DOUBLE", {2}, "double_val: 0.25 double_val: 1e-300"), {0.25, 1e-300}, "double", 0, 0);
  ExpectClose(ConstValue("DT_UINT8", {2}, "tensor_content: '\\001\\377'"), {1, 255}, "uint8 widens", 0, 0);
  ExpectClose(ConstValue("DT_INT8", {2}, "int_val: -3 int_val: 4"), {-3, 4}, "int8 widens", 0, 0);
}

TEST(TFImportTest, ResolvesOutputIndicesAndOrdersByControlInputs) {
  std::string graph = Ints("axis", {1}, true) + Const("x", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}) +
                      Node("split", "Split", {"axis", "x"}, Type() + Attr("num_split", "i: 2")) +
                      Node("out", "Sub", {"split:1", "split"}, Type()) + Variable("v", {2}) +
                      Const("v_init", {2}, {10, 20}) + Node("init", "Assign", {"v", "v_init"}, Type()) +
                      Node("read", "Identity", {"v", "^init"}, Type());
  ExpectClose(RunText(graph, {}, {"out"})[0], {2, 2, 2, 2}, "split:1 - split:0", 0, 0);
  // Fetching 'read' runs 'init' first: its control input initializes the variable.
  ExpectClose(RunText(graph, {}, {"read"})[0], {10, 20}, "read after init", 0, 0);
}

TEST(TFImportTest, InlinesFunctionCallsWithOutputArgumentReferences) {
  std::string library =
      "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT } "
      "input_arg { name: 'y' type: DT_FLOAT } output_arg { name: 's' type: DT_FLOAT } "
      "output_arg { name: 'p' type: DT_FLOAT } } "
      "node_def { name: 'mul' op: 'Mul' input: 'x' input: 'y' attr { key: 'T' value { type: DT_FLOAT } } } "
      "node_def { name: 'add' op: 'AddV2' input: 'mul:z:0' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } } "
      "ret { key: 's' value: 'add:z:0' } ret { key: 'p' value: 'mul:z:0' } } "
      "function { signature { name: 'g' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'o' type: DT_FLOAT } "
      "} "
      "node_def { name: 'inner' op: 'PartitionedCall' input: 'a' input: 'a' "
      "attr { key: 'f' value { func { name: 'f' } } } } "
      "ret { key: 'o' value: 'inner:output:1' } } }";
  std::string graph = Const("a", {2}, {2, 3}) + Const("b", {2}, {10, 100}) +
                      Node("call", "StatefulPartitionedCall", {"a", "b"}, Attr("f", "func { name: 'f' }")) +
                      Node("nested", "PartitionedCall", {"b"}, Attr("f", "func { name: 'g' }")) + library;
  std::vector<NDArray> out = RunText(graph, {}, {"call:0", "call:1", "nested"});
  ExpectClose(out[0], {22, 303}, "s = x*y + x", 0, 0);
  ExpectClose(out[1], {20, 300}, "p = x*y", 0, 0);
  ExpectClose(out[2], {100, 10000}, "g(b) = f(b, b).p", 0, 0);
}

TEST(TFImportTest, FeedsPlaceholdersDefaultsAndAnyTensor) {
  std::string graph =
      Const("d", {2}, {1, 2}) +
      Node("p", "PlaceholderWithDefault", {"d"}, Type("DT_FLOAT", "dtype") + Attr("shape", ShapeProto({2}))) +
      Node("twice", "Mul", {"p", "p"}, Type()) + Node("out", "Neg", {"twice"}, Type());
  ExpectClose(RunText(graph, {}, {"out"})[0], {-1, -4}, "default", 0, 0);
  NDArray fed = NDArray::FromVector<float>(Shape{2}, {3, 4});
  ExpectClose(RunText(graph, {{"p", fed}}, {"out"})[0], {-9, -16}, "fed placeholder", 0, 0);
  ExpectClose(RunText(graph, {{"twice:0", fed}}, {"out"})[0], {-3, -4}, "fed intermediate tensor", 0, 0);
}

TEST(TFImportTest, FoldsValuesComputedFromFedShapes) {
  // x: [?, 6] reshaped to [shape(x)[0] * 2, -1], as TF's Python layers write it.
  std::string graph =
      Placeholder("x", {-1, 6}) + Node("shape", "Shape", {"x"}, Type()) + Ints("begin", {0}) + Ints("size", {1}) +
      Node("batch", "Slice", {"shape", "begin", "size"}, Type("DT_INT32") + Attr("Index", "type: DT_INT32")) +
      Ints("two", {2}) + Node("rows", "Mul", {"batch", "two"}, Type("DT_INT32")) + Ints("minus1", {-1}) +
      Ints("axis", {0}, true) +
      Node("target", "ConcatV2", {"rows", "minus1", "axis"}, Type("DT_INT32") + Attr("N", "i: 2")) +
      Node("y", "Reshape", {"x", "target"}, Type());
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i);
  ImportOptions options;
  options.outputs = {"y"};
  options.feed_shapes = {{"x", Shape{4, 6}}};
  Graph g = ImportGraphDef(test::TextModel(graph).graph_def, options);
  const ir::Node* reshape = g.outputs[0].node.get();
  EXPECT_EQ(reshape->op()->name, "reshape");
  EXPECT_EQ(reshape->attrs.dict.at("shape"), "(8,-1)");
  EXPECT_EQ(g.GetAttr<std::vector<std::string>>("tf.output_names"), std::vector<std::string>{"y:0"});
  NDArray y = RunText(graph, {{"x", NDArray::FromVector<float>(Shape{4, 6}, values)}}, {"y"})[0];
  EXPECT_EQ(y.shape(), (Shape{8, 3}));
  EXPECT_ERROR(
      ImportGraphDef(test::TextModel(graph).graph_def, Unfed({"y"})),
      "placeholder 'x' must be fed: TensorFlow node 'y' (op Reshape) needs input 1 ('target') before the graph runs");
}

TEST(TFImportTest, ImportsEveryNodeWithoutRequestedOutputs) {
  std::string graph = Const("a", {1}, {1}) + Node("b", "Neg", {"a"}, Type()) + Node("c", "Exp", {"a"}, Type());
  Graph g = ImportGraphDef(test::TextModel(graph).graph_def);
  EXPECT_EQ(g.GetAttr<std::vector<std::string>>("tf.output_names"), (std::vector<std::string>{"b:0", "c:0"}));
  EXPECT_FALSE(g.HasAttr("tf.graph_def"));
  EXPECT_EQ(g.outputs.size(), 2u);
}

TEST(TFImportTest, IsARegisteredPassThatStartsFromAnEmptyGraph) {
  Graph start;
  start.SetAttr("tf.graph_def", test::TextModel(Const("a", {1}, {5})).graph_def);
  Graph g = ApplyPass(start, "TFImport");
  EXPECT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0].node->op()->name, "constant");
  EXPECT_ERROR(ApplyPass(Graph(), "TFImport"), "tf.graph_def");
}

TEST(TFImportTest, ListsUnsupportedOpsWithNodeNames) {
  std::string graph = Const("a", {1}, {1}) + Node("s", "SaveV2", {"a"}) + Node("f", "FancyOp", {"a"});
  auto missing = ListUnsupported(test::TextModel(graph).graph_def);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0], (std::pair<std::string, std::string>{"s", "SaveV2"}));
  EXPECT_EQ(missing[1], (std::pair<std::string, std::string>{"f", "FancyOp"}));
  // Nodes nothing requested needs do not have to be supported.
  ExpectClose(RunText(graph, {}, {"a"})[0], {1}, "a", 0, 0);
  auto ops = SupportedOps();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "ApplyAdam"), ops.end());
}

}  // namespace
}  // namespace tf
}  // namespace ir
