/*!
 * \file array_indexing_test.cc
 * \brief gather_nd, scatter_nd, the segment sums, the scans and the select ops (unique, argwhere,
 * invert_permutation): values against hand-computed references, gradients against finite
 * differences, and errors that name the node and shapes.
 */
#include <gtest/gtest.h>

#include "ir/runtime.h"
#include "ops/array_test_util.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief Runs `op` on `inputs` in a Session (its outputs' shapes may be known only when it runs). */
std::vector<NDArray> RunShaped(const std::string& op, const std::vector<NDArray>& inputs) {
  std::vector<NodeEntry> entries;
  std::unordered_map<std::string, NDArray> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries.push_back(NodeEntry{Node::CreateVariable("in" + std::to_string(i)), 0});
    feeds["in" + std::to_string(i)] = inputs[i];
  }
  NodePtr node = Node::Create(Op::Get(op), op, {}, entries);
  std::vector<NodeEntry> outs;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) outs.push_back(NodeEntry{node, i});
  SessionOptions options;
  options.fusion = false;
  return Session(options).Run(outs, feeds);
}

NDArray Ints32(const Shape& shape, const std::vector<int32_t>& values) {
  return NDArray::FromVector<int32_t>(shape, values);
}

TEST(GatherNdTest, PicksSlicesAndScatterNdAddsThemBack) {
  NDArray params = Iota(Shape{3, 2, 2});
  NDArray idx = Ints32(Shape{2, 2}, {2, 1, 0, 0});
  NDArray y = RunOp("gather_nd", {}, {params, idx})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  ExpectNear(y, {10, 11, 0, 1});
  NDArray rows = Ints32(Shape{3, 1}, {1, 1, 0});
  NDArray s = RunOp("scatter_nd", {{"shape", "(2,2)"}}, {rows, Iota(Shape{3, 2})})[0];
  ExpectNear(s, {4, 5, 0 + 2, 1 + 3});
}

TEST(GatherNdTest, GradientsMatchFiniteDifferences) {
  NDArray idx = Ints32(Shape{3, 2}, {0, 1, 2, 0, 0, 1});
  CheckGradient("gather_nd", {}, {RandomArray(Shape{3, 2, 2}, DType::kFloat64, 1), idx});
  CheckGradient("scatter_nd", {{"shape", "(3,2,2)"}}, {idx, RandomArray(Shape{3, 2}, DType::kFloat64, 2)});
  CheckGradient("gather_nd_grad", {},
                {RandomArray(Shape{3, 2}, DType::kFloat64, 3), idx, RandomArray(Shape{3, 2, 2}, DType::kFloat64, 4)});
}

TEST(GatherNdTest, ErrorsNameTheNodeAndShapes) {
  EXPECT_ERROR(RunOp("gather_nd", {}, {Iota(Shape{2, 3}), Ints32(Shape{1, 3}, {0, 0, 0})}),
               "node 'gather_nd' (op gather_nd): the index depth 3 (last dimension of indices [1,3]) exceeds the rank "
               "of params [2,3]");
  EXPECT_ERROR(RunOp("gather_nd", {}, {Iota(Shape{2, 3}), Ints32(Shape{1, 2}, {1, 3})}),
               "index 3 (row 0, position 1 of indices [1,2]) is out of range [0, 3) for params [2,3]");
  EXPECT_ERROR(RunOp("scatter_nd", {{"shape", "(4,2)"}}, {Ints32(Shape{3, 1}, {0, 1, 2}), Iota(Shape{2, 2})}),
               "input 1 (updates)");
  EXPECT_ERROR(RunOp("gather_nd", {}, {Iota(Shape{2}), Iota(Shape{1, 1})}), "indices dtype float32 is not supported");
}

TEST(SegmentTest, SumsDropNegativeIdsAndGradientsMatch) {
  NDArray ids = Ints32(Shape{4}, {1, -1, 1, 0});
  ExpectNear(RunOp("unsorted_segment_sum", {{"num_segments", "3"}}, {Iota(Shape{4, 2}), ids})[0],
             {6, 7, 0 + 4, 1 + 5, 0, 0});
  CheckGradient("unsorted_segment_sum", {{"num_segments", "3"}}, {RandomArray(Shape{4, 2}, DType::kFloat64, 5), ids});
  CheckGradient("unsorted_segment_max", {{"num_segments", "2"}}, {RandomArray(Shape{4, 2}, DType::kFloat64, 9), ids});
  CheckGradient("unsorted_segment_min", {{"num_segments", "2"}}, {RandomArray(Shape{4, 2}, DType::kFloat64, 10), ids});
  CheckGradient("segment_gather", {{"num_segments", "3"}}, {RandomArray(Shape{3, 2}, DType::kFloat64, 6), ids});
  EXPECT_ERROR(RunOp("unsorted_segment_sum", {{"num_segments", "1"}}, {Iota(Shape{4, 2}), ids}),
               "segment_ids[0] = 1 is out of range [0, 1)");
  EXPECT_ERROR(RunOp("unsorted_segment_sum", {{"num_segments", "2"}}, {Iota(Shape{4, 2}), Ints32(Shape{3}, {0, 0, 0})}),
               "segment_ids' shape [3] must be a prefix of data's shape [4,2]");
  NDArray sorted = RunShaped("segment_sum", {Iota(Shape{3, 2}), Ints32(Shape{3}, {0, 2, 2})})[0];
  EXPECT_EQ(sorted.shape(), (Shape{3, 2}));
  ExpectNear(sorted, {0, 1, 0, 0, 6, 8});
  NDArray mean = RunShaped("segment_mean", {Iota(Shape{3, 2}), Ints32(Shape{3}, {0, 2, 2})})[0];
  ExpectNear(mean, {0, 1, 0, 0, 3, 4});
  NDArray max = RunShaped("segment_max", {Iota(Shape{3, 2}), Ints32(Shape{3}, {1, 1, 1})})[0];
  ExpectNear(max, {0, 0, 4, 5});
}

TEST(SegmentTest, RunTimeSegmentCountsAllocateTheirRowsAndGradientsMatch) {
  NDArray ids = Ints32(Shape{4}, {1, -1, 1, 0});
  NDArray three = NDArray::Scalar<int32_t>(3);
  NDArray sum = RunShaped("unsorted_segment_sum_dims", {Iota(Shape{4, 2}), ids, three})[0];
  EXPECT_EQ(sum.shape(), (Shape{3, 2}));
  ExpectNear(sum, {6, 7, 0 + 4, 1 + 5, 0, 0});
  ExpectNear(RunShaped("unsorted_segment_max_dims", {Iota(Shape{4, 2}), ids, NDArray::Scalar<int64_t>(2)})[0],
             {6, 7, 4, 5});
  CheckGradient("unsorted_segment_sum_dims", {}, {RandomArray(Shape{4, 2}, DType::kFloat64, 5), ids, three});
  NDArray two = NDArray::Scalar<int32_t>(2);  // no empty segment: its lowest value would swamp the differences
  CheckGradient("unsorted_segment_max_dims", {}, {RandomArray(Shape{4, 2}, DType::kFloat64, 9), ids, two});
  CheckGradient("unsorted_segment_min_dims", {}, {RandomArray(Shape{4, 2}, DType::kFloat64, 10), ids, two});
  CheckGradient("segment_gather", {}, {RandomArray(Shape{3, 2}, DType::kFloat64, 6), ids});  // rows: dy's
  EXPECT_ERROR(RunShaped("unsorted_segment_sum_dims", {Iota(Shape{4, 2}), ids, NDArray::Scalar<int32_t>(1)}),
               "segment_ids[0] = 1 is out of range [0, 1)");
  EXPECT_ERROR(RunShaped("unsorted_segment_sum_dims", {Iota(Shape{4, 2}), ids, NDArray::Scalar<int32_t>(-2)}),
               "num_segments must be non-negative, got -2");
  EXPECT_ERROR(RunShaped("unsorted_segment_sum_dims", {Iota(Shape{4, 2}), ids, Ints32(Shape{1}, {3})}),
               "num_segments must be a scalar, got shape [1]");
}

TEST(ScanTest, CumsumAndCumprodWithFlagsAndGradients) {
  NDArray x = Iota(Shape{2, 3});  // 0 1 2 / 3 4 5
  ExpectNear(RunOp("cumsum", {{"axis", "1"}}, {x})[0], {0, 1, 3, 3, 7, 12});
  ExpectNear(RunOp("cumsum", {{"axis", "1"}, {"exclusive", "true"}, {"reverse", "true"}}, {x})[0], {3, 2, 0, 9, 5, 0});
  ExpectNear(RunOp("cumprod", {{"axis", "0"}, {"exclusive", "true"}}, {x})[0], {1, 1, 1, 0, 1, 2});
  for (const char* exclusive : {"false", "true"}) {
    for (const char* reverse : {"false", "true"}) {
      Attrs attrs{{"axis", "-1"}, {"exclusive", exclusive}, {"reverse", reverse}};
      CheckGradient("cumsum", attrs, {RandomArray(Shape{2, 3}, DType::kFloat64, 7)});
      CheckGradient("cumprod", attrs, {RandomArray(Shape{2, 3}, DType::kFloat64, 8, 0.5, 1.5)});
    }
  }
  EXPECT_ERROR(RunOp("cumsum", {{"axis", "2"}}, {x}), "node 'cumsum' (op cumsum)");
  EXPECT_ERROR(RunOp("cumsum", {}, {NDArray::Scalar<float>(1)}), "cannot scan a scalar");
}

TEST(SelectTest, UniqueArgwhereAndInvertPermutation) {
  std::vector<NDArray> u = RunShaped("unique", {Ints32(Shape{5}, {4, 4, 2, 9, 2})});
  ExpectNear(u[0], {4, 2, 9}, 0, 0);
  EXPECT_EQ(u[1].dtype(), DType::kInt32);
  ExpectNear(u[1], {0, 0, 1, 2, 1}, 0, 0);
  NDArray w = RunShaped("argwhere", {NDArray::FromVector<float>(Shape{2, 2}, {0, 3, 0, -1})})[0];
  EXPECT_EQ(w.dtype(), DType::kInt64);
  EXPECT_EQ(w.shape(), (Shape{2, 2}));
  ExpectNear(w, {0, 1, 1, 1}, 0, 0);
  ExpectNear(RunOp("invert_permutation", {}, {Ints32(Shape{4}, {1, 3, 0, 2})})[0], {2, 0, 3, 1}, 0, 0);
  EXPECT_ERROR(RunOp("invert_permutation", {}, {Ints32(Shape{2}, {0, 2})}), "x[1] = 2 is not in [0, 2)");
  EXPECT_ERROR(RunShaped("unique", {Iota(Shape{2, 2})}), "x must be a vector, got shape [2,2]");
}

}  // namespace
}  // namespace test
}  // namespace ir
