// tensor_list_push_back and tensor_list_pop_back: values, adopting the first item's shape, shape
// inference and its errors, the empty-list error, gradients against finite differences.
#include <gtest/gtest.h>

#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

TEST(TensorListTest, PushBackAppendsARowAndPopBackTakesItOff) {
  NDArray list = Iota(Shape{2, 3});
  NDArray item = NDArray::FromVector<float>(Shape{3}, {-1, -2, -3});
  NDArray grown = RunOp("tensor_list_push_back", {}, {list, item})[0];
  EXPECT_EQ(grown.shape(), (Shape{3, 3}));
  ExpectNear(grown, {0, 1, 2, 3, 4, 5, -1, -2, -3}, 0, 0);
  std::vector<NDArray> popped = RunOp("tensor_list_pop_back", {}, {grown});
  EXPECT_EQ(popped[0].shape(), (Shape{2, 3}));
  ExpectNear(popped[0], {0, 1, 2, 3, 4, 5}, 0, 0);
  ExpectNear(popped[1], {-1, -2, -3}, 0, 0);
  std::vector<NDArray> last = RunOp("tensor_list_pop_back", {}, {Iota(Shape{1, 2})});
  EXPECT_EQ(last[0].shape(), (Shape{0, 2}));
  ExpectNear(last[1], {0, 1}, 0, 0);
}

TEST(TensorListTest, AListThatHoldsNothingAdoptsTheFirstItemsShape) {
  // EmptyTensorList of unknown element dimensions is [0, 0]; a list reserved with 2 rows of an
  // unknown element shape is [2, 0]: its rows become zeros of the item's shape.
  NDArray item = NDArray::FromVector<float>(Shape{2}, {7, 8});
  NDArray first = RunOp("tensor_list_push_back", {}, {NDArray(Shape{0, 0}, DType::kFloat32), item})[0];
  EXPECT_EQ(first.shape(), (Shape{1, 2}));
  ExpectNear(first, {7, 8}, 0, 0);
  NDArray third = RunOp("tensor_list_push_back", {}, {NDArray(Shape{2, 0}, DType::kFloat32), item})[0];
  EXPECT_EQ(third.shape(), (Shape{3, 2}));
  ExpectNear(third, {0, 0, 0, 0, 7, 8}, 0, 0);
}

TEST(TensorListTest, InferenceAndErrorsNameTheNode) {
  EXPECT_EQ(InferShapes("tensor_list_push_back", {}, {Shape{U, 4}, Shape{4}}).out[0], (Shape{U, 4}));
  EXPECT_EQ(InferShapes("tensor_list_push_back", {}, {Shape{5, 0, 3}, Shape{U, 3}}).out[0], (Shape{6, U, 3}));
  EXPECT_EQ(InferShapes("tensor_list_push_back", {}, {Shape{5, 2}, Shape()}).in[1], (Shape{2}));
  Inferred pop = InferShapes("tensor_list_pop_back", {}, {Shape{4, U}});
  EXPECT_EQ(pop.out[0], (Shape{3, U}));
  EXPECT_EQ(pop.out[1], (Shape{U}));
  EXPECT_ERROR(RunOp("tensor_list_push_back", {}, {Iota(Shape{2, 3}), Iota(Shape{4})}),
               "tried to append an item of shape [4] to a list of elements of shape [3]");
  EXPECT_ERROR(RunOp("tensor_list_push_back", {}, {Iota(Shape{2, 3}), Iota(Shape{1, 3})}),
               "tried to append an item of shape [1,3] to a list of shape [2,3] (element rank 1)");
  EXPECT_ERROR(RunOp("tensor_list_pop_back", {}, {Iota(Shape{0, 3})}),
               "node 'tensor_list_pop_back' (op tensor_list_pop_back): Trying to pop from an empty list");
  EXPECT_ERROR(RunOp("tensor_list_pop_back", {}, {NDArray::Scalar<float>(1)}), "the list must have rank >= 1");
}

TEST(TensorListTest, GradientsMatchFiniteDifferences) {
  CheckGradient("tensor_list_push_back", {},
                {RandomArray(Shape{3, 2}, DType::kFloat64, 1), RandomArray(Shape{2}, DType::kFloat64, 2)});
  CheckGradient("tensor_list_pop_back", {}, {RandomArray(Shape{3, 2}, DType::kFloat64, 3)});
}

}  // namespace
}  // namespace test
}  // namespace ir
