/*!
 * \file function_library_test.cc
 * \brief A GraphDef's function library is admitted as TensorFlow admits it: a function defined
 * twice must be defined the same way (then it is kept once), and a function may not take the
 * name of an op.
 */
#include <gtest/gtest.h>

#include "ir_tf/import.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

namespace pb = test::pbtxt;
using test::ExpectClose;
using test::RunText;

/*! \brief f(x) = op(x) over floats, its body node `node_name` with `extra` (inputs, attributes). */
std::string Unary(const std::string& name, const std::string& op, const std::string& extra = "",
                  const std::string& node_name = "r") {
  return StrCat("function { signature { name: '", name,
                "' input_arg { name: 'x' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT } } "
                "node_def { name: '",
                node_name, "' op: '", op, "' input: 'x' ", extra, " attr { key: 'T' value { type: DT_FLOAT } } } ",
                "ret { key: 'y' value: '", node_name, ":y:0' } }\n");
}

std::string Library(const std::string& functions) { return "library {\n" + functions + "}\n"; }

/*! \brief call = f(x) for x = [1, -2], by PartitionedCall. */
std::string Calling(const std::string& fn, const std::string& library) {
  return pb::Const("x", {2}, {1, -2}) +
         pb::Node("call", "PartitionedCall", {"x"}, pb::Attr("f", StrCat("func { name: '", fn, "' }"))) + library;
}

TEST(TFFunctionLibraryTest, RejectsAFunctionDefinedTwiceDifferently) {
  // Before, the second definition was used without a word: call = -x instead of TF's error.
  std::string graph = Calling("f", Library(Unary("f", "Abs") + Unary("f", "Neg")));
  EXPECT_ERROR(RunText(graph, {}, {"call"}),
               "Cannot add function 'f' because a different function with the same name already exists.");
  // The same for the bodies of functional control flow, which take their functions from the library.
  std::string cond =
      pb::Placeholder("p", {}, "DT_BOOL") + pb::Const("x", {2}, {1, -2}) +
      pb::Node("if", "If", {"p", "x"},
               pb::Attr("then_branch", "func { name: 'f' }") + pb::Attr("else_branch", "func { name: 'f' }")) +
      Library(Unary("f", "Abs") + Unary("f", "Neg"));
  EXPECT_ERROR(RunText(cond, {{"p", NDArray::Scalar<bool>(true)}}, {"if"}),
               "Cannot add function 'f' because a different function with the same name already exists.");
}

TEST(TFFunctionLibraryTest, KeepsAFunctionDefinedTwiceTheSameWay) {
  // Equal as TF's FunctionDefsEqual sees it: control inputs in another order, internal attributes.
  std::string body = "input: '^c1' input: '^c2'";
  std::string again = "input: '^c2' input: '^c1' attr { key: '_class' value { s: 'loc:@x' } }";
  std::string consts = StrCat("node_def { name: 'c1' op: 'NoOp' } node_def { name: 'c2' op: 'NoOp' } ");
  std::string f1 = Unary("f", "Neg", body), f2 = Unary("f", "Neg", again);
  f1.insert(f1.find("node_def"), consts);
  f2.insert(f2.find("node_def"), consts);
  std::string graph = Calling("f", Library(f1 + f2));
  ExpectClose(RunText(graph, {}, {"call"})[0], {-1, 2}, "f(x) = -x", 0, 0);
  // A difference in the body (another node name) is a different function.
  EXPECT_ERROR(RunText(Calling("f", Library(Unary("f", "Neg") + Unary("f", "Neg", "", "r2"))), {}, {"call"}),
               "Cannot add function 'f' because a different function with the same name already exists.");
}

TEST(TFFunctionLibraryTest, RejectsAFunctionNamedLikeAnOp) {
  // A node of op Neg would otherwise be inlined as a call of the function 'Neg' (here: Abs).
  std::string graph =
      pb::Const("x", {2}, {1, -2}) + pb::Node("n", "Neg", {"x"}, pb::Type()) + Library(Unary("Neg", "Abs"));
  EXPECT_ERROR(RunText(graph, {}, {"n"}), "Cannot add function 'Neg' because an op with the same name already exists.");
}

TEST(TFFunctionLibraryTest, RejectsConflictingGradientFunctions) {
  std::string grads =
      "gradient { function_name: 'f' gradient_func: 'g1' } "
      "gradient { function_name: 'f' gradient_func: 'g1' } ";
  ExpectClose(RunText(Calling("f", Library(Unary("f", "Neg") + grads)), {}, {"call"})[0], {-1, 2}, "f", 0, 0);
  grads += "gradient { function_name: 'f' gradient_func: 'g2' }";
  EXPECT_ERROR(RunText(Calling("f", Library(Unary("f", "Neg") + grads)), {}, {"call"}),
               "Cannot assign gradient function 'g2' to 'f' because it already has gradient function 'g1'");
}

TEST(TFFunctionLibraryTest, ListsTheUnsupportedOpsOfATwiceDefinedFunctionOnce) {
  std::string fn = Unary("f", "NoSuchOp");
  std::string graph =
      pb::Placeholder("p", {}, "DT_BOOL") + pb::Const("x", {2}, {1, -2}) +
      pb::Node("if", "If", {"p", "x"},
               pb::Attr("then_branch", "func { name: 'f' }") + pb::Attr("else_branch", "func { name: 'f' }")) +
      Library(fn + fn);
  auto missing = ListUnsupported(test::TextModel(graph).graph_def);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0], std::make_pair(std::string("f/r"), std::string("NoSuchOp")));
}

}  // namespace
}  // namespace tf
}  // namespace ir
