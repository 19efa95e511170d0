/*!
 * \file bad_input_test.cc
 * \brief Hostile or broken models give clear errors naming the node and op, never a crash;
 * fuzzer findings are replayed here.
 */
#include <gtest/gtest.h>

#include <random>

#include "ir_tf/import.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT

std::string Binary(const std::string& pbtxt) { return test::TextModel(pbtxt).graph_def; }

/*! \brief A Const named c with a hand-written tensor. */
std::string ConstTensor(const std::string& dtype, const std::string& dims, const std::string& values = "") {
  return Node("c", "Const", {},
              Type(dtype, "dtype") +
                  Attr("value", "tensor { dtype: " + dtype + " tensor_shape { " + dims + " } " + values + " }"));
}

void Import(const std::string& pbtxt, const std::vector<std::string>& outputs = {}) {
  ImportOptions options;
  options.outputs = outputs;
  ImportGraphDef(Binary(pbtxt), options);
}

const std::string kGraph = Const("a", {2}, {1, 2}) + Const("b", {2}, {3, 4}) + Node("sum", "Add", {"a", "b"}, Type()) +
                           Node("out", "Exp", {"sum"}, Type());

TEST(TFBadInputTest, TruncatedAndRandomFilesAreRejected) {
  std::string bytes = Binary(kGraph);
  for (size_t cut : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_ERROR(ModelFromBinary(bytes.substr(0, cut), "cut.pb"), "'cut.pb' is not a valid binary GraphDef");
  }
  std::mt19937 rng(7);
  int rejected = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::string noise(64 + trial, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    try {
      ImportGraphDef(ModelFromBinary(noise, "noise.pb").graph_def);
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 150) << "random bytes are rarely a graph";
  EXPECT_ERROR(ModelFromText("node { name: 'a' op: ", "bad.pbtxt"), "'bad.pbtxt' is not a valid text GraphDef: line 1");
  EXPECT_ERROR(LoadModel("/nonexistent/model.pb"), "'/nonexistent/model.pb' does not exist");
  EXPECT_ERROR(ImportGraphDef("\xff\xff\xff"), "tf.graph_def does not hold a valid binary GraphDef");
}

TEST(TFBadInputTest, UnknownOpNamesNodeAndOp) {
  EXPECT_ERROR(Import(kGraph + Node("odd", "NoSuchOp", {"out"}), {"odd"}),
               "TensorFlow node 'odd' (op NoSuchOp): no converter for TensorFlow op 'NoSuchOp'");
}

TEST(TFBadInputTest, DanglingInputNamesTheReference) {
  EXPECT_ERROR(Import(Node("x", "Neg", {"ghost:0"}, Type()), {"x"}),
               "node 'x' (op Neg): input 0 'ghost:0' names no node of the graph");
  EXPECT_ERROR(Import(kGraph, {"missing"}), "requested output 'missing' names no node of the graph");
  EXPECT_ERROR(Import(kGraph + Node("x", "Neg", {"sum:3"}, Type()), {"x"}),
               "input 0 'sum:3' asks for output 3 of 'sum' (op Add), which has 1 output(s)");
  EXPECT_ERROR(Import(kGraph + Node("x", "Neg", {"sum:x"}, Type()), {"x"}), "'sum:x' is not a tensor reference");
}

TEST(TFBadInputTest, CycleIsReportedWithItsPath) {
  std::string cycle = Node("p", "Add", {"q", "q"}, Type()) + Node("q", "Neg", {"p"}, Type());
  EXPECT_ERROR(Import(cycle, {"p"}),
               "the graph has a cycle (control flow loops are not supported): 'p' (op Add) -> "
               "'q' (op Neg) -> 'p' (op Add)");
  EXPECT_ERROR(Import(Node("s", "Identity", {"^s"}, Type()), {"s"}), "cycle");
}

TEST(TFBadInputTest, UnsupportedDtypeNamesNodeAndOp) {
  std::string strings = Node(
      "s", "Const", {}, Type("DT_STRING", "dtype") + Attr("value", "tensor { dtype: DT_STRING string_val: 'hi' }"));
  EXPECT_ERROR(Import(strings, {"s"}), "TensorFlow node 's' (op Const): unsupported dtype DT_STRING");
  EXPECT_ERROR(Import(Placeholder("c", {2}, "DT_COMPLEX64"), {"c"}),
               "TensorFlow node 'c' (op Placeholder): attribute 'dtype': unsupported dtype DT_COMPLEX64");
}

TEST(TFBadInputTest, WrongFeedShapeNamesThePlaceholder) {
  std::string graph = Placeholder("x", {-1, 3}) + Node("y", "Neg", {"x"}, Type());
  EXPECT_ERROR(test::RunText(graph, {{"x", NDArray::FromVector<float>(Shape{2, 4}, std::vector<float>(8))}}, {"y"}),
               "TensorFlow node 'x' (op Placeholder): fed shape [2,4] does not match the placeholder's shape [?,3]");
  std::string matmul =
      Placeholder("x", {-1, -1}) + Const("w", {3, 2}, {1, 2, 3, 4, 5, 6}) + Node("y", "MatMul", {"x", "w"}, Type());
  EXPECT_ERROR(test::RunText(matmul, {{"x", NDArray::FromVector<float>(Shape{2, 4}, std::vector<float>(8))}}, {"y"}),
               "node 'y' (op matmul)");
  EXPECT_ERROR(test::RunText(graph, {}, {"y"}), "placeholder 'x' must be fed");
}

TEST(TFBadInputTest, MalformedAttributesAndConstantsAreErrors) {
  EXPECT_ERROR(Import(Node("m", "MatMul", {}, Type()), {"m"}),
               "TensorFlow node 'm' (op MatMul): needs 2 data input(s), has 0");
  EXPECT_ERROR(Import(ConstTensor("DT_FLOAT", "dim { size: -1 }"), {"c"}), "the tensor's shape [?] is not fully known");
  EXPECT_ERROR(Import(ConstTensor("DT_FLOAT", "dim { size: 2 } ", "float_val: 1 float_val: 2 float_val: 3"), {"c"}),
               "the tensor has 3 values but its shape [2] holds 2");
  ImportOptions small;
  small.outputs = {"c"};
  small.max_const_bytes = 16;
  EXPECT_ERROR(ImportGraphDef(Binary(ConstTensor("DT_FLOAT", "dim { size: 100000000 }")), small),
               "exceeds the limit of 16 bytes");
  EXPECT_ERROR(Import(Node("c", "Const", {}, Type("DT_FLOAT", "dtype")), {"c"}), "missing attribute 'value'");
}

}  // namespace
}  // namespace tf
}  // namespace ir
