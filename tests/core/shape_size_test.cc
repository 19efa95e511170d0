// Sizes computed from shapes never overflow silently.
#include <gtest/gtest.h>

#include "ir/base.h"
#include "test_util.h"

namespace ir {
namespace {

const int64_t kHuge = (int64_t{1} << 62) + 1;

TEST(ShapeSizeTest, OverflowingSizeIsAnErrorNamingTheShape) {
  Shape shape{kHuge, 4};
  EXPECT_FALSE(shape.FitsInt64());
  EXPECT_ERROR(shape.Size(), "shape [4611686018427387905,4] has more elements than a 64-bit integer can count");
  EXPECT_ERROR(shape.ProdDims(0, 2), "shape [4611686018427387905,4]");
  EXPECT_EQ(shape.ProdDims(1, 2), 4);
}

TEST(ShapeSizeTest, OverflowingByteCountIsAnErrorNamingShapeAndDType) {
  Shape shape{int64_t{1} << 61, 1};
  EXPECT_EQ(shape.Size(), int64_t{1} << 61);
  EXPECT_ERROR(shape.Bytes(DType::kFloat64),
               "an array of shape [2305843009213693952,1] and dtype float64 has more bytes than a 64-bit integer");
  EXPECT_EQ(Shape({2, 3}).Bytes(DType::kFloat64), 48);
}

TEST(ShapeSizeTest, ZeroSizedShapesStillBoundTheirOtherDimensions) {
  Shape shape{0, kHuge, kHuge};
  EXPECT_EQ(shape.Size(), 0);
  EXPECT_FALSE(shape.FitsInt64());  // strides over the non-zero dimensions would overflow
  EXPECT_TRUE(Shape({0, kHuge}).FitsInt64());
}

TEST(ShapeSizeTest, CheckedMulRefusesOverflowAndNegativeFactors) {
  int64_t out = 5;
  EXPECT_FALSE(CheckedMul(kHuge, 4, &out));
  EXPECT_FALSE(CheckedMul(-1, 2, &out));
  EXPECT_EQ(out, 5);
  EXPECT_TRUE(CheckedMul(3, 4, &out));
  EXPECT_EQ(out, 12);
}

}  // namespace
}  // namespace ir
