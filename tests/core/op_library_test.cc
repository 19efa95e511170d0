#include <gtest/gtest.h>

#include <algorithm>

#include "ir/c_api.h"
#include "ir/device_kernel.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ir/symbol.h"
#include "test_util.h"

namespace ir {
namespace {

const std::string kLibDir = IR_TEST_LIB_DIR;

TEST(OpLibraryTest, LoadedOpsBehaveLikeBuiltIns) {
  LoadOpLibrary(kLibDir + "/libexample_ops.so");
  const Op* op = Op::Get("axpby");
  EXPECT_NE(op->description.find("alpha * x + beta * y"), std::string::npos);
  std::vector<std::string> names = Op::ListNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "axpby"), names.end());
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[op], kElemWise);

  Symbol z = Symbol::CreateFunctor(op, {{"alpha", "2"}}, "z");
  z.Compose({Symbol::CreateVariable("x"), Symbol::CreateVariable("y")}, {});
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[op](z.outputs[0].node, {z.outputs[0]});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].node->attrs.dict.at("alpha"), "2");
  EXPECT_ERROR(Symbol::CreateFunctor(op, {{"gamma", "1"}}), "op 'axpby'");
}

TEST(OpLibraryTest, LibraryRewriteRulesJoinSimplify) {
  LoadOpLibrary(kLibDir + "/libexample_ops.so");
  NodeEntry x{Node::CreateVariable("x"), 0}, y{Node::CreateVariable("y"), 0};
  NodeEntry ax = MakeNode("multiply_scalar", "ax", {x}, {{"scalar", "2"}});
  NodeEntry by = MakeNode("multiply_scalar", "by", {y}, {{"scalar", "-0.5"}});
  Graph g({MakeNode("add", "sum", {by, ax})});  // commutative: the operands may come either way
  g.SetAttr("shape_inputs", ShapeVector{Shape{2, 3}, Shape{2, 3}});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32, DType::kFloat32});
  g.SetAttr("simplify.sets", std::vector<std::string>{"example_ops"});
  Graph out = ApplyPass(g, "Simplify");
  EXPECT_EQ(out.GetAttr<std::vector<std::string>>("simplify.fired"), std::vector<std::string>{"example_axpby @ sum"});
  ASSERT_EQ(out.outputs[0].node->op()->name, "axpby");
  EXPECT_EQ(out.outputs[0].node->attrs.dict.at("alpha"), "-0.5");  // the pattern matched (by, ax) in order
  EXPECT_EQ(out.outputs[0].node->inputs[0].node, y.node);
  EXPECT_EQ(out.outputs[0].node->attrs.dict.at("beta"), "2");
}

TEST(OpLibraryTest, LoadingTwiceIsHarmless) {
  LoadOpLibrary(kLibDir + "/libexample_ops.so");
  EXPECT_NO_THROW(LoadOpLibrary(kLibDir + "/libexample_ops.so"));
}

TEST(OpLibraryTest, ConflictingRegistrationsAreReported) {
  LoadOpLibrary(kLibDir + "/libexample_ops.so");
  EXPECT_ERROR(LoadOpLibrary(kLibDir + "/libconflicting_ops.so"),
               "conflicts with existing registrations (none of its registrations were applied):\n"
               "  op 'axpby': attribute 'FInferShape' is registered twice");
}

TEST(OpLibraryTest, ListsTheDeviceKernelSourcesOfAnAppliedLibrary) {
  LoadOpLibrary(kLibDir + "/libdevice_ops.so");
  std::vector<const DeviceKernelSource*> sources = DeviceKernelSources();
  EXPECT_TRUE(std::any_of(sources.begin(), sources.end(),
                          [](const DeviceKernelSource* s) { return s->name == "test_mirror_rows"; }));
}

TEST(OpLibraryTest, ARejectedLibraryListsNoneOfItsDeviceKernelSources) {
  // Its source reuses the name "ir_fill" (inside dlopen, where nothing may throw): reported by the loader.
  EXPECT_ERROR(LoadOpLibrary(kLibDir + "/libduplicate_source_ops.so"),
               "device kernel source 'ir_fill' is registered twice");
  int fills = 0;
  for (const DeviceKernelSource* source : DeviceKernelSources()) {
    fills += source->name == "ir_fill";
    EXPECT_NE(source->name, "test_orphan_source");
  }
  EXPECT_EQ(fills, 1);
  std::vector<std::string> ops = Op::ListNames();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "duplicate_source_op"), 0);
}

TEST(OpLibraryTest, BadPathsAreClearErrors) {
  EXPECT_ERROR(LoadOpLibrary("/no/such/libops.so"), "cannot load op library '/no/such/libops.so': no such file");
  EXPECT_ERROR(LoadOpLibrary(kLibDir), "not a regular file");
  EXPECT_ERROR(LoadOpLibrary(std::string(IR_TEST_SOURCE_DIR) + "/README.md"), "cannot load op library");
}

TEST(OpLibraryTest, CApiLoadsLibraries) {
  EXPECT_EQ(IRLoadOpLibrary((kLibDir + "/libexample_ops.so").c_str()), 0) << IRGetLastError();
  IROpHandle op;
  EXPECT_EQ(IRGetOpHandle("axpby", &op), 0);
}

}  // namespace
}  // namespace ir
