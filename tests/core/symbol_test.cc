#include <gtest/gtest.h>

#include "core/test_ops.h"
#include "ir/op.h"
#include "ir/symbol.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;

TEST(SymbolTest, VariableHasOneOutputNamedAfterIt) {
  Symbol x = Symbol::CreateVariable("x");
  EXPECT_EQ(x.ListOutputNames(), std::vector<std::string>{"x"});
  EXPECT_EQ(x.ListInputNames(), std::vector<std::string>{"x"});
}

TEST(SymbolTest, ComposeByPositionAndKeyword) {
  Symbol x = Symbol::CreateVariable("x"), y = Symbol::CreateVariable("y");
  Symbol add = Symbol::CreateFunctor(Op::Get("core_test_add"), {}, "a");
  add.Compose({x}, {{"rhs", y}}, "sum");
  EXPECT_EQ(add.ListInputNames(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(add.outputs[0].node->attrs.name, "sum");
}

TEST(SymbolTest, ComposingAnOpWithoutInputsNamesIt) {
  Symbol token = Symbol::CreateFunctor(Op::Get("no_op"), {}, "");
  token.Compose({}, {}, "my_token");
  EXPECT_EQ(token.outputs[0].node->attrs.name, "my_token");
  Symbol other = Symbol::CreateFunctor(Op::Get("no_op"), {}, "t");
  EXPECT_ERROR(other.Compose({Symbol::CreateVariable("x")}, {}), "op 'no_op' (node 't') takes no inputs, got 1");
}

TEST(SymbolTest, ComposeErrorsNameTheInput) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol add = Symbol::CreateFunctor(Op::Get("core_test_add"), {}, "a");
  EXPECT_ERROR(add.Compose({x}, {{"bogus", x}}), "has no input named 'bogus' (inputs: lhs, rhs)");
  Symbol add2 = Symbol::CreateFunctor(Op::Get("core_test_add"), {}, "a");
  EXPECT_ERROR(add2.Compose({x}, {{"lhs", x}}), "given both by position and by name");
  Symbol split = Apply("core_test_split", {x}, {{"num_outputs", "2"}});
  Symbol add3 = Symbol::CreateFunctor(Op::Get("core_test_add"), {}, "a");
  EXPECT_ERROR(add3.Compose({split, x}, {}), "must be a symbol with one output, got 2");
}

TEST(SymbolTest, MissingInputBecomesANamedVariable) {
  Symbol add = Symbol::CreateFunctor(Op::Get("core_test_add"), {}, "fc");
  add.Compose({Symbol::CreateVariable("x")}, {});
  EXPECT_EQ(add.ListInputNames(), (std::vector<std::string>{"x", "fc_rhs"}));
}

TEST(SymbolTest, MultipleOutputsNamesAndIndexing) {
  Symbol split = Apply("core_test_split", {Symbol::CreateVariable("x")}, {{"num_outputs", "3"}}, "s");
  EXPECT_EQ(split.ListOutputNames(), (std::vector<std::string>{"s_part0", "s_part1", "s_part2"}));
  Symbol second = split[1];
  EXPECT_EQ(second.outputs[0].index, 1u);
  EXPECT_ERROR(split[3], "index 3 is out of range");
}

TEST(SymbolTest, GroupAndInternals) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol a = Apply("core_test_add", {x, x}, {}, "a");
  Symbol b = Apply("core_test_add", {a, x}, {}, "b");
  Symbol group = Symbol::CreateGroup({a, b});
  EXPECT_EQ(group.ListOutputNames(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(b.GetInternals().ListOutputNames(), (std::vector<std::string>{"x", "a", "b"}));
  EXPECT_EQ(b.GetChildren().ListOutputNames(), (std::vector<std::string>{"a", "x"}));
}

TEST(SymbolTest, ListInputsSeparatesMutableVariables) {
  Symbol w = Symbol::CreateVariable("w"), v = Symbol::CreateVariable("v");
  Symbol assign = Apply("core_test_assign", {w, v});
  EXPECT_EQ(assign.ListInputNames(Symbol::kMutable), std::vector<std::string>{"w"});
  EXPECT_EQ(assign.ListInputNames(Symbol::kReadOnlyArgs), std::vector<std::string>{"v"});
}

TEST(SymbolTest, ControlDependenciesAreListedAndOrdered) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol first = Apply("core_test_add", {x, x}, {}, "first");
  Symbol second = Apply("core_test_add", {x, x}, {}, "second");
  second.AddControlDeps(first);
  EXPECT_EQ(second.GetInternals().ListOutputNames(), (std::vector<std::string>{"x", "first", "second"}));
  EXPECT_ERROR(second.AddControlDeps(second), "cannot depend on itself");
}

TEST(SymbolTest, ComposeSubstitutesFreeVariablesWithoutTouchingTheOriginal) {
  Symbol x = Symbol::CreateVariable("x"), y = Symbol::CreateVariable("y");
  Symbol f = Apply("core_test_add", {x, y}, {}, "f");
  Symbol p = Symbol::CreateVariable("p"), q = Symbol::CreateVariable("q");
  Symbol g = f({p}, {{"y", q}});
  EXPECT_EQ(g.ListInputNames(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(f.ListInputNames(), (std::vector<std::string>{"x", "y"}));
  EXPECT_ERROR(f({}, {{"z", q}}), "no free variable named 'z'");
}

TEST(SymbolTest, CopyIsDeep) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol f = Apply("core_test_add", {x, x}, {}, "f");
  Symbol copy = f.Copy();
  EXPECT_NE(copy.outputs[0].node, f.outputs[0].node);
  EXPECT_EQ(copy.outputs[0].node->inputs[0].node, copy.outputs[0].node->inputs[1].node);
  EXPECT_EQ(copy.ListInputNames(), f.ListInputNames());
}

TEST(SymbolTest, SetAttrsReparsesAndRollsBackOnError) {
  Symbol p = Apply("core_test_param", {Symbol::CreateVariable("x")}, {{"axis", "1"}});
  p.SetAttrs({{"scale", "2.5"}});
  std::string value;
  ASSERT_TRUE(p.GetAttr("scale", &value));
  EXPECT_EQ(value, "2.5");
  EXPECT_ERROR(p.SetAttrs({{"scale", "abc"}}), "scale");
  ASSERT_TRUE(p.GetAttr("scale", &value));
  EXPECT_EQ(value, "2.5");
}

TEST(SymbolTest, LongChainsAreDestroyedWithoutRecursion) {
  Symbol x = Symbol::CreateVariable("x");
  Symbol cur = x;
  for (int i = 0; i < 200000; ++i) cur = Apply("core_test_add", {cur, x});
  cur = Symbol();  // would overflow the stack with recursive destruction
  SUCCEED();
}

}  // namespace
}  // namespace ir
