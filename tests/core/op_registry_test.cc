#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/test_ops.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "test_util.h"

namespace ir {
namespace {

using test::Apply;

TEST(OpRegistryTest, GetReturnsRegisteredOpWithDescription) {
  const Op* op = Op::Get("core_test_add");
  EXPECT_EQ(op->name, "core_test_add");
  EXPECT_EQ(op->description, "Adds two tensors of the same shape.");
  EXPECT_EQ(op->num_inputs, 2u);
  ASSERT_EQ(op->arguments.size(), 2u);
  EXPECT_EQ(op->arguments[0].name, "lhs");
}

TEST(OpRegistryTest, UnknownOpIsAnErrorWithSuggestion) {
  EXPECT_ERROR(Op::Get("core_test_ad"), "did you mean core_test_add");
  EXPECT_ERROR(Op::Get("no_such_op_at_all"), "unknown op 'no_such_op_at_all'");
  EXPECT_EQ(Op::Find("no_such_op_at_all"), nullptr);
}

TEST(OpRegistryTest, AliasResolvesToTheSameOp) {
  EXPECT_EQ(Op::Get("core_test_opaque_alias"), Op::Get("core_test_opaque"));
}

TEST(OpRegistryTest, AttributesAreTypedMapsIndexedByOp) {
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  EXPECT_EQ(pattern[Op::Get("core_test_add")], kElemWise);
  EXPECT_EQ(pattern.count(Op::Get("core_test_opaque")), 0);
  EXPECT_EQ(pattern.get(Op::Get("core_test_opaque"), kOpaque), kOpaque);
}

TEST(OpRegistryTest, UnsetAttributeIsAnErrorNamingOpAndKey) {
  const auto& shape = Op::GetAttr<FInferShape>("FInferShape");
  EXPECT_ERROR(shape[Op::Get("core_test_opaque")], "op 'core_test_opaque' does not register attribute 'FInferShape'");
}

TEST(OpRegistryTest, WrongAttributeTypeIsAnError) {
  EXPECT_ERROR(Op::GetAttr<std::string>("TOpPattern"), "op attribute 'TOpPattern' has type int");
  EXPECT_ERROR(Op::GetAttr<int>("core_test_never_registered"), "no op registers attribute");
}

TEST(OpRegistryTest, DuplicateRegistrationAtSamePriorityIsAnError) {
  Op& op = Op::Register("core_test_dup");
  op.set_attr<int>("core_test_key", 1, 10);
  EXPECT_ERROR(op.set_attr<int>("core_test_key", 2, 10), "registered twice at priority 10");
  EXPECT_EQ(Op::GetAttr<int>("core_test_key")[&op], 1);
}

TEST(OpRegistryTest, HigherPriorityOverridesLowerDoesNot) {
  Op& op = Op::Register("core_test_priority");
  op.set_attr<int>("core_test_prio", 1, 5);
  op.set_attr<int>("core_test_prio", 2, 20);
  op.set_attr<int>("core_test_prio", 3, 7);
  EXPECT_EQ(Op::GetAttr<int>("core_test_prio")[&op], 2);
}

TEST(OpRegistryTest, RegisteringWithAnotherTypeIsAnError) {
  Op& op = Op::Register("core_test_type_clash");
  EXPECT_ERROR(op.set_attr<std::string>("TOpPattern", "x"),
               "op 'core_test_type_clash': attribute 'TOpPattern' is set as std::");
  EXPECT_ERROR(op.set_attr<std::string>("TOpPattern", "x"), "but was first registered as int");
}

TEST(OpRegistryTest, TypedParametersAreParsedAndDocumented) {
  NodePtr node = Node::Create(Op::Get("core_test_param"), "p", {{"axis", "2"}, {"mode", "exact"}},
                              {NodeEntry{Node::CreateVariable("x"), 0}});
  const Op* op = node->op();
  ASSERT_EQ(op->arguments.size(), 3u);
  EXPECT_EQ(op->arguments[0].name, "axis");
  EXPECT_NE(op->arguments[2].type.find("fast"), std::string::npos);
  EXPECT_FALSE(node->attrs.parsed.empty());
}

TEST(OpRegistryTest, UnknownParameterIsAnErrorNamingTheOp) {
  EXPECT_ERROR(Apply("core_test_param", {Symbol::CreateVariable("x")}, {{"axis", "1"}, {"axsi", "2"}}),
               "op 'core_test_param'");
  EXPECT_ERROR(Apply("core_test_param", {Symbol::CreateVariable("x")}, {{"axis", "1"}, {"axsi", "2"}}), "axsi");
  EXPECT_ERROR(Apply("core_test_param", {Symbol::CreateVariable("x")}, {{"axis", "one"}}), "axis");
  EXPECT_ERROR(Apply("core_test_param", {Symbol::CreateVariable("x")}), "axis");
  EXPECT_ERROR(Apply("core_test_add", {Symbol::CreateVariable("x"), Symbol::CreateVariable("y")}, {{"alpha", "1"}}),
               "takes no parameters, got 'alpha'");
}

TEST(OpRegistryTest, HiddenKeysAreAllowed) {
  Symbol s = Apply("core_test_param", {Symbol::CreateVariable("x")}, {{"axis", "1"}, {"__hint__", "a"}});
  std::string hint;
  EXPECT_TRUE(s.GetAttr("__hint__", &hint));
  EXPECT_EQ(hint, "a");
}

TEST(OpRegistryTest, InputCountsFixedVariadicAndComputed) {
  Symbol x = Symbol::CreateVariable("x");
  EXPECT_ERROR(Apply("core_test_add", {x, x, x}), "takes 2 inputs, got 3");
  EXPECT_EQ(Apply("core_test_concat", {x, x, x, x}).outputs[0].node->inputs.size(), 4u);
  EXPECT_EQ(Apply("core_test_sum", {x, x, x}, {{"num_args", "3"}}).outputs[0].node->inputs.size(), 3u);
  EXPECT_ERROR(Apply("core_test_sum", {x, x, x}, {{"num_args", "2"}}), "takes 2 inputs");
  EXPECT_EQ(Apply("core_test_split", {x}, {{"num_outputs", "3"}}).outputs.size(), 3u);
}

TEST(OpRegistryTest, ListNamesIsSortedAndComplete) {
  std::vector<std::string> names = Op::ListNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "core_test_split"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "core_test_opaque_alias"), names.end());
}

TEST(OpRegistryTest, ConcurrentRegistrationIsSafe) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 200; ++i) {
        try {
          Op& op = Op::Register("core_test_concurrent_" + std::to_string(i));
          op.set_attr<int>("core_test_thread_" + std::to_string(t), i, 10);
        } catch (...) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < 8; ++t) {
    const auto& map = Op::GetAttr<int>("core_test_thread_" + std::to_string(t));
    for (int i = 0; i < 200; ++i) EXPECT_EQ(map[Op::Get("core_test_concurrent_" + std::to_string(i))], i);
  }
}

}  // namespace
}  // namespace ir
