#include <gtest/gtest.h>

#include <cmath>

#include "ir/ast.h"
#include "ir/graph.h"
#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

NDArray Make(const std::string& op, const Attrs& attrs) { return RunOp(op, attrs, {})[0]; }

std::vector<ast::Expr> CodeGen(const std::string& op, const Attrs& attrs, const std::vector<ast::Expr>& in) {
  std::vector<NodeEntry> inputs(in.size(), NodeEntry{Node::CreateVariable("v"), 0});
  NodeAttrs node_attrs = Node::Create(Op::Get(op), op, attrs, inputs)->attrs;
  return Op::GetAttr<FCodeGen>("FCodeGen")[Op::Get(op)](node_attrs, in);
}

TEST(FillTest, FillsShapeWithValueInDType) {
  NDArray f = Make("fill", {{"shape", "(2, 3)"}, {"value", "2.5"}});
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  ExpectNear(f, std::vector<double>(6, 2.5));
  NDArray i = Make("fill", {{"shape", "[4]"}, {"value", "-7"}, {"dtype", "int64"}});
  EXPECT_EQ(i.dtype(), DType::kInt64);
  ExpectNear(i, {-7, -7, -7, -7});
  NDArray z = Make("zeros", {{"shape", "(3, 0)"}, {"dtype", "int32"}});
  EXPECT_EQ(z.shape(), (Shape{3, 0}));
  NDArray o = Make("ones", {{"shape", "()"}, {"dtype", "bool"}});
  EXPECT_EQ(o.shape(), Shape::Scalar());
  ExpectNear(o, {1});
  ExpectNear(Make("zeros", {{"shape", "(2,2)"}, {"dtype", "float64"}}), {0, 0, 0, 0});
  ExpectNear(Make("ones", {{"shape", "(70000)"}}), std::vector<double>(70000, 1.0));
}

TEST(FillTest, ParametersAreChecked) {
  EXPECT_ERROR(Make("fill", {{"shape", "(2)"}, {"value", "2.5"}, {"dtype", "int32"}}),
               "node 'fill' (op fill): value 2.5 is not representable in dtype int32");
  EXPECT_ERROR(Make("zeros", {{"shape", "(2, -1)"}}), "node 'zeros' (op zeros): shape (2,-1) has a negative dimension");
  EXPECT_ERROR(Make("zeros", {{"shape", "(2)"}, {"dtype", "complex"}}),
               "op 'zeros' (node 'zeros'): invalid parameters");
  EXPECT_ERROR(Make("ones", {}), "op 'ones' (node 'ones'): invalid parameters");
  EXPECT_ERROR(Make("zeros", {{"shape", "(2)"}, {"value", "1"}}), "op 'zeros' (node 'zeros'): invalid parameters");
}

TEST(FillTest, ParameterErrorsNameTheParameterAndValue) {
  EXPECT_ERROR(Make("fill", {{"shape", "(2)"}, {"value", "1.5x"}}),
               "op 'fill' (node 'fill'): invalid parameters: value='1.5x': trailing characters could not be parsed");
  EXPECT_ERROR(Make("zeros", {{"shape", "(2)"}, {"dtype", "complex"}}),
               "op 'zeros' (node 'zeros'): invalid parameters: dtype='complex': not a valid value");
}

TEST(FillTest, ShapeWhoseSizeOverflowsIsAnErrorNamingTheNode) {
  EXPECT_ERROR(Make("fill", {{"shape", "(4611686018427387905, 4)"}, {"value", "1"}}),
               "node 'fill' (op fill): shape (4611686018427387905,4) has more elements than a 64-bit integer");
  EXPECT_ERROR(Make("zeros", {{"shape", "(0, 4611686018427387905, 4611686018427387905)"}}), "node 'zeros' (op zeros)");
}

TEST(FillTest, CodeGenIsALiteral) {
  std::vector<ast::Expr> e = CodeGen("fill", {{"shape", "(2)"}, {"value", "3"}, {"dtype", "int32"}}, {});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(ast::ToString(e[0]), "(const int32 3)");
  EXPECT_EQ(ast::ToString(CodeGen("ones", {{"shape", "(2)"}, {"dtype", "float64"}}, {})[0]), "(const float64 1)");
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[Op::Get("zeros")], kElemWise);
}

TEST(FillLikeTest, TakesShapeAndDTypeOfInputAndHasNoGradient) {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kBool}) {
    NDArray x = RandomArray(Shape{2, 3}, dtype, 1);
    NDArray z = RunOp("zeros_like", {}, {x})[0], o = RunOp("ones_like", {}, {x})[0];
    EXPECT_EQ(z.dtype(), dtype);
    EXPECT_EQ(o.shape(), x.shape());
    ExpectNear(z, std::vector<double>(6, 0.0));
    ExpectNear(o, std::vector<double>(6, 1.0));
    CheckCodeGen("zeros_like", {}, {x});
    CheckCodeGen("ones_like", {}, {x});
  }
  for (const char* op : {"zeros_like", "ones_like"}) {
    NodePtr n = Node::Create(Op::Get(op), op, {}, {NodeEntry{Node::CreateVariable("x"), 0}});
    std::vector<NodeEntry> g =
        Op::GetAttr<FGradient>("FGradient")[n->op()](n, {NodeEntry{Node::CreateVariable("og"), 0}});
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].node, nullptr) << op;
  }
}

TEST(ConstantTest, ParsesTextValues) {
  NDArray s = Make("constant", {{"value", "2.5"}});
  EXPECT_EQ(s.shape(), Shape::Scalar());
  ExpectNear(s, {2.5});
  NDArray v = Make("constant", {{"value", "[1, -2, 3.5]"}, {"dtype", "float64"}});
  EXPECT_EQ(v.shape(), (Shape{3}));
  ExpectNear(v, {1, -2, 3.5});
  NDArray m = Make("constant", {{"value", "[[1, 2], [3, 4]]"}, {"shape", "(2, 2)"}, {"dtype", "int32"}});
  EXPECT_EQ(m.shape(), (Shape{2, 2}));
  ExpectNear(m, {1, 2, 3, 4});
  ExpectNear(Make("constant", {{"value", "[7]"}, {"shape", "(2, 3)"}, {"dtype", "int64"}}), std::vector<double>(6, 7));
  NDArray big = Make("constant", {{"value", "9007199254740993"}, {"dtype", "int64"}});
  EXPECT_EQ(big.ToVector<int64_t>()[0], 9007199254740993LL);  // beyond 2^53: parsed as an integer
  ExpectNear(Make("constant", {{"value", "[true, 0, false, 1]"}, {"dtype", "bool"}}), {1, 0, 0, 1});
  EXPECT_TRUE(std::isnan(ValueAt(Make("constant", {{"value", "[nan, -inf]"}}), 0)));
  EXPECT_EQ(Make("constant", {{"value", "[]"}, {"shape", "(0, 2)"}}).shape(), (Shape{0, 2}));
}

TEST(ConstantTest, DecodesLittleEndianBase64) {
  // Python: base64.b64encode(struct.pack('<3f', 1, -2.5, 3)).
  NDArray f = Make("constant", {{"data_base64", "AACAPwAAIMAAAEBA"}});
  EXPECT_EQ(f.shape(), (Shape{3}));
  ExpectNear(f, {1, -2.5, 3});
  // struct.pack('<2q', -(1 << 62) - 3, 7).
  NDArray l = Make("constant", {{"data_base64", "/f///////78HAAAAAAAAAA=="}, {"dtype", "int64"}, {"shape", "(2, 1)"}});
  EXPECT_EQ(l.shape(), (Shape{2, 1}));
  EXPECT_EQ(l.ToVector<int64_t>(), (std::vector<int64_t>{-(int64_t{1} << 62) - 3, 7}));
  // bytes([1, 0, 2, 0]): any nonzero byte is true.
  ExpectNear(Make("constant", {{"data_base64", "AQACAA=="}, {"dtype", "bool"}}), {1, 0, 1, 0});
  // struct.pack('<4d', 0.5, -1, 2, 1e300), with whitespace.
  ExpectNear(Make("constant", {{"data_base64", "AAAAAAAA4D8AAAAAAADwvwAAAAAAAABA\n nHUAiDzkN34="},
                               {"dtype", "float64"},
                               {"shape", "(2,2)"}}),
             {0.5, -1, 2, 1e300}, 0, 0);
}

TEST(ConstantTest, ErrorsNameTheNode) {
  EXPECT_ERROR(Make("constant", {{"value", "[1, x]"}}),
               "node 'constant' (op constant): value element 'x' is not a float32");
  EXPECT_ERROR(Make("constant", {{"value", "[1, 2.5]"}, {"dtype", "int32"}}), "value element '2.5' is not a int32");
  EXPECT_ERROR(Make("constant", {{"value", "3000000000"}, {"dtype", "int32"}}),
               "value element '3000000000' is not a int32");
  EXPECT_ERROR(Make("constant", {{"value", "[1, 2, 3]"}, {"shape", "(2, 2)"}}),
               "node 'constant' (op constant): value has 3 elements but shape [2,2] needs 4 (or 1 to fill it)");
  EXPECT_ERROR(Make("constant", {{"data_base64", "AACAPwAAIMAAAEBA"}, {"shape", "(2)"}}),
               "node 'constant' (op constant): data_base64 holds 12 bytes but shape [2] of float32 needs 8");
  EXPECT_ERROR(Make("constant", {{"data_base64", "AAC*"}}),
               "node 'constant' (op constant): data_base64 is not valid base64");
  EXPECT_ERROR(Make("constant", {{"data_base64", "AAC"}}), "data_base64 is not valid base64");
  EXPECT_ERROR(Make("constant", {{"value", "1"}, {"shape", "(2, x)"}}),
               "node 'constant' (op constant): shape '(2, x)' is not a list of integers");
  EXPECT_ERROR(Make("constant", {{"value", "1"}, {"shape", "(-2)"}}), "shape (-2) has a negative dimension");
  EXPECT_ERROR(Make("constant", {}), "node 'constant' (op constant): needs exactly one of 'value' and 'data_base64'");
  EXPECT_ERROR(Make("constant", {{"value", "1"}, {"data_base64", "AAAAAA=="}}), "needs exactly one of");
  EXPECT_ERROR(Make("constant", {{"value", "1"}, {"dtype", "half"}}),
               "op 'constant' (node 'constant'): invalid parameters");
}

TEST(ConstantTest, SurvivesJsonSaveAndLoad) {
  NodeEntry c = MakeNode("constant", "weights", {}, {{"data_base64", "AACAPwAAIMAAAEBA"}});
  NodeEntry d = MakeNode("constant", "bias", {}, {{"value", "[0.5]"}, {"shape", "(3)"}});
  Graph loaded = LoadJSON(SaveJSON(Graph({MakeNode("add", "sum", {c, d})})));
  NDArray out = EvalGraph(loaded.outputs, {})[0];
  ExpectNear(out, {1.5, -2, 3.5});
}

TEST(ConstantTest, OneElementConstantsAreLiteralsInFusedCode) {
  EXPECT_EQ(ast::ToString(CodeGen("constant", {{"value", "[2]"}, {"dtype", "int32"}}, {})[0]), "(const int32 2)");
  EXPECT_TRUE(CodeGen("constant", {{"value", "[1, 2]"}}, {}).empty());
  EXPECT_TRUE(CodeGen("constant", {{"value", "9007199254740993"}, {"dtype", "int64"}}, {}).empty());
}

}  // namespace
}  // namespace test
}  // namespace ir
