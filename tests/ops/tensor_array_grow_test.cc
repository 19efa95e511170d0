// Tensor arrays whose element rank is unknown (adopting any value's shape) and arrays that grow
// on write (tensor_array_write_grow / tensor_array_scatter_grow: TensorFlow's dynamic_size).
#include <gtest/gtest.h>

#include <unordered_map>

#include "ir/runtime.h"
#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

constexpr int64_t U = kUnknownDim;

NDArray I32(int32_t value) { return NDArray::Scalar<int32_t>(value); }

/*! \brief Runs a growing write in a Session (its rows are known only when it runs). */
NDArray Grow(const std::string& op, const std::map<std::string, std::string>& attrs,
             const std::vector<NDArray>& inputs) {
  std::vector<NodeEntry> entries;
  std::unordered_map<std::string, NDArray> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries.push_back(NodeEntry{Node::CreateVariable("in" + std::to_string(i)), 0});
    feeds["in" + std::to_string(i)] = inputs[i];
  }
  NodePtr node = Node::Create(Op::Get(op), op, {attrs.begin(), attrs.end()}, entries);
  return Session(SessionOptions()).Run({NodeEntry{node, 0}}, feeds)[0];
}

TEST(TensorArrayGrowTest, AnArrayOfUnknownElementRankAdoptsTheValuesShape) {
  // [size, 0]: made before even its elements' rank was known (TF 1.4's element_shape unknown).
  NDArray empty(Shape{3, 0}, DType::kFloat32);
  NDArray rows = RunOp("tensor_array_scatter", {},
                       {empty, NDArray::FromVector<int32_t>(Shape{3}, {0, 1, 2}), Iota(Shape{3, 2, 2})})[0];
  EXPECT_EQ(rows.shape(), (Shape{3, 2, 2}));
  ExpectNear(rows, Values(Iota(Shape{3, 2, 2})));
  NDArray scalars = RunOp("tensor_array_write", {}, {empty, I32(1), NDArray::Scalar<float>(7)})[0];
  EXPECT_EQ(scalars.shape(), (Shape{3}));
  ExpectNear(scalars, {0, 7, 0});
  EXPECT_EQ(InferShapes("tensor_array_write", {}, {Shape{5, 0}, Shape::Scalar(), Shape{2, 3}}).out[0],
            (Shape{5, 2, 3}));
  EXPECT_EQ(InferShapes("tensor_array_scatter", {}, {Shape{5, 0}, Shape{4}, Shape{U, 3}}).in[2], (Shape{4, 3}));
  EXPECT_EQ(InferShapes("tensor_array_write", {}, {Shape{5, 0}, Shape::Scalar(), Shape::Scalar()}).out[0], (Shape{5}));
}

TEST(TensorArrayGrowTest, WritesPastTheEndGrowTheArray) {
  NDArray ta = Iota(Shape{2, 2});
  NDArray grown = Grow("tensor_array_write_grow", {}, {ta, I32(3), NDArray::FromVector<float>(Shape{2}, {8, 9})});
  EXPECT_EQ(grown.shape(), (Shape{4, 2}));
  ExpectNear(grown, {0, 1, 2, 3, 0, 0, 8, 9});
  NDArray inside = Grow("tensor_array_write_grow", {}, {ta, I32(0), NDArray::FromVector<float>(Shape{2}, {5, 6})});
  ExpectNear(inside, {5, 6, 2, 3});
  NDArray kept = Grow("tensor_array_write_grow", {{"double_capacity", "true"}},
                      {ta, I32(1), NDArray::FromVector<float>(Shape{2}, {5, 6})});
  EXPECT_EQ(kept.shape(), (Shape{2, 2}));  // a row inside the array: no growth
  ExpectNear(kept, {0, 1, 5, 6});
}

TEST(TensorArrayGrowTest, ScattersGrowToHoldEveryIndexAndAdoptShapes) {
  NDArray empty(Shape{0, 0}, DType::kFloat32);
  NDArray rows =
      Grow("tensor_array_scatter_grow", {}, {empty, NDArray::FromVector<int64_t>(Shape{2}, {2, 0}), Iota(Shape{2, 3})});
  EXPECT_EQ(rows.shape(), (Shape{3, 3}));
  ExpectNear(rows, {3, 4, 5, 0, 0, 0, 0, 1, 2});
  NDArray pushed = Grow("tensor_array_write_grow", {{"double_capacity", "true"}},
                        {Iota(Shape{3, 2}), I32(3), NDArray::FromVector<float>(Shape{2}, {7, 7})});
  EXPECT_EQ(pushed.shape(), (Shape{6, 2}));  // a stack's capacity doubles
  ExpectNear(pushed, {0, 1, 2, 3, 4, 5, 7, 7, 0, 0, 0, 0});
}

TEST(TensorArrayGrowTest, InferenceAndErrors) {
  Inferred write = InferShapes("tensor_array_write_grow", {}, {Shape{4, 0}, Shape(), Shape{2, 3}});
  EXPECT_EQ(write.out[0], (Shape{U, 2, 3}));
  EXPECT_FALSE(write.complete);
  EXPECT_EQ(InferShapes("tensor_array_scatter_grow", {}, {Shape{4, 3}, Shape{5}, Shape()}).out[0], (Shape{U, 3}));
  EXPECT_ERROR(InferShapes("tensor_array_write_grow", {}, {Shape{4, 3}, Shape::Scalar(), Shape{2}}),
               "node 'tensor_array_write_grow' (op tensor_array_write_grow): input 2 (the value) has shape [2] but "
               "the array's elements are [3]");
  EXPECT_ERROR(Grow("tensor_array_write_grow", {}, {Iota(Shape{2, 2}), I32(-1), Iota(Shape{2})}),
               "tried to write to index -1");
  EXPECT_ERROR(Grow("tensor_array_scatter_grow", {},
                    {Iota(Shape{2, 2}), NDArray::FromVector<int32_t>(Shape{2}, {4, 4}), Iota(Shape{2, 2})}),
               "index 4 is written twice (indices elements 0 and 1)");
}

}  // namespace
}  // namespace test
}  // namespace ir
