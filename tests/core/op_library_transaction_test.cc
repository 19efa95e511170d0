// Loading an op library is all or nothing, and never changes what a built-in op is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "test_util.h"

namespace ir {
namespace {

const std::string kLibDir = IR_TEST_LIB_DIR;

/*! \brief What a library must not change about an op. */
struct OpSnapshot {
  explicit OpSnapshot(const Op* op)
      : description(op->description),
        num_inputs(op->num_inputs),
        num_outputs(op->num_outputs),
        arguments(op->arguments.size()),
        attrs(Op::ListAttrKeys()) {}
  std::string description;
  uint32_t num_inputs, num_outputs;
  size_t arguments;
  std::vector<std::string> attrs;
};

void ExpectUnchanged(const OpSnapshot& before, const Op* op) {
  OpSnapshot after(op);
  EXPECT_EQ(after.description, before.description);
  EXPECT_EQ(after.num_inputs, before.num_inputs);
  EXPECT_EQ(after.num_outputs, before.num_outputs);
  EXPECT_EQ(after.arguments, before.arguments);
  EXPECT_EQ(after.attrs, before.attrs);
}

std::string LoadError(const std::string& path) {
  try {
    LoadOpLibrary(path);
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

bool Listed(const std::string& name) {
  std::vector<std::string> names = Op::ListNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(OpLibraryTransactionTest, RejectedLibraryChangesNothingAndFailsAgainOnRetry) {
  const Op* tanh = Op::Get("tanh");
  OpSnapshot before(tanh);
  std::string error = LoadError(kLibDir + "/libhalf_conflicting_ops.so");
  EXPECT_NE(error.find("op 'exp': attribute 'FGradient' is registered twice"), std::string::npos) << error;
  EXPECT_NE(error.find("op 'tanh' already exists"), std::string::npos) << error;
  EXPECT_NE(error.find("its number of inputs (1 -> 3)"), std::string::npos) << error;
  EXPECT_NE(error.find("its description"), std::string::npos) << error;
  ExpectUnchanged(before, tanh);
  EXPECT_FALSE(Op::HasAttr("half_conflicting_attr", tanh));
  EXPECT_EQ(Op::Find("half_registered_op"), nullptr);
  EXPECT_FALSE(Listed("half_registered_op"));
  EXPECT_EQ(LoadError(kLibDir + "/libhalf_conflicting_ops.so"), error);
  EXPECT_FALSE(Listed("half_registered_op"));
}

TEST(OpLibraryTransactionTest, RedeclaringABuiltInSignatureIsRefused) {
  const Op* exp = Op::Get("exp");
  OpSnapshot before(exp);
  std::string error = LoadError(kLibDir + "/libredeclare_exp_ops.so");
  EXPECT_NE(error.find("op 'exp' already exists: a library may add attributes to it but not change its number "
                       "of inputs (1 -> 2)"),
            std::string::npos)
      << error;
  ExpectUnchanged(before, exp);
  EXPECT_EQ(LoadError(kLibDir + "/libredeclare_exp_ops.so"), error);
}

TEST(OpLibraryTransactionTest, MistypedAttributeNamesOpKeyAndLibrary) {
  const Op* exp = Op::Get("exp");
  OpSnapshot before(exp);
  const std::string path = kLibDir + "/libmistyped_attr_ops.so";
  std::string error = LoadError(path);
  EXPECT_NE(error.find("op library '" + path + "'"), std::string::npos) << error;
  EXPECT_NE(error.find("op 'exp': attribute 'FInferShape' is set as int but was first registered as"),
            std::string::npos)
      << error;
  ExpectUnchanged(before, exp);
  EXPECT_TRUE(Op::GetAttr<FInferShape>("FInferShape").count(exp));
}

TEST(OpLibraryTransactionTest, LibraryMayAddAttributesAndAliasesToBuiltIns) {
  const Op* exp = Op::Get("exp");
  OpSnapshot before(exp);
  LoadOpLibrary(kLibDir + "/libextending_ops.so");
  EXPECT_EQ(exp->description, before.description);
  EXPECT_EQ(exp->arguments.size(), before.arguments);
  EXPECT_EQ(Op::GetAttr<int>("extending_attr")[exp], 7);
  EXPECT_EQ(Op::Get("extending_exp"), exp);
  EXPECT_NO_THROW(LoadOpLibrary(kLibDir + "/libextending_ops.so"));
}

TEST(OpLibraryTransactionTest, SecondCopyOfALibraryDuplicatesNothing) {
  LoadOpLibrary(kLibDir + "/libexample_ops.so");
  const Op* axpby = Op::Get("axpby");
  OpSnapshot before(axpby);
  EXPECT_NO_THROW(LoadOpLibrary(kLibDir + "/libexample_ops.so"));
  std::string copy = ::testing::TempDir() + "/libexample_ops_copy_" + std::to_string(getpid()) + ".so";
  {
    std::ifstream in(kLibDir + "/libexample_ops.so", std::ios::binary);
    std::ofstream out(copy, std::ios::binary);
    out << in.rdbuf();
  }
  std::string error = LoadError(copy);
  EXPECT_NE(error.find("op 'axpby': attribute 'FInferShape' is registered twice"), std::string::npos) << error;
  ExpectUnchanged(before, axpby);
  EXPECT_EQ(LoadError(copy), error);
  std::remove(copy.c_str());
}

}  // namespace
}  // namespace ir
