// The nn device kernels (conv, pool, softmax, cross entropy, random, dropout) against the CPU
// on what the float32 tests of opencl_kernels_test.cc do not reach: float64, group reductions
// longer than a group, empty batches, ties in max pooling, large logits.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/op.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::Attrs;
using opencl_test::ExpectSameOnDevice;
using test::RandomArray;

NDArray Rand64(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  return RandomArray(shape, DType::kFloat64, seed, lo, hi);
}

/*! \brief Runs conv2d and both backprops on the device against the CPU. */
void ExpectConvSame(const Attrs& attrs, const NDArray& x, const NDArray& w, double tol) {
  NDArray y = test::RunOp("conv2d", attrs, {x, w})[0];
  NDArray dy = RandomArray(y.shape(), x.dtype(), 3);
  ExpectSameOnDevice("conv2d", attrs, {x, w}, tol, tol);
  ExpectSameOnDevice("conv2d_backprop_input", attrs, {dy, w, x}, tol, tol);
  ExpectSameOnDevice("conv2d_backprop_filter", attrs, {x, dy, w}, tol, tol);
}

TEST(OpenCLNNEdgeCasesTest, Conv2DInFloat64WithFilterSumsLongerThanAGroup) {
  IR_REQUIRE_OPENCL();
  // n * oh * ow > 256: every work-item of a filter-gradient group adds several terms.
  ExpectConvSame({{"data_format", "NCHW"}, {"pads", "(2,1,0,3)"}, {"strides", "(2,1)"}, {"dilations", "(1,2)"}},
                 Rand64({3, 5, 14, 13}, 1), Rand64({3, 2, 5, 6}, 2), 1e-10);
  ExpectConvSame({{"padding", "SAME"}, {"strides", "3"}, {"dilations", "2"}}, Rand64({2, 17, 16, 3}, 4),
                 Rand64({4, 3, 3, 2}, 5), 1e-10);
}

TEST(OpenCLNNEdgeCasesTest, FilterGradientsOfTinyAndLargeFiltersTakeBothKernels) {
  IR_REQUIRE_OPENCL();
  // 2 weight elements: fewer than any device runs at once, so a group sums each (shared memory);
  // 3,200: more than a CPU device runs at once, so one work-item sums each serially.
  ExpectConvSame({{"padding", "SAME"}}, RandomArray({3, 9, 10, 1}, DType::kFloat32, 1),
                 RandomArray({1, 1, 1, 2}, DType::kFloat32, 2), 1e-4);
  ExpectConvSame({{"padding", "SAME"}, {"data_format", "NCHW"}}, Rand64({2, 8, 6, 7}, 3), Rand64({5, 5, 8, 16}, 4),
                 1e-10);
}

TEST(OpenCLNNEdgeCasesTest, Conv2DOfAnEmptyBatchGivesAZeroFilterGradient) {
  IR_REQUIRE_OPENCL();
  NDArray x = RandomArray({0, 6, 5, 3}, DType::kFloat32, 1), w = RandomArray({3, 3, 3, 2}, DType::kFloat32, 2);
  ExpectConvSame({{"padding", "SAME"}}, x, w, 1e-5);
}

TEST(OpenCLNNEdgeCasesTest, MaxPoolGradientGoesToTheFirstOfTiedMaxima) {
  IR_REQUIRE_OPENCL();
  for (const char* format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    // Values 0..2 only: most overlapping windows hold several maxima.
    std::vector<double> values = Rand64({2, 6, 7, 3}, 1, 0, 3).ToVector<double>();
    for (double& v : values) v = std::floor(v);
    NDArray xd = NDArray::FromVector<double>({2, 6, 7, 3}, values);
    Attrs attrs = {{"ksize", "3"}, {"strides", "1"}, {"padding", "SAME"}, {"data_format", format}};
    NDArray y = test::RunOp("max_pool2d", attrs, {xd})[0];
    ExpectSameOnDevice("max_pool2d", attrs, {xd}, 0, 0);
    ExpectSameOnDevice("max_pool2d_grad", attrs, {xd, y, Rand64(y.shape(), 2)}, 1e-12, 1e-12);
  }
}

TEST(OpenCLNNEdgeCasesTest, AvgPoolingInFloat64WithExplicitPads) {
  IR_REQUIRE_OPENCL();
  Attrs attrs = {{"ksize", "(3,4)"}, {"strides", "(2,3)"}, {"pads", "(2,0,1,3)"}, {"data_format", "NCHW"}};
  NDArray x = Rand64({2, 3, 9, 11}, 1);
  NDArray y = test::RunOp("avg_pool2d", attrs, {x})[0];
  ExpectSameOnDevice("avg_pool2d", attrs, {x}, 1e-12, 1e-12);
  ExpectSameOnDevice("avg_pool2d_grad", attrs, {Rand64(y.shape(), 2), x}, 1e-12, 1e-12);
}

TEST(OpenCLNNEdgeCasesTest, SoftmaxOfLongRowsColumnsAndLargeLogits) {
  IR_REQUIRE_OPENCL();
  for (const char* op : {"softmax", "log_softmax"}) {
    SCOPED_TRACE(op);
    ExpectSameOnDevice(op, {}, {Rand64({3, 1000}, 1, -50, 50)}, 1e-12, 1e-10);
    ExpectSameOnDevice(op, {{"axis", "0"}}, {Rand64({300, 4}, 2, -5, 5)}, 1e-12, 1e-10);
    ExpectSameOnDevice(op, {{"axis", "1"}}, {RandomArray({2, 700, 3}, DType::kFloat32, 3, 990, 1000)}, 1e-5, 1e-5);
    ExpectSameOnDevice(op, {}, {Rand64({0, 5}, 4)});
  }
}

TEST(OpenCLNNEdgeCasesTest, CrossEntropiesOverManyClassesInFloat64) {
  IR_REQUIRE_OPENCL();
  NDArray logits = Rand64({4, 1000}, 1, -20, 20);
  NDArray probs = test::RunOp("softmax", {}, {Rand64({4, 1000}, 2)})[0];
  ExpectSameOnDevice("softmax_cross_entropy_with_logits", {}, {logits, probs}, 1e-10, 1e-10);
  NDArray unnormalized = test::RunOp("multiply_scalar", {{"scalar", "2.5"}}, {probs})[0];
  ExpectSameOnDevice("softmax_cross_entropy_with_logits", {{"general_labels", "true"}}, {logits, unnormalized}, 1e-10,
                     1e-10);
  ExpectSameOnDevice("sparse_softmax_cross_entropy_with_logits", {},
                     {logits, NDArray::FromVector<int64_t>({4}, {999, 0, 500, 3})}, 1e-10, 1e-10);
  ExpectSameOnDevice("sparse_softmax_cross_entropy_with_logits", {},
                     {Rand64({0, 7}, 3), NDArray::FromVector<int32_t>({0}, {})});
}

TEST(OpenCLNNEdgeCasesTest, RandomOpsAndDropoutInFloat64DrawTheCpuNumbers) {
  IR_REQUIRE_OPENCL();
  ExpectSameOnDevice("random_uniform", {{"shape", "(3,333)"}, {"dtype", "float64"}, {"minval", "-1"}}, {}, 0, 0);
  ExpectSameOnDevice("random_normal", {{"shape", "(77)"}, {"dtype", "float64"}, {"seed", "5"}}, {}, 1e-12, 1e-12);
  ExpectSameOnDevice("truncated_normal", {{"shape", "(501)"}, {"dtype", "float64"}, {"stddev", "3"}}, {}, 1e-12, 1e-12);
  ExpectSameOnDevice("dropout", {{"keep_prob", "0.3"}, {"seed", "9"}}, {Rand64({40, 9}, 1)}, 0, 0);
  ExpectSameOnDevice("dropout", {{"keep_prob", "1"}}, {Rand64({5}, 2)}, 0, 0);
  ExpectSameOnDevice("random_uniform", {{"shape", "(0,4)"}}, {}, 0, 0);
}

/*! \brief Every output of `op`'s device kernel, run on views at offsets of larger buffers, against the CPU. */
void ExpectSameOnViews(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs) {
  SCOPED_TRACE(op);
  std::vector<NDArray> expected = test::RunOp(op, attrs, inputs), in, out;
  std::vector<NodeEntry> entries;
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries.push_back(NodeEntry{Node::CreateVariable(StrCat("in", i)), 0});
    in.push_back(opencl_test::OffsetCopyOnDevice(inputs[i]));
  }
  for (const NDArray& e : expected) out.push_back(opencl_test::OffsetCopyOnDevice(NDArray(e.shape(), e.dtype())));
  NodePtr node = Node::Create(Op::Get(op), op, attrs, entries);
  OpContext ctx;
  ctx.device = opencl_test::OpenCLDevice();
  opencl_test::DeviceKernelOf(op)(ctx, node->attrs, in, out);
  for (size_t j = 0; j < out.size(); ++j) test::ExpectNear(out[j].CopyTo(Device::CPU()), expected[j], 1e-12, 1e-12);
}

TEST(OpenCLNNEdgeCasesTest, KernelsReadAndWriteViewsAtOffsets) {
  IR_REQUIRE_OPENCL();
  NDArray x = Rand64({2, 5, 6, 3}, 1), w = Rand64({2, 2, 3, 4}, 2);
  ExpectSameOnViews("conv2d", {{"padding", "SAME"}}, {x, w});
  ExpectSameOnViews("conv2d_backprop_filter", {}, {x, Rand64({2, 4, 5, 4}, 3), w});
  ExpectSameOnViews("max_pool2d_grad", {{"ksize", "2"}}, {x, Rand64({2, 4, 5, 3}, 4), Rand64({2, 4, 5, 3}, 5)});
  ExpectSameOnViews("log_softmax", {{"axis", "1"}}, {x});
  ExpectSameOnViews("sparse_softmax_cross_entropy_with_logits", {},
                    {Rand64({3, 4}, 6), NDArray::FromVector<int32_t>({3}, {3, 0, 1})});
  // keep_prob 1: test::RunOp's run seeds differ from the context's, so only the identity mask compares.
  ExpectSameOnViews("dropout", {{"keep_prob", "1"}}, {x});
}

}  // namespace
}  // namespace ir
