#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/test_ops.h"
#include "ir/c_api.h"

namespace {

std::vector<std::string> ToVector(uint32_t n, const char** items) { return {items, items + n}; }

#define ASSERT_OK(call) ASSERT_EQ((call), 0) << IRGetLastError()

TEST(CApiTest, ListsOpsWithDocumentation) {
  uint32_t n = 0;
  const char** names = nullptr;
  ASSERT_OK(IRListAllOpNames(&n, &names));
  std::vector<std::string> all = ToVector(n, names);
  EXPECT_NE(std::find(all.begin(), all.end(), "core_test_param"), all.end());

  IROpHandle op;
  ASSERT_OK(IRGetOpHandle("core_test_param", &op));
  const char *name, *desc;
  uint32_t num_args;
  const char **arg_names, **arg_types, **arg_descs;
  ASSERT_OK(IRGetOpInfo(op, &name, &desc, &num_args, &arg_names, &arg_types, &arg_descs));
  EXPECT_STREQ(name, "core_test_param");
  EXPECT_STREQ(desc, "Has typed parameters.");
  ASSERT_EQ(num_args, 3u);
  EXPECT_STREQ(arg_names[1], "scale");
  EXPECT_NE(std::string(arg_types[1]).find("float"), std::string::npos);
  EXPECT_STREQ(arg_descs[1], "A scale.");

  const char** keys;
  ASSERT_OK(IRGetOpAttrKeys(op, &n, &keys));
  EXPECT_EQ(ToVector(n, keys), std::vector<std::string>{"FInferShape"});
}

TEST(CApiTest, ErrorsReturnMinusOneWithAMessage) {
  IROpHandle op;
  EXPECT_EQ(IRGetOpHandle("no_such_op", &op), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("unknown op 'no_such_op'"), std::string::npos);
  EXPECT_EQ(IRGetOpHandle(nullptr, &op), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("IRGetOpHandle: argument 'name' is NULL"), std::string::npos);
  IRGraphHandle g;
  EXPECT_EQ(IRGraphLoadJSON("{not json", &g), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("malformed graph JSON"), std::string::npos);
  EXPECT_EQ(IRLoadOpLibrary("/no/such/lib.so"), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("no such file"), std::string::npos);
}

TEST(CApiTest, BuildsComposesAndRunsPasses) {
  IRSymbolHandle x, y, add, split, group;
  ASSERT_OK(IRSymbolCreateVariable("x", &x));
  ASSERT_OK(IRSymbolCreateVariable("y", &y));
  IROpHandle add_op, split_op;
  ASSERT_OK(IRGetOpHandle("core_test_add", &add_op));
  ASSERT_OK(IRGetOpHandle("core_test_split", &split_op));
  ASSERT_OK(IRSymbolCreateAtomicSymbol(add_op, 0, nullptr, nullptr, &add));
  const char* keys[] = {"lhs", "rhs"};
  IRSymbolHandle args[] = {x, y};
  ASSERT_OK(IRSymbolCompose(add, "sum", 2, keys, args));
  const char* pk[] = {"num_outputs"};
  const char* pv[] = {"2"};
  ASSERT_OK(IRSymbolCreateAtomicSymbol(split_op, 1, pk, pv, &split));
  ASSERT_OK(IRSymbolCompose(split, "parts", 1, nullptr, &add));
  uint32_t nout;
  ASSERT_OK(IRSymbolGetNumOutputs(split, &nout));
  EXPECT_EQ(nout, 2u);
  IRSymbolHandle second;
  ASSERT_OK(IRSymbolGetOutput(split, 1, &second));
  IRSymbolHandle parts[] = {add, second};
  ASSERT_OK(IRSymbolCreateGroup(2, parts, &group));

  uint32_t n;
  const char** names;
  ASSERT_OK(IRSymbolListInputNames(group, 0, &n, &names));
  EXPECT_EQ(ToVector(n, names), (std::vector<std::string>{"x", "y"}));
  ASSERT_OK(IRSymbolListOutputNames(group, &n, &names));
  EXPECT_EQ(ToVector(n, names), (std::vector<std::string>{"sum", "parts_part1"}));
  const char* value;
  int success;
  ASSERT_OK(IRSymbolGetAttr(split, "num_outputs", &value, &success));
  EXPECT_EQ(success, 1);
  EXPECT_STREQ(value, "2");

  IRGraphHandle graph, printed;
  ASSERT_OK(IRGraphCreate(group, &graph));
  ASSERT_OK(IRGraphSetAttrJSON(graph, "print_graph.quiet", "[\"int\", 1]"));
  ASSERT_OK(IRGraphSetAttrJSON(graph, "shape", "[\"[2]\", \"[2]\", \"[2]\", \"[2]\", \"[2]\"]"));
  const char* passes[] = {"PrintGraph"};
  ASSERT_OK(IRGraphApplyPasses(graph, 1, passes, &printed));
  const char* json;
  ASSERT_OK(IRGraphGetAttrJSON(printed, "ir_text", &json, &success));
  EXPECT_EQ(success, 1);
  EXPECT_NE(std::string(json).find("core_test_split(%2) name=\\\"parts\\\""), std::string::npos) << json;
  ASSERT_OK(IRGraphGetAttrJSON(printed, "shape", &json, &success));
  EXPECT_NE(std::string(json).find("\"[2]\""), std::string::npos);
  ASSERT_OK(IRGraphGetAttrJSON(printed, "missing", &json, &success));
  EXPECT_EQ(success, 0);
  EXPECT_EQ(IRGraphSetAttrJSON(graph, "k", "[\"bogus_type\", 1]"), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("unknown attribute type 'bogus_type'"), std::string::npos);

  const char* saved;
  ASSERT_OK(IRGraphSaveJSON(printed, &saved));
  std::string saved_copy = saved;
  IRGraphHandle loaded;
  ASSERT_OK(IRGraphLoadJSON(saved_copy.c_str(), &loaded));
  ASSERT_OK(IRGraphSaveJSON(loaded, &saved));
  EXPECT_EQ(saved_copy, saved);

  const char* text;
  ASSERT_OK(IRGraphPrint(loaded, 1, &text));
  EXPECT_NE(std::string(text).find("digraph"), std::string::npos);
  const char* unknown[] = {"NoSuchPass"};
  IRGraphHandle never;
  EXPECT_EQ(IRGraphApplyPasses(graph, 1, unknown, &never), -1);

  for (IRSymbolHandle s : {x, y, add, split, group, second}) IRSymbolFree(s);
  for (IRGraphHandle h : {graph, printed, loaded}) IRGraphFree(h);
}

TEST(CApiTest, ComposeErrorsCrossTheBoundaryAsCodes) {
  IRSymbolHandle x, add;
  ASSERT_OK(IRSymbolCreateVariable("x", &x));
  IROpHandle op;
  ASSERT_OK(IRGetOpHandle("core_test_add", &op));
  ASSERT_OK(IRSymbolCreateAtomicSymbol(op, 0, nullptr, nullptr, &add));
  IRSymbolHandle args[] = {x, x, x};
  EXPECT_EQ(IRSymbolCompose(add, "a", 3, nullptr, args), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("takes 2 inputs"), std::string::npos);
  const char* k[] = {"bad"};
  const char* v[] = {"1"};
  IRSymbolHandle bad;
  EXPECT_EQ(IRSymbolCreateAtomicSymbol(op, 1, k, v, &bad), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("takes no parameters"), std::string::npos);
  IRSymbolFree(x);
  IRSymbolFree(add);
}

}  // namespace
