/*!
 * \file check_operand_test.cc
 * \brief check_int_operand: passes valid integer operands through, raises its message on the
 * first invalid element, and is never compiled into a fused kernel.
 */
#include <gtest/gtest.h>

#include "ir/ast.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

Attrs Check(const std::string& require) {
  return {
      {"require", require}, {"message", "Integer division by zero"}, {"context", "TensorFlow node 'd' (op FloorDiv)"}};
}

TEST(CheckIntOperandTest, PassesValidOperandsThrough) {
  NDArray i32 = NDArray::FromVector<int32_t>(Shape{3}, {-2, 5, 7});
  ExpectNear(RunOp("check_int_operand", Check("nonzero"), {i32})[0], {-2, 5, 7});
  NDArray i64 = NDArray::FromVector<int64_t>(Shape{2, 2}, {0, 1, 2, 3});
  NDArray out = RunOp("check_int_operand", Check("nonnegative"), {i64})[0];
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  ExpectNear(out, {0, 1, 2, 3});
}

TEST(CheckIntOperandTest, RaisesItsMessageOnTheFirstInvalidElement) {
  NDArray zero = NDArray::FromVector<int32_t>(Shape{3}, {4, 0, -1});
  EXPECT_ERROR(RunOp("check_int_operand", Check("nonzero"), {zero}),
               "TensorFlow node 'd' (op FloorDiv): Integer division by zero (element 1 of an operand of shape [3])");
  EXPECT_ERROR(RunOp("check_int_operand", {{"require", "nonnegative"}, {"message", "negative"}}, {zero}),
               "(op check_int_operand): negative (element 2");
}

TEST(CheckIntOperandTest, RejectsBadAttributesAndNonIntegerData) {
  NDArray i32 = NDArray::FromVector<int32_t>(Shape{1}, {1});
  EXPECT_ERROR(RunOp("check_int_operand", {{"require", "positive"}, {"message", "m"}}, {i32}),
               "require must be \"nonzero\" or \"nonnegative\", got \"positive\"");
  EXPECT_ERROR(RunOp("check_int_operand", Check("nonzero"), {NDArray::FromVector<float>(Shape{1}, {1})}), "float32");
}

TEST(CheckIntOperandTest, IsOpaqueToFusionAndHasNoCode) {
  const Op* op = Op::Get("check_int_operand");
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[op], kOpaque);
  EXPECT_FALSE(Op::GetAttr<FCodeGen>("FCodeGen").count(op) != 0) << "a fused kernel would drop the check";
}

}  // namespace
}  // namespace test
}  // namespace ir
